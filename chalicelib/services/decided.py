"""A proposal put back from a backup after its accept is not believed: the entry it became continues its text key.

An accept seals the entry under the proposal's own text key (one key for a text's whole life), and records on that
key's row that an entry holds it now (`held_in`, Keyring.guard). So a copy of the accepted proposal still opens;
it is left out of every list (its key is an entry's), its reject is a 404 that deletes nothing (the key row's
condition), and accepting it again is a 404 (the key row's condition too): the entry is never lost or doubled.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from chalicelib.models import Entry
from chalicelib.storage.entry_items import StoredRef

__all__ = ["undecided"]


def undecided(proposals: Sequence[Entry], entries: Iterable[Entry | StoredRef]) -> list[Entry]:
    """`proposals` without those sealed under a text key one of `entries` uses (read from the same user)."""
    taken = {e.text_id if isinstance(e, Entry) else e.key_id for e in entries} - {None}
    return [p for p in proposals if p.text_id is None or p.text_id not in taken]
