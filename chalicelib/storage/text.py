"""The one place memory text is written to or read from an item: sealed per user with AES-256-GCM, never plain.

A `TextSeal` belongs to one table. It seals under the text's own key (chalicelib/crypto/keyring.py:
one key per text for its whole life, wrapped under the user's data key) with associated data naming that table, the user, the item's whole primary key and its provenance
(`chalicelib.crypto.sealing.associated_data`), so the stored value opens only where, and as what, it
was written. A value that does not open raises `UnreadableText`: repositories treat such an item as
absent (a 404 like any missing id, left out of lists), never as a 500 and never with its content.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.crypto.fingerprint import fingerprint
from chalicelib.crypto.keyring import Keyring
from chalicelib.crypto.sealing import (
    TEXT_ATTRIBUTE,
    Provenance,
    Unsealable,
    associated_data,
    is_legacy,
    key_id_of,
    open_sealed,
    seal,
)
from chalicelib.storage.unreadable import UnreadableText, unreadable

__all__ = ["TEXT_ATTRIBUTE", "TextSeal", "UnreadableText", "sealing_key_id", "unreadable"]

# What `sealing_key_id` reports for a value sealed in an earlier format: never any text's key id (those
# are 16 random bytes), so such an item counts as an orphan that no key opens (services/orphans.py).
LEGACY_KEY_ID = b""


def _blob(value: Any) -> bytes:
    return bytes(getattr(value, "value", value))  # boto3's Binary wraps the bytes


def sealing_key_id(stored: Mapping[str, Any]) -> bytes | None:
    """Which text key sealed the item's text (its id), read without opening it; None when there is no sealed text."""
    try:
        blob = _blob(stored[TEXT_ATTRIBUTE])
    except (KeyError, TypeError, ValueError):
        return None
    if is_legacy(blob):
        return LEGACY_KEY_ID
    try:
        return key_id_of(blob)
    except Unsealable:
        return None


class TextSeal:
    def __init__(self, keyring: Keyring, table: str) -> None:
        self.keyring = keyring
        self.table = table

    def seal_text(
        self, user_id: str, key: Mapping[str, str], provenance: Provenance, text: str, *, under: bytes | None = None
    ) -> dict[str, Any]:
        """The attributes that store `text` for `user_id` in the item whose primary key is `key`, with `provenance`.

        `under`: the id of the key of the text this one continues (the event a proposal came from, the
        proposal an entry came from, the entry before an edit): its life goes on under that key, and the
        caller's write checks (Keyring.guard) the key was not forgotten meanwhile. Otherwise, or when that
        key is gone, a new text key: guard writes its row with the item.
        """
        return self.seal_and_fingerprint(user_id, key, provenance, text, under=under)[0]

    def seal_and_fingerprint(
        self,
        user_id: str,
        key: Mapping[str, str],
        provenance: Provenance,
        text: str,
        *,
        under: bytes | None = None,
        tables: tuple[str, ...] = (),
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """`seal_text`'s attributes, and the text's fingerprint for each of `tables` under the user's data key
        (chalicelib/crypto/fingerprint.py): the key a new text needs is read once for both."""
        text_key = self.keyring.text_key(user_id, under) if under else None
        if under is None or text_key is None:
            under, text_key = self.keyring.new_text_key(user_id)
        attributes = {
            TEXT_ATTRIBUTE: seal(under, text_key, text, associated_data(self.table, user_id, key, provenance))
        }
        if not tables:
            return attributes, {}
        data_key = self.keyring.fingerprint_key(user_id)
        return attributes, {table: fingerprint(data_key, user_id, table, text) for table in tables}

    def open_text(
        self,
        user_id: str,
        key: Mapping[str, str],
        provenance: Provenance,
        stored: Mapping[str, Any],
        keys: Mapping[bytes, bytes] | None = None,
    ) -> str:
        """The text stored in `stored` for `user_id`; UnreadableText if it was not sealed right here, as this,
        or its key is forgotten. `keys`: the text keys a list read at once (Keyring.text_keys), else one lookup."""
        try:
            blob = _blob(stored[TEXT_ATTRIBUTE])
            text_id = key_id_of(blob)
            data_key = keys.get(text_id) if keys is not None else self.keyring.text_key(user_id, text_id)
            if data_key is None:
                raise Unsealable("the text's key is forgotten")
            return open_sealed(data_key, blob, associated_data(self.table, user_id, key, provenance))
        except (KeyError, TypeError, ValueError, Unsealable) as exc:
            raise unreadable(self.table, "sealed_text") from exc
