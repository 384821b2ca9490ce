"""A proposal put back from a backup after its accept is not believed: the entry it became continues its text key.

An accept seals the entry under the proposal's own text key (one key for a text's whole life), and records on that
key's row that an entry holds it now (`held_in`, Keyring.guard). So a copy of the accepted proposal still opens;
it is left out of every list (its key is an entry's), its reject is a 404 that deletes nothing (the key row's
condition), and accepting it again is a 404 (the key row's condition too): the entry is never lost or doubled.
Nor is it counted as waiting when `waiting` is set to what is stored (services/orphans.py `true_waiting`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from chalicelib.models import Entry
from chalicelib.storage.entry_items import StoredRef

__all__ = ["undecided", "waiting_refs"]


def _taken(entries: Iterable[Entry | StoredRef]) -> set[bytes]:
    return {t for t in (e.text_id if isinstance(e, Entry) else e.key_id for e in entries) if t}


def undecided(proposals: Sequence[Entry], entries: Iterable[Entry | StoredRef]) -> list[Entry]:
    """`proposals` without those sealed under a text key one of `entries` uses (read from the same user)."""
    taken = _taken(entries)
    return [p for p in proposals if p.text_id is None or p.text_id not in taken]


def waiting_refs(refs: Sequence[StoredRef], entries: Iterable[Entry | StoredRef]) -> list[StoredRef]:
    """`undecided` over stored refs (unopened): the waiting places they really hold (slots have keys of their own)."""
    taken = _taken(entries)
    return [r for r in refs if r.slot or r.key_id is None or r.key_id not in taken]
