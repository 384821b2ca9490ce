"""A slow DynamoDB never outlives the Lambda invocation: the API answers 503, the consumer reports its records.

AWS's documentation, quoted:
- Lambda, "Using the Lambda context object to retrieve Python function information"
  (docs.aws.amazon.com/lambda/latest/dg/python-context.html): "get_remaining_time_in_millis – Returns
  the number of milliseconds left before the execution times out."
- API Gateway, "Amazon API Gateway quotas" (REST APIs): "Integration timeout: 50 milliseconds -
  29 seconds"; a function still running when it passes gets the gateway's own 504, never the
  function's answer. The API function's timeout is 28 s (.chalice/config.json).
- Lambda, "Using Lambda with DynamoDB" (partial batch responses): "Lambda treats a batch as a complete
  success if you return ... an empty batchItemFailures list"; a function that times out instead fails
  the whole batch, and the records it did handle are retried with the rest.

botocore's standard mode, as the app configured it before, made up to 5 attempts of up to 10 s each
(plus backoff): about 50 s against a DynamoDB that stops answering, past both deadlines. Here the
"DynamoDB" is a socket on 127.0.0.1 that accepts each request and never answers, and the real
handler runs with a LambdaContext that has 3 s left (Lambda's default timeout).

Time is counted as the code spends it waiting (`WaitClock`): each attempt's socket wait advances the
clock by the read timeout botocore was given, each backoff by its length; CPU time does not count, so
a loaded machine cannot make the result vary. The socket waits themselves are real.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TIME_LEFT_MS = 3000  # Lambda's default timeout
SAMPLE = Path(__file__).resolve().parents[1] / "events" / "stream_record_sample.json"


class SilentEndpoint:
    """Accepts connections, reads what is sent, answers nothing: a DynamoDB (or KMS) that hangs."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.requests = 0
        self._open: list[socket.socket] = []
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.getsockname()[1]}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self._open.append(connection)
            connection.settimeout(0.5)
            try:
                if connection.recv(65536):
                    self.requests += 1
            except OSError:
                pass

    def close(self) -> None:
        self._stop.set()
        for connection in [*self._open, self.server]:
            connection.close()


