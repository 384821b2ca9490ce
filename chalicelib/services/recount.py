"""Make the entry counter true again when a refusal at the cap may be wrong: expired entries and orphans go.

Two things can leave `active` too high, and a user locked out of slots they do not really use:
DynamoDB's TTL deletes an expired entry without moving the counter, and an interrupted forget-all
leaves entries no key opens (services/orphans.py). Both are deleted here, counted, with their fingerprints.
"""

from __future__ import annotations

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant
from chalicelib.models import MemoryState
from chalicelib.services.orphans import delete_counted, drop_stale, orphaned_ids


def recount(stores: Stores, user_id: str, now: Instant, *, orphans: bool = True) -> MemoryState:
    """One consistent Query, a conditional correction, then the purge; the state as it is afterwards.

    `orphans=False` (forget-all's own recount) leaves orphans alone: that forget-all already deleted, counted,
    every item it read after destroying its key, so any orphan still stored is sealed under a key a concurrent
    forget-all destroyed, and that one reads it and counts it in its `{deleted}`. Purged here it would be
    deleted uncounted by anyone (a concurrent burst lost three entries that way).

    This runs only where a too-high counter would hurt: a write refused at the cap, and forget-all.
    Cost: one Query of the user's partition, one Query of their keys (when any entry is stored: every text's key),
    one UpdateItem when the counter was wrong, and counted deletes for what is expired or orphaned.
    No text is opened: every stored entry counts, whether or not its text opens here.
    """
    state, entries, fingerprints = stores.entries.stored_all(user_id, consistent=True)
    active = state.active
    if state.active != len(entries) and stores.entries.correct_active(user_id, len(entries), state):
        active = len(entries)
    orphaned = orphaned_ids(stores, user_id, entries) if orphans else set()
    gone = [e.id for e in entries if e.is_expired(now.epoch) or e.id in orphaned]
    text_ids = {e.id: e.key_id for e in entries}
    purged = delete_counted(
        gone,
        lambda entry_id: [
            stores.entries.delete_stored(user_id, entry_id),
            *stores.keyring.shred(user_id, [text_ids.get(entry_id)]),
        ],
        lambda n: stores.entries.release_counts(user_id, active=n),
        stores,
    )
    # Their fingerprints go too (each only while it still names the purged entry: a new entry with the same
    # words may have taken over an expired one's fingerprint meanwhile).
    gone_ids = set(gone)
    drop_stale(
        stores, stores.entries.fingerprints.drop_stale, user_id, [f for f in fingerprints if f.owner in gone_ids]
    )
    # Its version only while this wrote nothing: then it is the state as read before any proposal is (true_waiting).
    wrote = active != state.active or purged > 0
    return MemoryState(
        enabled=state.enabled, active=active - purged, waiting=state.waiting, version=0 if wrote else state.version
    )
