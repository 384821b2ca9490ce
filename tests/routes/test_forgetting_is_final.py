"""Proof by restore (issue 26): every copy of a forgotten text, put back as a backup restore would, never opens again.

Each test takes the raw items of one text's whole life (the agent's event while pending, its stream
record, the proposal, the entry) before it is forgotten, forgets it one way, puts every item back, and
looks everywhere: absent from every list and the export, 404 by id, unreadable for the consumer (the
restored event redriven, the stored stream record delivered again), never a 500 and never the text.
Only the keys table is not restored: it has no backups (infra/tables.json, docs/encryption.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.services.consumer import handle_record, redrive
from local.stream_pump import create_streams_client
from tests.support.iam import iam_call
from tests.support.raw_storage import every_item, every_stream_record, plaintext_hits
from tests.support.stack import OPERATOR_ARN

TEXT = "Alice hides the spare key under the blue flowerpot"
SESSION, AGENT = "s-final", "helper"


def _life(api: Any, agents: Any, dynamodb: Any, table_names: Any, tables: Any, *, accept: bool) -> dict[str, Any]:
    """One text proposed by an agent (and accepted when `accept`): every raw item and stream record it left."""
    api.turn_on("alice")
    api.add("alice", "Alice's own note stays")  # the user's own entry: it must survive every forget below
    agents.register(SESSION, "alice", agent=AGENT)
    agents.propose(SESSION, {"id": "e1", "text": TEXT}, pump=False)
    pending = every_item(dynamodb)[table_names.events]
    records = every_stream_record(create_streams_client(), tables["events_stream"])
    agents.stream.drain()
    _, view = api.call("GET", "/v1/memory", "alice")
    [proposal] = view["proposals"]
    entry = None
    if accept:
        status, entry = api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")
        assert status in (200, 201) and entry["text"] == TEXT
    backup = every_item(dynamodb)
    return {
        "proposal_id": proposal["id"],
        "entry_id": entry["id"] if entry else None,
        "items": {
            table_names.events: pending,
            table_names.proposals: [*backup[table_names.proposals]],
            table_names.entries: [*backup[table_names.entries]],
        },
        "proposal_items": [*backup[table_names.proposals]],
        "records": [r for r in records if r.get("eventName") == "INSERT"],
    }


def _restore(dynamodb: Any, life: dict[str, Any]) -> None:
    """Put every captured item back, as a point-in-time restore of those tables would."""
    for table, items in life["items"].items():
        for item in items:
            dynamodb.put_item(TableName=table, Item=item)


def _never_opens(api: Any, agents: Any, stores: Any, life: dict[str, Any], capsys: Any) -> None:
    capsys.readouterr()
    status, view = api.call("GET", "/v1/memory", "alice")
    assert status == 200
    shown = [i["text"] for i in view["items"]] + [p["text"] for p in view["proposals"]]
    assert TEXT not in shown
    for item_id in filter(None, (life["entry_id"], life["proposal_id"])):
        for method, path, body in (
            ("PATCH", f"/v1/memory/{item_id}", {"pinned": True}),
            ("POST", f"/v1/memory/{item_id}/accept", None),
            ("POST", f"/v1/memory/{item_id}/reject", None),
        ):
            status, answer = api.call(method, path, "alice", body)
            assert status == 404 and answer["code"] == "not_found", (method, path, status, answer)
    for path in ("/v1/memory/export", "/v1/inbox"):
        status, doc = api.call("GET", path, "alice")
        assert status == 200 and TEXT not in repr(doc)
    status, items = agents.context(SESSION)
    assert status == 200 and TEXT not in repr(items)
    # The consumer: the restored pending event redriven, and its stored stream record delivered again.
    assert redrive(stores, [{"session_id": SESSION, "event_id": "e1"}])["batchItemFailures"] == []
    for record in life["records"]:
        handle_record(stores, record)
    assert agents.outcomes(SESSION)["e1"] == {"type": "memory.proposal_refused", "reason": "unreadable"}
    _, view = api.call("GET", "/v1/memory", "alice")
    assert TEXT not in repr(view) and view["proposals"] == []
    logs = capsys.readouterr().out
    assert TEXT not in logs and '"status": 500' not in logs


def _forget_entry(api: Any, client: Any, life: dict[str, Any]) -> None:
    assert api.call("DELETE", f"/v1/memory/{life['entry_id']}", "alice")[0] == 204


def _operator_forget(api: Any, client: Any, life: dict[str, Any]) -> None:
    status, _ = iam_call(client, "DELETE", f"/v1/operator/memory/{life['entry_id']}?user_id=alice", OPERATOR_ARN)
    assert status == 204


def _forget_all(api: Any, client: Any, life: dict[str, Any]) -> None:
    assert api.call("DELETE", "/v1/memory", "alice")[0] == 200


def _forget_agent(api: Any, client: Any, life: dict[str, Any]) -> None:
    status, body = api.call("POST", f"/v1/agents/{AGENT}/forget", "alice")
    assert status == 200 and body["deleted"] == 1


FORGETS: dict[str, Callable[[Any, Any, dict[str, Any]], None]] = {
    "forget one": _forget_entry,
    "operator forget": _operator_forget,
    "forget everything": _forget_all,
    "forget the agent's writes": _forget_agent,
}


@pytest.mark.parametrize("how", FORGETS)
def test_a_forgotten_entry_restored_from_a_backup_never_opens(
    api: Any, agents: Any, client: Any, dynamodb: Any, table_names: Any, tables: Any, stores: Any, capsys: Any, how: str
) -> None:
    life = _life(api, agents, dynamodb, table_names, tables, accept=True)
    FORGETS[how](api, client, life)
    _restore(dynamodb, life)
    stores.keyring.cache.drop_prefix("")  # and a cold container: nothing cached can help either
    _never_opens(api, agents, stores, life, capsys)
    if how != "forget everything":  # the user's own entry was never touched
        assert [i["text"] for i in api.call("GET", "/v1/memory", "alice")[1]["items"]] == ["Alice's own note stays"]


def test_a_rejected_proposal_restored_from_a_backup_never_opens(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, tables: Any, stores: Any, capsys: Any
) -> None:
    life = _life(api, agents, dynamodb, table_names, tables, accept=False)
    assert api.call("POST", f"/v1/memory/{life['proposal_id']}/reject", "alice")[0] == 204
    _restore(dynamodb, life)
    stores.keyring.cache.drop_prefix("")
    _never_opens(api, agents, stores, life, capsys)


def test_a_refused_event_restored_from_a_backup_never_becomes_a_proposal(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, tables: Any, stores: Any, capsys: Any
) -> None:
    api.turn_on("alice")
    agents.register(SESSION, "alice", agent=AGENT)
    assert api.call("PUT", f"/v1/agents/{AGENT}", "alice", {"propose": False})[0] == 200
    agents.propose(SESSION, {"id": "e1", "text": TEXT}, pump=False)
    pending = every_item(dynamodb)[table_names.events]
    records = [
        r
        for r in every_stream_record(create_streams_client(), tables["events_stream"])
        if r.get("eventName") == "INSERT"
    ]
    agents.stream.drain()
    assert agents.outcomes(SESSION)["e1"] == {"type": "memory.proposal_refused", "reason": "agent_blocked"}
    # The user lets the agent propose again: had the refused text's key survived, the restored event would now pass.
    assert api.call("PUT", f"/v1/agents/{AGENT}", "alice", {"propose": True})[0] == 200
    life = {"entry_id": None, "proposal_id": None, "items": {table_names.events: pending}, "records": records}
    _restore(dynamodb, life)
    stores.keyring.cache.drop_prefix("")
    _never_opens(api, agents, stores, life, capsys)


def test_every_forget_leaves_no_key_of_the_text_and_no_plaintext_anywhere(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, tables: Any
) -> None:
    life = _life(api, agents, dynamodb, table_names, tables, accept=True)
    keys_before = {k["sk"]["S"] for k in every_item(dynamodb)[table_names.keys]}
    assert api.call("DELETE", f"/v1/memory/{life['entry_id']}", "alice")[0] == 204
    keys_after = {k["sk"]["S"] for k in every_item(dynamodb)[table_names.keys]}
    assert len(keys_before - keys_after) == 1 and keys_after < keys_before  # exactly the text's own key went
    assert plaintext_hits([TEXT], every_item(dynamodb)) == []


def test_the_receipt_says_when_the_forget_is_final_everywhere(api: Any, stores: Any, clock: Any) -> None:
    from datetime import datetime

    from chalicelib.crypto.cache import MAX_AGE_SECONDS

    def parse_iso(value: str) -> datetime:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))

    api.turn_on("alice")
    entry = api.add("alice", "A note to forget")
    assert api.call("DELETE", f"/v1/memory/{entry['id']}", "alice")[0] == 204
    assert api.call("DELETE", "/v1/memory", "alice")[0] == 200
    _, page = api.call("GET", "/v1/memory/journal", "alice")
    receipts = [r for r in page["items"] if r["action"] in ("keep.memory.forget", "keep.memory.forget_all")]
    assert {r["action"] for r in receipts} == {"keep.memory.forget", "keep.memory.forget_all"}
    for row in receipts:
        assert (
            set(row) >= {"at", "unrecoverable_by"}
            and "A note to forget" not in repr(row)
            and entry["id"] not in repr(row)
        )
        waited = (parse_iso(row["unrecoverable_by"]) - parse_iso(row["at"])).total_seconds()
        assert MAX_AGE_SECONDS <= waited <= MAX_AGE_SECONDS + 2  # the deletion plus the key cache's age, no less


def test_unwrapped_keys_never_reach_a_log_an_answer_the_journal_or_a_table(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, tables: Any, stores: Any, capsys: Any
) -> None:
    """Every key the container unwraps (data key and text keys) is recorded as the cache receives it, then
    looked for, raw, hex and base64, in everything the story logged, answered, journaled and stored."""
    import base64

    seen: list[bytes] = []
    put = stores.keyring.cache.put

    def recording(slot: str, key_id: bytes, key: bytes) -> None:
        seen.append(key)
        put(slot, key_id, key)

    stores.keyring.cache.put = recording  # type: ignore[method-assign]
    answers: list[Any] = []
    life = _life(api, agents, dynamodb, table_names, tables, accept=True)
    answers.append(api.call("PATCH", f"/v1/memory/{life['entry_id']}", "alice", {"text": TEXT + " now"}))
    stores.keyring.cache.drop_prefix("")  # a cold container: the keys are read, unwrapped and cached again
    answers.append(api.call("GET", "/v1/memory/export", "alice"))
    answers.append(api.call("DELETE", f"/v1/memory/{life['entry_id']}", "alice"))
    answers.append(api.call("GET", "/v1/memory/journal", "alice"))
    answers.append(api.call("DELETE", "/v1/memory", "alice"))
    logs = capsys.readouterr().out
    stored = repr(every_item(dynamodb)).encode()
    assert len({k for k in seen}) >= 2  # the data key and at least one text key went through the cache
    for key in set(seen):
        for form in (key.hex(), base64.b64encode(key).decode(), repr(key)):
            assert form not in logs and form not in repr(answers)
        assert key not in stored and base64.b64encode(key) not in stored


def test_text_keys_share_the_bounded_cache(api: Any, stores: Any) -> None:
    """The unwrapped text keys live in the same cache as the data keys, bounded in count (and age, tests/unit)."""
    from chalicelib.crypto.cache import KeyCache

    stores.keyring.cache = KeyCache(max_users=5)
    api.turn_on("alice")
    for n in range(8):
        api.add("alice", f"Note number {n}")
    stores.keyring.cache = KeyCache(max_users=5)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert len(view["items"]) == 8  # every text opens, from one Query of the keys, however small the cache
    assert len(stores.keyring.cache) <= 5
    assert any("/" in slot for slot in stores.keyring.cache._keys)  # text keys ("<user>/<text id>") are in it


def _text_key_row(dynamodb: Any, table_names: Any, user: str, entry_id: str) -> dict[str, Any]:
    """The raw key row of one entry's text, found by the key id its sealed text names."""
    from tests.support.raw_storage import raw_item

    sealed = raw_item(dynamodb, table_names.entries, {"user_id": user, "sk": f"e#{entry_id}"})
    assert sealed is not None
    text_id = bytes(sealed["sealed_text"]["B"])[1:17]
    row = raw_item(dynamodb, table_names.keys, {"user_id": user, "sk": f"t#{text_id.hex()}"})
    assert row is not None
    return row


