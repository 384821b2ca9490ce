"""Authlib's authorization server, fitted to this service: code + PKCE S256, RFC 8707 `resource`, rotating refresh tokens.

Authlib does the protocol (request validation, client authentication, PKCE, the error shapes of RFC 6749);
this module gives it its storage (storage/oauth.py, through `Context`) and its tokens (oauth/access.py). What
Authlib leaves to the server and is decided here:
- a code is **spent** only by an exchange that passed every check (client, redirect URI, PKCE), by a conditional
  write before anything is issued, so it is used once even under concurrent requests; each exchange is counted on
  the code before its checks, and after 3 the code is dead (a weak verifier cannot be guessed; an interceptor's
  wrong verifier spends nothing, so the client's own exchange is no replay); a spent code presented again and
  passing every check (a replay) revokes the connection it was issued for;
- a refresh token is spent by a conditional write before anything is issued; a second use (a replay, by anyone)
  revokes the connection it was issued for;
- `resource` (RFC 8707) must name this service's `/mcp` when given (else `invalid_target`); tokens carry it;
- PKCE is required of every client, S256 only (a missing or `plain` challenge is `invalid_request`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import InvalidGrantError, InvalidRequestError, OAuth2Error, OAuth2Request, grants
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload, JsonRequest
from authlib.oauth2.rfc7636 import CodeChallenge

from chalicelib.oauth.clients import AUTH_METHODS, OAuthClient
from chalicelib.storage.oauth import Grant

# Authlib logs issued tokens at DEBUG ("Issue token %r to %r"): nothing of a token reaches the logs.
logging.getLogger("authlib").setLevel(logging.WARNING)

ACCESS_SECONDS = 3600
REFRESH_SECONDS = 30 * 86400
CODE_SECONDS = 300


class InvalidTargetError(OAuth2Error):
    """RFC 8707 §2: the requested resource is not this service's MCP endpoint."""

    error = "invalid_target"
    description = "The resource must be this service's MCP endpoint."


@dataclass(frozen=True)
class Context:
    """What the grants need from the service: lookups, storage and the token makers (services/oauth.py)."""

    resource: str
    now: Callable[[], int]
    query_client: Callable[[str], OAuthClient | None]
    save_code: Callable[[str, Grant], None]
    attempt_code: Callable[[str, str], Grant | None]  # (code, client id) -> its grant, counting one exchange
    spend_code: Callable[[str, str], bool]  # (code, client id) -> spent now, by this exchange
    end: Callable[[Grant], None]  # revoke the grant's connection (a replayed code)
    spend_refresh: Callable[[str, str], Grant | None]  # (token, client id) -> its grant, once
    live: Callable[[Grant], bool]  # the grant's connection still stands
    access_token: Callable[[Grant], str]
    new_refresh: Callable[[Grant], str]  # stores the refresh token (rotation), returns it


class _Request(OAuth2Request):
    """An Authlib request from already-parsed parameters (query or form; repeated ones are refused before this)."""

    def __init__(self, method: str, params: Mapping[str, str], headers: Mapping[str, Any]) -> None:
        # Authlib refuses a plain-http URI (InsecureTransportError); the transport is API Gateway's https (or the
        # local stack's loopback), and Authlib uses the URI for nothing else.
        super().__init__(method, "https://oauth.invalid/", headers=dict(headers))
        self._params = dict(params)
        self.payload = BasicOAuth2Payload(self._params)

    @property
    def form(self) -> dict[str, str]:
        return self._params

    @property
    def args(self) -> dict[str, str]:
        return self._params


def request(method: str, params: Mapping[str, str], headers: Mapping[str, Any]) -> OAuth2Request:
    return _Request(method, params, headers)


def json_request(body: Mapping[str, Any], headers: Mapping[str, Any]) -> JsonRequest:
    built = JsonRequest("POST", "https://oauth.invalid/", dict(headers))
    built.payload = type("Payload", (), {"data": dict(body)})()
    return built


class _Record:
    """A code or a spent refresh token as Authlib's grants read it."""

    def __init__(self, grant: Grant, code: str = "") -> None:
        self.grant = grant
        self.code = code
        self.code_challenge = grant.code_challenge
        self.code_challenge_method = "S256"

    def get_redirect_uri(self) -> str:
        return self.grant.redirect_uri

    def get_scope(self) -> str:
        return ""

    def check_client(self, client: OAuthClient) -> bool:
        return client.client_id == self.grant.client_id


class S256Only(CodeChallenge):
    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: send a code_challenge.", redirect_uri=redirect_uri)
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256.", redirect_uri=redirect_uri)
        super().validate_code_challenge(grant, redirect_uri)


