"""The agents the user allows, through the real routes and moto's real stream: grants, gates, forgetting an agent."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from chalicelib.storage import dynamo
from tests.support.invariants import assert_counters_match


def _journal(stores: Any, user: str, action: str) -> list[dict[str, Any]]:
    return [r.public() for r in stores.journal.all(user) if r.action == action]


def _accepted_from(api: Any, agents: Any, user: str, session: str, texts: list[str], agent: str) -> list[str]:
    """Each text proposed by `agent` in `session` and accepted by the user: the ids of the entries."""
    agents.register(session, user, agent=agent)
    agents.propose(session, *({"id": f"{session}-{n}", "text": t} for n, t in enumerate(texts)))
    _, view = api.call("GET", "/v1/memory", user)
    ids = []
    for proposal in view["proposals"]:
        if proposal["source"].get("session_id") == session:
            status, entry = api.call("POST", f"/v1/memory/{proposal['id']}/accept", user)
            assert status == 201, entry
            ids.append(entry["id"])
    return ids


def _row(api: Any, user: str, agent: str) -> dict[str, Any]:
    status, body = api.call("GET", "/v1/agents", user)
    assert status == 200, body
    return next(r for r in body["agents"] if r["agent"] == agent)


def test_an_agent_never_set_reads_and_proposes_as_before_and_is_listed(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    assert api.call("GET", "/v1/agents", "alice") == (200, {"agents": [], "next": None})
    agents.register("s1", "alice", agent="helper")
    assert [i["text"] for i in agents.items("s1")] == ["likes green tea"]
    agents.propose("s1", {"id": "e1", "text": "Walks the dog at six"})
    assert agents.outcomes("s1")["e1"]["type"] == "memory.proposed"
    row = _row(api, "alice", "helper")
    assert row["read"] is True and row["propose"] is True
    assert row["entries"] == 0 and row["waiting"] == 1
    assert row["last_read_at"] is not None and row["last_proposal_at"] >= row["last_read_at"]


def test_blocking_read_empties_that_agents_context_only(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    agents.register("a-1", "alice", agent="chatty")
    agents.register("b-1", "alice", agent="calm")
    status, row = api.call("PUT", "/v1/agents/chatty", "alice", {"read": False})
    assert status == 200 and row["agent"] == "chatty" and row["read"] is False and row["propose"] is True
    assert agents.items("a-1") == []
    assert [i["text"] for i in agents.items("b-1")] == ["likes green tea"]
    rows = _journal(stores, "alice", "keep.memory.context")
    blocked = [r for r in rows if r["agent"] == "chatty"]
    assert [(r["count"], r.get("reason")) for r in blocked] == [(0, "agent_blocked")]
    assert [(r["count"], r.get("reason")) for r in rows if r["agent"] == "calm"] == [(1, None)]
    assert _row(api, "alice", "chatty")["last_read_at"] is None  # it read nothing
    settings = _journal(stores, "alice", "keep.memory.agent_settings")
    assert [{k: v for k, v in r.items() if k != "at"} for r in settings] == [
        {"action": "keep.memory.agent_settings", "agent": "chatty", "read": False}
    ]
    api.call("PUT", "/v1/agents/chatty", "alice", {"read": True})
    assert [i["text"] for i in agents.items("a-1")] == ["likes green tea"]


def test_blocking_propose_refuses_that_agent_with_agent_blocked(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    agents.register("a-1", "alice", agent="chatty")
    agents.register("b-1", "alice", agent="calm")
    assert api.call("PUT", "/v1/agents/chatty", "alice", {"propose": False})[0] == 200
    agents.propose("a-1", {"id": "e1", "text": "Sells my data"})
    agents.propose("b-1", {"id": "e1", "text": "Prefers tea"})
    assert agents.outcomes("a-1")["e1"] == {"type": "memory.proposal_refused", "reason": "agent_blocked"}
    assert agents.outcomes("b-1")["e1"]["type"] == "memory.proposed"
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [p["agent"] for p in view["proposals"]] == ["calm"]
    assert assert_counters_match(stores, "alice")["waiting"] == 1
    refused = _journal(stores, "alice", "keep.memory.proposal_refused")
    assert [r["reason"] for r in refused] == ["agent_blocked"]
    assert _row(api, "alice", "chatty")["last_proposal_at"] is None
    assert _row(api, "alice", "chatty")["read"] is True  # only the switch given changed


def test_memory_off_still_stops_an_allowed_agent(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    api.call("PUT", "/v1/agents/helper", "alice", {"read": True, "propose": True})
    api.call("PUT", "/v1/memory/settings", "alice", {"enabled": False})
    agents.register("s", "alice", agent="helper")
    assert agents.items("s") == []
    agents.propose("s", {"id": "e1", "text": "Prefers tea"})
    assert agents.outcomes("s")["e1"]["reason"] == "memory_off"


def test_grants_are_per_user(api: Any, agents: Any) -> None:
    for user in ("alice", "bob"):
        api.turn_on(user)
        api.add(user, f"{user} likes tea")
    api.call("PUT", "/v1/agents/helper", "alice", {"read": False})
    agents.register("sa", "alice", agent="helper")
    agents.register("sb", "bob", agent="helper")
    assert agents.items("sa") == []
    assert [i["text"] for i in agents.items("sb")] == ["bob likes tea"]
    assert [r["agent"] for r in api.call("GET", "/v1/agents", "bob")[1]["agents"]] == ["helper"]
    assert _row(api, "bob", "helper")["read"] is True


@pytest.mark.parametrize(
    "body",
    [{}, {"read": None}, {"read": None, "propose": True}, {"read": "false"}, {"read": 0}, {"read": True, "x": 1}],
)
def test_a_switch_body_needs_a_boolean_switch(api: Any, stores: Any, body: dict[str, Any]) -> None:
    status, answer = api.call("PUT", "/v1/agents/helper", "alice", body)
    assert status == 400 and answer["code"] == "invalid_request"
    assert _journal(stores, "alice", "keep.memory.agent_settings") == []
    assert api.call("GET", "/v1/agents", "alice")[1] == {"agents": [], "next": None}


@pytest.mark.parametrize("agent", ["has%20space", "a" * 129, "%C3%A9t%C3%A9"])
def test_an_agent_id_outside_the_id_rules_is_400(api: Any, agent: str) -> None:
    for method, path, body in (
        ("PUT", f"/v1/agents/{agent}", {"read": False}),
        ("POST", f"/v1/agents/{agent}/forget", {}),
    ):
        status, answer = api.call(method, path, "alice", body)
        assert status == 400 and answer["code"] == "invalid_request", (method, answer)


def test_forgetting_an_agent_removes_exactly_its_entries_and_waiting_proposals(
    api: Any, agents: Any, stores: Any
) -> None:
    api.turn_on("alice")
    own = api.add("alice", "my own note")["id"]
    bad = _accepted_from(api, agents, "alice", "bad-1", ["poison one", "poison two"], agent="chatty")
    good = _accepted_from(api, agents, "alice", "good-1", ["fine fact"], agent="calm")
    agents.propose("bad-1", {"id": "late", "text": "poison waiting"})  # waits, not accepted
    agents.register("good-2", "alice", agent="calm")
    agents.propose("good-2", {"id": "w", "text": "calm waiting"})
    assert _row(api, "alice", "chatty")["entries"] == 2 and _row(api, "alice", "chatty")["waiting"] == 1

    status, body = api.call("POST", "/v1/agents/chatty/forget", "alice")
    assert (status, body) == (200, {"deleted": 3})
    _, view = api.call("GET", "/v1/memory", "alice")
    assert {e["id"] for e in view["items"]} == {own, *good}
    assert [p["agent"] for p in view["proposals"]] == ["calm"]
    assert not set(bad) & {ref.id for ref in stores.entries.stored("alice")[1]}
    assert assert_counters_match(stores, "alice") == {"active": 2, "entries": 2, "waiting": 1, "proposals": 1}
    [row] = _journal(stores, "alice", "keep.memory.forget_agent")
    assert {k: v for k, v in row.items() if k not in ("at", "unrecoverable_by")} == {
        "action": "keep.memory.forget_agent",
        "agent": "chatty",
        "entries": 2,
        "proposals": 1,
        "unreadable": 3,  # their texts' keys, deleted first and journaled (issue 37 #12)
    }
    assert row["unrecoverable_by"] > row["at"]  # the receipt (issue 26)
    assert _row(api, "alice", "chatty")["entries"] == 0
    assert api.call("POST", "/v1/agents/chatty/forget", "alice")[1] == {"deleted": 0}  # again: nothing left


def test_forgetting_one_session_leaves_the_agents_other_sessions(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    poisoned = _accepted_from(api, agents, "alice", "s-poisoned", ["from the poisoned page"], agent="helper")
    clean = _accepted_from(api, agents, "alice", "s-clean", ["from a clean chat"], agent="helper")
    status, body = api.call("POST", "/v1/agents/helper/forget", "alice", {"session_id": "s-poisoned"})
    assert (status, body) == (200, {"deleted": 1})
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [e["id"] for e in view["items"]] == clean and poisoned[0] not in str(view)
    [row] = _journal(stores, "alice", "keep.memory.forget_agent")
    assert row["session_id"] == "s-poisoned" and row["entries"] == 1
    assert_counters_match(stores, "alice")
    # Another agent's session id never reaches this agent's writes.
    assert api.call("POST", "/v1/agents/other/forget", "alice", {"session_id": "s-clean"})[1] == {"deleted": 0}


def test_forgetting_an_agent_never_touches_another_users_entries(api: Any, agents: Any) -> None:
    for user in ("alice", "bob"):
        api.turn_on(user)
    _accepted_from(api, agents, "alice", "sa", ["alice fact"], agent="helper")
    kept = _accepted_from(api, agents, "bob", "sb", ["bob fact"], agent="helper")
    assert api.call("POST", "/v1/agents/helper/forget", "alice")[1] == {"deleted": 1}
    assert [e["id"] for e in api.call("GET", "/v1/memory", "bob")[1]["items"]] == kept


def test_the_delete_itself_refuses_the_users_own_entry_whatever_the_listing_said(
    api: Any, stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each delete's own condition checks origin and agent: a listing that was wrong cannot take the user's entry."""
    from chalicelib.services import forget_all

    api.turn_on("alice")
    own = api.add("alice", "mine")["id"]  # origin "user": no listing may take it
    monkeypatch.setattr(forget_all.Forgetting, "wants", lambda self, ref: True)  # a listing that takes everything
    assert api.call("POST", "/v1/agents/helper/forget", "alice")[1] == {"deleted": 0}
    assert [e["id"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]] == [own]
    assert_counters_match(stores, "alice")