KEY_ROW_DAMAGE: dict[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any] | None]] = {
    "missing": lambda row, other: None,
    "wrapped key removed": lambda row, other: {k: v for k, v in row.items() if k != "wrapped"},
    "wrapped key of another type": lambda row, other: {**row, "wrapped": {"S": "not bytes"}},
    "wrapped key garbage": lambda row, other: {**row, "wrapped": {"B": bytes(len(row["wrapped"]["B"]))}},
    "wrapped key cut short": lambda row, other: {**row, "wrapped": {"B": row["wrapped"]["B"][:5]}},
    "data key id of another type": lambda row, other: {**row, "data_key_id": {"N": "7"}},
    "data key id of another length": lambda row, other: {**row, "data_key_id": {"B": row["data_key_id"]["B"] + b"x"}},
    "another text's row copied over it": lambda row, other: {**other, "sk": row["sk"]},
    "expiry of another type": lambda row, other: {**row, "expires_at": {"S": "soon"}},
}


@pytest.mark.parametrize("damage", KEY_ROW_DAMAGE)
def test_a_text_key_row_altered_missing_or_copied_makes_its_text_absent_never_a_500(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, stores: Any, capsys: Any, damage: str
) -> None:
    """Stored data is hostile: a damaged text key opens nothing (its text is absent, 404 by id), the rest reads."""
    api.turn_on("alice")
    hit = api.add("alice", "Alice's locker code is in the red book")
    kept = api.add("alice", "Alice likes green tea")
    row, other = (_text_key_row(dynamodb, table_names, "alice", e["id"]) for e in (hit, kept))
    changed = KEY_ROW_DAMAGE[damage](row, other)
    if changed is None:
        dynamodb.delete_item(TableName=table_names.keys, Key={"user_id": row["user_id"], "sk": row["sk"]})
    else:
        dynamodb.put_item(TableName=table_names.keys, Item=changed)
    stores.keyring.cache.drop_prefix("")  # a cold container: the keys are read from the table
    capsys.readouterr()
    opens = damage == "expiry of another type"  # not read back: only the key matters
    status, view = api.call("GET", "/v1/memory", "alice")
    assert status == 200
    shown = {i["id"] for i in view["items"]}
    assert kept["id"] in shown and (hit["id"] in shown) == opens
    for path in ("/v1/memory/export", "/v1/inbox", "/v1/agents", "/v1/memory/journal"):
        assert api.call("GET", path, "alice")[0] == 200
    status, _ = api.call("PATCH", f"/v1/memory/{hit['id']}", "alice", {"pinned": True})
    assert status == (200 if opens else 404)
    assert api.call("POST", "/v1/memory", "alice", {"text": "Alice waters the fern on Sundays"})[0] == 201
    assert api.call("DELETE", f"/v1/memory/{hit['id']}", "alice")[0] == (204 if opens else 404)
    assert api.call("DELETE", f"/v1/memory/{kept['id']}", "alice")[0] == 204
    logs = capsys.readouterr().out
    assert '"status": 500' not in logs and "locker" not in logs
