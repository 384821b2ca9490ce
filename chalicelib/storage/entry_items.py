"""Mapping between Entry dataclasses and the items that store them (entries and proposals share a shape).

An item is believed only as a whole: its id comes from its sort key, its provenance is bound to its
sealed text (`provenance`), and an item that is half-written or altered in storage (an attribute
missing or of the wrong type, a field that no longer matches its seal) is `UnreadableText`: absent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from chalicelib.crypto.sealing import Provenance
from chalicelib.models import Entry, Source
from chalicelib.storage.text import TextSeal, UnreadableText, sealing_key_id, unreadable

# The entries table's TTL attribute: DynamoDB removes an expired entry some time after this instant.
EXPIRY_ATTRIBUTE = "expires_at"
# The latest expiry an item can hold and still be shown (9999-12-31T23:59:59Z): it is not bound to the
# seal (PATCH changes it), so a value past what a date can say, or negative, is damage.
LAST_EXPIRY = 253_402_300_799
ENTRY_PREFIX, PROPOSAL_PREFIX = "e#", "p#"  # sort keys: "e#<id>" in the entries table, "p#<id>" in proposals
# The keyed fingerprint of the item's text, naming its fingerprint item (chalicelib/storage/fingerprints.py).
FINGERPRINT_ATTRIBUTE = "fingerprint"
# Marks a proposals-table item that only holds a waiting slot for a duplicate (storage/proposals.py).
SLOT_ATTRIBUTE = "slot"
# A proposal's link to the entry it updates (issue 39, docs/review.md): bound to its seal by `provenance`.
REPLACES_ATTRIBUTE = "replaces"


def item_key(user_id: str, sort_key: str) -> dict[str, str]:
    """The item's whole primary key, as its associated data binds it."""
    return {"user_id": user_id, "sk": sort_key}


def provenance(entry: Entry) -> Provenance:
    """Where the text came from and what it claims to be: bound to its ciphertext, so storage cannot change it.

    Pinned, expiry, updated_at and edited are the user's own settings (PATCH changes them without
    touching the text), so they are not bound; the kind is (PATCH of the kind seals the text again).
    """
    return _provenance(
        entry.origin, entry.agent, entry.tainted, entry.kind, entry.created_at, entry.source, entry.replaces
    )


def _provenance(
    origin: str,
    agent: str | None,
    tainted: bool,
    kind: str,
    created_at: str,
    source: Source,
    replaces: str | None = None,
) -> Provenance:
    bound: dict[str, str | bool | None] = {
        "origin": origin,
        "agent": agent,
        "tainted": tainted,
        "kind": kind,
        "created_at": created_at,
        "src_session": source.session_id,
        "src_thread": source.thread_id,
        "src_message": source.message_id,
    }
    # Only a proposal that updates an entry binds the link (issue 39), so every item sealed before stays the same
    # associated data; a link added, removed, altered or copied in storage makes the item not open (absent).
    if replaces is not None:
        bound["replaces"] = replaces
    return bound


def to_item(
    entry: Entry,
    sort_key: str,
    seal: TextSeal,
    *,
    under: bytes | None = None,
    sealed_text: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The item storing `entry`; `sealed_text`: its text's attributes when the caller sealed it already. The text
    continues under `under`, or the entry's own text key (an accepted proposal's), else a new key."""
    item: dict[str, Any] = {
        "user_id": entry.user_id,
        "sk": sort_key,
        "id": entry.id,  # for people reading the table; the id is read from the sort key
        "kind": entry.kind,
        "pinned": entry.pinned,
        "tainted": entry.tainted,
        "origin": entry.origin,
        "src_session": entry.source.session_id,
        "src_thread": entry.source.thread_id,
        "src_message": entry.source.message_id,
        "created_at": entry.created_at,
        "updated_at": entry.updated_at,
        EXPIRY_ATTRIBUTE: entry.expires_at,
        "agent": entry.agent,
        "edited": entry.edited or None,  # stored only when true (None attributes are left out)
        FINGERPRINT_ATTRIBUTE: entry.fingerprint,
        REPLACES_ATTRIBUTE: entry.replaces,
    }
    item.update(sealed_text if sealed_text is not None else sealed(entry, sort_key, seal, under=under))
    return item


def sealed(entry: Entry, sort_key: str, seal: TextSeal, *, under: bytes | None = None) -> dict[str, Any]:
    """The sealed-text attribute of `entry` stored at `sort_key`, bound to that key and the entry's provenance."""
    return seal.seal_text(
        entry.user_id, item_key(entry.user_id, sort_key), provenance(entry), entry.text, under=under or entry.text_id
    )


