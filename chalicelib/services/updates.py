"""Suggestions that say what they update (issue 39): refs handed out with a context, resolved when a proposal names one.

An agent is given each context item's `ref` (chalicelib/crypto/refs.py) and may send it back as `replaces`.
Only the consumer turns a ref into an entry id, and only for the session and user it was made for and an
entry that is still there: otherwise the proposal is an ordinary one, told to the agent exactly as any other.
The person sees the link as `replaces: {"id", "text"}` while that entry is still theirs and readable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.crypto.refs import entry_of, make_ref, ref_key
from chalicelib.models import Entry, new_id
from chalicelib.storage.entry_items import ENTRY_PREFIX, ref_from_item


def context_items(stores: Stores, user_id: str, session_id: str, chosen: Sequence[Entry]) -> list[dict[str, Any]]:
    """The context's items with their refs for this session. The data key that opened their texts is cached
    (entries.load just used it), so this makes no DynamoDB call; no items, no key needed at all."""
    if not chosen:
        return []
    key = ref_key(stores.keyring.fingerprint_key(user_id), user_id)
    return [entry.context_item(make_ref(key, user_id, session_id, entry.id)) for entry in chosen]


def resolve(stores: Stores, user_id: str, session_id: str, ref: str, now_epoch: int) -> str | None:
    """The id of the live entry `ref` names for this user's session, else None. Exactly one GetItem either way
    (a ref that does not open reads a random id), so how long a proposal takes says nothing about its ref."""
    key = ref_key(stores.keyring.fingerprint_key(user_id), user_id)  # the key its proposal is sealed under: cached
    entry_id = entry_of(key, user_id, session_id, ref)
    raw = stores.entries.raw_entry(user_id, entry_id or new_id())
    if entry_id is None or raw is None or raw.get("user_id") != user_id:
        return None
    stored = ref_from_item(raw, ENTRY_PREFIX)
    if stored is None or stored.id != entry_id or stored.is_expired(now_epoch):
        return None
    return entry_id


def shown(proposal: Entry, live: Mapping[str, Entry]) -> dict[str, Any]:
    """A proposal as the person sees it: with `replaces` {id, text} while that entry is live, else `null`
    (forgotten, expired, altered since: the link is dropped, never a 500)."""
    target = live.get(proposal.replaces) if proposal.replaces is not None else None
    return {**proposal.public(), "replaces": {"id": target.id, "text": target.text} if target is not None else None}


def live_by_id(entries: Iterable[Entry], now_epoch: int) -> dict[str, Entry]:
    return {e.id: e for e in entries if not e.is_expired(now_epoch)}
