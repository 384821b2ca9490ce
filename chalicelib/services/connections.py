"""A person's connections: made and revoked by them on the page; a connection token finds its connection here.

A token is shown once, at creation; only its MAC is stored. Finding the connection of a token is one
consistent GetItem by that MAC, cached in this process for at most `CACHE_SECONDS`. The cache never
decides alone: every call that reads or writes the person's memory carries the connection's
`used` condition in its own transaction, so a revoke (or expiry) stops those at once, in every
container. What a cached lookup still lets through, for at most a minute after a revoke in another
container, touches no memory: MCP's handshake and tool list, and the outcome of the agent's own
earlier suggestion (docs/agents.md).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from chalicelib.auth import connection_tokens
from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.errors import NotFound, Unauthorized
from chalicelib.models import DAY_SECONDS, is_id, new_id
from chalicelib.storage.connections import Connection
from chalicelib.storage.dynamo import TransactionCancelled, transact

if TYPE_CHECKING:
    from chalicelib.schemas import ConnectionBody

JOURNAL_ACTION = "keep.memory.connection"
CACHE_SECONDS = 60
MAX_ACCESS_TOKEN_CHARACTERS = 2048  # ours are ~330: anything longer is no access token of this service
_CACHE_MAX = 1_000

_lock = threading.Lock()
_cache: dict[str, tuple[float, Connection]] = {}  # MAC -> (when read, the connection)


def create(stores: Stores, user_id: str, body: ConnectionBody) -> dict[str, Any]:
    """A new connection and its token (shown this once); journaled without the token."""
    connection, token = make(stores, user_id, body.agent, trusted=body.trusted, days=body.expires_in_days)
    return {**connection.public(), "token": token}


def make(
    stores: Stores,
    user_id: str,
    agent: str,
    *,
    trusted: bool,
    days: int,
    client_id: str | None = None,
    client_name: str | None = None,
    client_from: str | None = None,
    also: tuple[dict[str, Any], ...] = (),
) -> tuple[Connection, str]:
    """Store a connection (both rows and its journal row, one transaction): the connection and its token.

    OAuth's consent makes one for a client (`client_id`) and never shows the token: its access tokens name the
    connection by the token's MAC (services/oauth.py); `also` (the pending request's delete) joins the transaction.
    """
    now = instant(stores.clock)
    token = connection_tokens.new_token()
    connection = Connection(
        id=new_id(),
        user_id=user_id,
        agent=agent,
        trusted=trusted,
        created_at=now.iso,
        expires_at=now.epoch + days * DAY_SECONDS,
        mac=connection_tokens.mac(stores.connection_key.get(), token),
        client_id=client_id,
        client_name=client_name,
        client_from=client_from,
    )
    details: dict[str, Any] = {
        "operation": "create",
        "connection_id": connection.id,
        "agent": connection.agent,
        "trusted": connection.trusted,
    }
    if client_id:
        details["client_id"] = client_id
    transact(
        stores.client,
        [
            *stores.connections.create(connection),
            stores.journal.record(user_id, JOURNAL_ACTION, now.iso, details),
            *also,
        ],
    )
    return connection, token


def list_connections(stores: Stores, user_id: str) -> dict[str, Any]:
    """The person's live connections, newest first (never a token, never its MAC)."""
    now = instant(stores.clock)
    live = [c for c in stores.connections.owned(user_id) if c.expires_at > now.epoch]
    return {"connections": [_public(c) for c in sorted(live, key=lambda c: (c.created_at, c.id), reverse=True)]}


def _public(connection: Connection) -> dict[str, Any]:
    """As listed; a client's name only beside what was checked of it (oauth/names.py: never the name as fact)."""
    from chalicelib.oauth.names import UNREADABLE, readable, shown

    public = connection.public()
    if "client" in public:
        client = public["client"]
        if readable(client["name"], connection.client_from):
            client["shown"] = shown(client["name"], connection.client_from)
        else:  # an altered row: listed (so it can be revoked), its words not repeated
            client.update(name="", shown=UNREADABLE, **{"from": None})
    return public


