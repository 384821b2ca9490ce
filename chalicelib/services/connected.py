"""What a connection may do, and nothing else: read its person's context as its agent, suggest, see a suggestion's outcome.

The person's act of connecting stands for the manifest (`memory: true`); memory's switch and the
agent's read switch decide as they do for any session. A suggestion takes the worker's path (events
table → stream → consumer), in a conversation that is a session of its own: one per connection per
hour (`conn:<connection id>:<hour>`), tainted unless the connection is trusted, at most 5 suggestions.
Every call here that reads or writes memory carries the connection's `used` condition in its one
transaction: revoked or expired meanwhile, the call is 401 and nothing is written.
"""

from __future__ import annotations

from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant, instant
from chalicelib.crypto.refs import shaped
from chalicelib.errors import NotFound, Unauthorized
from chalicelib.metrics import count
from chalicelib.models import Session, new_id
from chalicelib.services.agent_rows import fold_rows, read_receipt
from chalicelib.services.agents import select_context
from chalicelib.services.updates import context_items
from chalicelib.storage.connections import Connection
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.events import PENDING, AgentEvent

CONVERSATION_SECONDS = 3600
MAX_TEXT_CHARACTERS = 8000  # as a worker's event: longer is a 400 at the door (the consumer refuses over 2000 bytes)
_REVOKED = "This connection token is not valid: it was revoked, has expired, or was never made."


def conversation_id(connection: Connection, hour: int) -> str:
    return f"conn:{connection.id}:{hour}"


def _live_or_401(stores: Stores, actions: list[dict[str, Any]], used_index: int) -> None:
    try:
        transact(stores.client, actions)
    except TransactionCancelled as exc:
        if exc.failed(used_index):
            raise Unauthorized(_REVOKED) from exc
        raise


def context(stores: Stores, connection: Connection) -> dict[str, Any]:
    """Exactly the context a session of this agent for this person gets; journaled with the agent, never the text."""
    now = instant(stores.clock)
    state, entries = stores.entries.load(connection.user_id)
    me = {
        "agent": connection.agent,
        "tainted": not connection.trusted,
    }  # what the connection acts as, so a client can say it
    if not state.enabled:
        return {"items": [], **me}
    if not state.agents_folded:  # once per user: rows stored before agent names were folded (services/agent_rows.py)
        fold_rows(stores, connection.user_id)
        state, entries = stores.entries.load(connection.user_id)
    # The read belongs to this hour's conversation, as the suggestions that follow it do.
    conversation = conversation_id(connection, now.epoch // CONVERSATION_SECONDS)
    journaled = {"session_id": conversation, "agent": connection.agent, "connection_id": connection.id}
    used = stores.connections.used(connection, now.iso, now.epoch)
    if not state.grant(connection.agent).read:  # the person stopped this agent reading: it learns only `[]`
        row = stores.journal.record(
            connection.user_id, "keep.memory.context", now.iso, {**journaled, "count": 0, "reason": "agent_blocked"}
        )
        _live_or_401(stores, [used, row], 0)
        count("ContextFetches")
        return {"items": [], **me}
    chosen = select_context([e for e in entries if not e.is_expired(now.epoch)])
    journal_row = stores.journal.record(
        connection.user_id, "keep.memory.context", now.iso, {**journaled, "count": len(chosen)}
    )
    try:
        _live_or_401(
            stores, [used, journal_row, *read_receipt(stores, connection.user_id, connection.agent, now.iso, state)], 0
        )
    except TransactionCancelled:  # another fetch made this agent's row, or took the last room, meanwhile
        _live_or_401(stores, [used, journal_row], 0)
    count("ContextFetches")
    return {"items": context_items(stores, connection.user_id, conversation, chosen), **me}


def propose(
    stores: Stores, connection: Connection, text: str, kind: str, replaces: str | None = None
) -> dict[str, Any]:
    """Store the suggestion as a pending event of this hour's conversation; the consumer decides (and resolves
    `replaces`, a ref from this conversation's context). One transaction."""
    now = instant(stores.clock)
    hour = now.epoch // CONVERSATION_SECONDS
    session = _conversation(connection, hour, now)
    event = AgentEvent(
        session_id=session.session_id,
        event_id=f"{hour}-{new_id()}",
        type="memory.propose",
        kind=kind,
        message_id=None,
        status=PENDING,
        outcome=None,
        created_at=now.iso,
        tainted_at_post=session.tainted,
        user_id=connection.user_id,
        text=text,
        replaces=replaces if shaped(replaces) else None,  # no ref: nothing of it is kept (crypto/refs.py)
    )
    actions = [
        stores.connections.used(connection, now.iso, now.epoch),
        stores.sessions.open_conversation(session, now.epoch),
        stores.events.put_new(event, now.epoch),
    ]
    guarded = stores.keyring.guard(actions)  # the event's text key row, and the user's key still current
    try:
        _live_or_401(stores, guarded, 0)
    except TransactionCancelled as exc:
        if exc.failed(1):  # a host registered this id for someone else: never borrowed (not reachable by chance)
            raise Unauthorized(_REVOKED) from exc
        raise
    stores.keyring.written(guarded)
    return {"event_id": event.event_id, "agent": connection.agent, "tainted": session.tainted}


def outcome(stores: Stores, connection: Connection, event_id: str) -> dict[str, Any]:
    """A suggestion's outcome, found only in this connection's own conversations (another's is the same 404)."""
    hour, _, rest = event_id.partition("-")
    if not (hour.isascii() and hour.isdigit() and len(hour) <= 12 and len(rest) == 32):
        raise NotFound("No such suggestion.")
    event = stores.events.get(conversation_id(connection, int(hour)), event_id)
    if event is None or event.user_id != connection.user_id:
        raise NotFound("No such suggestion.")
    return {
        "event_id": event.event_id,
        "status": event.status,
        "outcome": dict(event.outcome) if event.outcome else None,
    }


def _conversation(connection: Connection, hour: int, now: Instant) -> Session:
    return Session(
        session_id=conversation_id(connection, hour),
        user_id=connection.user_id,
        thread_id=None,
        agent=connection.agent,
        memory_requested=True,
        tainted=not connection.trusted,
        created_at=now.iso,
    )
