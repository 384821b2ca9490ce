"""Forgetting one entry or removing one proposal, its fingerprint with it: the one path every single forget takes.

An item's fingerprint (storage/fingerprints.py) must go in the same transaction as the item, or its text
could never be added again. Its name is stored on the item, so the item is read first (one GetItem, no
text opened) and deleted on the condition that it still holds that fingerprint. Chunked forgets (forget-all,
forget by agent) build the same actions per item with `EntriesRepository.forget_actions` /
`ProposalsRepository.remove_actions`.

Each forget also deletes the text's own key (`Keyring.shred`, issue 26) in the same transaction, last, so
the indices above stay: a copy of the item restored from a backup then opens nowhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant
from chalicelib.errors import Unavailable
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.entry_items import StoredRef

_ROUNDS = 4  # the entry changed (an edit) between the read and the delete: read it again


def forget_entry(
    stores: Stores, user_id: str, entry_id: str, now: Instant, with_actions: Sequence[dict[str, Any]] = ()
) -> bool:
    """Delete a live entry and its fingerprint, count it, with `with_actions`; False when there is no such live entry."""
    release = True
    for _ in range(_ROUNDS):
        ref = stores.entries.live_ref(user_id, entry_id, now.epoch)
        if ref is None or not ref.key_live:
            return False  # missing, or restored after its forget (its key is gone): a 404, no counter moves
        actions = stores.entries.forget_actions(user_id, ref, now.epoch, release=release)
        try:
            transact(
                stores.client,
                [
                    *actions,
                    stores.entries.release_counts(user_id, active=1),
                    *with_actions,
                    *_shred(stores, user_id, ref),
                ],
            )
            return True
        except TransactionCancelled as exc:
            if len(actions) == 2 and exc.failed(1):
                release = False  # another entry holds that fingerprint (damaged storage): leave it to them
            elif not exc.failed(0):
                raise
    raise Unavailable("The entry kept changing while it was forgotten: try again.")


def remove_proposal(
    stores: Stores, user_id: str, proposal_id: str, *, read: Callable[[], StoredRef | None] | None = None
) -> bool:
    """Reject: delete a waiting proposal and its fingerprint, uncount it; False when it no longer waits.
    `read`: the first round's read, when the caller read it already (services/repeats.py)."""
    release = counted = True
    for round_ in range(_ROUNDS):
        ref = read() if read is not None and round_ == 0 else stores.proposals.stored_one(user_id, proposal_id)
        if ref is None or not ref.key_live:
            return False  # gone, restored after its forget, or a slot that is not believed: a 404, no counter moves
        actions = stores.proposals.remove_actions(user_id, ref, release=release)
        # `waiting` never below zero (conditional, issue 37 #8): at zero, the item was never counted, so it goes uncounted
        counter = (
            stores.entries.release_counts(user_id, waiting=1, floor=True)
            if counted
            else stores.entries.bump_version(user_id, only_if_stored=False)
        )
        # Never the key of the entry it became: a copy of an accepted proposal put back from a backup is a 404
        shred = stores.keyring.shred(user_id, [ref.key_id], unless_held_in=stores.entries.holder_name())
        try:
            transact(stores.client, [*actions, counter, *shred])
            return True
        except TransactionCancelled as exc:
            if shred and exc.failed(len(actions) + 1):
                return False
            if len(actions) == 2 and exc.failed(1):
                release = False
            elif exc.failed(len(actions)) and not exc.failed(0):
                counted = False
            elif not exc.failed(0):
                raise
    raise Unavailable("The proposal kept changing while it was rejected: try again.")


def _shred(stores: Stores, user_id: str, ref: StoredRef) -> list[dict[str, Any]]:
    """The deletion of the forgotten text's key (the ref names it only if the text opened as this item's)."""
    return stores.keyring.shred(user_id, [ref.key_id])
