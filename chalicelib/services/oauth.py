"""OAuth for `/mcp` (DESIGN.md, "Connecting the agents people use"): what each OAuth route does, wired to Authlib.

The flow: a client's `GET /oauth/authorize` is checked by Authlib and kept as a pending request; the person is
sent to the Memory page (`/?oauth=<id>`), signs in, and the page shows the request (`GET /v1/oauth/requests/{id}`,
which binds it to that person) and sends the decision (`POST` on the same path, with the person's bearer token).
Approving makes a connection (services/connections.py) for the client and sends the browser back with a code;
`POST /oauth/token` trades it (PKCE S256) for a one-hour access token bound to that connection and `/mcp`, and a
refresh token that rotates. Revoking the connection on the Agents tab ends both (docs/oauth.md).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import InvalidGrantError, InvalidRequestError, OAuth2Error

from chalicelib.auth import connection_tokens
from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.config import Settings
from chalicelib.errors import NotFound, Unauthorized
from chalicelib.models import new_id
from chalicelib.oauth import access, clients, names
from chalicelib.oauth.discovery import metadata, resource_metadata

__all__ = ["authorize", "decide", "metadata", "open_request", "register", "resource_metadata", "token"]
from chalicelib.oauth.server import ACCESS_SECONDS, REFRESH_SECONDS, Context, Server, json_request, request
from chalicelib.services import connections
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.oauth import Grant, PendingRequest

Answer = tuple[int, Any, dict[str, str]]
REQUEST_SECONDS = 600  # the person has ten minutes to sign in and decide
CONNECTION_DAYS = 90  # a connection made by consent lives as long as a made one does by default
_PRINTABLE = re.compile(r"[\x21-\x7e]{1,512}")


def single_values(params: Mapping[str, list[str]]) -> dict[str, str]:
    """RFC 6749 §3.1: no parameter more than once (else `invalid_request`); empty values are as if absent."""
    if any(len(values) > 1 for values in params.values()):
        raise InvalidRequestError("A parameter was sent more than once.")
    return {name: values[0] for name, values in params.items() if values and values[0] != ""}


def _server(stores: Stores, settings: Settings, base: str) -> Server:
    key = stores.connection_key.get
    now = lambda: instant(stores.clock).epoch  # noqa: E731

    def query_client(client_id: str) -> clients.OAuthClient | None:
        if not _PRINTABLE.fullmatch(client_id):
            return None
        if clients.is_document_id(client_id):
            return clients.from_document(client_id, settings.oauth)
        found = stores.oauth.client(client_id, now())
        return clients.registered(client_id, found, key(), settings.oauth) if found is not None else None

    def attempt(code: str, client_id: str) -> Grant | None:
        if not _PRINTABLE.fullmatch(code):
            return None
        grant = stores.oauth.attempt_code(connection_tokens.mac(key(), code), now(), client_id)
        return _owned(stores, grant) if grant is not None else None

    def spend(code: str, client_id: str) -> bool:
        return stores.oauth.spend_code(connection_tokens.mac(key(), code), now(), client_id)

    def spend_refresh(token: str, client_id: str) -> Grant | None:
        if not _PRINTABLE.fullmatch(token):
            return None
        grant, first = stores.oauth.spend_refresh(connection_tokens.mac(key(), token), now(), client_id)
        owned = _owned(stores, grant) if grant is not None else None
        if owned is not None and not first:  # a replay: whoever holds it, the connection it made is ended
            _end(stores, owned)
            return None
        return owned

    def live(grant: Grant) -> bool:
        try:
            found = connections.by_mac(stores, grant.connection_mac)
        except Unauthorized:
            return False
        return found.id == grant.connection_id and found.user_id == grant.user_id

    def access_token(grant: Grant) -> str:
        return access.issue(
            key(), connection_mac=grant.connection_mac, resource=grant.resource, now=now(), lifetime=ACCESS_SECONDS
        )

    def new_refresh(grant: Grant) -> str:
        token = "pmr_" + secrets.token_urlsafe(32)
        fresh = Grant(
            grant.user_id,
            grant.connection_id,
            grant.connection_mac,
            grant.client_id,
            grant.resource,
            now() + REFRESH_SECONDS,
        )
        owned = stores.connections.owned_key(grant.user_id, grant.connection_id)
        try:
            transact(stores.client, stores.oauth.put_refresh(connection_tokens.mac(key(), token), fresh, owned))
        except TransactionCancelled as exc:  # the connection was revoked meanwhile
            raise InvalidGrantError("The connection was revoked.") from exc
        return token

    def save_code(code: str, grant: Grant) -> None:
        stores.oauth.put_code(connection_tokens.mac(key(), code), grant)

    made = (attempt, spend, lambda grant: _end(stores, grant), spend_refresh, live, access_token, new_refresh)
    return Server(Context(f"{base}/mcp", now, query_client, save_code, *made))


def _owned(stores: Stores, grant: Grant) -> Grant | None:
    """The grant with its person, from its connection's lookup row (the grant's row names nobody); None when gone."""
    try:
        found = connections.by_mac(stores, grant.connection_mac)
    except Unauthorized:
        return None
    return replace(grant, user_id=found.user_id) if found.id == grant.connection_id else None


def _end(stores: Stores, grant: Grant) -> None:
    try:
        connections.revoke(stores, grant.user_id, grant.connection_id)
    except NotFound:
        pass  # ended already


def _error(server: Server, error: OAuth2Error) -> Answer:
    return server.handle_response(*error())


def authorize(stores: Stores, settings: Settings, base: str, params: Mapping[str, list[str]]) -> Answer:
    """Check the request (Authlib); keep it and send the person to the page, or answer the error as RFC 6749 says."""
    server = _server(stores, settings, base)
    try:
        query = single_values(params)
        grant = server.get_consent_grant(request("GET", query, {}))
    except OAuth2Error as error:
        return _with_iss(_error(server, error), base)
    except ValueError:  # Authlib refuses to describe an error in characters RFC 6749 forbids (a hostile redirect URI)
        return _error(server, InvalidRequestError("The request is not valid."))
    pending = PendingRequest(new_id(), query, grant.client.client_id, instant(stores.clock).epoch + REQUEST_SECONDS)
    stores.oauth.put_request(pending)
    return 302, "", {"Location": f"{base}/?oauth={pending.id}", "Cache-Control": "no-store"}


def open_request(stores: Stores, settings: Settings, base: str, user_id: str, request_id: str) -> dict[str, Any]:
    """What the consent screen shows; the request is bound to the first person who opens it (404 for anyone else)."""
    pending = _pending(stores, user_id, request_id, close=False)
    client = _server(stores, settings, base).query_client(pending.client_id)
    if client is None:
        raise NotFound("No such authorization request.")
    verified = _verified(client, pending)
    return {
        "id": pending.id,
        "client": {
            "id": client.client_id,
            "name": client.name,
            "uri": client.uri,
            "from": verified,
            "shown": names.shown(client.name, verified),
        },
        "redirect_host": urlsplit(pending.query.get("redirect_uri", "")).netloc,
        "agent": _agent_name(client.name),
        "expires_in": max(0, pending.expires_at - instant(stores.clock).epoch),
    }


def decide(stores: Stores, settings: Settings, base: str, user_id: str, request_id: str, body: Any) -> dict[str, str]:
    """The person's decision, once: approving makes the connection and a code; either way, where the browser goes.

    An approval ends the request in the transaction that makes the connection, so one refused before it (the
    person's 200 agent rows are taken: 409) leaves the request waiting for another decision."""
    pending = _pending(stores, user_id, request_id, close=False)
    server = _server(stores, settings, base)
    oauth_request = request("GET", pending.query, {})
    try:
        grant = server.get_consent_grant(oauth_request)
    except OAuth2Error as error:
        _pending(stores, user_id, request_id, close=True)
        return _location(_error(server, error), base)
    user = None
    if body.approve:
        from chalicelib.services import agent_grants

        # The switches first: refused (the person's 200 agent rows are taken), nothing is made and the request
        # waits. Consent may turn a switch off, never back on for an agent (any spelling) the person switched off:
        # the Agents tab does that.
        read, propose = agent_grants.within_blocks(stores, user_id, body.agent, read=body.read, propose=body.propose)
        agent_grants.set_switches(stores, user_id, body.agent, read=read, propose=propose)
        now = instant(stores.clock).epoch
        try:
            connection, _ = connections.make(
                stores,
                user_id,
                body.agent,
                trusted=body.trusted,
                days=CONNECTION_DAYS,
                client_id=grant.client.client_id,
                client_name=grant.client.name,
                client_from=_verified(grant.client, pending),
                also=(stores.oauth.close_request_action(pending.id, _opener(stores, user_id), now),),
            )
        except TransactionCancelled as exc:  # decided meanwhile (another tab) or expired: nothing was made
            raise NotFound("No such authorization request.") from exc
        resource = f"{base}/mcp"
        user = Grant(user_id, connection.id, connection.mac, grant.client.client_id, resource, 0)
    else:
        _pending(stores, user_id, request_id, close=True)
    return _location(server.create_authorization_response(oauth_request, grant_user=user, grant=grant), base)


def _verified(client: clients.OAuthClient, pending: PendingRequest) -> str:
    """What the service checked of who the client is (oauth/names.py): "" this device, else a host."""
    redirect = pending.query.get("redirect_uri", "")
    return names.verified_from(client.client_id, redirect, clients.is_document_id(client.client_id))


def _location(answer: Answer, base: str) -> dict[str, str]:
    status, body, headers = _with_iss(answer, base)
    if status != 302 or "Location" not in headers:
        raise NotFound("No such authorization request.")
    return {"redirect": headers["Location"]}


def _with_iss(answer: Answer, base: str) -> Answer:
    """RFC 9207 §2: every authorization response sent to the client's redirect URI, errors included, names the
    issuer (`iss`), so a client talking to several servers can tell which one answered (mix-up attacks)."""
    from authlib.common.urls import add_params_to_uri

    status, body, headers = answer
    if status == 302 and "Location" in headers:
        headers = {**headers, "Location": add_params_to_uri(headers["Location"], [("iss", base)])}
    return status, body, headers


def _opener(stores: Stores, user_id: str) -> str:
    """Who opened a request, as its row keeps it: a MAC of the person's id under the service's connections key, so
    the row (kept until DynamoDB's TTL removes it, which may lag by days) names nobody, erased or not."""
    key = stores.connection_key.get()
    return hmac.new(key, b"oauth-request-opener\0" + user_id.encode("utf-8"), hashlib.sha256).hexdigest()


def _pending(stores: Stores, user_id: str, request_id: str, *, close: bool) -> PendingRequest:
    now = instant(stores.clock).epoch
    found = None
    if re.fullmatch(r"[0-9a-f]{32}", request_id):
        if close:
            found = stores.oauth.close_request(request_id, _opener(stores, user_id), now)
        else:
            found = stores.oauth.open_request(request_id, _opener(stores, user_id), now)
    if found is None:
        raise NotFound("No such authorization request.")
    return found


def _agent_name(client_name: str) -> str:
    """A suggestion for the agent name (the person may change it): the client's name as an agent id."""
    name = re.sub(r"[^A-Za-z0-9._:-]+", "-", client_name).strip("-.")[:64]
    return name or "mcp-client"


def token(
    stores: Stores, settings: Settings, base: str, form: Mapping[str, list[str]], headers: Mapping[str, Any]
) -> Answer:
    server = _server(stores, settings, base)
    try:
        params = single_values(form)
    except OAuth2Error as error:
        return _error(server, error)
    return server.create_token_response(request("POST", params, headers))


def register(stores: Stores, settings: Settings, base: str, body: Any) -> Answer:
    """RFC 7591 (oauth/registration.py loads Authlib's part for it, and joserfc's keys, on this route only)."""
    from authlib.oauth2.rfc7591 import InvalidClientMetadataError

    from chalicelib.oauth.registration import Registration

    server = _server(stores, settings, base)
    if not isinstance(body, dict):
        return _error(server, InvalidClientMetadataError("The body must be a JSON object of client metadata."))
    endpoint = Registration(
        server,
        stores,
        settings,
        metadata(base),
        lambda client_id, stored, expires: stores.oauth.put_client(client_id, stored, expires),
    )
    try:
        status, answer, headers = server.handle_response(*endpoint(json_request(body, {})))
    except OAuth2Error as error:
        return _error(server, error)
    stored = endpoint.saved  # what was registered (Authlib's answer echoes every claim sent)
    shown = {k: v for k, v in stored.items() if k != "secret_mac"}
    shown.update({k: answer[k] for k in ("client_id", "client_id_issued_at")})
    if stored.get("token_endpoint_auth_method") != "none":
        shown.update(client_secret=answer["client_secret"], client_secret_expires_at=0)
    return status, shown, headers
