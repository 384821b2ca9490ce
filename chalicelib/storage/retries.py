"""Retry what AWS says is retryable, within bounds and with jitter; what still fails becomes `Unavailable`.

Two layers. botocore's standard retry mode (`client_config`) retries throttling, 5xx and timeouts
with exponential backoff and full jitter, at most `MAX_ATTEMPTS` attempts per call. It does not retry
transaction conflicts (a TransactionCanceledException whose reasons are only TransactionConflict, or
a single write's TransactionConflictException): `GuardedClient` retries those `CONFLICT_ATTEMPTS`
times with its own jittered backoff, since a cancelled transaction applied nothing. Whatever is still
refused after that leaves the storage boundary as `Unavailable` (503 with Retry-After), never as a
botocore error, so no route can answer 500 because AWS was busy. Condition failures pass untouched.
"""
from __future__ import annotations

import functools
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from chalicelib.errors import Unavailable

__all__ = ["CONFLICT_ATTEMPTS", "MAX_ATTEMPTS", "GuardedClient", "client_config", "guarded", "is_conflict", "is_retryable"]

MAX_ATTEMPTS = 5  # botocore's attempts per call (first try included); throttling backoff ≤ 1+2+4+8 s, under API Gateway's 29 s
CONFLICT_ATTEMPTS = 4
CONFLICT_BASE_SECONDS = 0.05
CONFLICT_MAX_SECONDS = 1.0

# What AWS documents as "try again later" for DynamoDB and KMS (the standard mode's own lists included).
RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException", "Throttling", "ProvisionedThroughputExceededException", "RequestLimitExceeded",
        "LimitExceededException", "TransactionInProgressException", "TransactionConflictException",
        "InternalServerError", "InternalFailure", "ServiceUnavailable", "RequestTimeout", "RequestTimeoutException",
        "KMSInternalException", "DependencyTimeoutException",
    }
)

sleep: Callable[[float], None] = time.sleep  # tests replace it to count backoffs without waiting
counts: Counter[str] = Counter()  # conflict retries and Unavailable answers so far (figures for the chaos run)


def client_config(**extra: Any) -> Any:
    from botocore.config import Config

    return Config(retries={"total_max_attempts": MAX_ATTEMPTS, "mode": "standard"}, connect_timeout=5, read_timeout=10, **extra)


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

    if isinstance(exc, ConnectionError | HTTPClientError):
        return True
    if not isinstance(exc, ClientError):
        return False
    error = _error(exc)
    status = int(error.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    return error.get("Error", {}).get("Code") in RETRYABLE_CODES or status >= 500 or is_conflict(exc)


def _backoff(attempt: int) -> float:
    """Full jitter: a uniform delay up to base·2^attempt, capped."""
    return random.uniform(0, min(CONFLICT_MAX_SECONDS, CONFLICT_BASE_SECONDS * 2**attempt))


class GuardedClient:
    """A boto3 client whose calls retry conflicts and report exhausted retries as `Unavailable`."""

    def __init__(self, client: Any) -> None:
        self.unguarded = client

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
                    sleep(_backoff(attempt))
                    continue
                if is_retryable(exc):
                    counts["unavailable"] += 1
                    raise Unavailable() from exc
                raise
        raise Unavailable()  # not reached: the last attempt returns or raises


def guarded(client: Any) -> Any:
    return client if isinstance(client, GuardedClient) else GuardedClient(client)
