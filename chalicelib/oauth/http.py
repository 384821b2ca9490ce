"""The OAuth routes' HTTP edges: form bodies in, RFC 6749's error shape out (`{"error", "error_description"}`)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from chalice import Response

from chalicelib.errors import ServiceError
from chalicelib.logs import get_logger
from chalicelib.web_api import Headers

logger = get_logger("personal_memory.oauth")
MAX_FORM_BYTES = 16_384
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


class FormRefused(ValueError):
    """A token request's body that is no form."""


def answer(status: int, body: Any, headers: dict[str, str]) -> Response:
    """An Authlib answer (status, body, headers) as a Chalice response; JSON bodies, never cached."""
    sent: Headers = {**headers, **NO_STORE}
    if isinstance(body, dict):
        sent["Content-Type"] = "application/json"
        return Response(body=json.dumps(body), status_code=status, headers=sent)
    return Response(body=body or "", status_code=status, headers=sent)


def error(status: int, code: str, description: str) -> Response:
    return answer(status, {"error": code, "error_description": description}, {})


def form(raw: bytes | None, content_type: str | None) -> dict[str, list[str]]:
    """An `application/x-www-form-urlencoded` body (RFC 6749 §3.2), every value kept (repeats are refused later)."""
    if not str(content_type or "").lower().startswith("application/x-www-form-urlencoded"):
        raise FormRefused("The body must be application/x-www-form-urlencoded.")
    data = raw or b""
    if len(data) > MAX_FORM_BYTES:
        raise FormRefused("The body is too large.")
    try:
        return parse_qs(data.decode("utf-8"), keep_blank_values=True, errors="strict")
    except (UnicodeDecodeError, ValueError) as exc:
        raise FormRefused("The body is not a valid form.") from exc


def oauth_errors(view: Callable[..., Any]) -> Callable[..., Any]:
    """Every OAuth endpoint answers its errors in RFC 6749's shape, a 500 naming nothing but its type in the log."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return view(*args, **kwargs)
        except FormRefused as exc:
            return error(400, "invalid_request", str(exc))
        except ServiceError as exc:
            if exc.status == 503:
                return answer(
                    503, {"error": "temporarily_unavailable", "error_description": exc.message}, exc.headers()
                )
            return error(
                exc.status if exc.status < 500 else 500,
                "invalid_request" if exc.status < 500 else "server_error",
                exc.message,
            )
        except Exception as exc:  # noqa: BLE001 - the last line of defence: log the type only, never data
            logger.error("unhandled error", extra={"error_type": type(exc).__name__})
            return error(500, "server_error", "Something went wrong.")

    return wrapped
