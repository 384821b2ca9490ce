"""Make a user's counters true again when a refusal at a cap may be wrong: expired entries and destroyed-key orphans go.

Two things can leave a counter too high, and a user locked out of a slot they do not really use:
- DynamoDB's TTL deletes an expired entry without moving the counter;
- a forget-all that AWS interrupted after destroying the user's data key leaves items no key opens
  ("orphans"): listed nowhere, useless forever, but still counted until the request runs again.

So where a too-high counter would hurt — a write refused at a cap, and forget-all — the partition is
read once (consistently, no text opened), the key row once, and both kinds are deleted in counted
transactions (`_delete_counted`: the counters move by exactly what this call deleted). An orphan is
an item sealed under a key id that is not the user's current key, read *after* the items: a key is
only ever replaced by destroying it, and no write lands under a destroyed key (Keyring.guard), so
such an item can never open again. Nothing is journaled here: the forget-all that destroyed the key
and TTL's expiry already account for these items.
"""
from __future__ import annotations

from collections.abc import Sequence

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant
from chalicelib.models import MemoryState
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.entry_items import StoredRef

_TRANSACTION_ACTIONS = 100

Removal = tuple[str, str]  # ("entry" | "proposal", id)


def recount(stores: Stores, user_id: str, now: Instant) -> MemoryState:
    """The entry counter made true: one consistent Query, a conditional correction, then the purge.

    Cost: one Query of the user's partition, one GetItem of their key row, one UpdateItem when the
    counter was wrong, and counted deletes for what is expired or orphaned. Returns the state as it
    is afterwards.
    """
    state, entries = stores.entries.stored(user_id, consistent=True)
    active = state.active
    if state.active != len(entries) and stores.entries.correct_active(user_id, len(entries), state):
        active = len(entries)
    orphaned = _orphans(stores, user_id, entries)
    gone = [("entry", e.id) for e in entries if e.is_expired(now.epoch) or e.id in orphaned]
    purged = _delete_counted(stores, user_id, gone)
    return MemoryState(enabled=state.enabled, active=active - len(purged), waiting=state.waiting)


def recount_waiting(stores: Stores, user_id: str) -> MemoryState:
    """At the waiting-proposals cap: delete proposals a destroyed key left behind; the state afterwards.

    Proposals have no TTL, so orphans are the one way their counter outgrows what a user can see.
    Cost: one Query of their proposals, one GetItem of the key row, one GetItem of the state.
    """
    proposals = stores.proposals.stored(user_id)
    orphaned = _orphans(stores, user_id, proposals)
    _delete_counted(stores, user_id, [("proposal", p.id) for p in proposals if p.id in orphaned])
    return stores.entries.get_state(user_id)


def _orphans(stores: Stores, user_id: str, refs: Sequence[StoredRef]) -> set[str]:
    """Ids of items sealed under a key that is no longer the user's (read after the items: see above)."""
    if not any(ref.key_id is not None for ref in refs):
        return set()  # nothing sealed to judge: no need to read the key row
    current = stores.keyring.keys.get(user_id)
    current_id = current.key_id if current is not None else None
    return {ref.id for ref in refs if ref.key_id is not None and ref.key_id != current_id}


def _delete_counted(stores: Stores, user_id: str, removals: list[Removal]) -> list[Removal]:
    """Delete entries/proposals in transactions that move the counters by exactly what was deleted; returns what this call deleted."""
    deleted: list[Removal] = []
    chunk = _TRANSACTION_ACTIONS - 1
    for start in range(0, len(removals), chunk):
        part = removals[start : start + chunk]
        try:
            _delete_chunk(stores, user_id, part)
            deleted.extend(part)
        except TransactionCancelled:
            for one in part:  # something in the chunk went meanwhile: settle item by item
                try:
                    _delete_chunk(stores, user_id, [one])
                    deleted.append(one)
                except TransactionCancelled:
                    pass  # already gone, and already uncounted by whoever removed it
    return deleted


def _delete_chunk(stores: Stores, user_id: str, part: list[Removal]) -> None:
    actions = [
        stores.entries.delete_stored(user_id, item_id)
        if kind == "entry"
        else stores.proposals.delete_waiting(user_id, item_id)
        for kind, item_id in part
    ]
    entries = sum(1 for kind, _ in part if kind == "entry")
    actions.append(stores.entries.release_counts(user_id, active=entries, waiting=len(part) - entries))
    transact(stores.client, actions)
