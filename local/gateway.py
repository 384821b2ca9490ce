"""The local API Gateway: Chalice's, plus what the real one does that Chalice's does not.

- IAM routes: verifies real SigV4 signatures (local/sigv4.py) and puts the signer's ARN into
  `requestContext.identity.userArn`; a bad signature is 403 before the app runs.
- Authorizer refusals answer in the contract's `{"code", "message"}` shape (deployed, gateway
  responses in the template do the same).
- `POST /dev/token` signs a user in locally, `POST /dev/clock {"advance_seconds"}` moves the dev
  clock, `POST /dev/ttl-sweep` runs TTL's deletion now; the deployed app has none of these routes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from chalice.local import ChaliceRequestHandler, ForbiddenError, LocalGateway, NotAuthorizedError

from chalicelib.models import iso
from local.dev_clock import DevClock
from local.sigv4 import LocalPrincipal, SignatureRejected, verify_request
from local.ttl_sweeper import TtlSweeper

JSON = {"Content-Type": "application/json"}
MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit
_USER_ID = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")


def _error(status: int, code: str, message: str) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": dict(JSON),
        "multiValueHeaders": {},
        "body": json.dumps({"code": code, "message": message}),
    }


def _ok(document: dict[str, Any]) -> dict[str, Any]:
    return {"statusCode": 200, "headers": dict(JSON), "multiValueHeaders": {}, "body": json.dumps(document)}


class _NotAnObject(ValueError):
    """The body is not one JSON object (malformed, nested past Python's recursion limit, or another type)."""


def _json_object(body: bytes | None) -> dict[str, Any]:
    try:
        document = json.loads(body or b"{}")
    except (ValueError, RecursionError) as exc:  # RecursionError: `[[[[…` thousands deep
        raise _NotAnObject() from exc
    if not isinstance(document, dict):
        raise _NotAnObject()
    return document


@dataclass(frozen=True)
class DevRoutes:
    """The launcher's own routes (never the app's): sign-in, the dev clock, TTL's deletion on demand."""

    mint: Callable[[str], str]
    clock: DevClock
    sweeper: TtlSweeper

    def handle(self, route: str, method: str, body: bytes | None) -> dict[str, Any] | None:
        handlers = {"/dev/token": self._token, "/dev/clock": self._advance, "/dev/ttl-sweep": self._sweep}
        handler = handlers.get(route)
        if handler is None:
            return None
        if method != "POST":
            return _error(405, "invalid_request", "Use POST.")
        try:
            document = _json_object(body)
        except _NotAnObject:
            return _error(400, "invalid_request", "The body must be one JSON object.")
        return handler(document)

    def _token(self, document: dict[str, Any]) -> dict[str, Any]:
        user_id = document.get("user_id")
        if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id):
            return _error(400, "invalid_request", "user_id: 1-64 letters, digits or . _ @ -")
        return _ok({"token": self.mint(user_id)})

    def _advance(self, document: dict[str, Any]) -> dict[str, Any]:
        seconds = document.get("advance_seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            return _error(400, "invalid_request", "advance_seconds: a number of seconds, 0 or more.")
        try:
            now = self.clock.advance(float(seconds))
        except ValueError as exc:
            return _error(400, "invalid_request", str(exc))
        return _ok({"now": iso(now)})

    def _sweep(self, document: dict[str, Any]) -> dict[str, Any]:
        del document
        return _ok({"deleted": self.sweeper.sweep(lag_seconds=0)})


class MemoryGateway(LocalGateway):
    def __init__(self, app_object: Any, config: Any, principals: dict[str, LocalPrincipal], dev: DevRoutes) -> None:
        super().__init__(app_object, config)
        self._principals = principals
        self._dev = dev
        self._signer_arn: str | None = None

    def handle_request(self, method: str, path: str, headers: dict[str, str], body: bytes | None) -> dict[str, Any]:
        route, _, query = path.partition("?")
        answered = self._dev.handle(route, method, body)
        if answered is not None:
            return answered
        from chalice.app import IAMAuthorizer

        entry = self._route_entry(method, route)
        if entry is None and method.upper() != "OPTIONS":
            # API Gateway answers a path or method it does not know with 403, its MISSING_AUTHENTICATION_TOKEN
            # response, to which the template gives this body; Chalice would answer 405 in its own shape.
            return _error(403, "forbidden", "The request is not signed, or there is no such route.")
        lowered = {k.lower(): v for k, v in headers.items()}
        self._signer_arn = None
        # Only IAM routes check signatures (as API Gateway); elsewhere the header is just a bad token.
        if lowered.get("authorization", "").startswith("AWS4-HMAC-SHA256") and isinstance(
            entry and entry.authorizer, IAMAuthorizer
        ):
            try:
                self._signer_arn = verify_request(method, route, query, headers, body or b"", self._principals)
            except SignatureRejected:
                return _error(403, "forbidden", "The request signature is not valid.")
        try:
            return super().handle_request(method, path, headers, body)
        except NotAuthorizedError:
            return _error(401, "unauthorized", "Sign in again: the token is missing or not valid.")
        except ForbiddenError:
            return _error(403, "forbidden", "This caller may not use this route.")

    def _route_entry(self, method: str, route: str) -> Any:
        """The app's route for this method and path; None when there is none (API Gateway: 403)."""
        try:
            resource = self.event_converter._route_matcher.match_route(route).route
            return self._app_object.routes[resource][method.upper()]
        except (ValueError, KeyError):
            return None

    def _generate_lambda_event(self, method: str, path: str, headers: Any, body: bytes | None) -> dict[str, Any]:
        event = super()._generate_lambda_event(method, path, headers, body)
        if self._signer_arn:
            event["requestContext"]["identity"]["userArn"] = self._signer_arn
        return event


class MemoryRequestHandler(ChaliceRequestHandler):
    """Chalice's request handler with our gateway, and no access log (paths carry ids; keep stderr quiet)."""

    def __init__(
        self,
        request: Any,
        client_address: Any,
        server: Any,
        app_object: Any,
        config: Any,
        principals: Any = None,
        dev: Any = None,
    ) -> None:
        self.local_gateway = MemoryGateway(app_object, config, principals, dev)
        BaseHTTPRequestHandler.__init__(self, request, client_address, server)

    request_version: str  # http.server's, set while it parses the request line
    # TCP_NODELAY: http.server writes the status and headers, then the body, in two sends. On a kept-alive
    # connection Nagle held the second until the client's delayed ACK (~40 ms): every request after the
    # first on a connection (browsers, requests.Session, schemathesis) took ~45 ms instead of a few.
    disable_nagle_algorithm = True
    timeout = 30  # seconds a connection may sit half-sent (a Content-Length longer than the body) before it is closed

    def _generic_handle(self) -> None:
        """Chalice's handler, after a Content-Length check: a bad one is a 400 in the contract's shape, not a crash."""
        declared = self.headers.get("content-length", "0").strip()
        if not declared.isdigit() or not declared.isascii() or int(declared) > MAX_BODY_BYTES:
            self.close_connection = True  # what follows on this connection cannot be framed
            body = json.dumps(
                {"code": "invalid_request", "message": "Content-Length must be a byte count up to 10 MB."}
            )
            self._send_http_response(400, {"Content-Type": "application/json"}, body)
            return
        super()._generic_handle()

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = _generic_handle

    def __getattr__(self, name: str) -> Any:
        """Every other method (TRACE, CONNECT, PROPFIND...) reaches the gateway too, which answers it as
        API Gateway does (403, the contract's body), instead of http.server's 501 HTML page."""
        if name.startswith("do_"):
            return self._generic_handle
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a request line it cannot parse, one too long, too many headers) in the
        contract's JSON shape; its message names the limit broken, never echoes the request."""
        del message, explain
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # the request line was not read: answer with a status line
            self.request_version = "HTTP/1.0"
        body = json.dumps({"code": "invalid_request", "message": f"The HTTP request could not be read ({code})."})
        headers = {"Content-Type": "application/json"}
        if getattr(self, "command", None) == "HEAD":
            self._send_http_response_no_body(code, headers)
        else:
            self._send_http_response(code, headers, body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return
