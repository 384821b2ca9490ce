"""Forgetting one text: its item and its own key deleted in one transaction, with a receipt saying when no copy opens.

Every path that forgets one text (forget one, reject, a refused event, an operator's forget, a replace,
the recount's purge) deletes the text's key row with `Keyring.shred` in the same transaction as the
item; forget-by-agent and forget-all delete their texts' keys first (`Keyring.shred_now`, then the
items: services/forget_all.py). A copy of the item restored from a backup, or still in the stream, then
opens nowhere. A running function elsewhere may still hold the key for at most the key cache's age, so
the receipt's `unrecoverable_by` is the deletion plus that age (chalicelib/crypto/cache.py).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant
from chalicelib.crypto.cache import MAX_AGE_SECONDS
from chalicelib.models import iso

FORGET = "keep.memory.forget"


def unrecoverable_by(now: Instant) -> str:
    """The instant after which no copy of a text forgotten `now` can be opened anywhere."""
    return iso(datetime.fromtimestamp(now.epoch, UTC) + timedelta(seconds=MAX_AGE_SECONDS + 1))


def receipt(stores: Stores, user_id: str, now: Instant, **details: Any) -> dict[str, Any]:
    """The journal row of one forget (never the text): when it happened and when it is final everywhere."""
    return stores.journal.record(user_id, FORGET, now.iso, {**details, "unrecoverable_by": unrecoverable_by(now)})
