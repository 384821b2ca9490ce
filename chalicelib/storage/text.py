"""The one place memory text is written to or read from an item: sealed per user with AES-256-GCM, never plain.

A `TextSeal` belongs to one table. It seals under the user's data key (chalicelib/crypto/keyring.py)
with associated data naming that table, the user, the item's whole primary key and its provenance
(`chalicelib.crypto.sealing.associated_data`), so the stored value opens only where, and as what, it
was written. A value that does not open raises `UnreadableText`: repositories treat such an item as
absent (a 404 like any missing id, left out of lists), never as a 500 and never with its content.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from chalicelib.crypto.fingerprint import fingerprint
from chalicelib.crypto.sealing import Provenance, Unsealable, associated_data, is_legacy, key_id_of, open_sealed, seal
from chalicelib.logs import get_logger

if TYPE_CHECKING:
    from chalicelib.crypto.keyring import Keyring

TEXT_ATTRIBUTE = "sealed_text"
# What `sealing_key_id` reports for a value sealed in an earlier format: never any user's key id (those
# are 16 random bytes), so such an item counts as an orphan that no key opens (services/orphans.py).
LEGACY_KEY_ID = b""

logger = get_logger("personal_memory.storage")


class UnreadableText(Exception):
    """A stored item that does not open here: moved, altered, half-written, or its key destroyed."""


def unreadable(table: str, why: str) -> UnreadableText:
    """Log (the table and a reason code, never content) and return the error that makes an item absent."""
    logger.warning("stored item unreadable", extra={"outcome": "unreadable", "reason": f"{table}:{why}"})
    return UnreadableText(table)


def _blob(value: Any) -> bytes:
    return bytes(getattr(value, "value", value))  # boto3's Binary wraps the bytes


def sealing_key_id(stored: Mapping[str, Any]) -> bytes | None:
    """Which data key sealed the item's text, read without opening it; None when there is no sealed text."""
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

        `under`: the id of the key that sealed the text being replaced (just opened, so it is cached):
        sealing again under it costs no keys-table read; the caller's write must check it is still current.
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
        """`seal_text`'s attributes, and the text's fingerprint for each of `tables` under the same data key
        (chalicelib/crypto/fingerprint.py): one key lookup for both, so a duplicate check costs no extra call."""
        key_id, data_key = under, (self.keyring.opening_key(user_id, under) if under else None)
        if key_id is None or data_key is None:  # a first text, or that key is gone: the user's current key
            key_id, data_key = self.keyring.sealing_key(user_id)
        attributes = {TEXT_ATTRIBUTE: seal(key_id, data_key, text, associated_data(self.table, user_id, key, provenance))}
        return attributes, {table: fingerprint(data_key, user_id, table, text) for table in tables}

    def open_text(self, user_id: str, key: Mapping[str, str], provenance: Provenance, stored: Mapping[str, Any]) -> str:
        """The text stored in `stored` for `user_id`; UnreadableText if it was not sealed right here, as this."""
        try:
            blob = _blob(stored[TEXT_ATTRIBUTE])
            data_key = self.keyring.opening_key(user_id, key_id_of(blob))
            if data_key is None:
                raise Unsealable("the key that sealed it is destroyed")
            return open_sealed(data_key, blob, associated_data(self.table, user_id, key, provenance))
        except (KeyError, TypeError, ValueError, Unsealable) as exc:
            raise unreadable(self.table, "sealed_text") from exc
