"""Items a destroyed key left behind: found without opening any text, deleted with their counters, never journaled.

Forget-all destroys the user's key first; if AWS then refuses its deletions, the items stay stored
and counted but can never open ("orphans"): listed nowhere, useless forever. An item is an orphan
when the key id in its sealed text is not the user's current key, read *after* the items: a key is
only ever replaced by destroying it, and no write lands under a destroyed key (Keyring.guard), so
such an item cannot open again. They are deleted only where a too-high counter would hurt: a write
refused at a cap (services/recount.py for entries, `recount_waiting` here for proposals). Nothing is
journaled: the forget-all that destroyed the key (`keep.memory.key_destroyed`) accounts for them.
This module deletes proposals only, so the stream consumer that uses it needs no entry deletes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.models import MemoryState
from chalicelib.services.decided import waiting_refs
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.entry_items import StoredRef
from chalicelib.storage.fingerprints import Fingerprint

_TRANSACTION_ACTIONS = 100


def orphaned_ids(stores: Stores, user_id: str, refs: Sequence[StoredRef]) -> set[str]:
    """Ids among `refs` (just read) whose text key is gone, or wrapped under a data key that is no longer the user's."""
    if not any(ref.key_id is not None for ref in refs):
        return set()  # nothing sealed to judge: no need to read the keys
    live = stores.keyring.live_text_ids(user_id)
    return {ref.id for ref in refs if ref.key_id is not None and ref.key_id not in live}


def recount_waiting(stores: Stores, user_id: str) -> MemoryState:
    """At the waiting-proposals cap: delete proposals a destroyed key left behind; the state afterwards.

    Proposals have no TTL, so orphans and the slots duplicates hold (which the user never sees) are the
    ways their counter outgrows what a user can see; a slot goes once its time is up.
    Cost: one Query of their proposals, one Query of their keys, `true_waiting`'s GetItem and consistent Query
    (and its UpdateItem when the counter was wrong), and a counted delete when there are orphans.
    """
    proposals, fingerprints = stores.proposals.stored_all(user_id)
    now_epoch = instant(stores.clock).epoch
    # ... and the waiting slots duplicates held, once their time is up (storage/proposals.py `hold_slot`)
    orphans = orphaned_ids(stores, user_id, proposals) | {p.id for p in proposals if p.slot and p.is_expired(now_epoch)}
    text_ids = {p.id: p.key_id for p in proposals}
    delete_counted(
        sorted(orphans),
        lambda proposal_id: [
            stores.proposals.delete_waiting(user_id, proposal_id),
            *stores.keyring.shred(user_id, [text_ids.get(proposal_id)]),
        ],
        lambda n: stores.entries.release_counts(user_id, waiting=n),
        stores,
    )
    drop_stale(
        stores, stores.proposals.fingerprints.drop_stale, user_id, [f for f in fingerprints if f.owner in orphans]
    )
    return true_waiting(stores, user_id)  # a slot put back from a backup was uncounted, yet freed here counted


def true_waiting(stores: Stores, user_id: str, *, seen: MemoryState | None = None) -> MemoryState:
    """`waiting` set to the proposals and slots stored, unless a counted write moved the state since it was read; the
    state afterwards. Forget-all's last step, an agent's forget's, and the waiting cap's recount's: items put back
    from a backup were never counted, yet their deletion was, and the counter went wrong (issue 37 #11).
    `seen`: the state item as a consistent read just had it (its version), instead of reading it here.
    Cost: a GetItem (unless `seen`) and a Query, and only when the counter was wrong a Query of the entries and an
    UpdateItem."""
    state = seen or stores.entries.get_state(user_id)  # first: a proposal counted after this moves the version
    proposals, _ = stores.proposals.stored_all(user_id, consistent=True)
    if state.waiting != len(proposals) and any(p.key_id for p in proposals):
        # an accepted proposal put back from a backup holds no place (services/decided.py): one Query of the entries,
        # only when the counter is to be corrected (an accept after the read above moves the version: no write)
        proposals = waiting_refs(proposals, stores.entries.stored(user_id)[1])
    if state.waiting != len(proposals) and stores.entries.correct_waiting(user_id, len(proposals), state):
        return replace(state, waiting=len(proposals))
    return state


def drop_stale(
    stores: Stores, drop: Callable[[str, Fingerprint], dict[str, Any]], user_id: str, stale: Sequence[Fingerprint]
) -> None:
    """Delete fingerprints whose item was just deleted, each only while it still names that item; uncounted.

    `drop` is a table's `fingerprints.drop_stale` (named, so infra/dynamodb_access.py reads what it does)."""
    for start in range(0, len(stale), _TRANSACTION_ACTIONS):
        part = stale[start : start + _TRANSACTION_ACTIONS]
        try:
            transact(stores.client, [drop(user_id, f) for f in part])
        except TransactionCancelled:
            for one in part:
                try:
                    transact(stores.client, [drop(user_id, one)])
                except TransactionCancelled:
                    pass  # taken over by a new item with the same words: it is theirs now


def delete_counted(
    ids: Sequence[str],
    delete: Callable[[str], list[dict[str, Any]]],
    release: Callable[[int], dict[str, Any]],
    stores: Stores,
) -> int:
    """Delete `ids` in transactions that also move the counter by exactly that many; how many this call deleted.

    `delete(id)`: the item's Delete and its text key's (Keyring.shred), so an expired or orphaned text is
    forgotten as finally as any other.

    An item someone else removed meanwhile cancels its chunk; the chunk is then settled item by item,
    and an item already gone was already uncounted by whoever removed it.
    """
    deleted = 0
    chunk = (_TRANSACTION_ACTIONS - 1) // 2  # an item and its key
    for start in range(0, len(ids), chunk):
        part = ids[start : start + chunk]
        try:
            transact(stores.client, [*(a for i in part for a in delete(i)), release(len(part))])
            deleted += len(part)
        except TransactionCancelled:
            for one in part:
                try:
                    transact(stores.client, [*delete(one), release(1)])
                    deleted += 1
                except TransactionCancelled:
                    pass
    return deleted
