"""Per-user encryption through the real routes: sealed at rest, bound to its place, shredded by forget-all."""

from __future__ import annotations

from typing import Any

from chalicelib.crypto.cache import KeyCache
from chalicelib.storage.text import TEXT_ATTRIBUTE
from local.stream_pump import create_streams_client
from tests.support.iam import iam_call
from tests.support.raw_storage import every_item, every_stream_record, plaintext_hits, raw_item
from tests.support.stack import OPERATOR_ARN

ALICE_NOTE = "Alice keeps a blue notebook"
BOB_NOTE = "Bob prefers tea at noon"
MISSING = "0123456789abcdef0123456789abcdef"


def _entry_key(user: str, entry_id: str) -> dict[str, str]:
    return {"user_id": user, "sk": "e#" + entry_id}


def _journal_actions(api: Any, user: str) -> list[str]:
    _, body = api.call("GET", "/v1/memory/journal", user)
    return [row["action"] for row in body["items"]]


def test_stored_entries_hold_sealed_text_and_no_plaintext(api: Any, dynamodb: Any, table_names: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", ALICE_NOTE)
    item = raw_item(dynamodb, table_names.entries, _entry_key("alice", entry["id"]))
    assert item is not None and "text" not in item
    assert set(item[TEXT_ATTRIBUTE]) == {"B"} and len(item[TEXT_ATTRIBUTE]["B"]) > len(ALICE_NOTE)
    assert plaintext_hits([ALICE_NOTE, "blue notebook"], every_item(dynamodb)) == []
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [i["text"] for i in view["items"]] == [ALICE_NOTE]  # the user reads plaintext as before


def test_the_wrapped_key_is_the_only_key_material_stored(api: Any, dynamodb: Any, table_names: Any, kms: Any) -> None:
    api.turn_on("alice")
    api.add("alice", ALICE_NOTE)
    rows = every_item(dynamodb)[table_names.keys]
    [row] = [r for r in rows if r["sk"]["S"] == "#key"]
    [text_row] = [r for r in rows if r["sk"]["S"].startswith("t#")]  # the note's own key, wrapped under the data key
    assert set(row) == {"user_id", "sk", "key_id", "wrapped", "created_at"}
    assert set(text_row) == {"user_id", "sk", "data_key_id", "wrapped"} and text_row["data_key_id"] == row["key_id"]
    assert len(text_row["wrapped"]["B"]) == 12 + 32 + 16  # nonce, the 256-bit key, GCM's tag: never the key itself
    wrapped = row["wrapped"]["B"]
    # KMS unwraps it only with alice's encryption context: the context is part of the wrap.
    assert len(kms.decrypt(CiphertextBlob=wrapped, EncryptionContext={"user_id": "alice"})["Plaintext"]) == 32
    import botocore.exceptions
    import pytest

    with pytest.raises(botocore.exceptions.ClientError):
        kms.decrypt(CiphertextBlob=wrapped, EncryptionContext={"user_id": "bob"})
    with pytest.raises(botocore.exceptions.ClientError):
        kms.decrypt(CiphertextBlob=wrapped)


def test_a_ciphertext_moved_to_another_user_does_not_open_and_is_a_404(
    api: Any, dynamodb: Any, table_names: Any
) -> None:
    for user, text in (("alice", ALICE_NOTE), ("bob", BOB_NOTE)):
        api.turn_on(user)
        api.add(user, text)
    _, alice_view = api.call("GET", "/v1/memory", "alice")
    _, bob_view = api.call("GET", "/v1/memory", "bob")
    alice_id, bob_id = alice_view["items"][0]["id"], bob_view["items"][0]["id"]
    stolen = raw_item(dynamodb, table_names.entries, _entry_key("alice", alice_id))
    bobs = raw_item(dynamodb, table_names.entries, _entry_key("bob", bob_id))
    assert stolen and bobs
    # Alice's sealed text put into Bob's item (same table, Bob's own id), and under Alice's id in Bob's partition.
    dynamodb.put_item(TableName=table_names.entries, Item={**bobs, TEXT_ATTRIBUTE: stolen[TEXT_ATTRIBUTE]})
    dynamodb.put_item(TableName=table_names.entries, Item={**stolen, "user_id": {"S": "bob"}})
    status, view = api.call("GET", "/v1/memory", "bob")
    assert status == 200 and view["items"] == []  # neither opens for Bob: absent, never Alice's text
    assert ALICE_NOTE not in repr(view)
    missing = api.call("PATCH", f"/v1/memory/{MISSING}", "bob", {"pinned": True})
    for entry_id in (bob_id, alice_id):
        assert api.call("PATCH", f"/v1/memory/{entry_id}", "bob", {"pinned": True}) == missing  # 404 like a missing id
    assert missing[0] == 404 and missing[1]["code"] == "not_found"
    _, export = api.call("GET", "/v1/memory/export", "bob")
    assert export["entries"] == [] and ALICE_NOTE not in repr(export)
    _, alice_view = api.call("GET", "/v1/memory", "alice")
    assert [i["text"] for i in alice_view["items"]] == [ALICE_NOTE]  # the original still opens where it was written


def test_a_ciphertext_moved_to_another_item_or_table_of_the_same_user_does_not_open(
    api: Any, dynamodb: Any, table_names: Any, stores: Any
) -> None:
    from tests.support.proposals import add_proposal

    api.turn_on("alice")
    first = api.add("alice", ALICE_NOTE)
    second = api.add("alice", "Alice walks to work")
    one = raw_item(dynamodb, table_names.entries, _entry_key("alice", first["id"]))
    two = raw_item(dynamodb, table_names.entries, _entry_key("alice", second["id"]))
    assert one and two
    dynamodb.put_item(TableName=table_names.entries, Item={**two, TEXT_ATTRIBUTE: one[TEXT_ATTRIBUTE]})
    proposal = add_proposal(stores, "alice", "a proposal to overwrite")
    key = {"user_id": "alice", "sk": "p#" + proposal.id}
    waiting = raw_item(dynamodb, table_names.proposals, key)
    assert waiting
    dynamodb.put_item(TableName=table_names.proposals, Item={**waiting, TEXT_ATTRIBUTE: one[TEXT_ATTRIBUTE]})
    status, view = api.call("GET", "/v1/memory", "alice")
    assert status == 200 and [i["id"] for i in view["items"]] == [first["id"]] and view["proposals"] == []
    assert api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")[0] == 404
    assert raw_item(dynamodb, table_names.proposals, key) is not None  # the refused accept changed nothing
    assert stores.entries.get_state("alice").active == 2 and stores.entries.get_state("alice").waiting == 1


def test_forget_all_destroys_the_key_and_a_backup_of_the_old_items_no_longer_opens(
    api: Any, dynamodb: Any, table_names: Any, stores: Any
) -> None:
    api.turn_on("alice")
    api.add("alice", ALICE_NOTE)
    backup = every_item(dynamodb)  # what a point-in-time backup taken now would hold
    [old_key] = [k for k in backup[table_names.keys] if k["sk"]["S"] == "#key"]
    status, body = api.call("DELETE", "/v1/memory", "alice")
    assert status == 200 and body == {"deleted": 1}
    assert every_item(dynamodb)[table_names.keys] == []  # the wrapped key is gone
    # Restore the backup's entries (not its keys: the keys table has no backups) and look.
    for item in backup[table_names.entries]:
        dynamodb.put_item(TableName=table_names.entries, Item=item)
    status, view = api.call("GET", "/v1/memory", "alice")
    assert status == 200 and view["items"] == []
    stores.keyring.cache = KeyCache()  # a cold container: nothing cached either
    assert stores.keyring.opening_key("alice", old_key["key_id"]["B"]) is None
    # The next write makes a new key, under which the old ciphertext still does not open.
    api.add("alice", "Alice starts again")
    [new_key] = [k for k in every_item(dynamodb)[table_names.keys] if k["sk"]["S"] == "#key"]
    assert new_key["key_id"] != old_key["key_id"] and new_key["wrapped"] != old_key["wrapped"]
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [i["text"] for i in view["items"]] == ["Alice starts again"]
    actions = _journal_actions(api, "alice")
    assert actions.count("keep.memory.key_created") == 2 and actions.count("keep.memory.key_destroyed") == 1
    journal = every_item(dynamodb)[table_names.journal]
    assert old_key["wrapped"]["B"] not in repr(journal).encode() and "key_id" not in repr(journal)


def test_operator_forget_all_destroys_the_key_too(api: Any, client: Any, dynamodb: Any, table_names: Any) -> None:
    api.turn_on("alice")
    api.add("alice", ALICE_NOTE)
    status, body = iam_call(client, "DELETE", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)
    assert status == 200 and body == {"deleted": 1}
    assert every_item(dynamodb)[table_names.keys] == []
    assert "keep.memory.key_destroyed" in _journal_actions(api, "alice")


def test_forget_all_of_a_user_without_a_key_journals_no_destruction(api: Any) -> None:
    api.turn_on("carol")
    assert api.call("DELETE", "/v1/memory", "carol") == (200, {"deleted": 0})
    assert "keep.memory.key_destroyed" not in _journal_actions(api, "carol")


def test_kms_calls_per_route_cold_and_warm(api: Any, stores: Any) -> None:
    kms = stores.keyring.kms
    api.turn_on("alice")

    def calls(method: str, path: str, body: Any = None, cold: bool = False) -> int:
        if cold:
            stores.keyring.cache = KeyCache()
        before = kms.calls
        status, _ = api.call(method, path, "alice", body)
        assert status in (200, 201)
        return kms.calls - before

    assert calls("POST", "/v1/memory", {"text": "first"}) == 1  # GenerateDataKey, the user's first text
    assert calls("POST", "/v1/memory", {"text": "second"}) == 0
    assert calls("POST", "/v1/memory", {"text": "third"}, cold=True) == 1  # Decrypt of the wrapped key
    assert calls("GET", "/v1/memory", cold=True) == 1
    assert calls("GET", "/v1/memory") == 0
    assert calls("GET", "/v1/memory/export") == 0


def test_a_destroyed_key_cached_elsewhere_is_never_used_for_new_text(api: Any, stores: Any) -> None:
    """Another container's forget-all: this one still caches the key, but sealing checks the keys table."""
    api.turn_on("alice")
    api.add("alice", ALICE_NOTE)
    cached = dict(stores.keyring.cache._keys)
    api.call("DELETE", "/v1/memory", "alice")
    for user, (key_id, key, _) in cached.items():  # as if the forget-all ran in another container
        stores.keyring.cache.put(user, key_id, key)
    api.add("alice", "Alice after forgetting")
    stores.keyring.cache = KeyCache()
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [i["text"] for i in view["items"]] == ["Alice after forgetting"]


def test_propose_events_are_sealed_until_handled_and_the_stream_carries_no_plaintext(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, tables: dict[str, str]
) -> None:
    text = "Alice likes window seats"
    api.turn_on("alice")
    agents.register("s1", "alice")
    agents.propose("s1", {"id": "e1", "text": text}, pump=False)
    pending = raw_item(dynamodb, table_names.events, {"session_id": "s1", "event_id": "e1"})
    assert pending and TEXT_ATTRIBUTE in pending
    assert plaintext_hits([text], every_item(dynamodb)) == []
    agents.stream.drain()
    handled = raw_item(dynamodb, table_names.events, {"session_id": "s1", "event_id": "e1"})
    assert handled and TEXT_ATTRIBUTE not in handled and handled["status"] == {"S": "handled"}
    records = every_stream_record(create_streams_client(), tables["events_stream"])
    assert len(records) >= 2 and plaintext_hits([text], every_item(dynamodb), records) == []
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [p["text"] for p in view["proposals"]] == [text]


def test_a_moved_event_ciphertext_is_refused_once_as_unreadable(
    api: Any, agents: Any, dynamodb: Any, table_names: Any
) -> None:
    api.turn_on("alice")
    agents.register("s1", "alice")
    agents.propose("s1", {"id": "e1", "text": "Alice sleeps early"}, pump=False)
    original = raw_item(dynamodb, table_names.events, {"session_id": "s1", "event_id": "e1"})
    assert original
    dynamodb.put_item(TableName=table_names.events, Item={**original, "event_id": {"S": "e2"}})
    agents.stream.drain()
    outcomes = agents.outcomes("s1")
    assert outcomes["e2"] == {"type": "memory.proposal_refused", "reason": "unreadable"}
    assert outcomes["e1"]["type"] == "memory.proposed"
    moved = raw_item(dynamodb, table_names.events, {"session_id": "s1", "event_id": "e2"})
    assert moved and TEXT_ATTRIBUTE not in moved  # settled: the foreign ciphertext is dropped, not retried
    _, view = api.call("GET", "/v1/memory", "alice")
    assert len(view["proposals"]) == 1


def test_events_for_a_session_without_a_user_keep_no_text(agents: Any, dynamodb: Any, table_names: Any) -> None:
    agents.register("anon", None)
    agents.propose("anon", {"id": "e1", "text": "nobody's note"}, pump=False)
    stored = raw_item(dynamodb, table_names.events, {"session_id": "anon", "event_id": "e1"})
    assert stored and TEXT_ATTRIBUTE not in stored and "text" not in stored
    agents.stream.drain()
    assert agents.outcomes("anon")["e1"] == {"type": "memory.proposal_refused", "reason": "no_user"}


def test_an_event_posted_before_its_session_existed_is_refused_as_unknown_session(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    agents.propose("late", {"id": "e1", "text": "Alice reads at night"}, pump=False)
    agents.register("late", "alice")
    agents.stream.drain()
    assert agents.outcomes("late")["e1"] == {"type": "memory.proposal_refused", "reason": "unknown_session"}


def test_no_table_and_no_stream_record_holds_a_written_text_at_any_step_of_the_story(
    api: Any, agents: Any, client: Any, dynamodb: Any, tables: dict[str, str]
) -> None:
    """Entries, proposals, events before and after handling, accept, export, forget: 0 plaintext hits each time."""
    streams = create_streams_client()
    texts = ["Alice keeps a blue notebook", "Alice prefers aisle seats", "Alice drinks oat milk", "Alice edited note"]
    checked: list[str] = []

    def look(step: str) -> None:
        stored = every_item(dynamodb)
        records = every_stream_record(streams, tables["events_stream"])
        assert plaintext_hits(texts, stored, records) == [], step
        checked.append(step)

    api.turn_on("alice")
    entry = api.add("alice", texts[0])
    look("entry stored")
    assert api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"text": texts[3]})[0] == 200
    look("entry edited")
    agents.register("s1", "alice")
    agents.propose("s1", {"id": "e1", "text": texts[1]}, {"id": "e2", "text": texts[2]}, pump=False)
    look("events pending")
    agents.stream.drain()
    look("events handled, proposals waiting")
    _, view = api.call("GET", "/v1/memory", "alice")
    by_text = {p["text"]: p["id"] for p in view["proposals"]}
    assert set(by_text) == {texts[1], texts[2]}
    assert api.call("POST", f"/v1/memory/{by_text[texts[1]]}/accept", "alice")[0] == 201
    assert api.call("POST", f"/v1/memory/{by_text[texts[2]]}/reject", "alice")[0] == 204
    look("proposal accepted and rejected")
    status, export = api.call("GET", "/v1/memory/export", "alice")
    assert status == 200 and {e["text"] for e in export["entries"]} == {texts[1], texts[3]}
    assert [i["text"] for i in agents.items("s1")] and iam_call(
        client, "GET", "/v1/operator/memory?user_id=alice", OPERATOR_ARN
    )[0] == 200
    look("exported, read by an agent and an operator")
    assert api.call("DELETE", "/v1/memory", "alice") == (200, {"deleted": 2})
    look("forgotten")
    assert len(checked) == 7


