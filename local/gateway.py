"""The local API Gateway: Chalice's, plus what the real one does that Chalice's does not.

- IAM routes: verifies real SigV4 signatures (local/sigv4.py) and puts the signer's ARN into
  `requestContext.identity.userArn`; a bad signature is 403 before the app runs.
- Authorizer refusals answer in the contract's `{"code", "message"}` shape (deployed, gateway
  responses in the template do the same).
- `POST /dev/token` signs a user in locally; the deployed app has no such route.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from chalice.local import ChaliceRequestHandler, ForbiddenError, LocalGateway, NotAuthorizedError

from local.sigv4 import LocalPrincipal, SignatureRejected, verify_request

JSON = {"Content-Type": "application/json"}
_USER_ID = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")


def _error(status: int, code: str, message: str) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": dict(JSON),
        "multiValueHeaders": {},
        "body": json.dumps({"code": code, "message": message}),
    }


class MemoryGateway(LocalGateway):
    def __init__(self, app_object: Any, config: Any, principals: dict[str, LocalPrincipal], mint: Callable[[str], str]) -> None:
        super().__init__(app_object, config)
        self._principals = principals
        self._mint = mint
        self._signer_arn: str | None = None

    def handle_request(self, method: str, path: str, headers: dict[str, str], body: bytes | None) -> dict[str, Any]:
        route, _, query = path.partition("?")
        if route == "/dev/token":
            return self._dev_token(method, body)
        from chalice.app import IAMAuthorizer

        entry = self._route_entry(method, route)
        if entry is None and method.upper() != "OPTIONS":
            # API Gateway answers a path or method it does not know with 403 (its gateway response
            # gives it the contract's body); Chalice would answer 405 in its own shape.
            return _error(403, "forbidden", "This caller may not use this route.")
        lowered = {k.lower(): v for k, v in headers.items()}
        self._signer_arn = None
        # Only IAM routes check signatures (as API Gateway); elsewhere the header is just a bad token.
        if lowered.get("authorization", "").startswith("AWS4-HMAC-SHA256") and isinstance(entry and entry.authorizer, IAMAuthorizer):
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

    def _dev_token(self, method: str, body: bytes | None) -> dict[str, Any]:
        if method != "POST":
            return _error(405, "invalid_request", "Use POST.")
        try:
            user_id = json.loads(body or b"{}").get("user_id")
        except (ValueError, AttributeError):
            user_id = None
        if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id):
            return _error(400, "invalid_request", "user_id: 1-64 letters, digits or . _ @ -")
        return {"statusCode": 200, "headers": dict(JSON), "multiValueHeaders": {}, "body": json.dumps({"token": self._mint(user_id)})}


class MemoryRequestHandler(ChaliceRequestHandler):
    """Chalice's request handler with our gateway, and no access log (paths carry ids; keep stderr quiet)."""

    def __init__(self, request: Any, client_address: Any, server: Any, app_object: Any, config: Any, principals: Any = None, mint: Any = None) -> None:
        self.local_gateway = MemoryGateway(app_object, config, principals, mint)
        BaseHTTPRequestHandler.__init__(self, request, client_address, server)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return
