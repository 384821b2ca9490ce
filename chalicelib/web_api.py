"""The glue between Chalice requests and the services: bodies in, JSON and contract errors out."""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable
from typing import Any

from chalice import Response

from chalicelib.errors import InvalidRequest, NotFound, ServiceError, Unauthorized
from chalicelib.logs import get_logger, user_hash

logger = get_logger("personal_memory.api")

Headers = dict[str, str | list[str]]  # what chalice.Response takes (a list for a repeated header)
JSON_HEADERS: Headers = {"Content-Type": "application/json", "Cache-Control": "no-store"}


def json_response(body: Any, status: int = 200) -> Response:
    if body is None:
        return Response(body="", status_code=status, headers={"Cache-Control": "no-store"})
    return Response(body=json.dumps(body), status_code=status, headers=JSON_HEADERS)


def tagged_response(body: Any, etag: str) -> Response:
    """200 with its ETag, or 304 (no body) when `body` is None: the client's copy is current."""
    headers: Headers = {**JSON_HEADERS, "ETag": etag}
    if body is None:
        headers.pop("Content-Type")
        return Response(body="", status_code=304, headers=headers)
    return Response(body=json.dumps(body), status_code=200, headers=headers)


def error_response(error: ServiceError) -> Response:
    return Response(
        body=json.dumps(error.body()), status_code=error.status, headers={**JSON_HEADERS, **error.headers()}
    )