def test_a_text_sealed_under_a_key_destroyed_before_it_lands_is_sealed_again(api: Any, stores: Any) -> None:
    """A forget-all between sealing and writing (another request): the write refuses the old key and reseals."""
    api.turn_on("alice")
    api.add("alice", ALICE_NOTE)
    sealing_key = stores.keyring.sealing_key
    raced: list[bool] = []

    def forget_all_in_between(user_id: str) -> tuple[bytes, bytes]:
        sealed_with = sealing_key(user_id)
        if not raced:
            raced.append(stores.keyring.destroy(user_id))  # as a concurrent DELETE /v1/memory would
        return sealed_with

    stores.keyring.sealing_key = forget_all_in_between
    status, entry = api.call("POST", "/v1/memory", "alice", {"text": "Alice after the race"})
    assert raced == [True] and status == 201
    stores.keyring.sealing_key = sealing_key
    stores.keyring.cache = KeyCache()
    _, view = api.call("GET", "/v1/memory", "alice")
    assert entry["id"] in [i["id"] for i in view["items"]]  # stored, and it opens: sealed under the new key
    assert stores.entries.get_state("alice").active == len(stores.entries.stored("alice")[1])


def test_an_edit_sealed_under_a_key_destroyed_before_it_lands_changes_nothing(
    api: Any, dynamodb: Any, table_names: Any, stores: Any
) -> None:
    """PATCH seals the new text under the key that opened the old one; a forget-all in between must refuse the write."""
    api.turn_on("alice")
    entry = api.add("alice", ALICE_NOTE)
    before = raw_item(dynamodb, table_names.entries, _entry_key("alice", entry["id"]))
    seal = stores.entries.seal
    seal_text = seal.seal_and_fingerprint
    raced: list[bool] = []

    def forget_all_in_between(*args: Any, **kwargs: Any) -> Any:
        sealed = seal_text(*args, **kwargs)
        if not raced:
            raced.append(stores.keyring.destroy("alice"))  # as a concurrent DELETE /v1/memory would
        return sealed

    seal.seal_and_fingerprint = forget_all_in_between
    status, body = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"text": "Alice keeps a red notebook"})
    seal.seal_and_fingerprint = seal_text
    assert raced == [True]
    assert status == 404 and body["code"] == "not_found"  # nothing opens any more: never a 200 for text no key opens
    assert raw_item(dynamodb, table_names.entries, _entry_key("alice", entry["id"])) == before