class WaitClock:
    """The invocation's clock (LambdaContext and retries.clock): it moves only while the code waits."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def time(self) -> float:  # chalice's LambdaContext reads time_source.time()
        return self.now

    def __call__(self) -> float:  # chalicelib.storage.retries.clock
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> WaitClock:
    import botocore.endpoint
    import botocore.httpsession

    from chalicelib.storage import retries

    wait_clock = WaitClock()
    real_send = botocore.httpsession.URLLib3Session.send

    def send(session: Any, request: Any) -> Any:
        granted = (getattr(request, "context", None) or {}).get("read_timeout")
        if granted is None:  # the client's own read timeout (before the fix, always)
            granted = getattr(session._timeout, "read_timeout", None) or session._timeout
        try:
            return real_send(session, request)
        finally:
            wait_clock.sleep(float(granted))  # the silent socket made it wait that long

    monkeypatch.setattr(botocore.httpsession.URLLib3Session, "send", send)
    monkeypatch.setattr(botocore.endpoint, "time", wait_clock)  # botocore sleeps between retries through it
    monkeypatch.setattr(retries, "sleep", wait_clock.sleep)
    monkeypatch.setattr(retries, "clock", wait_clock, raising=False)
    return wait_clock


@pytest.fixture
def silent(aws_credentials: None, env: dict[str, str], clock: WaitClock) -> Iterator[SilentEndpoint]:
    """The app's stores, with the app's own client configuration, pointed at an endpoint that never answers."""
    import boto3

    from chalicelib.bootstrap import build_stores, reset_stores
    from chalicelib.config import load_settings
    from chalicelib.storage.retries import client_config

    endpoint = SilentEndpoint()
    dynamodb = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=endpoint.url, config=client_config())
    kms = boto3.client("kms", region_name="us-east-1", endpoint_url=endpoint.url, config=client_config())
    reset_stores(build_stores(load_settings(env), dynamodb, kms_client=kms))
    try:
        yield endpoint
    finally:
        reset_stores(None)
        endpoint.close()


def _context(function_name: str, clock: WaitClock) -> Any:
    from chalice.local import LambdaContext

    return LambdaContext(function_name=function_name, memory_size=512, max_runtime_ms=TIME_LEFT_MS, time_source=clock)


def _proxy_event(user: str, path: str) -> dict[str, Any]:
    """The event API Gateway sends the API function once the authorizer let `user` in."""
    return {
        "resource": path,
        "path": path,
        "httpMethod": "GET",
        "body": None,
        "isBase64Encoded": False,
        "headers": {"Accept": "application/json"},
        "multiValueHeaders": {"Accept": ["application/json"]},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": "GET",
            "path": "/api" + path,
            "stage": "api",
            "requestId": "req-deadline",
            "authorizer": {"principalId": user, "tokenExpires": "4102444800"},
            "identity": {"sourceIp": "127.0.0.1"},
        },
    }


def test_a_hanging_dynamodb_gets_the_contracts_503_before_the_api_functions_deadline(
    silent: SilentEndpoint, clock: WaitClock
) -> None:
    from app import app

    context = _context("api_handler", clock)
    response = app(_proxy_event("alice", "/v1/memory"), context)
    left_ms = context.get_remaining_time_in_millis()

    assert silent.requests >= 1  # it did try AWS (with a read timeout cut to the time left)
    assert response["statusCode"] == 503
    assert json.loads(response["body"])["code"] == "unavailable"
    assert response["headers"]["Retry-After"].isdigit()
    assert left_ms > 0, f"answered {-left_ms:.0f} ms after the invocation's deadline"


def test_a_hanging_dynamodb_leaves_every_record_in_batch_item_failures_before_the_consumers_deadline(
    silent: SilentEndpoint, clock: WaitClock
) -> None:
    from app import handle_events_stream

    sample = json.loads(SAMPLE.read_text())
    records = []
    for number in (1, 2, 3):
        record = json.loads(json.dumps(sample))
        record["dynamodb"]["SequenceNumber"] = f"{number:021d}"
        record["dynamodb"]["Keys"]["event_id"]["S"] = record["dynamodb"]["NewImage"]["event_id"]["S"] = f"evt-{number}"
        records.append(record)

    context = _context("handle_events_stream", clock)
    answer = handle_events_stream({"Records": records}, context)
    left_ms = context.get_remaining_time_in_millis()

    assert silent.requests >= 1
    assert answer == {"batchItemFailures": [{"itemIdentifier": r["dynamodb"]["SequenceNumber"]} for r in records]}
    assert left_ms > 0, f"answered {-left_ms:.0f} ms after the invocation's deadline"


def test_outside_an_invocation_each_attempt_keeps_the_configured_timeouts() -> None:
    """Scripts (make redrive) and the local tools have no deadline: nothing is cut or refused."""
    from chalicelib.storage import retries

    class Request:
        context: dict[str, Any] = {}

    request = Request()
    assert retries.seconds_left() is None
    retries._bound_attempt(request)
    assert request.context["read_timeout"] == retries.READ_TIMEOUT
    assert retries._no_retry_past_deadline(5, caught_exception=TimeoutError()) is None


def test_on_a_botocore_without_a_request_context_the_hook_lets_calls_through_and_still_keeps_the_deadline() -> None:
    """botocore before 1.43.68 (read in its source: AWSPreparedRequest gained `context` and URLLib3Session
    `_get_request_timeout` in 1.43.68) hands `before-send` a request with no `context`. The hook must not
    raise AttributeError there (every DynamoDB and KMS call would fail); an attempt then waits the client's
    whole READ_TIMEOUT, so it is started only while that fits before the deadline."""
    from types import SimpleNamespace

    from chalicelib.storage import retries

    class OldPreparedRequest:  # botocore 1.43.67's AWSPreparedRequest: method, url, headers, body, stream_output
        def __init__(self) -> None:
            self.method, self.url, self.headers, self.body, self.stream_output = (
                "POST",
                "http://127.0.0.1",
                {},
                b"",
                False,
            )

    request = OldPreparedRequest()
    retries._bound_attempt(request)  # outside an invocation (scripts, make redrive): nothing to bound
    assert not hasattr(request, "context")
    roomy = (retries.READ_TIMEOUT + retries.CONNECT_TIMEOUT + retries.RESERVE_SECONDS + 1) * 1000
    with retries.invocation_deadline(SimpleNamespace(get_remaining_time_in_millis=lambda: roomy)):
        retries._bound_attempt(request)  # a whole attempt fits: it goes
    with retries.invocation_deadline(SimpleNamespace(get_remaining_time_in_millis=lambda: 5000)):
        with pytest.raises(retries.OutOfTime):
            retries._bound_attempt(request)  # 10 s more could outlive the invocation: 503, not Lambda's timeout
        modern = SimpleNamespace(context={})
        retries._bound_attempt(modern)  # where botocore can cut the attempt, it is cut instead
        assert modern.context["read_timeout"] < retries.READ_TIMEOUT


def test_with_seconds_left_a_timed_out_attempt_is_retried_but_a_throttled_one_is_not_slept_into_the_deadline() -> None:
    """Standard mode backs off 50 ms·2^n after a timeout, 1 s·2^n after throttling (botocore's ExponentialBackoff)."""
    from types import SimpleNamespace

    from chalicelib.storage import retries

    throttled = (SimpleNamespace(status_code=400, headers={}), {"Error": {"Code": "ThrottlingException"}})
    refused = (SimpleNamespace(status_code=400, headers={}), {"Error": {"Code": "ConditionalCheckFailedException"}})
    with retries.invocation_deadline(SimpleNamespace(get_remaining_time_in_millis=lambda: 4000)):
        assert retries._no_retry_past_deadline(3, caught_exception=TimeoutError()) is None  # ≤ 0.2 s, then 1 s + a read
        assert retries._no_retry_past_deadline(1, response=throttled) is None  # ≤ 1 s fits in 3.5 s
        with pytest.raises(retries.OutOfTime):
            retries._no_retry_past_deadline(3, response=throttled)  # ≤ 4 s would end past the deadline
        assert (
            retries._no_retry_past_deadline(5, response=refused) is None
        )  # a definite answer is never turned into a 503
    assert retries.seconds_left() is None  # the deadline ends with the invocation


def test_the_process_kms_client_has_the_bounds_the_deadline_check_counts_on(aws_credentials: None) -> None:
    """`_bound_attempt` counts a connect as at most CONNECT_TIMEOUT (botocore cannot cut it per attempt).

    The KMS client the deployed function builds (no test client given) must therefore connect within
    that, and make no more attempts than the DynamoDB client: botocore's default connect timeout is
    60 s, which alone outlives the API function's 28 s against a KMS endpoint that drops the SYN.
    """
    from chalicelib.crypto import kms
    from chalicelib.storage import retries

    kms.reset_client(None)
    try:
        config = kms.get_client().meta.config
        assert config.connect_timeout <= retries.CONNECT_TIMEOUT
        assert config.read_timeout <= retries.READ_TIMEOUT
        assert (
            config.retries.get("total_max_attempts", (config.retries.get("max_attempts") or 0) + 1)
            <= retries.MAX_ATTEMPTS
        )
    finally:
        kms.reset_client(None)