def _check_resource(grant: Any, expected: str, redirect_uri: str | None = None) -> None:
    asked = grant.request.payload.data.get("resource")
    if asked is not None and asked.rstrip("/") != expected:
        raise InvalidTargetError(redirect_uri=redirect_uri)


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = list(AUTH_METHODS)

    @property
    def ctx(self) -> Context:
        return self.server.ctx

    def validate_authorization_request(self) -> str:
        redirect_uri: str = super().validate_authorization_request()
        _check_resource(self, self.ctx.resource, redirect_uri)
        return redirect_uri

    def validate_token_request(self) -> None:
        _check_resource(self, self.ctx.resource)
        super().validate_token_request()

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        grant = replace(
            request.user,
            redirect_uri=str(data.get("redirect_uri") or ""),
            code_challenge=str(data.get("code_challenge") or ""),
            expires_at=self.ctx.now() + CODE_SECONDS,
        )
        self.ctx.save_code(code, grant)

    def query_authorization_code(self, code: str, client: OAuthClient) -> _Record | None:
        """The code, this exchange counted on it (a conditional write): Authlib then checks the redirect URI and PKCE."""
        found = self.ctx.attempt_code(code, client.client_id)
        return _Record(found, code) if found is not None else None

    def delete_authorization_code(self, authorization_code: _Record) -> None:
        """Spent already, by `authenticate_user`'s conditional write."""

    def authenticate_user(self, authorization_code: _Record) -> Grant:
        """Past every check: spend the code (a conditional write; a concurrent twin that lost issues nothing).

        A code that issued tokens before and passes every check again is a replay by someone holding its verifier:
        RFC 6749 §4.1.2, what it issued is revoked. One that fails a check revokes nothing (an interceptor has no
        verifier, and PKCE kept it from the tokens)."""
        grant = authorization_code.grant
        if grant.spent:
            self.ctx.end(grant)
            raise InvalidGrantError("The code was used before: what it issued is revoked.")
        if not self.ctx.spend_code(authorization_code.code, grant.client_id):
            raise InvalidGrantError("The code was used.")
        if not self.ctx.live(authorization_code.grant):
            raise InvalidGrantError("The connection this code was issued for is gone.")
        return authorization_code.grant


class RefreshGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = list(AUTH_METHODS)
    INCLUDE_NEW_REFRESH_TOKEN = True

    @property
    def ctx(self) -> Context:
        return self.server.ctx

    def validate_token_request(self) -> None:
        _check_resource(self, self.ctx.resource)
        super().validate_token_request()

    def authenticate_refresh_token(self, refresh_token: str) -> _Record | None:
        found = self.ctx.spend_refresh(refresh_token, self.request.client.client_id)
        return _Record(found) if found is not None else None

    def authenticate_user(self, refresh_token: _Record) -> Grant:
        if not self.ctx.live(refresh_token.grant):
            raise InvalidGrantError("The connection this token was issued for was revoked or has expired.")
        return refresh_token.grant

    def revoke_old_credential(self, refresh_token: _Record) -> None:
        """Spent already, by `authenticate_refresh_token`'s conditional write."""


class Server(AuthorizationServer):
    def __init__(self, ctx: Context) -> None:
        super().__init__(scopes_supported=[])
        self.ctx = ctx
        self.register_grant(CodeGrant, [S256Only(required=True)])
        self.register_grant(RefreshGrant)
        self.register_token_generator("default", self._tokens)

    def _tokens(self, grant_type: str, client: Any, user: Grant, **_: Any) -> dict[str, Any]:
        return {"token_type": "Bearer", "access_token": self.ctx.access_token(user), "expires_in": ACCESS_SECONDS}

    def query_client(self, client_id: str) -> OAuthClient | None:
        return self.ctx.query_client(client_id) if isinstance(client_id, str) and client_id else None

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        """Rotation: every token response carries a new refresh token, stored while the connection stands."""
        token["refresh_token"] = self.ctx.new_refresh(request.user)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    def create_oauth2_request(self, request: Any) -> Any:
        return request

    def create_json_request(self, request: Any) -> Any:
        return request

    def handle_response(self, status: int, body: Any, headers: Any) -> tuple[int, Any, dict[str, str]]:
        if isinstance(body, dict) and "error" in body and not body.get("error_description"):
            body = {**body, "error_description": _DESCRIPTIONS.get(body["error"], "The request was refused.")}
        return status, body, dict(headers)


_DESCRIPTIONS = {  # what an error Authlib raises without a description says
    "invalid_grant": "The code or refresh token is not valid: it was used, has expired, or was never issued.",
    "invalid_client": "The client is not known or did not authenticate.",
    "unsupported_grant_type": "grant_type must be authorization_code or refresh_token.",
    "invalid_request": "The request is missing a parameter or has one that is not valid.",
}
