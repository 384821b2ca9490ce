"""Signed JSON over HTTP: the one place that signs (botocore SigV4), sends (urllib) and retries.

Every route the SDK calls is safe to repeat: registering a session with the same body, marking it
untrusted, reading, and posting events whose ids the caller fixed before the first attempt. So the
transport may retry any request on a connection error, a 5xx or a 429 without ever duplicating
anything, as long as it resends the very same body (it does: the body is serialised once).
"""

from __future__ import annotations

import json
import random
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.client import HTTPException
from typing import Any
from urllib.parse import urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from .errors import ProtocolError, TransportError, error_for

__all__ = ["DEFAULT_REGION", "SERVICE", "BearerTransport", "RetryPolicy", "SignedTransport"]

SERVICE = "execute-api"
DEFAULT_REGION = "us-east-1"
# Answers are small JSON documents (20 entries, 4 KiB of text); anything far bigger is not ours.
_MAX_RESPONSE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry: exponential backoff with full jitter."""

    max_attempts: int = 4
    base_delay: float = 0.2
    max_delay: float = 5.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("delays must not be negative")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        return random.uniform(0.0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: a signed request must never be replayed to another address."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _is_retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date; fall back to our own backoff


class SignedTransport:
    """Sends JSON requests to one base URL, signed as one IAM principal."""

    def __init__(
        self,
        base_url: str,
        credentials: Credentials | None,
        region: str = DEFAULT_REGION,
        *,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("base_url must be an http(s) URL")
        if parts.query or parts.fragment:
            raise ValueError("base_url must not carry a query or fragment")
        self.base_url = base_url.rstrip("/")
        self.region = region
        self._signer = SigV4Auth(credentials, SERVICE, region) if credentials is not None else None
        self._bearer: str | None = None
        self._timeout = timeout
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_NoRedirects())

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """Send once or more until an answer that is not retryable; return its parsed JSON.

        Raises a typed `ApiError` for error statuses, `TransportError` when the server could not
        be reached, `ProtocolError` for a success whose body is not JSON.
        """
        # Serialised once, so every retry sends byte-identical content (same event ids).
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            try:
                status, payload, retry_after = self._send_once(method, path, data)
            except (urllib.error.URLError, HTTPException, OSError) as exc:
                if attempt >= self._retry.max_attempts:
                    raise TransportError(method, path, attempt, _reason(exc)) from None
                self._sleep(self._retry.delay(attempt))
                continue
            if _is_retryable_status(status) and attempt < self._retry.max_attempts:
                self._sleep(self._retry.delay(attempt, _retry_after(retry_after)))
                continue
            if not 200 <= status < 300:  # a redirect is an error too: it is never followed
                raise error_for(status, _error_code(payload), method, path)
            return self._parse(method, path, status, payload)

    def _send_once(
        self, method: str, path: str, data: bytes | None
    ) -> tuple[int, bytes, str | None]:
        """One signed attempt: (status, body, Retry-After header)."""
        url = self.base_url + path
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self._bearer is not None:  # a connection token (BearerTransport): no signature
            headers["Authorization"] = f"Bearer {self._bearer}"
        aws_request = AWSRequest(method=method, url=url, data=data, headers=headers)
        # Signed afresh for each attempt so X-Amz-Date stays inside the server's freshness window.
        if self._signer is not None:
            self._signer.add_auth(aws_request)
        prepared = aws_request.prepare()
        request = urllib.request.Request(
            prepared.url, data=data, headers=dict(prepared.headers.items()), method=method
        )
        try:
            with self._opener.open(request, timeout=self._timeout) as response:
                return response.status, _read_capped(response), None
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, _read_capped(exc), exc.headers.get("Retry-After")

    @staticmethod
    def _parse(method: str, path: str, status: int, payload: bytes) -> Any:
        if status == 204 or not payload:
            return None
        try:
            return json.loads(payload)
        except ValueError:
            raise ProtocolError(method, path, "body is not JSON") from None


class BearerTransport(SignedTransport):
    """The same sending, retrying and parsing, authenticated by a person's connection token.

    The token is never part of a message, an error or a repr.
    """

    def __init__(self, base_url: str, token: str, **kwargs: Any) -> None:
        super().__init__(base_url, None, **kwargs)
        self._bearer = token


def _read_capped(response: Any) -> bytes:
    payload: bytes = response.read(_MAX_RESPONSE_BYTES + 1)
    return payload[:_MAX_RESPONSE_BYTES]


def _error_code(payload: bytes) -> str | None:
    """The contract's `code` from an error body, if there is one; the `message` is never kept."""
    try:
        document = json.loads(payload)
    except ValueError:
        return None
    code = document.get("code") if isinstance(document, dict) else None
    return code if isinstance(code, str) else None


def _reason(exc: BaseException) -> str:
    """A short, text-free description of why a connection failed."""
    if isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, BaseException):
        exc = exc.reason
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timed out"
    return type(exc).__name__
