"""One error hierarchy for the SDK, so callers branch on types and codes, never on message text.

Privacy rule: an exception carries the HTTP status, the contract's error code and the route that
was called, and nothing from the request body or the server's free-text message. Memory text can
therefore never reach a log through an SDK exception, even if a misbehaving server echoed it.
"""

from __future__ import annotations

import re

__all__ = [
    "ApiError",
    "ConflictError",
    "CredentialRefusedError",
    "CredentialsFileError",
    "ForbiddenError",
    "InvalidRequestError",
    "LimitReachedError",
    "MemoryOffError",
    "MemorySdkError",
    "NotFoundError",
    "ProtocolError",
    "RateLimitedError",
    "ServerError",
    "TransportError",
    "UnauthorizedError",
    "error_for",
]

# A code we are willing to repeat: the contract's codes are short snake_case words; anything else
# (a hostile or broken server) is replaced so it cannot smuggle text into our messages.
_CODE_SHAPE = re.compile(r"[a-z][a-z0-9_]{0,63}")


class MemorySdkError(Exception):
    """Base of every error this SDK raises on purpose."""


class CredentialsFileError(MemorySdkError, ValueError):
    """The local credentials file is missing, unreadable or not the launcher's shape."""


class TransportError(MemorySdkError):
    """The server could not be reached (or kept failing) after every retry."""

    def __init__(self, method: str, path: str, attempts: int, reason: str) -> None:
        self.method = method
        self.path = path
        self.attempts = attempts
        self.reason = reason
        super().__init__(f"{method} {path} failed after {attempts} attempt(s): {reason}")


class ProtocolError(MemorySdkError):
    """A response was not the shape the contract promises (the field is named, never its value)."""

    def __init__(self, method: str, path: str, problem: str) -> None:
        self.method = method
        self.path = path
        self.problem = problem
        super().__init__(f"{method} {path}: unexpected response: {problem}")


class ApiError(MemorySdkError):
    """The server answered with an error status; `status` and `code` say which."""

    def __init__(self, status: int, code: str, method: str, path: str) -> None:
        self.status = status
        self.code = code if _CODE_SHAPE.fullmatch(code) else "unknown"
        self.method = method
        self.path = path
        super().__init__(f"{method} {path} -> {status} {self.code}")


class InvalidRequestError(ApiError):
    """400 `invalid_request`."""


class UnauthorizedError(ApiError):
    """401 `unauthorized`."""


class ForbiddenError(ApiError):
    """403 `forbidden`: the signature was refused or this role may not call the route."""


class NotFoundError(ApiError):
    """404 `not_found`: for sessions, the session was never registered."""


class ConflictError(ApiError):
    """409 `conflict`: e.g. a session re-registered with another user or manifest."""


class MemoryOffError(ApiError):
    """409 `memory_off`."""


class LimitReachedError(ApiError):
    """409 `limit_reached`."""


class CredentialRefusedError(ApiError):
    """422 `credential_refused`: the text looked like a secret and was not stored."""


class RateLimitedError(ApiError):
    """429: still throttled after every retry."""


class ServerError(ApiError):
    """5xx: still failing after every retry."""


_BY_CODE: dict[str, type[ApiError]] = {
    "invalid_request": InvalidRequestError,
    "unauthorized": UnauthorizedError,
    "forbidden": ForbiddenError,
    "not_found": NotFoundError,
    "conflict": ConflictError,
    "memory_off": MemoryOffError,
    "limit_reached": LimitReachedError,
    "credential_refused": CredentialRefusedError,
}

# Used when the body carried no usable code (a gateway error page, an empty body).
_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    422: CredentialRefusedError,
    429: RateLimitedError,
}


def error_for(status: int, code: str | None, method: str, path: str) -> ApiError:
    """Build the typed exception for an error response: by contract code first, then by status."""
    cls = _BY_CODE.get(code or "")
    if cls is None:
        cls = ServerError if status >= 500 else _BY_STATUS.get(status, ApiError)
    return cls(status, code or f"http_{status}", method, path)
