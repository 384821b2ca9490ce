"""Make chosen AWS calls fail the way AWS does, for tests and `make run`: botocore event hooks, inert unless set.

An injector is attached to one boto3 client (`attach`). Its `before-send` hook runs before any
byte leaves the process: when a rule picks a call it answers with AWS's own error body (the JSON
protocol's `__type` and message, a TransactionCanceledException with per-action reasons), so
botocore parses, classifies and retries it exactly as it would the real one; a timeout is raised
as botocore's own ReadTimeoutError. A faulted call never reaches the server, so it changes nothing.

Rules pick calls per operation, per table, every Nth matching call or a seeded share of them.
`from_environment()` reads `MEMORY_FAULT_RATE` / `MEMORY_FAULT_SEED` (the local stack's knobs).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ERRORS", "RANDOM_ERRORS", "FaultInjector", "FaultRule", "from_environment"]

# error name -> (HTTP status, AWS error code). "TransactionConflict" is TransactWriteItems' cancellation
# with a TransactionConflict reason, and TransactionConflictException for a single-item write.
ERRORS: dict[str, tuple[int, str]] = {
    "ThrottlingException": (400, "ThrottlingException"),
    "ProvisionedThroughputExceededException": (400, "ProvisionedThroughputExceededException"),
    "RequestLimitExceeded": (400, "RequestLimitExceeded"),
    "TransactionConflict": (400, "TransactionConflictException"),
    "InternalServerError": (500, "InternalServerError"),
    "Timeout": (0, "ReadTimeoutError"),
    # The write is applied, then its answer is lost (a 500 instead of the 200): botocore retries it.
    "LostResponse": (500, "InternalServerError"),
    # KMS's own throttling and internal error shapes.
    "KMSThrottling": (400, "ThrottlingException"),
    "KMSInternal": (500, "KMSInternalException"),
}
# LostResponse is left out of the random mix: once retries also run out, a lost answer to an applied
# write is as ambiguous here as on AWS (the 503 cannot know), and the chaos invariants are exact.
RANDOM_ERRORS = (
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "TransactionConflict",
    "InternalServerError",
    "Timeout",
)
_TARGET_PREFIX = {"dynamodb": "com.amazonaws.dynamodb.v20120810#", "kms": "com.amazonaws.kms#"}
_NOWHERE = "http://fault-injected.invalid/"
_ATTEMPT = re.compile(r"attempt=(\d+)")


@dataclass
class FaultRule:
    """Which calls fail and how: all matching calls, every Nth, or a seeded share; `times` caps the failures."""

    error: str = "ThrottlingException"
    service: str = "dynamodb"
    operation: str | None = None  # e.g. "TransactWriteItems"; None = any
    table: str | None = None  # any table the request names; None = any
    every: int = 1  # every Nth matching call fails (1 = all of them), unless rate is set
    rate: float | None = None  # this share of matching calls fails, drawn from the injector's seeded generator
    times: int | None = None  # stop after this many failures
    after: int = 0  # let the first `after` matching calls through untouched
    errors: tuple[str, ...] = ()  # with rate: pick the error at random among these (seeded)
    matched: int = 0
    fired: int = 0

    def __post_init__(self) -> None:
        for name in (self.error, *self.errors):
            if name not in ERRORS:
                raise ValueError(f"unknown fault {name!r}; one of {sorted(ERRORS)}")

    def applies(self, service: str, operation: str, tables: Iterable[str]) -> bool:
        return (
            service == self.service
            and (self.operation is None or operation == self.operation)
            and (self.table is None or self.table in set(tables))
            and (self.times is None or self.fired < self.times)
        )


@dataclass(frozen=True)
class Call:
    """One attempt as the injector saw it (no request data beyond names and the attempt number)."""

    service: str
    operation: str
    tables: tuple[str, ...]
    attempt: int
    fault: str | None


@dataclass
class FaultInjector:
    rules: list[FaultRule] = field(default_factory=list)
    seed: int = 0
    calls: list[Call] = field(default_factory=list)
    keep_calls: int = 100_000  # bounded, so a long `make run` does not grow without end

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        self._lock = threading.Lock()
        self._attached: list[tuple[Any, str]] = []
        self.totals: Counter[str] = Counter()
        # TransactWriteItems' ClientRequestTokens whose transaction was applied: AWS answers a repeat
        # of one (within 10 minutes) with success and applies nothing; moto ignores the token.
        self._applied_tokens: set[str] = set()

    # ---- wiring -------------------------------------------------------------------------------

    def attach(self, client: Any) -> Any:
        """Hook this injector into `client` (first in line, before moto's own stubber); returns the client."""
        service = client.meta.service_model.service_id.hyphenize()
        event = f"before-send.{service}"
        client.meta.events.register_first(event, self._before_send, unique_id=f"fault-injector-{id(self)}")
        self._attached.append((client, event))
        return client

    def detach(self) -> None:
        for client, event in self._attached:
            client.meta.events.unregister(event, unique_id=f"fault-injector-{id(self)}")
        self._attached.clear()

    def add(self, **rule: Any) -> FaultRule:
        made = FaultRule(**rule)
        with self._lock:
            self.rules.append(made)
        return made

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    # ---- what happened ------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts only: calls seen, attempts that were retries, faults injected by kind."""
        with self._lock:
            return {
                "calls": self.totals["calls"],
                "retries": self.totals["retries"],
                "faults": self.totals["faults"],
                "by_fault": {k[6:]: v for k, v in self.totals.items() if k.startswith("fault:")},
            }

    def seen(self, operation: str | None = None, table: str | None = None) -> Iterator[Call]:
        with self._lock:
            calls = list(self.calls)
        for call in calls:
            if (operation is None or call.operation == operation) and (table is None or table in call.tables):
                yield call

    # ---- the hook -----------------------------------------------------------------------------

    def _before_send(self, request: Any, event_name: str, **_: Any) -> Any:
        _event_prefix, service, operation = event_name.split(".", 2)
        body = _json_body(request.body)
        tables = _tables(body)
        attempt = _attempt(request.headers)
        with self._lock:
            fault = self._choose(service, operation, tables)
            self.totals["calls"] += 1
            self.totals["retries"] += attempt > 1
            if fault:
                self.totals["faults"] += 1
                self.totals[f"fault:{fault}"] += 1
            if len(self.calls) < self.keep_calls:
                self.calls.append(Call(service, operation, tables, attempt, fault))
        token = body.get("ClientRequestToken") if operation == "TransactWriteItems" else None
        if fault is None and token in self._applied_tokens:
            return _success(request)  # AWS's idempotency: the repeat of an applied transaction succeeds
        if fault == "LostResponse":
            if _send_for_real(event_name, request).status_code == 200 and token:
                with self._lock:
                    self._applied_tokens.add(token)
        if fault is None:
            return None
        answer = _answer(fault, service, operation, body, request, self._random)
        # botocore asks every before-send handler, not just the first: moto's in-process stubber
        # (mock_aws) would still apply the request. It only serves AWS host names, so pointing this
        # one attempt elsewhere keeps a faulted call from reaching it; our answer is the one used.
        request.url = _NOWHERE
        return answer

    def _choose(self, service: str, operation: str, tables: tuple[str, ...]) -> str | None:
        for rule in self.rules:
            if not rule.applies(service, operation, tables):
                continue
            rule.matched += 1
            if rule.matched <= rule.after:
                continue
            if rule.rate is not None:
                hit = self._random.random() < rule.rate
            else:
                hit = (rule.matched - rule.after) % max(1, rule.every) == 0
            if hit:
                rule.fired += 1
                return self._random.choice(rule.errors) if rule.errors else rule.error
        return None


def from_environment(environ: dict[str, str] | None = None) -> FaultInjector | None:
    """`MEMORY_FAULT_RATE=0.05 MEMORY_FAULT_SEED=7`: that share of calls fails with a random retryable error."""
    env = os.environ if environ is None else environ
    raw = env.get("MEMORY_FAULT_RATE", "").strip()
    if not raw:
        return None
    rate = float(raw)
    if not 0.0 <= rate <= 1.0:
        raise ValueError("MEMORY_FAULT_RATE must be between 0 and 1")
    injector = FaultInjector(seed=int(env.get("MEMORY_FAULT_SEED", "0") or 0))
    injector.add(rate=rate, errors=RANDOM_ERRORS)
    injector.add(service="kms", rate=rate, errors=("KMSThrottling", "KMSInternal"))
    return injector


# ---- AWS's answers ----------------------------------------------------------------------------


class _Raw(io.BytesIO):
    """The raw body botocore's AWSResponse reads (`stream()`), as urllib3 would hand it over."""

    def stream(self, **_: Any) -> Iterator[bytes]:
        data = self.read()
        while data:
            yield data
            data = self.read()


def _answer(fault: str, service: str, operation: str, body: dict[str, Any], request: Any, rng: random.Random) -> Any:
    from botocore.awsrequest import AWSResponse
    from botocore.exceptions import ReadTimeoutError

    status, code = ERRORS[fault]
    if fault == "Timeout":
        raise ReadTimeoutError(endpoint_url=request.url)
    payload: dict[str, Any] = {"__type": _TARGET_PREFIX.get(service, "") + code, "message": f"Injected {code}."}
    if fault == "TransactionConflict" and operation == "TransactWriteItems":
        count = max(1, len(body.get("TransactItems", [])))
        conflicted = rng.randrange(count)
        reasons = [
            {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
            if n == conflicted
            else {"Code": "None"}
            for n in range(count)
        ]
        code = "TransactionCanceledException"
        payload = {
            "__type": _TARGET_PREFIX["dynamodb"] + code,
            "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons "
            + "["
            + ", ".join(r["Code"] for r in reasons)
            + "]",
            "CancellationReasons": reasons,
        }
    headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "fault-injected"}
    return AWSResponse(request.url, status, headers, _Raw(json.dumps(payload).encode()))


def _send_for_real(event_name: str, request: Any) -> Any:
    """Deliver the request as botocore would have: to moto's in-process stubber under mock_aws, else over HTTP."""
    from moto.core.models import botocore_stubber

    if botocore_stubber.enabled:
        answer = botocore_stubber(event_name, request)
        if answer is not None:
            return answer
    from botocore.httpsession import URLLib3Session

    return URLLib3Session().send(request)


def _success(request: Any) -> Any:
    from botocore.awsrequest import AWSResponse

    return AWSResponse(request.url, 200, {"Content-Type": "application/x-amz-json-1.0"}, _Raw(b"{}"))


def _json_body(raw: Any) -> dict[str, Any]:
    body = raw.decode("utf-8", "replace") if isinstance(raw, bytes | bytearray) else raw
    try:
        parsed = json.loads(body) if body else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _tables(body: dict[str, Any]) -> tuple[str, ...]:
    names: list[str] = []
    if isinstance(body.get("TableName"), str):
        names.append(body["TableName"])
    for action in body.get("TransactItems", []) or []:
        for part in action.values() if isinstance(action, dict) else ():
            if isinstance(part, dict) and isinstance(part.get("TableName"), str):
                names.append(part["TableName"])
    names.extend(k for k in (body.get("RequestItems") or {}) if isinstance(k, str))
    return tuple(dict.fromkeys(names))


def _attempt(headers: Any) -> int:
    value = headers.get("amz-sdk-request", b"") if headers is not None else b""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    found = _ATTEMPT.search(str(value))
    return int(found.group(1)) if found else 1
