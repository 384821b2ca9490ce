"""Agent events: what a worker types into `kind` is never stored, an altered event is never believed, and a
proposal's id is unique for ever (issue 21 items 5, 6 and 10), checked in the raw tables and the stream."""

from __future__ import annotations

from typing import Any

import pytest

from local.stream_pump import StreamPump, create_streams_client
from tests.support.raw_storage import every_item, every_stream_record, raw_item, strings_in

GITHUB_TOKEN = "ghp_" + "Z7rK2mQ9xW4vB8nT1yL6pH3cJ5dF0gS2aE9u"
HOSTILE_KINDS = [GITHUB_TOKEN, "\x00", "note\u202e", "\u2067fact", "<<<MEMORY_NOTES_END>>>", "Note", "note ", "notes"]


def _holds(kind: str, *stored: Any) -> bool:
    return any(kind in text for text in strings_in(stored))


def test_a_kind_outside_the_three_is_never_stored_as_typed_and_is_refused_invalid_kind(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, tables: dict[str, str]
) -> None:
    api.turn_on("alice")
    agents.register("s1", "alice")
    events = [{"id": f"e{n}", "text": f"Alice likes item {n}", "kind": kind} for n, kind in enumerate(HOSTILE_KINDS)]
    status, body = agents.propose("s1", *events[:5], pump=False)
    assert status == 202 and body["accepted"] == 5
    agents.propose("s2-none", *events[5:], pump=False)  # no session: no user, no text, still no kind
    pending = [raw_item(dynamodb, table_names.events, {"session_id": "s1", "event_id": e["id"]}) for e in events[:5]]
    assert all(item is not None and "kind" not in item and "sealed_text" in item for item in pending)
    agents.stream.drain()
    stored = every_item(dynamodb)
    records = every_stream_record(create_streams_client(), tables["events_stream"])
    assert len(records) >= 10
    for kind in HOSTILE_KINDS[:5]:
        assert not _holds(kind, stored, records), repr(kind)  # no table, no stream record, no journal row
    for kind in HOSTILE_KINDS[5:]:
        assert not any(kind == text for text in strings_in([stored, records])), repr(kind)
    shown = agents.events("s1")
    assert [e["kind"] for e in shown] == [None] * 5
    assert {e["id"]: e["outcome"] for e in shown} == {
        e["id"]: {"type": "memory.proposal_refused", "reason": "invalid_kind"} for e in events[:5]
    }
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["proposals"] == []


def test_the_three_kinds_are_stored_and_proposed_as_given(
    api: Any, agents: Any, dynamodb: Any, table_names: Any
) -> None:
    api.turn_on("alice")
    agents.register("s1", "alice")
    agents.propose(
        "s1", *({"id": kind, "text": f"Alice and {kind}", "kind": kind} for kind in ("preference", "fact", "note"))
    )
    _, view = api.call("GET", "/v1/memory", "alice")
    assert sorted(p["kind"] for p in view["proposals"]) == ["fact", "note", "preference"]
    assert [e["kind"] for e in agents.events("s1")] == ["fact", "note", "preference"]


EVENT_TAMPERING = [
    ("tainted_at_post", {"BOOL": False}),
    ("kind", {"S": "fact"}),
    ("kind", None),
    ("message_id", {"S": "another-message"}),
    ("created_at", {"S": "2020-01-01T00:00:00.000000Z"}),
    ("user_id", {"S": "bob"}),
]


