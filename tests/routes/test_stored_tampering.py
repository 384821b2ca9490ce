"""Stored data is hostile: items copied, altered, half-written or given a broken key are never believed, never a 500.

Each test alters the raw tables with boto3 (as a restored backup, a bug or someone with table access
would) and then looks through every route that reads them: the user's list, export, PATCH, accept,
the host's context, forget-all. Issue 21 items 6 (provenance bound to the ciphertext) and 7 (unreadable
items absent and logged, a broken key row a refusal).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from chalicelib.crypto.cache import KeyCache
from tests.support.proposals import add_proposal
from tests.support.raw_storage import every_item, raw_item

NOTE = "Alice keeps a blue notebook"


def _entry_key(entry_id: str, user: str = "alice") -> dict[str, str]:
    return {"user_id": user, "sk": "e#" + entry_id}


def _proposal_key(proposal_id: str, user: str = "alice") -> dict[str, str]:
    return {"user_id": user, "sk": "p#" + proposal_id}


def _everywhere(api: Any, agents: Any, user: str = "alice") -> dict[str, Any]:
    """What each reading route shows of the user's memory; every one of them must answer 200."""
    answers = {
        "view": api.call("GET", "/v1/memory", user),
        "export": api.call("GET", "/v1/memory/export", user),
        "inbox": api.call("GET", "/v1/inbox", user),
        "context": agents.context("ctx-" + user),
    }
    assert {name: status for name, (status, _) in answers.items()} == dict.fromkeys(answers, 200), answers
    body = {name: answer for name, (_, answer) in answers.items()}
    return {
        "items": [i["id"] for i in body["view"]["items"]],
        "proposals": [p["id"] for p in body["view"]["proposals"]],
        "export": [e["id"] for e in body["export"]["entries"]],
        "export_proposals": [p["id"] for p in body["export"]["proposals"]],
        "inbox": [p["id"] for p in body["inbox"]["memory_proposals"]],
        "context": [i["text"] for i in body["context"]["items"]],
    }


@pytest.fixture
def alice(api: Any, agents: Any) -> dict[str, Any]:
    """Alice with memory on, one entry of her own, and a host session that may read her memory."""
    api.turn_on("alice")
    assert agents.register("ctx-alice", "alice")[0] == 200
    return api.add("alice", NOTE)


def test_an_entry_copied_whole_to_a_new_sort_key_is_listed_once(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, alice: Any
) -> None:
    original = raw_item(dynamodb, table_names.entries, _entry_key(alice["id"]))
    assert original
    copy_id = "f" * 32
    dynamodb.put_item(TableName=table_names.entries, Item={**original, "sk": {"S": "e#" + copy_id}})
    shown = _everywhere(api, agents)
    assert shown["items"] == shown["export"] == [alice["id"]] and shown["context"] == [NOTE]
    assert api.call("PATCH", f"/v1/memory/{copy_id}", "alice", {"pinned": True})[0] == 404
    assert api.call("DELETE", f"/v1/memory/{alice['id']}", "alice")[0] == 204
    assert _everywhere(api, agents)["items"] == []  # the copy never stood in for the original


def test_a_proposal_copied_into_the_entries_table_is_not_an_entry(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, stores: Any, alice: Any
) -> None:
    proposal = add_proposal(stores, "alice", "Alice likes trains")
    raw = raw_item(dynamodb, table_names.proposals, _proposal_key(proposal.id))
    assert raw
    dynamodb.put_item(TableName=table_names.entries, Item={**raw, "sk": {"S": "e#" + proposal.id}})
    shown = _everywhere(api, agents)
    assert shown["items"] == [alice["id"]] and shown["proposals"] == [proposal.id]


TAMPERED_PROVENANCE = [
    ("tainted", {"BOOL": False}),
    ("origin", {"S": "user"}),
    ("agent", {"S": "trusted-agent"}),
    ("src_session", {"S": "another-session"}),
    ("src_thread", {"S": "another-thread"}),
    ("src_message", {"S": "another-message"}),
    ("kind", {"S": "fact"}),
    ("created_at", {"S": "2020-01-01T00:00:00.000000Z"}),
]


