"""Retry what AWS says is retryable, within bounds and with jitter; what still fails becomes `Unavailable`.

Two layers. botocore's standard retry mode (`client_config`) retries throttling, 5xx and timeouts
with exponential backoff and full jitter, at most `MAX_ATTEMPTS` attempts per call. It does not retry
transaction conflicts (a TransactionCanceledException whose reasons are only TransactionConflict, or
a single write's TransactionConflictException): `GuardedClient` retries those `CONFLICT_ATTEMPTS`
times with its own jittered backoff, since a cancelled transaction applied nothing. Whatever is still
refused after that leaves the storage boundary as `Unavailable` (503 with Retry-After), never as a
botocore error, so no route can answer 500 because AWS was busy. Condition failures pass untouched.

Both layers stop at the invocation's deadline (`invocation_deadline`, set from Lambda's
`context.get_remaining_time_in_millis()`): each attempt's read timeout shrinks to the time left, and
no attempt or backoff starts that could end after it. Without that, 5 attempts of up to 10 s outlive
the API function's 28 s, and API Gateway answers its own 502/504 instead of the contract's 503.
"""

from __future__ import annotations

import functools
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from chalicelib.errors import Unavailable

__all__ = [
    "CONFLICT_ATTEMPTS",
    "MAX_ATTEMPTS",
    "GuardedClient",
    "OutOfTime",
    "backoff_within_the_deadline",
    "client_config",
    "guarded",
    "invocation_deadline",
    "is_conflict",
    "is_retryable",
    "seconds_left",
    "within_the_invocation",
]

MAX_ATTEMPTS = (
    5  # botocore's attempts per call (first try included); throttling backoff ≤ 1+2+4+8 s, under API Gateway's 29 s
)
CONFLICT_ATTEMPTS = 4
CONFLICT_BASE_SECONDS = 0.05
CONFLICT_MAX_SECONDS = 1.0
CONNECT_TIMEOUT = 1.0  # seconds; botocore cannot shorten it per attempt, so the deadline check counts it whole
READ_TIMEOUT = 10.0  # seconds per attempt at most, less when the invocation has less left
RESERVE_SECONDS = 0.5  # kept back from the deadline to build and send the 503 once AWS gave up
MIN_ATTEMPT_SECONDS = 0.25  # an attempt that could only wait less than this for its answer is not started

# What AWS documents as "try again later" for DynamoDB and KMS (the standard mode's own lists included).
RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "LimitExceededException",
        "TransactionInProgressException",
        "TransactionConflictException",
        "InternalServerError",
        "InternalFailure",
        "ServiceUnavailable",
        "RequestTimeout",
        "RequestTimeoutException",
        "KMSInternalException",
        "DependencyTimeoutException",
    }
)

# botocore's standard mode backs off from 1 s (not 50 ms) after these (its ThrottledRetryableChecker's list).
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)

sleep: Callable[[float], None] = time.sleep  # tests replace it to count backoffs without waiting
counts: Counter[str] = Counter()  # conflict retries and Unavailable answers so far (figures for the chaos run)
clock: Callable[[], float] = time.monotonic
_deadline: ContextVar[float | None] = ContextVar("invocation_deadline", default=None)


class OutOfTime(Exception):
    """The invocation has no time left for another AWS attempt: the caller gets 503 while Lambda still runs."""


@contextmanager
def invocation_deadline(context: Any) -> Iterator[None]:
    """AWS calls made inside give up (as `Unavailable`) before this Lambda invocation's deadline."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    token = _deadline.set(clock() + float(remaining()) / 1000 if callable(remaining) else None)
    try:
        yield
    finally:
        _deadline.reset(token)


def within_the_invocation(event: Any, get_response: Callable[[Any], Any]) -> Any:
    """Chalice middleware (HTTP and the stream): the handler's AWS calls are bounded by its invocation."""
    context = getattr(event, "lambda_context", None) or getattr(event, "context", None)
    with invocation_deadline(context):
        return get_response(event)