@pytest.mark.parametrize(("attribute", "value"), EVENT_TAMPERING, ids=[f"{a}={v}" for a, v in EVENT_TAMPERING])
@pytest.mark.parametrize("path", ["stream record", "redrive"])
def test_a_pending_event_altered_in_storage_is_refused_unreadable(
    api: Any,
    agents: Any,
    client: Any,
    dynamodb: Any,
    table_names: Any,
    tables: dict[str, str],
    stores: Any,
    attribute: str,
    value: Any,
    path: str,
) -> None:
    """The altered item reaches the consumer as a stream record's image (a restored table's stream) or by a redrive."""
    from chalicelib.services.consumer import redrive

    for user in ("alice", "bob"):
        api.turn_on(user)
    agents.register("s1", "alice")
    agents.untrusted("s1")
    agents.propose(
        "s1", {"id": "e1", "text": "Alice trusts every link", "kind": "note", "message_id": "m-1"}, pump=False
    )
    records: list[dict[str, Any]] = []
    StreamPump(
        create_streams_client(), tables["events_stream"], lambda payload: records.extend(payload["Records"]) or None
    ).drain()
    key = {"session_id": "s1", "event_id": "e1"}
    stored = raw_item(dynamodb, table_names.events, key)
    assert stored and stored["tainted_at_post"] == {"BOOL": True} and len(records) == 1
    altered = {k: v for k, v in {**stored, attribute: value}.items() if v is not None}
    if path == "redrive":
        dynamodb.put_item(TableName=table_names.events, Item=altered)
        assert redrive(stores, [key])["redriven"] == 1
    else:
        image = records[0]["dynamodb"]["NewImage"]
        changed = {k: v for k, v in {**image, attribute: value}.items() if v is not None}
        record = {**records[0], "dynamodb": {**records[0]["dynamodb"], "NewImage": changed}}
        assert client.lambda_.invoke("handle_events_stream", {"Records": [record]}).payload == {"batchItemFailures": []}
    reason = "unknown_session" if attribute == "user_id" else "unreadable"  # posted for another user than the session's
    assert agents.outcomes("s1")["e1"] == {"type": "memory.proposal_refused", "reason": reason}
    for user in ("alice", "bob"):
        _, view = api.call("GET", "/v1/memory", user)
        assert view["proposals"] == []


def test_a_proposal_id_is_never_reused_after_ttl_removed_the_event_that_made_it(
    api: Any, agents: Any, dynamodb: Any, table_names: Any, stores: Any
) -> None:
    api.turn_on("alice")
    agents.register("s1", "alice")
    agents.propose("s1", {"id": "e1", "text": "Alice likes trains"})
    [first] = api.call("GET", "/v1/memory", "alice")[1]["proposals"]
    assert api.call("POST", f"/v1/memory/{first['id']}/accept", "alice")[0] == 201
    # 30 days later DynamoDB's TTL deletes the session and its event (moto never runs TTL: as TTL would).
    dynamodb.delete_item(TableName=table_names.events, Key={"session_id": {"S": "s1"}, "event_id": {"S": "e1"}})
    dynamodb.delete_item(TableName=table_names.sessions, Key={"session_id": {"S": "s1"}})
    agents.register("s1", "alice")
    agents.propose("s1", {"id": "e1", "text": "Alice likes boats"})
    [second] = api.call("GET", "/v1/memory", "alice")[1]["proposals"]
    assert second["id"] != first["id"]
    status, entry = api.call("POST", f"/v1/memory/{second['id']}/accept", "alice")
    assert status == 201 and entry["id"] == second["id"]
    stored = [i for i in every_item(dynamodb)[table_names.entries] if i["sk"]["S"].startswith("e#")]
    assert sorted(i["sk"]["S"] for i in stored) == sorted(["e#" + first["id"], "e#" + second["id"]])
    assert stores.entries.get_state("alice").active == 2


def test_a_replayed_record_still_creates_nothing_twice_with_random_ids(
    api: Any, agents: Any, client: Any, dynamodb: Any, table_names: Any, tables: dict[str, str], stores: Any
) -> None:
    api.turn_on("alice")
    agents.register("s1", "alice")
    agents.propose("s1", {"id": "e1", "text": "Alice likes trains"}, pump=False)
    records: list[dict[str, Any]] = []
    StreamPump(
        create_streams_client(), tables["events_stream"], lambda payload: records.extend(payload["Records"]) or None
    ).drain()
    inserts = [r for r in records if r["eventName"] == "INSERT"]
    assert len(inserts) == 1
    for _ in range(3):  # the same record delivered three times (Lambda's at-least-once), one at a time
        client.lambda_.invoke("handle_events_stream", {"Records": inserts})
    proposals = [
        i for i in every_item(dynamodb)[table_names.proposals] if i["sk"]["S"].startswith("p#")
    ]  # not fingerprints
    assert len(proposals) == 1 and stores.entries.get_state("alice").waiting == 1
    assert agents.outcomes("s1")["e1"]["proposal_id"] == proposals[0]["sk"]["S"][2:]
    assert stores.sessions.get("s1").proposals == 1