@pytest.mark.parametrize(("attribute", "value"), TAMPERED_PROVENANCE, ids=[a for a, _ in TAMPERED_PROVENANCE])
def test_a_proposal_whose_provenance_was_altered_in_storage_is_absent_and_cannot_be_accepted(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, stores: Any, alice: Any, attribute: str, value: Any
) -> None:
    proposal = add_proposal(stores, "alice", "Alice likes trains", tainted=True, agent="helper")
    stored = raw_item(dynamodb, table_names.proposals, _proposal_key(proposal.id))
    assert stored and stored[attribute] != value
    dynamodb.put_item(TableName=table_names.proposals, Item={**stored, attribute: value})
    shown = _everywhere(api, agents)
    assert shown["proposals"] == shown["inbox"] == shown["export_proposals"] == []
    assert api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice") == api.call(
        "POST", f"/v1/memory/{'0' * 32}/accept", "alice"
    )  # a 404 like any missing id
    assert raw_item(dynamodb, table_names.proposals, _proposal_key(proposal.id))[attribute] == value  # nothing changed
    assert _everywhere(api, agents)["items"] == [alice["id"]]


@pytest.mark.parametrize(("attribute", "value"), TAMPERED_PROVENANCE, ids=[a for a, _ in TAMPERED_PROVENANCE])
def test_an_accepted_entry_whose_provenance_was_altered_in_storage_is_absent(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, stores: Any, alice: Any, attribute: str, value: Any
) -> None:
    proposal = add_proposal(stores, "alice", "Alice likes trains", tainted=True, agent="helper")
    assert api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")[0] == 201
    stored = raw_item(dynamodb, table_names.entries, _entry_key(proposal.id))
    assert stored and stored[attribute] != value
    dynamodb.put_item(TableName=table_names.entries, Item={**stored, attribute: value})
    shown = _everywhere(api, agents)
    assert shown["items"] == shown["export"] == [alice["id"]] and shown["context"] == [NOTE]
    assert api.call("PATCH", f"/v1/memory/{proposal.id}", "alice", {"pinned": True})[0] == 404


def test_accepting_carries_the_proposals_provenance_into_the_entry_and_binds_it_there(
    api: Any, dynamodb: Any, table_names: Any, stores: Any, alice: Any
) -> None:
    plain = add_proposal(stores, "alice", "Alice likes trains", tainted=True, agent="helper")
    corrected = add_proposal(stores, "alice", "Alice likes boats", tainted=True, agent="helper")
    assert api.call("POST", f"/v1/memory/{plain.id}/accept", "alice")[0] == 201
    status, entry = api.call(
        "POST", f"/v1/memory/{corrected.id}/accept", "alice", {"text": "Alice likes sailing", "kind": "fact"}
    )
    assert status == 201 and entry["edited"] is True
    for proposal, kind, edited in ((plain, "note", None), (corrected, "fact", {"BOOL": True})):
        stored = raw_item(dynamodb, table_names.entries, _entry_key(proposal.id))
        assert stored is not None and stored.get("edited") == edited and stored["kind"] == {"S": kind}
        assert (stored["tainted"], stored["origin"], stored["agent"]) == (
            {"BOOL": True},
            {"S": "agent"},
            {"S": "helper"},
        )
        assert (stored["src_session"], stored["src_thread"], stored["src_message"]) == (
            {"S": "s-1"},
            {"S": "t-1"},
            {"S": "m-1"},
        )
    _, view = api.call("GET", "/v1/memory", "alice")
    accepted = {i["id"]: i for i in view["items"]}
    assert accepted[corrected.id]["tainted"] is True and accepted[corrected.id]["source"]["session_id"] == "s-1"
    # Changing the kind afterwards seals the text again for the new kind: it still opens, as a preference.
    assert api.call("PATCH", f"/v1/memory/{corrected.id}", "alice", {"kind": "preference"})[0] == 200
    stores.keyring.cache = KeyCache()
    _, view = api.call("GET", "/v1/memory", "alice")
    assert {i["id"]: i["kind"] for i in view["items"]}[corrected.id] == "preference"


