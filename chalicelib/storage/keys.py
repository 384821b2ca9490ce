"""The keys table: per user, the one wrapped data key (KMS ciphertext) that seals their text. No stream, no backups.

Deleting a user's row is what crypto-shredding means here: the wrapped key exists nowhere else, so
every copy of text sealed under it (backups, the events stream, a dead-letter message) stops opening.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.crypto.sealing import KEY_ID_BYTES
from chalicelib.storage import dynamo


@dataclass(frozen=True)
class StoredKey:
    user_id: str
    key_id: bytes  # random, never reused: sealed values name it, so a destroyed key is recognised
    wrapped: bytes
    created_at: str


class KeyRowUnreadable(Exception):
    """The user's key row lacks its key id or wrapped key, or holds them as something other than bytes."""


def _bytes(item: dict[str, Any], name: str, length: int | None = None) -> bytes:
    value = getattr(item.get(name), "value", item.get(name))  # boto3's Binary wraps the bytes
    if not isinstance(value, bytes) or not value or (length is not None and len(value) != length):
        raise KeyRowUnreadable(name)
    return value


class KeysRepository:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self.table = table

    def _key(self, user_id: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": user_id})

    def get(self, user_id: str) -> StoredKey | None:
        raw = self._client.get_item(TableName=self.table, Key=self._key(user_id), ConsistentRead=True).get("Item")
        if not raw:
            return None
        item = dynamo.load(raw)
        return StoredKey(
            user_id=user_id,
            # Of any other length, text sealed under it would name a key id its reader cuts wrong.
            key_id=_bytes(item, "key_id", KEY_ID_BYTES),
            wrapped=_bytes(item, "wrapped"),
            created_at=created if isinstance(created := item.get("created_at"), str) else "",
        )

    def put_new(self, key: StoredKey) -> dict[str, Any]:
        """Transaction action: store the user's first key; refused if one exists (two first writes racing)."""
        item = {"user_id": key.user_id, "key_id": key.key_id, "wrapped": key.wrapped, "created_at": key.created_at}
        return {
            "Put": {
                "TableName": self.table,
                "Item": dynamo.dump(item),
                "ConditionExpression": "attribute_not_exists(user_id)",
            }
        }

    def delete_existing(self, user_id: str) -> dict[str, Any]:
        """Transaction action: destroy the user's key; refused when there is none (nothing to journal)."""
        return {
            "Delete": {
                "TableName": self.table,
                "Key": self._key(user_id),
                "ConditionExpression": "attribute_exists(user_id)",
            }
        }

    def is_current(self, user_id: str, key_id: bytes) -> dict[str, Any]:
        """Transaction action: the user's key is still `key_id` (not destroyed, not replaced) when the write lands."""
        return {
            "ConditionCheck": {
                "TableName": self.table,
                "Key": self._key(user_id),
                "ConditionExpression": "key_id = :k",
                "ExpressionAttributeValues": dynamo.values(k=key_id),
            }
        }