def revoke(stores: Stores, user_id: str, connection_id: str) -> None:
    """Delete both rows; another person's id, a revoked one and a made-up one are the same 404."""
    connection = stores.connections.get_owned(user_id, connection_id) if is_id(connection_id) else None
    if connection is None:
        raise NotFound("No such connection.")
    now = instant(stores.clock)
    details = {"operation": "revoke", "connection_id": connection.id, "agent": connection.agent}
    journaled = stores.journal.record(user_id, JOURNAL_ACTION, now.iso, details)
    try:
        transact(stores.client, [*stores.connections.revoke(connection), journaled])
    except TransactionCancelled as exc:
        if exc.failed(0):  # revoked meanwhile by another request
            raise NotFound("No such connection.") from exc
        if not exc.failed(1):
            raise
        try:  # the lookup row names another person: this row is a copy of theirs; only the copy goes
            transact(stores.client, [*stores.connections.revoke(connection, lookup=False), journaled])
        except TransactionCancelled as again:
            raise NotFound("No such connection.") from again
    with _lock:
        _cache.pop(connection.mac, None)


def bearer(headers: Any) -> str | None:
    """The token of a single `Authorization: Bearer <token>` header (any case of "Bearer"), else None."""
    value = headers.get("authorization") if headers is not None else None
    if not isinstance(value, str):
        return None
    scheme, _, token = value.partition(" ")
    return token if scheme.lower() == "bearer" and token and token.strip() == token else None


def authenticate(stores: Stores, token: str | None) -> Connection:
    """The live connection a token names; `Unauthorized` (401) for anything else, naming nothing."""
    if token is None or not connection_tokens.is_well_formed(token):
        raise Unauthorized("A connection token is required: make one on the Agents tab of your memory page.")
    return by_mac(stores, connection_tokens.mac(stores.connection_key.get(), token))


def for_mcp(stores: Stores, resource: str, token: str | None) -> Connection:
    """The connection a bearer token on `/mcp` acts as: a connection token, or an OAuth access token issued for
    `resource` (RFC 8707; oauth/access.py). Authlib stays unloaded here: checking a token needs only PyJWT."""
    if token is None or not token.startswith("ey") or len(token) > MAX_ACCESS_TOKEN_CHARACTERS:
        return authenticate(stores, token)
    from chalicelib.oauth import access

    mac = access.connection_of(stores.connection_key.get(), token, resource=resource, now=instant(stores.clock).epoch)
    if mac is None:
        raise Unauthorized("This access token is not valid here: it has expired, or was issued for another resource.")
    return by_mac(stores, mac)


def by_mac(stores: Stores, mac: str) -> Connection:
    """The live connection of a token's MAC (a connection token's, or the one an OAuth access token names).

    One consistent GetItem, cached here for at most `CACHE_SECONDS`; 401 when revoked, expired or never made.
    """
    now_epoch, read_at = instant(stores.clock).epoch, time.monotonic()
    with _lock:
        cached = _cache.get(mac)
    if cached is not None and read_at - cached[0] <= CACHE_SECONDS:
        connection = cached[1]
    else:
        found = stores.connections.find(mac)
        if found is None:
            with _lock:
                _cache.pop(mac, None)
            raise Unauthorized("This connection token is not valid: it was revoked, has expired, or was never made.")
        connection = found
        with _lock:
            if len(_cache) >= _CACHE_MAX:
                _cache.clear()
            _cache[mac] = (read_at, connection)
    if connection.expires_at <= now_epoch:
        raise Unauthorized("This connection token is not valid: it was revoked, has expired, or was never made.")
    return connection


def forget_cached(connections: list[Connection]) -> None:
    """Drop these connections' cached lookups in this process (an account's erasure; another container's lives a minute)."""
    with _lock:
        for connection in connections:
            _cache.pop(connection.mac, None)


def forget_cache() -> None:
    """Tests and the bench: start with no cached lookup."""
    with _lock:
        _cache.clear()