DAMAGE = [
    ("no created_at", lambda item: {k: v for k, v in item.items() if k != "created_at"}),
    ("no updated_at", lambda item: {k: v for k, v in item.items() if k != "updated_at"}),
    ("no kind", lambda item: {k: v for k, v in item.items() if k != "kind"}),
    ("no sealed text", lambda item: {k: v for k, v in item.items() if k != "sealed_text"}),
    ("garbage sealed text", lambda item: {**item, "sealed_text": {"B": os.urandom(60)}}),
    ("text as a string", lambda item: {**item, "sealed_text": {"S": "hello"}}),
    ("tainted as a string", lambda item: {**item, "tainted": {"S": "false"}}),
    ("pinned as a number", lambda item: {**item, "pinned": {"N": "1"}}),
    ("expiry as a string", lambda item: {**item, "expires_at": {"S": "soon"}}),
    ("created_at as a number", lambda item: {**item, "created_at": {"N": "5"}}),
    ("agent as a list", lambda item: {**item, "agent": {"L": []}}),
]


@pytest.mark.parametrize("damage", [d for _, d in DAMAGE], ids=[name for name, _ in DAMAGE])
def test_a_damaged_entry_is_absent_everywhere_and_logged_without_text(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, alice: Any, damage: Any, capsys: Any
) -> None:
    other = api.add("alice", "Alice walks to work")
    stored = raw_item(dynamodb, table_names.entries, _entry_key(other["id"]))
    assert stored
    dynamodb.put_item(TableName=table_names.entries, Item=damage(stored))
    capsys.readouterr()
    shown = _everywhere(api, agents)
    patched = api.call("PATCH", f"/v1/memory/{other['id']}", "alice", {"text": "Alice cycles to work"})
    logs = capsys.readouterr().out
    assert shown["items"] == shown["export"] == [alice["id"]] and shown["context"] == [NOTE]
    assert patched[0] == 404 and patched[1]["code"] == "not_found"
    assert "stored item unreadable" in logs and "walks" not in logs and "cycles" not in logs
    assert api.call("DELETE", "/v1/memory", "alice") == (200, {"deleted": 2})  # forget-all reaches it too
    entries_left = [i for i in every_item(dynamodb)[table_names.entries] if i["sk"]["S"].startswith("e#")]
    assert entries_left == []  # the agent's grant row (a#, the user's choice and its last read) stays, like the switch


@pytest.mark.parametrize("change", [{"id": None}, {"id": {"S": "0" * 32}}], ids=["no id", "another id"])
def test_the_id_attribute_is_not_believed_the_sort_key_is(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, stores: Any, alice: Any, change: dict[str, Any]
) -> None:
    """The `id` attribute is for people reading the table; the id is the sort key's, which the seal binds."""
    proposal = add_proposal(stores, "alice", "Alice likes trains")
    for table, key in (
        (table_names.entries, _entry_key(alice["id"])),
        (table_names.proposals, _proposal_key(proposal.id)),
    ):
        stored = raw_item(dynamodb, table, key)
        assert stored
        altered = {k: v for k, v in {**stored, **change}.items() if v is not None}
        dynamodb.put_item(TableName=table, Item=altered)
    shown = _everywhere(api, agents)
    assert shown["items"] == shown["export"] == [alice["id"]] and shown["proposals"] == [proposal.id]
    assert api.call("PATCH", f"/v1/memory/{alice['id']}", "alice", {"pinned": True})[0] == 200
    assert api.call("POST", f"/v1/memory/{'0' * 32}/accept", "alice")[0] == 404
    assert api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")[0] == 201


@pytest.mark.parametrize("damage", [d for _, d in DAMAGE], ids=[name for name, _ in DAMAGE])
def test_a_damaged_proposal_is_absent_and_accepting_it_is_a_404(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, stores: Any, alice: Any, damage: Any
) -> None:
    proposal = add_proposal(stores, "alice", "Alice likes trains")
    stored = raw_item(dynamodb, table_names.proposals, _proposal_key(proposal.id))
    assert stored
    dynamodb.put_item(TableName=table_names.proposals, Item=damage(stored))
    assert _everywhere(api, agents)["proposals"] == []
    assert api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")[0] == 404
    assert api.call("POST", f"/v1/memory/{proposal.id}/reject", "alice")[0] == 204  # it can still be thrown away


