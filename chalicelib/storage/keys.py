"""The keys table: per user, the wrapped data key (KMS ciphertext) and each text's own key wrapped under it. No stream, no backups.

Deleting a row is what crypto-shredding means here: the wrapped key exists nowhere else, so every
copy of text sealed under it (backups, the events stream, a dead-letter message) stops opening.
The user's data key row is `sk = "#key"` (forget-all deletes it: every text key dies with it); each
text's key is `sk = "t#<hex id>"` (forgetting that text deletes it), with the text's expiry as its TTL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.crypto.sealing import KEY_ID_BYTES
from chalicelib.errors import Unavailable
from chalicelib.storage import dynamo, retries

DATA_KEY_SK, TEXT_KEY_PREFIX = "#key", "t#"
EXPIRY_ATTRIBUTE = "expires_at"  # the keys table's TTL: a text key that expires goes with its text
HELD_IN_ATTRIBUTE = "held_in"  # the table whose item the text lives in now (set when a later item continues it)
BATCH_WRITE_ITEMS = 25  # DynamoDB's BatchWriteItem limit per call


@dataclass(frozen=True)
class StoredKey:
    user_id: str
    key_id: bytes  # random, never reused: sealed values name it, so a destroyed key is recognised
    wrapped: bytes
    created_at: str


@dataclass(frozen=True)
class StoredTextKey:
    text_id: bytes
    data_key_id: bytes  # the data key it is wrapped under
    wrapped: bytes


class KeyRowUnreadable(Exception):
    """The user's key row lacks its key id or wrapped key, or holds them as something other than bytes."""


def _bytes(item: dict[str, Any], name: str, length: int | None = None) -> bytes:
    value = getattr(item.get(name), "value", item.get(name))  # boto3's Binary wraps the bytes
    if not isinstance(value, bytes) or not value or (length is not None and len(value) != length):
        raise KeyRowUnreadable(name)
    return value


def _data_key(user_id: str, item: dict[str, Any]) -> StoredKey:
    return StoredKey(
        user_id=user_id,
        # Of any other length, text keys wrapped under it would name a data key id their reader cuts wrong.
        key_id=_bytes(item, "key_id", KEY_ID_BYTES),
        wrapped=_bytes(item, "wrapped"),
        created_at=created if isinstance(created := item.get("created_at"), str) else "",
    )


