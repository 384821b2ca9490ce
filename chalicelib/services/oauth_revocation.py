"""RFC 7009 token revocation (docs/oauth.md): a client's refresh or access token ends its connection, as the Agents
tab's revoke does; the protocol is Authlib's (chalicelib/oauth/revocation.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from authlib.oauth2.rfc6749 import OAuth2Error

from chalicelib.auth import connection_tokens
from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.config import Settings
from chalicelib.errors import Unauthorized
from chalicelib.oauth import access
from chalicelib.oauth.server import request
from chalicelib.services import connections
from chalicelib.services.oauth import _PRINTABLE, Answer, _end, _error, _owned, _server, single_values
from chalicelib.storage.oauth import Grant


def revoke(
    stores: Stores, settings: Settings, base: str, form: Mapping[str, list[str]], headers: Mapping[str, Any]
) -> Answer:
    """RFC 7009 (oauth/revocation.py): a refresh or access token ends its connection, as the Agents tab's revoke."""
    from chalicelib.oauth.revocation import Revocable, Revocation

    server = _server(stores, settings, base)
    try:
        params = single_values(form)
    except OAuth2Error as error:
        return _error(server, error)
    key, now = stores.connection_key.get(), instant(stores.clock).epoch

    def find(token: str, hint: str | None) -> Revocable | None:
        if not _PRINTABLE.fullmatch(token):
            return None
        if token.startswith("pmr_"):  # a refresh token, whatever the hint says (RFC 7009 §2.1: it may be wrong)
            grant = stores.oauth.refresh(connection_tokens.mac(key, token), now)
            owned = _owned(stores, grant) if grant is not None else None
            return Revocable(owned.client_id, owned.user_id, owned.connection_id) if owned is not None else None
        mac = access.connection_of(key, token, resource=f"{base}/mcp", now=now)
        try:
            found = connections.by_mac(stores, mac) if mac is not None else None
        except Unauthorized:
            return None
        return Revocable(found.client_id, found.user_id, found.id) if found and found.client_id else None

    def end(token: Revocable) -> None:
        _end(stores, Grant(token.user_id, token.connection_id, "", token.client_id, "", 0))

    server.register_endpoint(Revocation(server, find, end))
    return server.create_endpoint_response("revocation", request("POST", params, headers))
