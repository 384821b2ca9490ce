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


class InvalidRequest(ServiceError):
    code, status, default_message = "invalid_request", 400, "The request is not valid."


class Unauthorized(ServiceError):
    code, status, default_message = "unauthorized", 401, "Sign in again: the token is missing or not valid."


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


class CredentialRefused(ServiceError):
    code, status = "credential_refused", 422

    def __init__(self, shape: str) -> None:
        super().__init__(f"This text looks like a credential ({shape}) and was not saved.", shape=shape)
        self.shape = shape


__all__ = [
    "ServiceError",
    "InvalidRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "MemoryOff",
    "LimitReached",
    "Conflict",
    "CredentialRefused",
]
