"""Make the entry counter true again when a refusal at the cap may be wrong: expired entries and orphans go.

Two things can leave `active` too high, and a user locked out of slots they do not really use:
DynamoDB's TTL deletes an expired entry without moving the counter, and an interrupted forget-all
leaves entries no key opens (services/orphans.py). Both are deleted here, counted.
"""
from __future__ import annotations

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant
from chalicelib.models import MemoryState
from chalicelib.services.orphans import delete_counted, orphaned_ids


def recount(stores: Stores, user_id: str, now: Instant) -> MemoryState:
    """One consistent Query, a conditional correction, then the purge; the state as it is afterwards.

    This runs only where a too-high counter would hurt: a write refused at the cap, and forget-all.
    Cost: one Query of the user's partition, one GetItem of their key row (when any entry is stored),
    one UpdateItem when the counter was wrong, and counted deletes for what is expired or orphaned.
    No text is opened: every stored entry counts, whether or not its text opens here.
    """
    state, entries = stores.entries.stored(user_id, consistent=True)
    active = state.active
    if state.active != len(entries) and stores.entries.correct_active(user_id, len(entries), state):
        active = len(entries)
    orphaned = orphaned_ids(stores, user_id, entries)
    gone = [e.id for e in entries if e.is_expired(now.epoch) or e.id in orphaned]
    text_ids = {e.id: e.key_id for e in entries}
    purged = delete_counted(
        gone,
        lambda entry_id: [stores.entries.delete_stored(user_id, entry_id), *stores.keyring.shred(user_id, [text_ids.get(entry_id)])],
        lambda n: stores.entries.release_counts(user_id, active=n),
        stores,
    )
    return MemoryState(enabled=state.enabled, active=active - purged, waiting=state.waiting)