def test_a_first_write_whose_key_is_made_and_destroyed_elsewhere_at_every_attempt_is_a_503_that_changed_nothing(
    api: Any, stores: Any
) -> None:
    """Concurrent POSTs and forget-alls: each time this write finds no key, another write stores one first and a
    forget-all destroys it before this one reads it again. Past its retries that is "busy, try again" (503),
    never a 500 (the HTTP burst of POSTs beside forget-alls answered 500 this way)."""
    api.turn_on("alice")
    keyring = stores.keyring
    create = keyring._create
    raced: list[bool] = []

    def another_first_and_a_forget_all_after(user_id: str) -> Any:
        assert create(user_id) is not None  # another request's first write stores its key first
        mine = create(user_id)  # so this one finds a key stored: not created
        raced.append(keyring.destroy(user_id))  # and a forget-all destroys that key before it is read again
        return mine

    keyring._create = another_first_and_a_forget_all_after
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "Alice in the race"})
    keyring._create = create
    assert raced and all(raced)
    assert status == 503 and body["code"] == "unavailable", body
    assert stores.entries.stored("alice")[1] == [] and stores.entries.get_state("alice").active == 0  # nothing changed
    assert (
        api.call("POST", "/v1/memory", "alice", {"text": "Alice in the race"})[0] == 201
    )  # once calm, the retry works


def test_a_write_whose_key_is_destroyed_before_every_attempt_lands_is_a_503_not_a_full_memory(
    api: Any, stores: Any
) -> None:
    """A forget-all between sealing and writing at every attempt: the write gives up as busy (503), and never
    claims the user has 200 entries (409 limit_reached, as it did) when they have one."""
    api.turn_on("alice")
    api.add("alice", ALICE_NOTE)
    keyring = stores.keyring
    sealing_key = keyring.sealing_key
    raced: list[bool] = []

    def forget_all_in_between(user_id: str) -> tuple[bytes, bytes]:
        sealed_with = sealing_key(user_id)
        raced.append(keyring.destroy(user_id))  # as a concurrent DELETE /v1/memory would, every time
        return sealed_with

    keyring.sealing_key = forget_all_in_between
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "Alice after the races"})
    keyring.sealing_key = sealing_key
    assert len(raced) > 1 and all(raced)
    assert status == 503 and body["code"] == "unavailable", body
    assert stores.entries.get_state("alice").active == len(stores.entries.stored("alice")[1]) == 1  # nothing added
