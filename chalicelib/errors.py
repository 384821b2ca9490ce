"""One error hierarchy for the whole service; each error carries its contract code and HTTP status.

Messages are written by us, never built from submitted text: an error body can never echo a memory.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """Base of every error the API reports as `{"code", "message"}`."""

    code = "internal_error"
    status = 500
    default_message = "Something went wrong."

    def __init__(self, message: str | None = None, **extra: Any) -> None:
        super().__init__(message or self.default_message)
        self.message = message or self.default_message
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.extra}

    def headers(self) -> dict[str, str]:
        """Extra response headers this error carries (none but `unavailable`'s Retry-After)."""
        return {}


class InvalidRequest(ServiceError):
    code, status, default_message = "invalid_request", 400, "The request is not valid."


class Unauthorized(ServiceError):
    code, status, default_message = "unauthorized", 401, "Sign in again: the token is missing or not valid."
    challenge = ""  # a WWW-Authenticate value (RFC 6750), set where the route knows its scheme

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": self.challenge} if self.challenge else {}


class Forbidden(ServiceError):
    code, status, default_message = "forbidden", 403, "This caller may not use this route."


class NotFound(ServiceError):
    code, status, default_message = "not_found", 404, "Not found."


class MemoryOff(ServiceError):
    code, status, default_message = "memory_off", 409, "Memory is off: turn it on to add or accept entries."


class LimitReached(ServiceError):
    code, status, default_message = "limit_reached", 409, "A limit was reached."


class Conflict(ServiceError):
    code, status, default_message = "conflict", 409, "This conflicts with what is already stored."


class Duplicate(ServiceError):
    """The text is already kept (compared as a person reads it): the body names the existing id, never its text."""

    code, status = "duplicate", 409

    def __init__(self, existing_id: str, message: str = "This is already in your memory.") -> None:
        super().__init__(message, existing_id=existing_id)
        self.existing_id = existing_id


class CredentialRefused(ServiceError):
    code, status = "credential_refused", 422

    def __init__(self, shape: str) -> None:
        super().__init__(f"This text looks like a credential ({shape}) and was not saved.", shape=shape)
        self.shape = shape


class Unavailable(ServiceError):
    """AWS kept refusing (throttling, conflicts, internal errors, timeouts) after bounded retries; nothing was changed."""

    code, status, default_message = "unavailable", 503, "The service is busy: try again in a moment."
    retry_after_seconds = 2

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_seconds)}


__all__ = [
    "ServiceError",
    "InvalidRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "MemoryOff",
    "LimitReached",
    "Conflict",
    "Duplicate",
    "CredentialRefused",
    "Unavailable",
]
