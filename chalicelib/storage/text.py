"""The one place memory text is written to or read from an item: sealed per user with AES-256-GCM, never plain.

A `TextSeal` belongs to one table. It seals under the user's data key (chalicelib/crypto/keyring.py)
with associated data naming that table, the user and the item, so the stored value opens only where
it was written. A value that does not open raises `UnreadableText`: repositories treat such an item
as absent (a 404 like any missing id, left out of lists), never as a 500 and never with its content.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chalicelib.crypto.sealing import Unsealable, associated_data, key_id_of, open_sealed, seal
from chalicelib.logs import get_logger

if TYPE_CHECKING:
    from chalicelib.crypto.keyring import Keyring

TEXT_ATTRIBUTE = "sealed_text"

logger = get_logger("personal_memory.storage")


class UnreadableText(Exception):
    """Stored text that does not open for this table, user and item (moved, altered, or its key destroyed)."""


def _blob(value: Any) -> bytes:
    return bytes(getattr(value, "value", value))  # boto3's Binary wraps the bytes


def sealing_key_id(stored: Mapping[str, Any]) -> bytes | None:
    """Which data key sealed the item's text, read without opening it; None when there is no sealed text."""
    try:
        return key_id_of(_blob(stored[TEXT_ATTRIBUTE]))
    except (KeyError, TypeError, Unsealable):
        return None


class TextSeal:
    def __init__(self, keyring: Keyring, table: str) -> None:
        self.keyring = keyring
        self.table = table

    def seal_text(self, user_id: str, item: Sequence[str], text: str) -> dict[str, Any]:
        """The attributes that store `text` for `user_id` in the item named by `item` (its id parts)."""
        key_id, key = self.keyring.sealing_key(user_id)
        return {TEXT_ATTRIBUTE: seal(key_id, key, text, associated_data(self.table, user_id, item))}

    def open_text(self, user_id: str, item: Sequence[str], stored: Mapping[str, Any]) -> str:
        """The text stored in `stored` for `user_id`; UnreadableText if it was not sealed right here."""
        try:
            blob = _blob(stored[TEXT_ATTRIBUTE])
            key = self.keyring.opening_key(user_id, key_id_of(blob))
            if key is None:
                raise Unsealable("the key that sealed it is destroyed")
            return open_sealed(key, blob, associated_data(self.table, user_id, item))
        except (KeyError, TypeError, Unsealable) as exc:
            logger.warning("sealed text unreadable", extra={"outcome": "unreadable", "reason": self.table})
            raise UnreadableText(self.table) from exc