def test_an_altered_grant_is_off_never_a_500(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes tea")
    api.call("PUT", "/v1/agents/helper", "alice", {"read": False, "propose": False})
    stores.client.update_item(
        TableName=stores.entries.table,
        Key=dynamo.dump({"user_id": "alice", "sk": "a#helper"}),
        UpdateExpression="SET #r = :x, #p = :x, last_read_at = :n",
        ExpressionAttributeNames={"#r": "read", "#p": "propose"},
        ExpressionAttributeValues=dynamo.values(x="yes", n=5),
    )
    agents.register("s", "alice", agent="helper")
    assert agents.items("s") == []
    agents.propose("s", {"id": "e1", "text": "Prefers tea"})
    assert agents.outcomes("s")["e1"]["reason"] == "agent_blocked"
    row = _row(api, "alice", "helper")
    assert (row["read"], row["propose"], row["last_read_at"]) == (False, False, None)


def test_grants_are_no_entries_and_survive_forget_all(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes tea")
    api.call("PUT", "/v1/agents/helper", "alice", {"read": False})
    _, view = api.call("GET", "/v1/memory", "alice")
    assert len(view["items"]) == 1
    assert api.call("DELETE", "/v1/memory", "alice")[1] == {"deleted": 1}
    assert assert_counters_match(stores, "alice")["entries"] == 0
    assert _row(api, "alice", "helper")["read"] is False  # the user's choice stays, like the on/off switch


def test_concurrent_forgets_of_one_agent_never_double_count(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    for s in range(3):
        _accepted_from(api, agents, "alice", f"s{s}", [f"fact {s}.{n}" for n in range(4)], agent="helper")
    answers: list[int] = []

    def forget() -> None:
        status, body = api.call("POST", "/v1/agents/helper/forget", "alice")
        assert status == 200, body
        answers.append(body["deleted"])

    threads = [threading.Thread(target=forget) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(answers) == 12
    assert sum(r["entries"] for r in _journal(stores, "alice", "keep.memory.forget_agent")) == 12
    assert assert_counters_match(stores, "alice")["entries"] == 0


def test_the_agent_routes_and_their_journal_rows_match_the_spec(api: Any, agents: Any) -> None:
    from tests.support.openapi_check import user

    api.turn_on("alice")
    api.add("alice", "likes tea")
    _accepted_from(api, agents, "alice", "s1", ["a fact"], agent="helper")
    user(api, "PUT", "/v1/agents/helper", "alice", {"read": False}, template="/v1/agents/{id}")
    agents.items("s1")  # blocked: a count-0 context row with its reason
    user(api, "PUT", "/v1/agents/helper", "alice", {"propose": False, "read": True}, template="/v1/agents/{id}")
    assert user(api, "PUT", "/v1/agents/helper", "alice", {}, template="/v1/agents/{id}")[0] == 400
    assert user(api, "GET", "/v1/agents", "alice")[1]["agents"][0]["entries"] == 1
    user(api, "POST", "/v1/agents/helper/forget", "alice", {"session_id": "s1"}, template="/v1/agents/{id}/forget")
    user(api, "POST", "/v1/agents/helper/forget", "alice", template="/v1/agents/{id}/forget")
    assert (
        user(
            api,
            "POST",
            "/v1/agents/helper/forget",
            "alice",
            {"session_id": "no way"},
            template="/v1/agents/{id}/forget",
        )[0]
        == 400
    )
    actions = {row["action"] for row in user(api, "GET", "/v1/memory/journal?limit=100", "alice")[1]["items"]}
    assert {"keep.memory.agent_settings", "keep.memory.forget_agent", "keep.memory.context"} <= actions


def test_grant_items_altered_in_storage_list_nothing_unshaped_and_never_500(api: Any, agents: Any, stores: Any) -> None:
    from tests.support.openapi_check import check

    api.turn_on("alice")
    for sk, extra in (
        ("a#", {}),
        ("a#bad agent\n", {}),
        ("a#ok", {"last_read_at": "yesterday", "last_proposal_at": 7}),
    ):
        stores.client.put_item(
            TableName=stores.entries.table, Item=dynamo.dump({"user_id": "alice", "sk": sk, **extra})
        )
    status, body = api.call("GET", "/v1/agents", "alice")
    check("GET", "/v1/agents", status, body)
    assert body == {
        "agents": [
            {
                "agent": "ok",
                "read": True,
                "propose": True,
                "entries": 0,
                "waiting": 0,
                "last_read_at": None,
                "last_proposal_at": None,
            }
        ],
        "next": None,
    }
    assert_counters_match(stores, "alice")


def test_the_export_holds_the_users_choices_per_agent(api: Any, agents: Any) -> None:
    from tests.support.openapi_check import user

    api.turn_on("alice")
    _accepted_from(api, agents, "alice", "s1", ["a fact"], agent="helper")
    api.call("PUT", "/v1/agents/quiet", "alice", {"propose": False})
    _, export = user(api, "GET", "/v1/memory/export", "alice")
    rows = {r["agent"]: r for r in export["agents"]}
    assert rows["quiet"]["propose"] is False
    assert "helper" not in rows  # never set: its entry names it (issue 37 #10: the export stays small)
    assert [e["agent"] for e in export["entries"]] == ["helper"]


@pytest.mark.parametrize("name", [".", "..", "..."])
def test_an_agent_named_only_by_dots_is_refused_at_registration_since_no_url_could_name_it(
    agents: Any, name: str
) -> None:
    status, body = agents.register("s-dots", "alice", agent=name)
    assert status == 400 and body["code"] == "invalid_request"
    assert agents.register("s-dots", "alice", agent="a.b")[0] == 200