def sealed_and_fingerprints(
    entry: Entry, sort_key: str, seal: TextSeal, tables: tuple[str, ...], *, under: bytes | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """`sealed`, and the text's fingerprint for each of `tables` under the same key (no extra key lookup)."""
    key = item_key(entry.user_id, sort_key)
    return seal.seal_and_fingerprint(
        entry.user_id, key, provenance(entry), entry.text, under=under or entry.text_id, tables=tables
    )


def from_item(item: Mapping[str, Any], seal: TextSeal, prefix: str, keys: Mapping[bytes, bytes] | None = None) -> Entry:
    """The entry or proposal stored in `item` (its sort key starts with `prefix`); UnreadableText when it is
    incomplete or does not open here as itself. `keys`: the text keys of a list, read at once."""
    try:
        fields = _unsealed(item, prefix)
    except (KeyError, TypeError, ValueError) as exc:
        raise unreadable(seal.table, "attributes") from exc
    claimed = _provenance(
        fields["origin"],
        fields["agent"],
        fields["tainted"],
        fields["kind"],
        fields["created_at"],
        fields["source"],
        fields["replaces"],
    )
    text = seal.open_text(fields["user_id"], item_key(fields["user_id"], str(item["sk"])), claimed, item, keys)
    return Entry(**fields, text=text, text_id=sealing_key_id(item))  # built once: a GET builds 250


def text_keys_for(items: Sequence[Mapping[str, Any]], seal: TextSeal, user_id: str) -> dict[bytes, bytes]:
    """The keys of every text in `items` (one list), cached or read in one Query of the user's keys."""
    ids = [t for t in (sealing_key_id(i) for i in items) if t]
    return seal.keyring.text_keys(user_id, ids) if ids else {}


def _unsealed(item: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """Every field of the Entry but its text and key id, each of the type it is written with (anything else raises)."""
    return dict(
        id=id_of(item, prefix),
        user_id=_text(item, "user_id"),
        kind=_text(item, "kind"),
        pinned=_flag(item, "pinned"),
        tainted=_flag(item, "tainted"),
        origin=_text(item, "origin"),
        source=Source(
            session_id=_optional_text(item, "src_session"),
            thread_id=_optional_text(item, "src_thread"),
            message_id=_optional_text(item, "src_message"),
        ),
        created_at=_text(item, "created_at"),
        updated_at=_text(item, "updated_at"),
        expires_at=_expiry(item),
        agent=_optional_text(item, "agent"),
        edited=_flag(item, "edited"),
        fingerprint=_fingerprint(item),
        replaces=_optional_text(item, REPLACES_ATTRIBUTE),
    )


def _fingerprint(item: Mapping[str, Any]) -> str | None:
    """The stored fingerprint, or None when missing or damaged (the item is still read: it is not sealed)."""
    value = item.get(FINGERPRINT_ATTRIBUTE)
    return value if isinstance(value, str) and 0 < len(value) <= 128 else None


def id_of(item: Mapping[str, Any], prefix: str) -> str:
    """The id in the item's sort key (`prefix` + id): the key is what the seal binds, not the `id` attribute."""
    sort_key = _text(item, "sk")
    if not sort_key.startswith(prefix) or len(sort_key) == len(prefix):
        raise ValueError("not a sort key of this table")
    return sort_key[len(prefix) :]


def _text(item: Mapping[str, Any], name: str) -> str:
    value = item[name]
    if not isinstance(value, str):
        raise TypeError(name)
    return value


def _optional_text(item: Mapping[str, Any], name: str) -> str | None:
    return None if item.get(name) is None else _text(item, name)


def _flag(item: Mapping[str, Any], name: str) -> bool:
    value = item.get(name, False)
    if not isinstance(value, bool):
        raise TypeError(name)
    return value


def _expiry(item: Mapping[str, Any]) -> int | None:
    value = item.get(EXPIRY_ATTRIBUTE)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise TypeError(EXPIRY_ATTRIBUTE)
    if not 0 <= value <= LAST_EXPIRY:
        raise TypeError(EXPIRY_ATTRIBUTE)
    return int(value)


@dataclass(frozen=True)
class StoredRef:
    """An item's id, expiry and the id of the key that sealed it, read without opening its text (forget-all and purges need no key)."""

    id: str
    expires_at: int | None
    key_id: bytes | None = None
    fingerprint: str | None = None
    agent: str | None = None  # the proposing agent, for items that came from one (origin "agent")
    session_id: str | None = None
    # False when `opened_ref` found its text's key gone (forgotten: an item restored after its forget).
    key_live: bool = True
    # A waiting slot a duplicate holds (storage/proposals.py `hold_slot`): counted, never shown, no text.
    slot: bool = False
    pinned: bool = False  # the person's pin, as the page shows it: an update that replaces the entry keeps it

    def is_expired(self, now_epoch: int) -> bool:
        return self.expires_at is not None and self.expires_at <= now_epoch


def ref_from_item(item: Mapping[str, Any], prefix: str) -> StoredRef | None:
    """Any item of ours, damaged or not (forget-all and the purges must reach those too; a bad expiry reads as
    none); None for a sort key this table never writes (a delete by id could not name it). The agent and
    session are read unopened: they only choose what a forget-by-agent deletes, never what is shown."""
    try:
        item_id = id_of(item, prefix)
    except (TypeError, ValueError):
        return None
    try:
        expires_at = _expiry(item)
    except TypeError:
        expires_at = None
    came_from_agent = item.get("origin") == "agent" and isinstance(item.get("agent"), str)
    session_id = item.get("src_session")
    return StoredRef(
        id=item_id,
        expires_at=expires_at,
        key_id=sealing_key_id(item),
        agent=str(item["agent"]) if came_from_agent else None,
        session_id=session_id if came_from_agent and isinstance(session_id, str) else None,
        fingerprint=_fingerprint(item),
        slot=item.get(SLOT_ATTRIBUTE) is True,
        pinned=item.get("pinned") is True,
    )


def opened_ref(item: Mapping[str, Any], seal: TextSeal, prefix: str) -> StoredRef | None:
    """`ref_from_item`, naming its text's key only if the text opens here as this item's: a forget deletes the key
    of the text it forgets, never one a copied ciphertext names (that item is deleted, the other text kept)."""
    ref = ref_from_item(item, prefix)
    if ref is None or ref.key_id is None:
        return ref
    try:
        from_item(item, seal, prefix)
    except UnreadableText:
        # Damaged in place (its key still there, maybe another item's): deletable, its key untouched.
        # Its key gone: an item restored after its forget, which no forget may count again.
        return replace(
            ref, key_id=None, key_live=seal.keyring.text_key(str(item.get("user_id")), ref.key_id) is not None
        )
    return ref
