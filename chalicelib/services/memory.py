"""The user's memory: view, switch, add, edit, forget, and decide on agents' proposals.

Every cap is a condition on the user's state item inside the same transaction as the write it
guards; reads only ever choose which error to report after a write was refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant, instant
from chalicelib.errors import Duplicate, LimitReached, MemoryOff, NotFound, Unavailable
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
from chalicelib.services.decided import undecided
from chalicelib.services.forgetting import forget_entry
from chalicelib.services.recount import recount
from chalicelib.services.repeats import decision_read, dismiss_after
from chalicelib.services.repeats import reject as reject_and_dismiss
from chalicelib.services.shredding import receipt
from chalicelib.services.updates import live_by_id, shown
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.entry_edits import EntryChange, update_entry
from chalicelib.storage.entry_items import StoredRef
from chalicelib.storage.fingerprints import stale_owner
from chalicelib.text_rules import accepted_text

if TYPE_CHECKING:  # request bodies are pydantic models; pydantic loads only when a body is parsed
    from chalicelib.schemas import AcceptBody, EntryChangesBody, NewEntryBody

LIMITS = {"entries": MAX_ACTIVE_ENTRIES, "proposals": MAX_WAITING_PROPOSALS, "bytes_per_entry": MAX_ENTRY_BYTES}
_KEY_RETRIES = 2  # a key destroyed between sealing and writing (a concurrent forget-all): seal again
_LINK_READS = 3  # a linked entry changed between an accept's read and its write: read it again


class _ReplacedGone(NotFound):
    """The entry an accept replaces changed or went between its read and the write (a 404 when the person named it)."""


def view(stores: Stores, user_id: str) -> dict[str, Any]:
    """`{enabled, items, proposals, limits}`: two Queries, one per table."""
    return view_and_version(stores, user_id)[0]


def view_and_version(stores: Stores, user_id: str) -> tuple[dict[str, Any], MemoryState]:
    """The view and the state item it was read with, by the same Query as the entries (the ETag's version)."""
    now = instant(stores.clock)
    state, stored = stores.entries.load(user_id)
    entries = display_order([e for e in stored if not e.is_expired(now.epoch)])
    listed, repeats = stores.proposals.listing(user_id)
    live = live_by_id(entries, now.epoch)
    body = {
        "enabled": state.enabled,
        "items": [e.public() for e in entries],
        "proposals": [shown(p, live) for p in display_order(undecided(listed, stored))],
        "repeats": repeats,  # the waiting slots duplicates hold: who repeated a kept note, rejectable by id
        "limits": LIMITS,
    }
    return body, state


def inbox(stores: Stores, user_id: str) -> dict[str, Any]:
    """The waiting proposals, less copies of decided ones; one entries Query only when a proposal waits."""
    listed, repeats = stores.proposals.listing(user_id)
    now = instant(stores.clock)
    live: dict[str, Entry] = {}
    if any(p.replaces for p in listed):  # the entries, opened: which one each update names, and their text keys
        entries = stores.entries.load(user_id)[1]
        live, listed = live_by_id(entries, now.epoch), undecided(listed, entries)
    elif listed:  # the entries' text keys only, when a proposal waits (one Query either way)
        listed = undecided(listed, stores.entries.stored(user_id)[1])
    return {"memory_proposals": [shown(p, live) for p in display_order(listed)], "repeats": repeats}


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
    if enabled and not stores.entries.get_state(user_id).agents_folded:
        from chalicelib.services.agent_rows import fold_rows  # once per user: agent rows keyed by folded names

        fold_rows(stores, user_id)
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
    _insert_counted(
        stores, user_id, lambda _release: stores.entries.put_unique(entry, now_epoch=now.epoch), now, claim_index=1
    )
    return entry


def edit(stores: Stores, user_id: str, entry_id: str, body: EntryChangesBody) -> Entry:
    given = body.model_fields_set
    text = accepted_text(body.text) if "text" in given and body.text is not None else None
    now = instant(stores.clock)
    days = body.expires_in_days
    if not is_id(entry_id):
        raise NotFound("No such entry.")
    change = EntryChange(
        now_epoch=now.epoch,
        now_iso=now.iso,
        text=text,
        kind=body.kind if "kind" in given else None,
        pinned=body.pinned if "pinned" in given else None,
        expires_at=now.epoch + days * DAY_SECONDS if days else None,
        remove_expiry="expires_in_days" in given and days is None,
    )
    updated = update_entry(stores.entries, user_id, entry_id, change)
    if updated is None:
        raise NotFound("No such entry.")
    return updated


def forget(stores: Stores, user_id: str, entry_id: str) -> None:
    now = instant(stores.clock)
    if not is_id(entry_id) or not forget_entry(
        stores, user_id, entry_id, now, with_actions=[receipt(stores, user_id, now)]
    ):
        raise NotFound("No such entry.")


def forget_all(stores: Stores, user_id: str) -> dict[str, int]:
    """Destroy the user's data key, delete every entry and waiting proposal, keep the switch, journal counts only (forget_all.py)."""
    from chalicelib.services.forget_all import forget_all as forget_everything

    return forget_everything(stores, user_id)


def accept(stores: Stores, user_id: str, proposal_id: str, body: AcceptBody | None = None) -> Entry:
    """The proposal becomes an entry, with the user's corrections if any (origin, source and taint stay).

    With `replaces`, that entry is forgotten in the same transaction (so it works at the cap): it must be
    the user's live entry, or nothing changes (404).
    """
    text = accepted_text(body.text) if body is not None and body.text is not None else None
    # The proposal and what else waits, in one read: its agent's repeats may go with it (services/repeats.py).
    item, others = decision_read(stores, user_id, proposal_id) if is_id(proposal_id) else (None, [])
    opened = stores.proposals.opened(user_id, item)
    if opened is None:
        raise NotFound("No such proposal.")
    proposal = StoredRef(id=opened.id, expires_at=None, fingerprint=opened.fingerprint)
    now = instant(stores.clock)
    replaced = _replaced(stores, user_id, body, now)
    # the entry its agent said it updates (issue 39): replaced as an explicit `replaces` would be, while it is
    # live; forgotten or expired meanwhile, the proposal is accepted as an ordinary one (the page showed no link)
    linked = replaced is None and opened.replaces is not None and not (body and "replaces" in body.model_fields_set)
    entry = opened.with_changes(
        created_at=now.iso, updated_at=now.iso, expires_at=None, fingerprint=None, replaces=None
    )
    if body is not None:
        entry = corrected(entry, body, text, now)
    for attempt in range(_LINK_READS if linked else 1):
        if linked and opened.replaces is not None:
            replaced = _kept(stores.entries.live_ref(user_id, opened.replaces, now.epoch))
        # an update of a pinned entry stays pinned unless the person says otherwise in this accept
        keeps_pin = replaced is not None and replaced.pinned and not (body is not None and body.pinned is not None)
        made = entry.with_changes(pinned=True) if keeps_pin else entry
        plan = _AcceptPlan(stores, user_id, proposal, replaced, made, now)
        try:
            _insert_counted(
                stores,
                user_id,
                plan.actions,
                now,
                count=0 if replaced else 1,
                release_waiting=1,
                gone_index=0,
                claim_index=2,
                replaced_index=3 if replaced is not None else None,
                releases=plan.releases,
                continues=opened.text_id,
            )
            break
        except _ReplacedGone:
            # gone (another tab's forget or update) or edited between the read and the write: a linked entry is
            # read again (the person named none), an explicit one is the 404 it always was
            if not linked or attempt == _LINK_READS - 1:
                raise
    dismiss_after(stores, user_id, opened.agent, opened.source.session_id, others)
    return made


class _AcceptPlan:
    """An accept's actions: [delete proposal, Put entry, claim its fingerprint, (forget the replaced entry),
    release the fingerprints]. A release that fails (another item holds it: damaged storage) is left out."""

    def __init__(
        self, stores: Stores, user_id: str, proposal: StoredRef, replaced: StoredRef | None, entry: Entry, now: Instant
    ) -> None:
        self.stores, self.user_id, self.proposal, self.replaced, self.entry, self.now = (
            stores,
            user_id,
            proposal,
            replaced,
            entry,
            now,
        )
        self.releases: list[int] = []

    def actions(self, release: bool) -> list[dict[str, Any]]:
        stores, user_id, replaced = (
            self.stores,
            self.user_id,
            self.replaced,
        )  # stores.<table>.<method>: infra/dynamodb_access.py reads these
        created = stores.entries.put_unique(self.entry, now_epoch=self.now.epoch)
        forgotten = (
            []
            if replaced is None
            else stores.entries.forget_actions(user_id, replaced, self.now.epoch, release=release)
        )
        if (
            replaced is not None
            and replaced.fingerprint
            and created[1]["Put"]["Item"]["sk"] == stores.entries.fingerprints.key(user_id, replaced.fingerprint)["sk"]
        ):
            # the same words as the entry it replaces: one item, taken over rather than released and claimed
            created[1] = stores.entries.fingerprints.claim(
                user_id, replaced.fingerprint, self.entry.id, now_epoch=self.now.epoch, taking_from=replaced.id
            )
            forgotten = forgotten[:1]
        removed = stores.proposals.remove_actions(user_id, self.proposal, release=release)
        built = [removed[0], *created, *forgotten[:1]]
        released = [*forgotten[1:], *removed[1:]]
        self.releases[:] = range(len(built), len(built) + len(released))  # read by _insert_counted after each build
        # The replaced entry's text key goes with it (last: the indices above stay), as in every forget, and
        # the forget gets its receipt as a single forget does (issue 37 #12).
        if replaced is None:
            return [*built, *released]
        return [
            *built,
            *released,
            *stores.keyring.shred(user_id, [replaced.key_id]),
            receipt(stores, user_id, self.now),
        ]


def _replaced(stores: Stores, user_id: str, body: AcceptBody | None, now: Instant) -> StoredRef | None:
    """The live entry an accept's `replaces` names (None without one); 404 when it is not the user's live entry."""
    replaces = body.replaces if body is not None else None
    if replaces is None:
        return None
    ref = _kept(stores.entries.live_ref(user_id, replaces, now.epoch)) if is_id(replaces) else None
    if ref is None:
        raise NotFound("No such entry.")
    return ref


def _kept(ref: StoredRef | None) -> StoredRef | None:
    """`ref` unless it is an item put back after its forget (its text key gone): counted out already, so never
    replaced one in one out (that moved the cap), and not the person's entry, as its own forget (a 404) says."""
    return ref if ref is not None and ref.key_live else None


def reject(stores: Stores, user_id: str, proposal_id: str) -> None:
    if not is_id(proposal_id) or not reject_and_dismiss(stores, user_id, proposal_id):
        raise NotFound("No such proposal.")


# ---- the counted writes ----------------------------------------------------------------------


def _insert_counted(
    stores: Stores,
    user_id: str,
    build: Callable[[bool], list[dict[str, Any]]],
    now: Instant,
    *,
    count: int = 1,
    release_waiting: int = 0,
    gone_index: int | None = None,
    claim_index: int,
    replaced_index: int | None = None,
    releases: list[int] | None = None,
    continues: bytes | None = None,
) -> None:
    """Run `build(release)`'s actions with `count` more active entries counted; on a refusal, recount once and retry if that made room.

    The text is sealed by `build()` and the transaction checks its key is still the user's: if a
    concurrent forget-all destroyed it, the actions are built (sealed) again under the new key. The
    fingerprint claim at `claim_index` refuses a duplicate (`duplicate`, naming the entry that holds the
    words) unless that fingerprint turns out stale: the write is tried again, taking it over. `continues`: the
    text key an accept's entry continues; an entry holding it already (services/decided.py) is a 404.
    """
    refusals, release = 0, True
    built = build(release)
    for _ in range(_KEY_RETRIES + 4):
        actions = [*built, stores.entries.take_entry_slots(user_id, count, release_waiting=release_waiting)]
        guarded = stores.keyring.guard(actions, sole_in=stores.entries.holder_name())
        try:
            transact(stores.client, guarded)
            stores.keyring.written(guarded)
            return
        except TransactionCancelled as exc:
            # What the write acts on is gone first: a concurrent reject deletes the proposal *and* its text key,
            # so the key's guard fails too, and re-sealing could never succeed (it answered 503 after 6 tries).
            if gone_index is not None and exc.failed(gone_index):
                raise NotFound("No such proposal.") from exc
            if replaced_index is not None and exc.failed(replaced_index):
                raise _ReplacedGone("No such entry.") from exc
            if any(exc.failed(index) for index in range(len(actions), len(guarded))):
                if continues and stores.keyring.keys.held_in(user_id, continues) == stores.entries.holder_name():
                    raise NotFound("No such proposal.") from exc  # accepted already, put back since
                built = build(release)  # the key that sealed the text is gone: seal again
                continue
            if exc.failed(claim_index):
                met = stores.entries.fingerprints.met(stores.client, exc, claim_index, actions[claim_index])
                holder = stores.entries.holder(user_id, met, now.epoch)
                if holder is not None:
                    raise Duplicate(holder) from exc
                if (stale := stale_owner(met)) is not None:  # taken over from its dead holder, in this write
                    built[claim_index] = stores.entries.fingerprints.taken_over(built[claim_index], stale)
                continue
            if release and releases and any(exc.failed(index) for index in releases):
                release = False  # another item holds a fingerprint this would release (damaged storage): leave it
                built = build(release)
                continue
            state = recount(stores, user_id, now)
            if not state.enabled:
                raise MemoryOff() from exc
            if release_waiting and state.waiting < release_waiting:
                release_waiting = 0  # the proposal was never counted (the floor refused): accept it uncounted
                continue
            refusals += 1
            if refusals == 1 and state.active < MAX_ACTIVE_ENTRIES:
                continue  # the recount or a concurrent change made room: try again, once
            raise LimitReached(f"You have {MAX_ACTIVE_ENTRIES} entries, the most memory keeps.") from exc
    # Every attempt lost a race (its key destroyed by forget-alls, fingerprints changing): busy, nothing was
    # written. Not `limit_reached`: no refusal at the cap got here.
    raise Unavailable("Your memory was being changed while this was saved, and nothing was: try again.")


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
    proposals = display_order(undecided(stores.proposals.list(user_id), entries))
    journal, journal_cursor = stores.journal.page(user_id, limit=EXPORT_JOURNAL_ROWS)
    return {
        "schema_version": EXPORT_SCHEMA_VERSION,
        "exported_at": now.iso,
        "user_id": user_id,
        "settings": {"enabled": state.enabled},
        "entries": [e.public() for e in ordered if not e.is_expired(now.epoch)],
        "expired_entries_awaiting_deletion": expired[:EXPORT_EXPIRED_ENTRIES],
        "expired_entries_awaiting_deletion_total": len(expired),
        "proposals": [shown(p, live_by_id(ordered, now.epoch)) for p in proposals],
        # The agents the user set (their choices); an agent only seen is named by its entries and proposals above.
        "agents": agent_rows(
            state.agents, [e for e in ordered if not e.is_expired(now.epoch)], proposals, only_set=True
        ),
        "journal": [r.public() for r in journal],
        "journal_next_cursor": journal_cursor,  # the rest: GET /v1/memory/journal?cursor=...
    }
