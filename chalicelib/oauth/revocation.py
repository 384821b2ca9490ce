"""RFC 7009 token revocation through Authlib's `RevocationEndpoint`: a client ends its own connection.

A refresh token (`pmr_…`) or an access token (the JWT) names a connection; revoking either ends that connection
as the Agents tab's revoke does (services/oauth.py: its rows go, so every token of it stops). What Authlib does:
the client's authentication (the methods registration allows: `none` for public clients with their `client_id`),
`token` required, an unknown `token_type_hint` refused (`unsupported_token_type`), a token issued to another client
refused (`invalid_grant`), and 200 with an empty body for every token it does not know (RFC 7009 §2.2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from authlib.oauth2.rfc6749 import UnsupportedTokenTypeError
from authlib.oauth2.rfc7009 import RevocationEndpoint

from chalicelib.oauth.clients import AUTH_METHODS, OAuthClient


@dataclass(frozen=True)
class Revocable:
    """A token found: the client it was issued to and the connection it names (whose, and which)."""

    client_id: str
    user_id: str
    connection_id: str

    def check_client(self, client: OAuthClient) -> bool:
        return client.client_id == self.client_id


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = list(AUTH_METHODS)

    def __init__(
        self, server: Any, find: Callable[[str, str | None], Revocable | None], end: Callable[[Revocable], None]
    ) -> None:
        super().__init__(server)
        self.find, self.end = find, end

    def check_params(self, request: Any, client: OAuthClient) -> None:
        try:
            super().check_params(request, client)
        except UnsupportedTokenTypeError as error:  # Authlib answers it 401; RFC 7009 §2.2.1 is RFC 6749 §5.2's 400
            error.status_code = 400
            error.description = "token_type_hint must be access_token or refresh_token."
            raise

    def query_token(self, token_string: str, token_type_hint: str | None) -> Revocable | None:
        return self.find(token_string, token_type_hint)

    def revoke_token(self, token: Revocable, request: Any) -> None:
        self.end(token)
