"""The user's memory: view, switch, add, edit, forget, and decide on agents' proposals.

Every cap is a condition on the user's state item inside the same transaction as the write it
guards; reads only ever choose which error to report after a write was refused.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant, instant
from chalicelib.errors import LimitReached, MemoryOff, NotFound
from chalicelib.models import (
    DAY_SECONDS,
    MAX_ACTIVE_ENTRIES,
    MAX_ENTRY_BYTES,
    MAX_WAITING_PROPOSALS,
    Entry,
    MemoryState,
    Source,
    display_order,
    is_id,
    new_id,
)
from chalicelib.services.corrections import corrected
from chalicelib.services.recount import recount
from chalicelib.services.shredding import forget_stored, receipt
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.text_rules import accepted_text

if TYPE_CHECKING:  # request bodies are pydantic models; pydantic loads only when a body is parsed
    from chalicelib.schemas import AcceptBody, EntryChangesBody, NewEntryBody

LIMITS = {"entries": MAX_ACTIVE_ENTRIES, "proposals": MAX_WAITING_PROPOSALS, "bytes_per_entry": MAX_ENTRY_BYTES}
_KEY_RETRIES = 2  # a key destroyed between sealing and writing (a concurrent forget-all): seal again


def view(stores: Stores, user_id: str) -> dict[str, Any]:
    """`{enabled, items, proposals, limits}`: two Queries, one per table."""
    return view_and_version(stores, user_id)[0]


def view_and_version(stores: Stores, user_id: str) -> tuple[dict[str, Any], MemoryState]:
    """The view and the state item it was read with, by the same Query as the entries (the ETag's version)."""
    now = instant(stores.clock)
    state, stored = stores.entries.load(user_id)
    entries = display_order([e for e in stored if not e.is_expired(now.epoch)])
    proposals = display_order(stores.proposals.list(user_id))
    body = {
        "enabled": state.enabled,
        "items": [e.public() for e in entries],
        "proposals": [p.public() for p in proposals],
        "limits": LIMITS,
    }
    return body, state


def inbox(stores: Stores, user_id: str) -> dict[str, Any]:
    return {"memory_proposals": [p.public() for p in display_order(stores.proposals.list(user_id))]}


def set_enabled(stores: Stores, user_id: str, enabled: bool) -> dict[str, Any]:
    """Flip the switch and journal it in one transaction; asking for the current state changes nothing."""
    now = instant(stores.clock)
    try:
        transact(
            stores.client,
            [
                stores.entries.switch(user_id, enabled, now.iso),
                stores.journal.record(user_id, "keep.memory.settings", now.iso, {"enabled": enabled}),
            ],
        )
    except TransactionCancelled as exc:
        if not exc.failed(0):
            raise
    return {"enabled": enabled}


def add(stores: Stores, user_id: str, body: NewEntryBody) -> Entry:
    text = accepted_text(body.text)
    now = instant(stores.clock)
    entry = Entry(
        id=new_id(),
        user_id=user_id,
        text=text,
        kind=body.kind,
        pinned=body.pinned,
        tainted=False,
        origin="user",
        source=Source(),
        created_at=now.iso,
        updated_at=now.iso,
        expires_at=now.epoch + body.expires_in_days * DAY_SECONDS if body.expires_in_days else None,
    )
    _insert_counted(stores, user_id, lambda: [stores.entries.put_new(entry)], now)
    return entry


def edit(stores: Stores, user_id: str, entry_id: str, body: EntryChangesBody) -> Entry:
    given = body.model_fields_set
    text = accepted_text(body.text) if "text" in given and body.text is not None else None
    now = instant(stores.clock)
    days = body.expires_in_days
    if not is_id(entry_id):
        raise NotFound("No such entry.")
    updated = stores.entries.update_entry(
        user_id,
        entry_id,
        now_epoch=now.epoch,
        now_iso=now.iso,
        text=text,
        kind=body.kind if "kind" in given else None,
        pinned=body.pinned if "pinned" in given else None,
        expires_at=now.epoch + days * DAY_SECONDS if days else None,
        remove_expiry="expires_in_days" in given and days is None,
    )
    if updated is None:
        raise NotFound("No such entry.")
    return updated


def forget(stores: Stores, user_id: str, entry_id: str) -> None:
    if not is_id(entry_id):
        raise NotFound("No such entry.")
    now = instant(stores.clock)
    forget_stored(
        stores,
        user_id,
        stores.entries.ref(user_id, entry_id),
        lambda ref: [
            stores.entries.delete_live(user_id, ref.id, now.epoch),
            stores.entries.release_counts(user_id, active=1),
            receipt(stores, user_id, now),
        ],
        "No such entry.",
    )


def forget_all(stores: Stores, user_id: str) -> dict[str, int]:
    """Destroy the user's data key, delete every entry and waiting proposal, keep the switch, journal counts only (forget_all.py)."""
    from chalicelib.services.forget_all import forget_all as forget_everything

    return forget_everything(stores, user_id)


def accept(stores: Stores, user_id: str, proposal_id: str, body: AcceptBody | None = None) -> Entry:
    """The proposal becomes an entry, with the user's corrections if any (origin, source and taint stay)."""
    text = accepted_text(body.text) if body is not None and body.text is not None else None
    proposal = stores.proposals.get(user_id, proposal_id) if is_id(proposal_id) else None
    if proposal is None:
        raise NotFound("No such proposal.")
    now = instant(stores.clock)
    entry = proposal.with_changes(created_at=now.iso, updated_at=now.iso, expires_at=None)
    if body is not None:
        entry = corrected(entry, body, text, now)

    def actions() -> list[dict[str, Any]]:
        return [
            stores.proposals.delete_waiting(user_id, proposal_id),  # still waiting, or 404
            stores.entries.put_new(entry),
        ]

    _insert_counted(stores, user_id, actions, now, release_waiting=1, gone_index=0)
    return entry


def reject(stores: Stores, user_id: str, proposal_id: str) -> None:
    if not is_id(proposal_id):
        raise NotFound("No such proposal.")
    forget_stored(
        stores,
        user_id,
        stores.proposals.ref(user_id, proposal_id),
        lambda ref: [stores.proposals.delete_waiting(user_id, ref.id), stores.entries.release_counts(user_id, waiting=1)],
        "No such proposal.",
    )


# ---- the counted writes ----------------------------------------------------------------------


def _insert_counted(
    stores: Stores,
    user_id: str,
    build: Callable[[], list[dict[str, Any]]],
    now: Instant,
    *,
    release_waiting: int = 0,
    gone_index: int | None = None,
) -> None:
    """Run `build()`'s actions with one more active entry counted; on a refusal, recount once and retry if that made room.

    The text is sealed by `build()` and the transaction checks its key is still the user's: if a
    concurrent forget-all destroyed it, the actions are built (sealed) again under the new key.
    """
    refusals, built = 0, build()
    for _ in range(_KEY_RETRIES + 2):
        actions = [*built, stores.entries.take_entry_slots(user_id, 1, release_waiting=release_waiting)]
        guarded = stores.keyring.guard(actions)
        try:
            transact(stores.client, guarded)
            return
        except TransactionCancelled as exc:
            if any(exc.failed(index) for index in range(len(actions), len(guarded))):
                built = build()  # the key that sealed the text is gone: seal again
                continue
            if gone_index is not None and exc.failed(gone_index):
                raise NotFound("No such proposal.") from exc
            state = recount(stores, user_id, now)
            if not state.enabled:
                raise MemoryOff() from exc
            refusals += 1
            if refusals == 1 and state.active < MAX_ACTIVE_ENTRIES:
                continue  # the recount or a concurrent change made room: try again, once
            raise LimitReached(f"You have {MAX_ACTIVE_ENTRIES} entries, the most memory keeps.") from exc
    raise LimitReached(f"You have {MAX_ACTIVE_ENTRIES} entries, the most memory keeps.")


def journal_page(stores: Stores, user_id: str, cursor: str | None, limit: int) -> dict[str, Any]:
    """The user's own journal, newest first: who used their memory and what changed. Never text."""
    rows, next_cursor = stores.journal.page(user_id, limit=limit, cursor=cursor)
    return {"items": [r.public() for r in rows], "next_cursor": next_cursor}


EXPORT_SCHEMA_VERSION = 2
# The export is one Lambda response, and Lambda refuses one over 6 MB (API Gateway then answers 502).
# Entries (200) and proposals (50) are bounded by the caps; the journal grows with use (400 days of it),
# so the export carries its newest page and a cursor for `GET /v1/memory/journal`; expired entries that
# TTL has not deleted yet are listed up to a bound, with their total. tests/routes/test_export_size.py checks the
# largest possible user against the limit.
EXPORT_JOURNAL_ROWS = 100
EXPORT_EXPIRED_ENTRIES = 50


def export(stores: Stores, user_id: str) -> dict[str, Any]:
    """Everything held about the user: settings, entries, proposals, and the journal's first page."""
    now = instant(stores.clock)
    from chalicelib.services.agent_grants import agent_rows

    state, entries = stores.entries.load(user_id)
    ordered = display_order(entries)
    expired = [e.public() for e in ordered if e.is_expired(now.epoch)]
    proposals = display_order(stores.proposals.list(user_id))
    journal, journal_cursor = stores.journal.page(user_id, limit=EXPORT_JOURNAL_ROWS)
    return {
        "schema_version": EXPORT_SCHEMA_VERSION,
        "exported_at": now.iso,
        "user_id": user_id,
        "settings": {"enabled": state.enabled},
        "entries": [e.public() for e in ordered if not e.is_expired(now.epoch)],
        "expired_entries_awaiting_deletion": expired[:EXPORT_EXPIRED_ENTRIES],
        "expired_entries_awaiting_deletion_total": len(expired),
        "proposals": [p.public() for p in proposals],
        "agents": agent_rows(state.agents, [e for e in ordered if not e.is_expired(now.epoch)], proposals),
        "journal": [r.public() for r in journal],
        "journal_next_cursor": journal_cursor,  # the rest: GET /v1/memory/journal?cursor=...
    }