def seconds_left() -> float | None:
    """Seconds the current invocation may still spend on AWS calls (None outside a Lambda invocation)."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - clock() - RESERVE_SECONDS


def _bound_attempt(request: Any, **_: Any) -> None:
    """botocore `before-send`: this attempt waits at most READ_TIMEOUT, and never past the deadline.

    botocore reads a per-request `read_timeout` from `request.context` only from 1.43.68 on (earlier
    versions' AWSPreparedRequest has no `context` at all; docs/deploy.md, "The AWS SDK"). On those, an
    attempt waits the client's whole READ_TIMEOUT, so it starts only while that still fits before the deadline.
    """
    left = seconds_left()
    read_timeout = READ_TIMEOUT if left is None else min(READ_TIMEOUT, left - CONNECT_TIMEOUT)
    if read_timeout < MIN_ATTEMPT_SECONDS:
        raise OutOfTime()
    context = getattr(request, "context", None)
    if isinstance(context, dict):
        context["read_timeout"] = read_timeout
    elif read_timeout < READ_TIMEOUT:
        raise OutOfTime()  # no per-attempt timeout to cut: a full one would end past the deadline


def _failure(response: Any, caught_exception: Any) -> str | None:
    """How an attempt failed, as botocore's standard mode sorts it: "throttled", "transient", or None (no retry)."""
    if caught_exception is not None:
        return "transient"  # timeouts, resets: standard mode retries them with the short base
    if not response:
        return None
    http, parsed = response
    code = (parsed or {}).get("Error", {}).get("Code")
    status = int(getattr(http, "status_code", 0) or 0)
    if code in THROTTLING_CODES or status == 429:
        return "throttled"
    return "transient" if status >= 500 or code in RETRYABLE_CODES else None


def _api_of(event_name: str) -> str:
    """`needs-retry.dynamodb.PutItem` -> `dynamodb` (a fixed service name of botocore's, never data)."""
    parts = event_name.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in ("dynamodb", "kms") else "other"


def _no_retry_past_deadline(
    attempts: int, response: Any = None, caught_exception: Any = None, event_name: str = "", **_: Any
) -> None:
    """botocore `needs-retry` (run before the retry handler): give up rather than sleep into the deadline.

    Standard mode sleeps up to min(base·2^(attempt-1), 20) s before the next attempt, base 1 s after
    throttling and 50 ms otherwise (botocore's ExponentialBackoff; up to 5 s more when the answer
    carries `x-amz-retry-after`); then the attempt needs its connect timeout and a little time.
    """
    failure = _failure(response, caught_exception)
    if failure == "throttled":  # every throttled attempt, retried or not: the AwsThrottlingAlarm reads these
        from chalicelib.metrics import count

        count("Throttled", ("Api", _api_of(event_name)))
    left = seconds_left()
    if left is None or failure is None:
        return None
    longest_sleep = min((1.0 if failure == "throttled" else 0.05) * 2.0 ** (attempts - 1), 20.0)
    if response and "x-amz-retry-after" in (getattr(response[0], "headers", None) or {}):
        longest_sleep += 5.0
    if left - longest_sleep - CONNECT_TIMEOUT < MIN_ATTEMPT_SECONDS:
        raise OutOfTime()
    return None


def client_config(**extra: Any) -> Any:
    from botocore.config import Config

    return Config(
        retries={"total_max_attempts": MAX_ATTEMPTS, "mode": "standard"},
        connect_timeout=CONNECT_TIMEOUT,
        read_timeout=READ_TIMEOUT,
        **extra,
    )


def _error(exc: BaseException) -> dict[str, Any]:
    return getattr(exc, "response", None) or {}


def is_conflict(exc: BaseException) -> bool:
    """A write refused only because another transaction held the item: safe to run again as it was."""
    error = _error(exc)
    code = error.get("Error", {}).get("Code")
    if code == "TransactionConflictException":
        return True
    if code != "TransactionCanceledException":
        return False
    reasons = [reason.get("Code", "None") for reason in error.get("CancellationReasons", [])]
    return "TransactionConflict" in reasons and all(r in ("None", "TransactionConflict") for r in reasons)


def is_retryable(exc: BaseException) -> bool:
    """AWS said "not now" (throttled, busy, timed out) rather than "no"."""
    from botocore.exceptions import ClientError, ConnectionError, HTTPClientError

    if isinstance(exc, ConnectionError | HTTPClientError | OutOfTime):
        return True
    if not isinstance(exc, ClientError):
        return False
    error = _error(exc)
    status = int(error.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    return error.get("Error", {}).get("Code") in RETRYABLE_CODES or status >= 500 or is_conflict(exc)


def _backoff(attempt: int) -> float:
    """Full jitter: a uniform delay up to base·2^attempt, capped."""
    return random.uniform(0, min(CONFLICT_MAX_SECONDS, CONFLICT_BASE_SECONDS * 2**attempt))


def backoff_within_the_deadline(attempt: int) -> float:
    """The conflict backoff, cut to the time left (the next attempt's own check then gives up)."""
    left = seconds_left()
    return _backoff(attempt) if left is None else max(0.0, min(_backoff(attempt), left))


class GuardedClient:
    """A boto3 client whose calls retry conflicts and report exhausted retries as `Unavailable`."""

    def __init__(self, client: Any) -> None:
        self.unguarded = client
        events = getattr(getattr(client, "meta", None), "events", None)
        if events is not None:  # unique ids: a client guarded twice keeps one pair of hooks
            events.register("before-send", _bound_attempt, unique_id="personal-memory-deadline-send")
            events.register_first("needs-retry", _no_retry_past_deadline, unique_id="personal-memory-deadline-retry")

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.unguarded, name)
        if name.startswith("_") or name == "meta" or not callable(attribute):
            return attribute
        return functools.partial(self._call, attribute)

    @staticmethod
    def _call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        for attempt in range(1, CONFLICT_ATTEMPTS + 1):
            try:
                return method(*args, **kwargs)
            except Exception as exc:
                if is_conflict(exc) and attempt < CONFLICT_ATTEMPTS:
                    counts["conflict_retries"] += 1
                    sleep(backoff_within_the_deadline(attempt))
                    continue
                if is_retryable(exc):
                    counts["unavailable"] += 1
                    raise Unavailable() from exc
                raise
        raise Unavailable()  # not reached: the last attempt returns or raises


def guarded(client: Any) -> Any:
    return client if isinstance(client, GuardedClient) else GuardedClient(client)