def contract_errors(view: Callable[..., Any]) -> Callable[..., Any]:
    """Every view answers errors as `{"code", "message"}`; unexpected ones as a bare 500 that names no data."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return view(*args, **kwargs)
        except ServiceError as error:
            if error.code == "limit_reached":  # the only user-facing cap: 200 active entries
                from chalicelib.metrics import count

                count("CapRefusals", ("Cap", "active_entries"))
            return error_response(error)
        except Exception as exc:  # noqa: BLE001 - the last line of defence: log the type only, never data
            logger.error("unhandled error", extra={"error_type": type(exc).__name__})
            return error_response(ServiceError())

    return wrapped


def path_id(value: str) -> str:
    """A path parameter as the client meant it: percent-escapes decoded once.

    Clients encode every reserved character of an id in a path segment (the SDK quotes `:` as `%3A`),
    and the local gateway hands the segment over as sent. Decoding here makes `c%3A1` and `c:1` the same
    session wherever we run; an id never holds `%`, so an id that arrives decoded is left as it is.
    Bytes that are not UTF-8 become U+FFFD, which no identifier allows (a 400).
    """
    from urllib.parse import unquote

    return unquote(value)


def user_id_of(request: Any) -> str:
    """The user id the authorizer verified (the token's `sub`); `?user_id=` is never consulted."""
    authorizer = (request.context or {}).get("authorizer") or {}
    user_id = authorizer.get("principalId")
    if not user_id or not token_unexpired(authorizer.get("tokenExpires")):
        raise Unauthorized()
    return str(user_id)


def token_unexpired(expires: Any, now: float | None = None) -> bool:
    """The authorizer's answer is cached per token (app.py): its `tokenExpires` (the token's `exp`) still holds.

    API Gateway passes authorizer context values as strings; anything but a whole number of seconds is refused.
    """
    try:
        seconds = int(str(expires))
    except ValueError:
        return False
    return seconds > (time.time() if now is None else now)


def refuse_token(exc: Unauthorized) -> None:
    """Make an authorizer refusal a 401 wherever we run.

    API Gateway turns an authorizer that fails with the message "Unauthorized" into a 401 (the
    deployed gateway response gives it the contract's body). Chalice's local gateway and test client
    instead understand their own NotAuthorizedError, which only exists where chalice.local does.
    """
    try:
        from chalice.local import NotAuthorizedError
    except ImportError:  # deployed: chalice.local is not packaged
        raise Exception("Unauthorized") from None
    body = json.dumps(exc.body()).encode()
    raise NotAuthorizedError({"Content-Type": "application/json", "x-amzn-ErrorType": "UnauthorizedException"}, body)


def page_asset(name: str, page_settings: Any) -> Response:
    """One of the page's files with a CSP that forbids inline script and every remote origin."""
    from chalicelib.web import content_security_policy, load_asset

    try:
        data, content_type = load_asset(name)
    except KeyError:
        return error_response(NotFound())
    token_url = str(page_settings.get("token_url", "")) if page_settings else ""
    headers: Headers = {
        "Content-Type": content_type,
        "Content-Security-Policy": content_security_policy(token_url),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
    return Response(body=data.decode("utf-8"), status_code=200, headers=headers)


def required_query(request: Any, name: str) -> str:
    value = (request.query_params or {}).get(name, "")
    if not value or len(value) > 128:
        raise InvalidRequest(f"The query parameter {name} is required.")
    return str(value)


def query_int(request: Any, name: str, *, default: int, low: int, high: int) -> int:
    raw = (request.query_params or {}).get(name)
    if raw is None:
        return default
    # "²".isdigit() is True; int() refuses more than 4,300 digits (ValueError), so the length is checked first.
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 20) or not low <= int(raw) <= high:
        raise InvalidRequest(f"The query parameter {name} must be a whole number from {low} to {high}.")
    return int(raw)


def _caller_kind(context: dict[str, Any]) -> tuple[str, str | None]:
    from chalicelib.auth import callers
    from chalicelib.config import get_settings

    principal = (context.get("authorizer") or {}).get("principalId")
    if principal:
        return "user", str(principal)
    arn = callers.caller_arn(context)
    if arn is None:
        return "anonymous", None
    settings = get_settings()
    key = callers.principal_key(arn)
    for kind, allowed in (
        ("host", settings.host_arns),
        ("worker", settings.worker_arns),
        ("operator", settings.operator_arns),
    ):
        if key in {callers.principal_key(a) for a in allowed}:
            return kind, None
    return "unknown_iam", None


def log_requests(event: Any, get_response: Callable[[Any], Any]) -> Any:
    """Chalice HTTP middleware: one JSON line per request — route, status, caller kind, hashed user, latency."""
    started = time.perf_counter()
    response = get_response(event)
    if response.status_code >= 500:  # handled or not, Lambda's Errors never counts these: the alarms read this
        from chalicelib.metrics import count

        count("Unavailable" if response.status_code == 503 else "ServerErrors")
    context = event.context or {}
    try:
        kind, user = _caller_kind(context)
    except Exception:  # noqa: BLE001 - logging must never break a response
        kind, user = "unknown", None
    logger.info(
        "request",
        extra={
            "route": context.get("resourcePath"),
            "method": event.method,
            "status": response.status_code,
            "caller": kind,
            "user": user_hash(user),
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
            "request_id": context.get("requestId"),
        },
    )
    return response


_HOST = re.compile(r"[A-Za-z0-9.\-]{1,253}(?::[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](?::[0-9]{1,5})?")


def base_url(request: Any) -> str:
    """This API's own URL (scheme, host, stage), as the caller reached it: for links the API gives out.

    A Host header that is not a plain host name (or an address) gives a relative base: nothing a caller
    sends can put text into a header we answer with.
    """
    headers, context = request.headers or {}, request.context or {}
    host = str(headers.get("host") or "")
    if not _HOST.fullmatch(host):
        return ""
    scheme = "https" if str(headers.get("x-forwarded-proto", "")).lower() == "https" else "http"
    path, resource = str(context.get("path") or ""), str(context.get("resourcePath") or "")
    stage = path[: -len(resource)] if resource and path.endswith(resource) else ""
    stage = stage if re.fullmatch(r"(/[A-Za-z0-9_\-]{1,128})?", stage) else ""
    return f"{scheme}://{host}{stage}"
