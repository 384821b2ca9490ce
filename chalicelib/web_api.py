"""The glue between Chalice requests and the services: bodies in, JSON and contract errors out."""
from __future__ import annotations

import functools
import json
import logging
from typing import Any, Callable

from chalice import Response

from chalicelib.errors import NotFound, ServiceError, Unauthorized

logger = logging.getLogger("personal_memory")

JSON_HEADERS = {"Content-Type": "application/json", "Cache-Control": "no-store"}


def json_response(body: Any, status: int = 200) -> Response:
    if body is None:
        return Response(body="", status_code=status, headers={"Cache-Control": "no-store"})
    return Response(body=json.dumps(body), status_code=status, headers=JSON_HEADERS)


def error_response(error: ServiceError) -> Response:
    return Response(body=json.dumps(error.body()), status_code=error.status, headers=JSON_HEADERS)


def contract_errors(view: Callable[..., Any]) -> Callable[..., Any]:
    """Every view answers errors as `{"code", "message"}`; unexpected ones as a bare 500 that names no data."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return view(*args, **kwargs)
        except ServiceError as error:
            return error_response(error)
        except Exception as exc:  # noqa: BLE001 - the last line of defence: log the type only, never data
            logger.error("unhandled error", extra={"error_type": type(exc).__name__})
            return error_response(ServiceError())

    return wrapped


def user_id_of(request: Any) -> str:
    """The user id the authorizer verified (the token's `sub`); `?user_id=` is never consulted."""
    authorizer = (request.context or {}).get("authorizer") or {}
    user_id = authorizer.get("principalId")
    if not user_id:
        raise Unauthorized()
    return str(user_id)


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
    headers = {
        "Content-Type": content_type,
        "Content-Security-Policy": content_security_policy(token_url),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
    return Response(body=data.decode("utf-8"), status_code=200, headers=headers)