def _break_key_row(dynamodb: Any, table_names: Any, how: str) -> None:
    row = raw_item(dynamodb, table_names.keys, {"user_id": "alice", "sk": "#key"})
    assert row
    if how == "garbage wrapped key":
        row["wrapped"] = {"B": os.urandom(len(row["wrapped"]["B"]))}
    elif how == "another user's wrapped key":
        bob = raw_item(dynamodb, table_names.keys, {"user_id": "bob", "sk": "#key"})
        assert bob
        row["wrapped"] = bob["wrapped"]  # alice's key id kept, so her items name this row
    elif how == "no wrapped key":
        del row["wrapped"]
    elif how == "key id as a string":
        row["key_id"] = {"S": "not bytes"}
    elif how.startswith("key id of "):  # red team: it answered 409 "You have 200 entries" to a user with 1
        row["key_id"] = {"B": os.urandom(int(how.split()[3]))}
    dynamodb.put_item(TableName=table_names.keys, Item=row)


BROKEN_ROWS = [
    "garbage wrapped key",
    "another user's wrapped key",
    "no wrapped key",
    "key id as a string",
    "key id of 15 bytes",
    "key id of 17 bytes",
]


@pytest.mark.parametrize("how", BROKEN_ROWS)
def test_a_broken_key_row_is_a_503_refusal_that_changes_nothing(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, stores: Any, alice: Any, how: str, capsys: Any
) -> None:
    api.turn_on("bob")
    api.add("bob", "Bob prefers tea")
    _break_key_row(dynamodb, table_names, how)
    stores.keyring.cache = KeyCache()  # a cold container: the row must be read and unwrapped
    before = every_item(dynamodb)
    capsys.readouterr()
    answers = [
        api.call("POST", "/v1/memory", "alice", {"text": "Alice starts a diary"}),
        api.call("GET", "/v1/memory", "alice"),
        api.call("GET", "/v1/memory/export", "alice"),
        api.call("PATCH", f"/v1/memory/{alice['id']}", "alice", {"text": "Alice keeps a red notebook"}),
        agents.context("ctx-alice"),
    ]
    logs = capsys.readouterr().out
    for status, body in answers:
        assert status == 503 and body["code"] == "unavailable" and set(body) == {"code", "message"}, (status, body)
    assert "key row unusable" in logs and "notebook" not in logs and "diary" not in logs
    after = every_item(dynamodb)
    assert (
        after[table_names.entries] == before[table_names.entries]
        and after[table_names.keys] == before[table_names.keys]
    )
    _, bob = api.call("GET", "/v1/memory", "bob")
    assert [i["text"] for i in bob["items"]] == ["Bob prefers tea"]  # another user is untouched
    # Forgetting everything needs no unwrap: the way out for the user, and then a new key works.
    assert api.call("DELETE", "/v1/memory", "alice") == (200, {"deleted": 1})
    assert api.call("POST", "/v1/memory", "alice", {"text": "Alice starts a diary"})[0] == 201


def test_a_broken_key_row_answers_retry_after_over_the_route(
    api: Any, dynamodb: Any, table_names: Any, stores: Any, alice: Any
) -> None:
    _break_key_row(dynamodb, table_names, "garbage wrapped key")
    stores.keyring.cache = KeyCache()
    response = api.client.http.post("/v1/memory", headers=api.headers("alice"), body='{"text": "Alice again"}')
    assert response.status_code == 503
    assert int({k.lower(): v for k, v in response.headers.items()}["retry-after"]) >= 60


def test_a_broken_key_row_fails_the_stream_record_and_keeps_the_event_pending(
    api: Any, agents: Any, client: Any, dynamodb: Any, table_names: Any, stores: Any, tables: Any, alice: Any
) -> None:
    from local.stream_pump import StreamPump, create_streams_client

    agents.register("s1", "alice")
    agents.propose("s1", {"id": "e1", "text": "Alice likes trains"}, pump=False)
    _break_key_row(dynamodb, table_names, "garbage wrapped key")
    stores.keyring.cache = KeyCache()
    answers: list[Any] = []

    def deliver(payload: dict[str, Any]) -> Any:
        answers.append(client.lambda_.invoke("handle_events_stream", payload).payload)
        return answers[-1]

    StreamPump(create_streams_client(), tables["events_stream"], deliver, max_attempts=1).drain(timeout=5)
    assert any(
        answer and answer.get("batchItemFailures") for answer in answers
    )  # Lambda retries it, then the dead-letter queue
    event = raw_item(dynamodb, table_names.events, {"session_id": "s1", "event_id": "e1"})
    assert event and event["status"] == {"S": "pending"} and "sealed_text" in event  # whole, for a redrive after repair
