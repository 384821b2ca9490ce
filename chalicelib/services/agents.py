"""The agent path: hosts register sessions and fetch memory context; workers post propose events.

An agent gets memory only if all three hold: its manifest asked (`memory: true`), its session has a
user, and that user turned memory on; and then only if the user did not stop that agent reading
(its grant rides on the entries Query). Anything else is an empty list, never an error that reveals why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.crypto.refs import shaped
from chalicelib.errors import Conflict, NotFound
from chalicelib.identifiers import check_identifier
from chalicelib.metrics import count
from chalicelib.models import Entry, Session, display_order
from chalicelib.services.agent_rows import fold_rows, read_receipt
from chalicelib.services.updates import context_items
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.events import PENDING, AgentEvent

if TYPE_CHECKING:  # request bodies are pydantic models; pydantic loads only when a body is parsed
    from chalicelib.schemas import EventsBody, SessionBody

CONTEXT_MAX_ITEMS = 20
CONTEXT_MAX_TEXT_BYTES = 4096


def register_session(stores: Stores, session_id: str, body: SessionBody) -> Session:
    """Create the session; the same body again changes nothing; anything different is a 409."""
    check_identifier(session_id, "session_id")  # over 2048 bytes DynamoDB would refuse the key with a 500
    now = instant(stores.clock)
    wanted = Session(
        session_id=session_id,
        user_id=body.user_id,
        thread_id=body.thread_id,
        agent=body.agent,
        memory_requested=body.manifest.memory,
        created_at=now.iso,
    )
    if stores.sessions.create(wanted, now.epoch):
        return wanted
    existing = stores.sessions.get(session_id)
    if existing is None:  # deleted between the two calls (TTL): nothing to conflict with
        raise Conflict("The session changed while registering; try again.")
    same = (existing.user_id, existing.thread_id, existing.agent, existing.memory_requested) == (
        wanted.user_id,
        wanted.thread_id,
        wanted.agent,
        wanted.memory_requested,
    )
    if not same:
        raise Conflict("This session is already registered with a different user, thread, agent or manifest.")
    return existing


def mark_untrusted(stores: Stores, session_id: str) -> Session:
    check_identifier(session_id, "session_id")  # over 2048 bytes DynamoDB would refuse the key with a 500
    session = stores.sessions.mark_tainted(session_id)
    if session is None:
        raise NotFound("No such session.")
    return session


def select_context(entries: list[Entry]) -> list[Entry]:
    """Pinned first, newest next, at most 20 entries and 4 KiB of text.

    The budget is filled greedily in that order: an entry whose text would overflow the remaining
    bytes is skipped (never cut), and smaller entries after it may still fit.
    """
    chosen: list[Entry] = []
    budget = CONTEXT_MAX_TEXT_BYTES
    for entry in display_order(entries):
        if len(chosen) == CONTEXT_MAX_ITEMS:
            break
        size = len(entry.text.encode("utf-8"))
        if size <= budget:
            chosen.append(entry)
            budget -= size
    return chosen


def context(stores: Stores, session_id: str) -> dict[str, Any]:
    """The memory an agent may see in this session; journaled as a count whenever the user's memory is read."""
    check_identifier(session_id, "session_id")  # over 2048 bytes DynamoDB would refuse the key with a 500
    session = stores.sessions.get(session_id)
    if session is None:
        raise NotFound("No such session.")
    if not session.memory_requested or session.user_id is None:
        return {"items": []}
    now = instant(stores.clock)
    state, entries = stores.entries.load(session.user_id)
    if not state.enabled:
        return {"items": []}
    if not state.agents_folded:  # once per user: rows stored before agent names were folded (services/agent_rows.py)
        fold_rows(stores, session.user_id)
        state, entries = stores.entries.load(session.user_id)
    journaled = {"session_id": session_id, "agent": session.agent}
    if not state.grant(session.agent).read:  # the user stopped this agent reading: it learns only `[]`
        stores.journal.append(
            session.user_id, "keep.memory.context", now.iso, {**journaled, "count": 0, "reason": "agent_blocked"}
        )
        count("ContextFetches")
        return {"items": []}
    chosen = select_context([e for e in entries if not e.is_expired(now.epoch)])
    # One call, as the journal's Put alone was: the row and the agent's "last read" move together.
    journal_row = stores.journal.record(
        session.user_id, "keep.memory.context", now.iso, {**journaled, "count": len(chosen)}
    )
    try:
        transact(stores.client, [journal_row, *read_receipt(stores, session.user_id, session.agent, now.iso, state)])
    except TransactionCancelled:  # another fetch made this agent's row, or took the last room, meanwhile
        transact(stores.client, [journal_row])
    count("ContextFetches")
    return {"items": context_items(stores, session.user_id, session_id, chosen)}


def post_events(stores: Stores, session_id: str, body: EventsBody) -> dict[str, Any]:
    """Store each new event (a worker's id seen before is skipped); the stream consumer does the rest."""
    check_identifier(session_id, "session_id")  # over 2048 bytes DynamoDB would refuse the key with a 500
    session = stores.sessions.get(session_id)
    now = instant(stores.clock)
    new: dict[str, AgentEvent] = {}
    for event in body.events:
        if event.id in new:
            continue  # the same id twice in one body: the first one counts, as a repost would
        new[event.id] = AgentEvent(
            session_id=session_id,
            event_id=event.id,
            type=event.type,
            kind=event.kind,
            message_id=event.message_id,
            status=PENDING,
            outcome=None,
            created_at=now.iso,
            tainted_at_post=bool(session and session.tainted),
            user_id=session.user_id if session else None,
            text=event.text,
            replaces=event.replaces if shaped(event.replaces) else None,  # no ref: nothing of it is kept
        )
    return {"accepted": _store_all_or_none(stores, list(new.values()), now.epoch), "received": len(body.events)}


def _store_all_or_none(stores: Stores, events: list[AgentEvent], now_epoch: int) -> int:
    """One transaction for the whole POST (at most 20 events), so a 503 midway has stored none of them.

    Ids the worker posted before fail their condition; the rest are written again without them.
    """
    while events:
        try:
            # guard: each event's text key row goes in the same transaction (after the events: indices stay)
            guarded = stores.keyring.guard([stores.events.put_new(e, now_epoch) for e in events])
            transact(stores.client, guarded)
            stores.keyring.written(guarded)
            return len(events)
        except TransactionCancelled as exc:
            still_new = [e for index, e in enumerate(events) if not exc.failed(index)]
            if len(still_new) == len(events):
                raise
            events = still_new
    return 0


def list_events(stores: Stores, session_id: str) -> dict[str, Any]:
    check_identifier(session_id, "session_id")  # over 2048 bytes DynamoDB would refuse the key with a 500
    events = sorted(stores.events.list(session_id), key=lambda e: (e.created_at, e.event_id))
    return {"events": [e.public() for e in events]}
