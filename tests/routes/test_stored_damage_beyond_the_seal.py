"""Stored attributes the seal does not bind, altered in storage: absent or read safely, logged, never a 500.

The red team's stored-item edits (issue 21 #7 beyond the sealed items): an entry's expiry past what
a date can say (it is the user's own setting, so not bound), the state item's counters, a session's
attributes and an event's status, type, time and outcome of another type than the app writes.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tests.support.iam import iam_call
from tests.support.raw_storage import every_item, raw_item
from tests.support.stack import WORKER_ARN

NOTE = "Alice keeps a blue notebook"


@pytest.fixture
def alice(api: Any, agents: Any) -> dict[str, Any]:
    api.turn_on("alice")
    assert agents.register("ctx-alice", "alice")[0] == 200
    return api.add("alice", NOTE)


def _alter(dynamodb: Any, table: str, key: dict[str, str], **changes: Any) -> None:
    stored = raw_item(dynamodb, table, key)
    assert stored
    dynamodb.put_item(TableName=table, Item={**stored, **changes})


def _reads(api: Any, agents: Any) -> dict[str, tuple[int, Any]]:
    return {
        "view": api.call("GET", "/v1/memory", "alice"),
        "export": api.call("GET", "/v1/memory/export", "alice"),
        "inbox": api.call("GET", "/v1/inbox", "alice"),
        "context": agents.context("ctx-alice"),
    }


@pytest.mark.storage  # on DynamoDB Local in `make test`: it answers 1e40 as 41 digits, which boto3 cannot decode
@pytest.mark.parametrize("expiry", ["99999999999999", "-99999999999999", "1e40"])
def test_an_entry_whose_expiry_no_date_can_say_is_absent_and_logged(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, alice: Any, capsys: Any, expiry: str
) -> None:
    other = api.add("alice", "Alice walks to work")
    _alter(dynamodb, table_names.entries, {"user_id": "alice", "sk": "e#" + other["id"]}, expires_at={"N": expiry})
    capsys.readouterr()
    reads = _reads(api, agents)
    patched = api.call("PATCH", f"/v1/memory/{other['id']}", "alice", {"pinned": True})
    logs = capsys.readouterr().out
    assert {name: status for name, (status, _) in reads.items()} == dict.fromkeys(reads, 200)
    assert (
        [i["id"] for i in reads["view"][1]["items"]]
        == [e["id"] for e in reads["export"][1]["entries"]]
        == [alice["id"]]
    )
    assert patched[0] == 404 and patched[1]["code"] == "not_found"
    assert "stored item unreadable" in logs and "walks" not in logs
    stored = raw_item(dynamodb, table_names.entries, {"user_id": "alice", "sk": "e#" + other["id"]})
    # Nothing changed (compared as numbers: DynamoDB writes a stored number out in its own form).
    assert stored and Decimal(stored["expires_at"]["N"]) == Decimal(expiry) and stored["pinned"] == {"BOOL": False}
    assert api.call("DELETE", "/v1/memory", "alice") == (200, {"deleted": 2})  # forget-all still reaches it


@pytest.mark.parametrize("counter", ["active", "waiting", "view_version"])
def test_a_state_counter_of_another_type_is_read_as_zero_and_logged(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, alice: Any, capsys: Any, counter: str
) -> None:
    _alter(dynamodb, table_names.entries, {"user_id": "alice", "sk": "#state"}, **{counter: {"S": "lots"}})
    capsys.readouterr()
    reads = _reads(api, agents)
    logs = capsys.readouterr().out
    assert {name: status for name, (status, _) in reads.items()} == dict.fromkeys(reads, 200)
    assert [i["id"] for i in reads["view"][1]["items"]] == [alice["id"]]
    assert [i["text"] for i in reads["context"][1]["items"]] == [NOTE]
    assert "stored item unreadable" in logs and "state:" + counter in logs


SESSION_DAMAGE = [
    ("proposals", {"S": "many"}),
    ("agent", {"B": b"helper"}),
    ("created_at", {"B": b"2026"}),
    ("user_id", {"N": "5"}),
    ("thread_id", {"L": []}),
    ("tainted", {"S": "false"}),
]


@pytest.mark.parametrize(("attribute", "value"), SESSION_DAMAGE, ids=[a for a, _ in SESSION_DAMAGE])
def test_a_session_with_an_attribute_of_another_type_is_an_unknown_session(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, alice: Any, capsys: Any, attribute: str, value: Any
) -> None:
    _alter(dynamodb, table_names.sessions, {"session_id": "ctx-alice"}, **{attribute: value})
    capsys.readouterr()
    context = agents.context("ctx-alice")
    posted = agents.propose("ctx-alice", {"id": "ev-1", "text": "Alice likes tea", "message_id": "m-1"})
    logs = capsys.readouterr().out
    assert context[0] == 404 and context[1]["code"] == "not_found"
    assert posted[0] in (202, 404) and "tea" not in logs
    assert "stored item unreadable" in logs
    assert api.call("GET", "/v1/memory", "alice")[1]["proposals"] == []  # nothing proposed through it


EVENT_DAMAGE = [
    ("status", {"B": b"handled"}),
    ("type", {"B": b"memory.propose"}),
    ("created_at", {"B": b"2026"}),
    ("outcome", {"M": {"status": {"NS": ["1"]}}}),
    ("outcome", {"M": {"status": {"B": b"proposed"}}}),
]


@pytest.mark.parametrize(("attribute", "value"), EVENT_DAMAGE, ids=[f"{a}-{next(iter(v))}" for a, v in EVENT_DAMAGE])
def test_an_event_with_an_attribute_of_another_type_is_listed_without_it(
    agents: Any, dynamodb: Any, table_names: Any, alice: Any, attribute: str, value: Any
) -> None:
    assert agents.propose("ctx-alice", {"id": "ev-1", "text": "Alice likes tea", "message_id": "m-1"})[0] == 202
    _alter(dynamodb, table_names.events, {"session_id": "ctx-alice", "event_id": "ev-1"}, **{attribute: value})
    status, body = iam_call(agents.client, "GET", "/v1/sessions/ctx-alice/events", WORKER_ARN)
    assert status == 200, body
    [event] = body["events"]
    shown = {
        "status": event["status"],
        "type": event["type"],
        "created_at": event["created_at"],
        "outcome": event["outcome"],
    }
    assert shown[attribute] in ("", None)  # never the altered value, never a 500


JOURNAL_DAMAGE = [
    ("details not JSON", {"details": {"S": "not json"}}),
    ("details a list", {"details": {"S": "[1]"}}),
    ("details a number", {"details": {"N": "5"}}),
    ("at binary", {"at": {"B": b"2026"}}),
    ("count a string", {"n_entries": {"S": "many"}}),
]


@pytest.mark.parametrize("change", [c for _, c in JOURNAL_DAMAGE], ids=[name for name, _ in JOURNAL_DAMAGE])
def test_a_damaged_journal_row_is_left_out_of_the_journal_and_the_export(
    api: Any, dynamodb: Any, table_names: Any, capsys: Any, change: dict[str, Any]
) -> None:
    api.turn_on("alice")
    api.add("alice", NOTE)
    rows = every_item(dynamodb)[table_names.journal]
    assert len(rows) >= 2
    dynamodb.put_item(TableName=table_names.journal, Item={**rows[0], **change})
    capsys.readouterr()
    journal = api.call("GET", "/v1/memory/journal", "alice")
    export = api.call("GET", "/v1/memory/export", "alice")
    assert journal[0] == export[0] == 200, (journal, export)
    assert len(journal[1]["items"]) == len(rows) - 1 and len(export[1]["journal"]) == len(rows) - 1
    assert "stored item unreadable" in capsys.readouterr().out


def test_a_journal_row_shows_only_the_details_a_row_is_written_with(api: Any, dynamodb: Any, table_names: Any) -> None:
    """A row altered to carry text (or an action of its own) in its details never shows them."""
    api.turn_on("alice")
    [row] = every_item(dynamodb)[table_names.journal]
    forged = '{"action": "keep.memory.nothing", "text": "Alice secret", "enabled": true}'
    dynamodb.put_item(TableName=table_names.journal, Item={**row, "details": {"S": forged}})
    status, body = api.call("GET", "/v1/memory/journal", "alice")
    assert status == 200
    [shown] = body["items"]
    assert shown["action"] == row["action"]["S"] and "text" not in shown and "Alice secret" not in str(body)


def test_a_key_row_whose_creation_time_is_of_another_type_still_seals_and_opens(
    api: Any, dynamodb: Any, table_names: Any, stores: Any, alice: Any
) -> None:
    """The time is not what opens anything: it read as a 500 on every write (red team)."""
    from chalicelib.crypto.cache import KeyCache

    _alter(dynamodb, table_names.keys, {"user_id": "alice", "sk": "#key"}, created_at={"B": b"2026"})
    stores.keyring.cache = KeyCache()  # a cold container reads the row
    assert api.call("POST", "/v1/memory", "alice", {"text": "Alice walks home"})[0] == 201
    assert sorted(i["text"] for i in api.call("GET", "/v1/memory", "alice")[1]["items"]) == sorted(
        ["Alice walks home", NOTE]
    )