class KeysRepository:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self.table = table

    def _key(self, user_id: str, sort_key: str = DATA_KEY_SK) -> dict[str, Any]:
        return dynamo.dump({"user_id": user_id, "sk": sort_key})

    def get(self, user_id: str) -> StoredKey | None:
        raw = self._client.get_item(TableName=self.table, Key=self._key(user_id), ConsistentRead=True).get("Item")
        return _data_key(user_id, dynamo.load(raw)) if raw else None

    def load(self, user_id: str) -> tuple[StoredKey | None, list[StoredTextKey]]:
        """The data key and every text key of the user, in one consistent Query (a key just deleted is never read)."""
        data: StoredKey | None = None
        texts: list[StoredTextKey] = []
        for item in dynamo.query_partition(self._client, self.table, "user_id", user_id, consistent=True):
            sort_key = str(item.get("sk", ""))
            if sort_key == DATA_KEY_SK:
                data = _data_key(user_id, item)
            elif sort_key.startswith(TEXT_KEY_PREFIX):
                try:
                    texts.append(
                        StoredTextKey(
                            bytes.fromhex(sort_key[len(TEXT_KEY_PREFIX) :]),
                            _bytes(item, "data_key_id", KEY_ID_BYTES),
                            _bytes(item, "wrapped"),
                        )
                    )
                except (KeyRowUnreadable, ValueError):
                    continue  # a damaged text key opens nothing: its text is absent
        return data, texts

    def put_text_key(self, user_id: str, key: StoredTextKey, expires_at: int | None) -> dict[str, Any]:
        """Transaction action: store a new text's key (ids are random and never reused); the same row again is
        allowed (a transaction retried after a refusal writes it twice), any other never."""
        item = {
            "user_id": user_id,
            "sk": TEXT_KEY_PREFIX + key.text_id.hex(),
            "data_key_id": key.data_key_id,
            "wrapped": key.wrapped,
            EXPIRY_ATTRIBUTE: expires_at,
        }
        return {
            "Put": {
                "TableName": self.table,
                "Item": dynamo.dump(item),
                "ConditionExpression": "attribute_not_exists(sk) OR #w = :w",
                "ExpressionAttributeNames": {"#w": "wrapped"},
                "ExpressionAttributeValues": dynamo.values(w=key.wrapped),
            }
        }

    def keep_text_key(
        self, user_id: str, text_id: bytes, expires_at: int | None, *, held_in: str | None = None, sole: bool = False
    ) -> dict[str, Any]:
        """Transaction action: the text's key is still there (not forgotten meanwhile); its TTL becomes the text's expiry.

        `held_in`: the table whose new item the text now lives in (a proposal's, then the entry's it became), so a
        copy of an earlier item put back from a backup is known as such (`delete_text_key`'s `unless_held_in`);
        `sole`: only if no item of that table holds it already (a decided proposal's copy accepted again)."""
        update: dict[str, Any] = {
            "TableName": self.table,
            "Key": self._key(user_id, TEXT_KEY_PREFIX + text_id.hex()),
            "ConditionExpression": "attribute_exists(sk)",
        }
        values: dict[str, Any] = {}
        if expires_at is None:
            update["UpdateExpression"] = f"REMOVE {EXPIRY_ATTRIBUTE}"
        else:
            update["UpdateExpression"] = f"SET {EXPIRY_ATTRIBUTE} = :e"
            values["e"] = expires_at
        if held_in is not None:
            set_held = f"{HELD_IN_ATTRIBUTE} = :h"
            update["UpdateExpression"] = (
                f"SET {set_held} REMOVE {EXPIRY_ATTRIBUTE}"
                if expires_at is None
                else f"SET {EXPIRY_ATTRIBUTE} = :e, {set_held}"
            )
            values["h"] = held_in
            if sole:
                update["ConditionExpression"] += (
                    f" AND (attribute_not_exists({HELD_IN_ATTRIBUTE}) OR {HELD_IN_ATTRIBUTE} <> :h)"
                )
        if values:
            update["ExpressionAttributeValues"] = dynamo.values(**values)
        return {"Update": update}

    def delete_text_key(self, user_id: str, text_id: bytes, *, unless_held_in: str | None = None) -> dict[str, Any]:
        """Transaction action: delete one text's key, whether or not it is still there (a forget repeated is no error).

        `unless_held_in`: not while an item of that table holds the text (a proposal's copy put back after its
        accept: the entry it became lives on under that key); refused, the caller deletes nothing."""
        delete: dict[str, Any] = {"TableName": self.table, "Key": self._key(user_id, TEXT_KEY_PREFIX + text_id.hex())}
        if unless_held_in is not None:
            delete["ConditionExpression"] = f"attribute_not_exists({HELD_IN_ATTRIBUTE}) OR {HELD_IN_ATTRIBUTE} <> :h"
            delete["ExpressionAttributeValues"] = dynamo.values(h=unless_held_in)
        return {"Delete": delete}

    def held_in(self, user_id: str, text_id: bytes) -> str | None:
        """The table whose item holds the text now, as its key row says (a consistent GetItem); None if unknown or gone."""
        raw = self._client.get_item(
            TableName=self.table, Key=self.text_key_row(user_id, text_id), ConsistentRead=True
        ).get("Item")
        held = dynamo.load(raw).get(HELD_IN_ATTRIBUTE) if raw else None
        return held if isinstance(held, str) else None

    def text_key_row(self, user_id: str, text_id: bytes) -> dict[str, Any]:
        """The primary key of one text's key row, as a transaction action names it."""
        return self._key(user_id, TEXT_KEY_PREFIX + text_id.hex())

    def delete_text_keys(self, user_id: str, text_ids: list[bytes]) -> int:
        """Delete these texts' keys now, outside any transaction: BatchWriteItem, 25 rows a call; the calls made.

        For a forget of many texts at once (an agent's writes): their keys go first, so the items' own
        counted transactions have room for 98 items each. A row already gone is no error. What DynamoDB
        hands back unprocessed (throttling) is sent again with backoff; still unprocessed after
        `retries.MAX_ATTEMPTS` sends, it is `Unavailable` (503): the caller deletes nothing else then.
        """
        calls = 0
        for start in range(0, len(text_ids), BATCH_WRITE_ITEMS):
            requests: list[dict[str, Any]] = [
                {"DeleteRequest": {"Key": self.text_key_row(user_id, t)}}
                for t in text_ids[start : start + BATCH_WRITE_ITEMS]
            ]
            for attempt in range(1, retries.MAX_ATTEMPTS + 1):
                calls += 1
                answer = self._client.batch_write_item(RequestItems={self.table: requests})
                requests = (answer.get("UnprocessedItems") or {}).get(self.table) or []
                if not requests:
                    break
                if attempt == retries.MAX_ATTEMPTS:
                    raise Unavailable()
                retries.sleep(retries.backoff_within_the_deadline(attempt))
        return calls

    def erase(self, user_id: str) -> int:
        """Delete every item of the user's partition (an operator's account erasure); how many there were."""
        return dynamo.batch_delete(
            self._client, self.table, dynamo.partition_keys(self._client, self.table, "user_id", user_id, "sk")
        )

    def put_new(self, key: StoredKey) -> dict[str, Any]:
        """Transaction action: store the user's first key; refused if one exists (two first writes racing)."""
        item = {
            "user_id": key.user_id,
            "sk": DATA_KEY_SK,
            "key_id": key.key_id,
            "wrapped": key.wrapped,
            "created_at": key.created_at,
        }
        return {
            "Put": {
                "TableName": self.table,
                "Item": dynamo.dump(item),
                "ConditionExpression": "attribute_not_exists(sk)",
            }
        }

    def delete_existing(self, user_id: str) -> dict[str, Any]:
        """Transaction action: destroy the user's key; refused when there is none (nothing to journal)."""
        return {
            "Delete": {
                "TableName": self.table,
                "Key": self._key(user_id),
                "ConditionExpression": "attribute_exists(sk)",
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
