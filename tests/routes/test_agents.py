"""The agent path through the real routes and moto's real stream: gates, proposals, refusals, replay."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.iam import iam_call
from tests.support.stack import HOST_ARN, OPERATOR_ARN, WORKER_ARN


def test_agent_gets_memory_only_when_asked_with_a_user_who_turned_it_on(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea", kind="preference", pinned=True)
    agents.register("asked", "alice", memory=True)
    agents.register("not-asked", "alice", memory=False)
    agents.register("no-user", None, memory=True)
    [item] = agents.items("asked")
    assert item == {
        "text": "likes green tea",
        "kind": "preference",
        "pinned": True,
        "tainted": False,
        "ref": item["ref"],
    }
    assert agents.items("not-asked") == []
    assert agents.items("no-user") == []
    api.call("PUT", "/v1/memory/settings", "alice", {"enabled": False})
    assert agents.items("asked") == []
    rows = [r.public() for r in stores.journal.all("alice") if r.action == "keep.memory.context"]
    assert rows == [
        {"at": rows[0]["at"], "action": "keep.memory.context", "session_id": "asked", "agent": "helper", "count": 1}
    ]


def test_context_is_pinned_first_newest_next_and_bounded(api: Any, agents: Any, clock: Any) -> None:
    api.turn_on("alice")
    for n in range(25):
        api.add("alice", f"note {n:02d}", pinned=(n == 3))
        clock.advance(seconds=1)
    agents.register("s", "alice")
    items = agents.items("s")
    assert len(items) == 20
    assert items[0]["text"] == "note 03" and items[1]["text"] == "note 24" and items[-1]["text"] == "note 06"


def test_context_text_budget_is_4_kib(api: Any, agents: Any, clock: Any) -> None:
    api.turn_on("alice")
    for n in range(3):
        api.add("alice", f"{n}" * 1900)
        clock.advance(seconds=1)
    agents.register("s", "alice")
    assert [len(i["text"]) for i in agents.items("s")] == [1900, 1900]


def test_unknown_session_context_is_404(agents: Any) -> None:
    status, body = agents.context("nope")
    assert status == 404 and body["code"] == "not_found"


def test_session_registration_is_idempotent_and_never_changes_user_or_manifest(agents: Any) -> None:
    assert agents.register("s", "alice")[0] == 200
    assert agents.register("s", "alice")[0] == 200
    status, body = agents.register("s", "bob")
    assert status == 409 and body["code"] == "conflict"
    assert agents.register("s", "alice", memory=False)[0] == 409


def test_taint_only_goes_on(agents: Any) -> None:
    agents.register("s", "alice")
    status, body = agents.untrusted("s")
    assert status == 200 and body["tainted"] is True
    agents.register("s", "alice")
    assert agents.untrusted("s")[1]["tainted"] is True
    assert agents.untrusted("missing")[0] == 404


def test_proposal_waits_with_its_source_and_text_leaves_the_event(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    agents.register("s", "alice", thread_id="thread-9")
    status, body = agents.propose(
        "s", {"id": "e1", "text": "Prefers metric units", "kind": "preference", "message_id": "m-7"}
    )
    assert status == 202 and body["accepted"] == 1
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["items"] == []
    [proposal] = view["proposals"]
    assert proposal["text"] == "Prefers metric units" and proposal["origin"] == "agent"
    assert proposal["source"] == {"session_id": "s", "thread_id": "thread-9", "message_id": "m-7"}
    _, inbox = api.call("GET", "/v1/inbox", "alice")
    assert [p["id"] for p in inbox["memory_proposals"]] == [proposal["id"]]
    assert agents.items("s") == []  # not in any context until accepted
    events = agents.events("s")
    assert events[0]["outcome"] == {"type": "memory.proposed", "proposal_id": proposal["id"]}
    assert "metric" not in repr(events)
    from chalicelib.bootstrap import get_stores

    raw = get_stores().client.get_item(
        TableName=get_stores().events.table, Key={"session_id": {"S": "s"}, "event_id": {"S": "e1"}}
    )["Item"]
    assert "text" not in raw and "metric" not in repr(raw)  # the stored event itself dropped the text
    assert api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")[0] == 201
    assert agents.items("s")[0]["text"] == "Prefers metric units"


def test_proposals_from_tainted_sessions_are_marked(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    agents.untrusted("s")
    agents.propose("s", {"id": "e1", "text": "Maybe likes cats"})
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["proposals"][0]["tainted"] is True
    status, entry = api.call("POST", f"/v1/memory/{view['proposals'][0]['id']}/accept", "alice")
    assert status == 201 and entry["tainted"] is True and entry["origin"] == "agent"


@pytest.mark.parametrize(
    ("setup", "event", "reason"),
    [
        ("not_requested", {"text": "x likes y"}, "not_requested"),
        ("no_user", {"text": "x likes y"}, "no_user"),
        ("memory_off", {"text": "x likes y"}, "memory_off"),
        ("unknown", {"text": "x likes y"}, "unknown_session"),
        ("ok", {"text": "   "}, "empty"),
        ("ok", {"text": "é" * 1001}, "too_long"),
        ("ok", {"text": "my token is ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}, "credential:github_token"),
        ("ok", {"text": "likes tea", "kind": "wish"}, "invalid_kind"),
    ],
)
def test_refusals_give_a_reason_and_never_the_text(
    api: Any, agents: Any, stores: Any, setup: str, event: dict[str, Any], reason: str
) -> None:
    if setup != "memory_off":
        api.turn_on("alice")
    if setup != "unknown":
        agents.register("s", None if setup == "no_user" else "alice", memory=setup != "not_requested")
    agents.propose("s", {"id": "e1", **event})
    [stored] = agents.events("s")
    assert stored["outcome"] == {"type": "memory.proposal_refused", "reason": reason}
    assert stored["status"] == "handled"
    text = event["text"].strip() or "   "
    assert text not in repr(stored)
    from chalicelib.bootstrap import get_stores

    raw = get_stores().client.get_item(
        TableName=get_stores().events.table, Key={"session_id": {"S": "s"}, "event_id": {"S": "e1"}}
    )["Item"]
    assert "text" not in raw
    assert text not in repr([r.public() for r in stores.journal.all("alice")])
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["proposals"] == []


def test_sixth_proposal_from_one_session_is_refused(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    agents.propose("s", *[{"id": f"e{n}", "text": f"fact number {n}"} for n in range(6)])
    reasons = [o.get("reason", o["type"]) for o in agents.outcomes("s").values()]
    assert sorted(reasons) == ["memory.proposed"] * 5 + ["session_cap"]


def test_fifty_waiting_is_the_most(api: Any, agents: Any, stores: Any) -> None:
    from tests.support.proposals import add_proposal

    api.turn_on("alice")
    for n in range(50):
        add_proposal(stores, "alice", f"idea {n}")
    agents.register("s", "alice")
    agents.propose("s", {"id": "e1", "text": "one more"})
    assert agents.outcomes("s")["e1"] == {"type": "memory.proposal_refused", "reason": "waiting_cap"}


def test_reposting_and_replaying_create_nothing_twice(api: Any, agents: Any, client: Any, tables: Any) -> None:
    from local.stream_pump import StreamPump, create_streams_client

    api.turn_on("alice")
    agents.register("s", "alice")
    agents.propose("s", {"id": "e1", "text": "likes hiking"}, {"id": "e2", "text": "likes chess"})
    assert agents.propose("s", {"id": "e1", "text": "likes hiking"})[1]["accepted"] == 0
    # A second pump reads the whole stream again from TRIM_HORIZON: a full replay of every batch.
    replay = StreamPump(
        create_streams_client(),
        tables["events_stream"],
        lambda p: client.lambda_.invoke("handle_events_stream", p).payload,
    )
    replay.drain()
    _, view = api.call("GET", "/v1/memory", "alice")
    assert sorted(p["text"] for p in view["proposals"]) == ["likes chess", "likes hiking"]
    from chalicelib.bootstrap import get_stores

    assert get_stores().sessions.get("s").proposals == 2
    assert get_stores().entries.get_state("alice").waiting == 2


def test_a_poison_record_fails_alone_with_its_sequence_number(api: Any, agents: Any, client: Any, tables: Any) -> None:
    from local.stream_pump import StreamPump, create_streams_client

    api.turn_on("alice")
    agents.register("s", "alice")
    agents.propose("s", {"id": "e1", "text": "likes rain"}, pump=False)
    records: list[dict[str, Any]] = []
    StreamPump(create_streams_client(), tables["events_stream"], lambda p: records.extend(p["Records"]) or None).drain()
    poison = {
        **records[0],
        "dynamodb": {**records[0]["dynamodb"], "NewImage": {"session_id": {"S": "s"}, "type": {"S": "memory.propose"}}},
    }
    poison["dynamodb"]["SequenceNumber"] = "999"
    result = client.lambda_.invoke("handle_events_stream", {"Records": [poison, records[0]]}).payload
    assert result == {"batchItemFailures": [{"itemIdentifier": "999"}]}
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [p["text"] for p in view["proposals"]] == ["likes rain"]


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/v1/sessions/s", HOST_ARN),
        ("POST", "/v1/sessions/s/untrusted", HOST_ARN),
        ("GET", "/v1/sessions/s/memory", HOST_ARN),
        ("POST", "/v1/sessions/s/events", WORKER_ARN),
        ("GET", "/v1/sessions/s/events", WORKER_ARN),
    ],
)
def test_iam_routes_deny_every_other_caller(client: Any, api: Any, method: str, path: str, allowed: str) -> None:
    body = {"user_id": "alice", "thread_id": None, "agent": "a", "manifest": {"memory": True}}
    if path.endswith("/events"):
        body = {"events": [{"id": "e", "type": "memory.propose", "text": "t", "kind": "note"}]}
    others = [HOST_ARN, WORKER_ARN, OPERATOR_ARN, "arn:aws:iam::999999999999:role/stranger", None]
    for arn in others:
        if arn == allowed:
            continue
        status, answer = iam_call(client, method, path, arn, body)
        assert (status, answer["code"]) == (403, "forbidden"), arn
    status, answer = iam_call(client, method, path, None, body, headers=api.headers("alice"))
    assert status == 403


def test_assumed_role_sessions_count_as_their_role(agents: Any, client: Any) -> None:
    assumed = "arn:aws:sts::111122223333:assumed-role/memory-host/runner-17"
    body = {"user_id": "alice", "thread_id": None, "agent": "a", "manifest": {"memory": True}}
    assert iam_call(client, "PUT", "/v1/sessions/s", assumed, body)[0] == 200


def test_sessions_expire_a_month_after_registration(agents: Any, clock: Any) -> None:
    from chalicelib.bootstrap import get_stores

    agents.register("s", "alice")
    raw = get_stores().client.get_item(TableName=get_stores().sessions.table, Key={"session_id": {"S": "s"}})["Item"]
    expected = int(clock().timestamp()) + 30 * 86_400
    assert abs(int(raw["ttl"]["N"]) - expected) < 60
