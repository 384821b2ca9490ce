"""What must hold in storage after any request, fault or refusal: the state item's counters equal the stored items."""

from __future__ import annotations

from typing import Any


def stored_counts(stores: Any, user_id: str) -> dict[str, int]:
    """The counters as stored beside the entries and proposals actually stored (expired entries count until purged).

    Items are counted without opening their text: after forget-all destroyed the key, what is still
    stored no longer opens, and it still counts.
    """
    state, entries = stores.entries.stored(user_id)
    return {
        "active": state.active,
        "entries": len(entries),
        "waiting": state.waiting,
        "proposals": len(stores.proposals.stored(user_id)),
    }


def assert_counters_match(stores: Any, user_id: str) -> dict[str, int]:
    counts = stored_counts(stores, user_id)
    assert counts["active"] == counts["entries"] and counts["waiting"] == counts["proposals"], counts
    return counts
