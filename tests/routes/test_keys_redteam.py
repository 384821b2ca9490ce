"""Red team of issue 26: ways a forgotten text's key could come back, tried against moto through the real storage."""

from __future__ import annotations

from typing import Any

from chalicelib.storage.dynamo import TransactionCancelled, transact
from tests.support.raw_storage import raw_item

TEXT = "Bob's locker code is 4417"


def test_a_forgotten_texts_key_is_never_written_again_by_the_same_container(
    api: Any, stores: Any, dynamodb: Any, table_names: Any
) -> None:
    api.turn_on("alice")
    entry = api.add("alice", TEXT)
    backup = raw_item(dynamodb, table_names.entries, {"user_id": "alice", "sk": f"e#{entry['id']}"})
    assert backup is not None
    status, _ = api.call("DELETE", f"/v1/memory/{entry['id']}", "alice")
    assert status in (200, 204)
    text_id = bytes(backup["sealed_text"]["B"])[1:17]
    assert raw_item(dynamodb, table_names.keys, {"user_id": "alice", "sk": f"t#{text_id.hex()}"}) is None
    # A restored item put again through the guard (as any write of that sealed text does): the key must stay gone.
    put = {"Put": {"TableName": table_names.entries, "Item": backup}}
    actions = stores.keyring.guard([put])
    try:
        transact(dynamodb, actions)
    except TransactionCancelled:  # refused: the key stays gone, as it should
        pass
    assert raw_item(dynamodb, table_names.keys, {"user_id": "alice", "sk": f"t#{text_id.hex()}"}) is None
    _, view = api.call("GET", "/v1/memory", "alice")
    assert TEXT not in repr(view)


def _rows(dynamodb: Any, table_names: Any, entry_id: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    entry = raw_item(dynamodb, table_names.entries, {"user_id": "alice", "sk": f"e#{entry_id}"})
    assert entry is not None
    text_id = bytes(entry["sealed_text"]["B"])[1:17]
    return entry, raw_item(dynamodb, table_names.keys, {"user_id": "alice", "sk": f"t#{text_id.hex()}"})


def test_a_text_keys_ttl_follows_its_entrys_expiry_through_patch(api: Any, dynamodb: Any, table_names: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", TEXT, expires_in_days=3)
    item, key = _rows(dynamodb, table_names, entry["id"])
    assert key is not None and key["expires_at"] == item["expires_at"]
    status, _ = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"expires_in_days": 9})
    assert status == 200
    item, key = _rows(dynamodb, table_names, entry["id"])
    assert key is not None and int(key["expires_at"]["N"]) >= int(item["expires_at"]["N"])
    status, _ = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"expires_in_days": None})
    assert status == 200
    item, key = _rows(dynamodb, table_names, entry["id"])
    assert "expires_at" not in item and key is not None and "expires_at" not in key
    # A text edit keeps the key (same key, new ciphertext): the key row stays, the TTL untouched.
    status, _ = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"text": "Bob changed it"})
    assert status == 200
    item, key = _rows(dynamodb, table_names, entry["id"])
    assert key is not None and "expires_at" not in key


def test_a_text_forgotten_by_another_container_is_never_rekeyed_here(
    api: Any, stores: Any, dynamodb: Any, table_names: Any
) -> None:
    api.turn_on("alice")
    entry = api.add("alice", TEXT)
    backup, key = _rows(dynamodb, table_names, entry["id"])
    assert key is not None
    # Another container forgets it: the key row and the entry go; this container's cache ages out.
    dynamodb.delete_item(TableName=table_names.keys, Key={"user_id": key["user_id"], "sk": key["sk"]})
    dynamodb.delete_item(TableName=table_names.entries, Key={"user_id": backup["user_id"], "sk": backup["sk"]})
    stores.keyring.cache.drop_prefix("alice/")
    try:
        transact(dynamodb, stores.keyring.guard([{"Put": {"TableName": table_names.entries, "Item": backup}}]))
    except TransactionCancelled:
        pass
    assert raw_item(dynamodb, table_names.keys, {"user_id": "alice", "sk": key["sk"]["S"]}) is None


def _put_sealed_under(table: str, text_id: bytes, text_key: bytes) -> dict[str, Any]:
    from chalicelib.crypto.sealing import TEXT_ATTRIBUTE, seal

    blob = seal(text_id, text_key, TEXT, b"aad")
    return {
        "Put": {
            "TableName": table,
            "Item": {"user_id": {"S": "alice"}, "sk": {"S": "e#x"}, TEXT_ATTRIBUTE: {"B": blob}},
        }
    }


def test_a_new_texts_key_row_is_offered_only_until_written_or_the_caches_age(
    api: Any, stores: Any, table_names: Any, monkeypatch: Any
) -> None:
    """`guard` puts a new text's key row only for the request that made it: once its transaction committed
    (`written`), or once older than the key cache's age (an outcome never known), it only checks the row."""
    import chalicelib.crypto.keyring as keyring_module

    api.turn_on("alice")
    keyring = stores.keyring

    def offers_a_new_row(text_id: bytes, text_key: bytes) -> bool:
        extra = keyring.guard([_put_sealed_under(table_names.entries, text_id, text_key)])[1:]
        return any("Put" in action and action["Put"]["TableName"] == table_names.keys for action in extra)

    text_id, text_key = keyring.new_text_key("alice")
    assert offers_a_new_row(text_id, text_key)  # the same request, built again after a refusal: still offered
    keyring.written(keyring.guard([_put_sealed_under(table_names.entries, text_id, text_key)]))
    assert not offers_a_new_row(text_id, text_key)  # written: from now on only "is it still there"

    aged_id, aged_key = keyring.new_text_key("alice")
    made = keyring_module.time.monotonic()
    monkeypatch.setattr(keyring_module.time, "monotonic", lambda: made + keyring.cache.max_age + 1)
    assert not offers_a_new_row(aged_id, aged_key)  # an outcome never known, past the cache's age
