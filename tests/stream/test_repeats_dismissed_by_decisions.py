"""Deciding an agent's last waiting suggestion dismisses its repeats (issue 37 #8, services/repeats.py): by agent,
or by conversation when the agent still has suggestions waiting elsewhere; what is stored and counted, not only
what is shown."""

from __future__ import annotations

from typing import Any

from tests.support.oracle import ENTRY, GUESS

OTHER_KEPT = "Walks the dog at seven"


def _person(api: Any) -> None:
    api.turn_on("alice")
    api.add("alice", ENTRY)
    api.add("alice", OTHER_KEPT)


def _view(api: Any) -> tuple[list[Any], list[Any]]:
    view = api.call("GET", "/v1/memory", "alice")[1]
    return view["proposals"], view["repeats"]


def _stored_slots(stores: Any) -> list[str]:
    return [i["sk"]["S"][2:] for i in stores.client.scan(TableName=stores.proposals.table)["Items"] if i.get("slot")]


def test_rejecting_an_agents_last_suggestion_dismisses_its_repeats_freeing_their_places(
    api: Any, agents: Any, stores: Any
) -> None:
    _person(api)
    agents.register("s-1", "alice", agent="spy")
    agents.propose("s-1", {"id": "g", "text": GUESS}, {"id": "n", "text": "Likes green tea"})
    agents.register("s-2", "alice", agent="spy")
    agents.propose("s-2", {"id": "g", "text": OTHER_KEPT.upper()})
    agents.register("s-3", "alice", agent="helper")
    agents.propose("s-3", {"id": "g", "text": OTHER_KEPT + "."})  # another agent's repeat stays
    proposals, repeats = _view(api)
    assert len(proposals) == 1 and sorted(r["agent"] for r in repeats) == ["helper", "spy", "spy"]
    assert stores.entries.get_state("alice").waiting == 4
    assert api.call("POST", f"/v1/memory/{proposals[0]['id']}/reject", "alice")[0] == 204
    proposals, repeats = _view(api)
    assert proposals == [] and [r["agent"] for r in repeats] == ["helper"]
    assert _stored_slots(stores) == [repeats[0]["id"]]
    assert stores.entries.get_state("alice").waiting == 1


def test_accepting_an_agents_last_suggestion_dismisses_its_repeats(api: Any, agents: Any, stores: Any) -> None:
    _person(api)
    agents.register("s-1", "alice", agent="Spy")
    agents.propose("s-1", {"id": "n", "text": "Likes green tea"})
    agents.register("s-2", "alice", agent="spy")  # the same agent to the person (folded names)
    agents.propose("s-2", {"id": "g", "text": GUESS})
    proposals, repeats = _view(api)
    assert len(proposals) == 1 and len(repeats) == 1
    assert api.call("POST", f"/v1/memory/{proposals[0]['id']}/accept", "alice")[0] == 201
    assert _view(api) == ([], [])
    assert _stored_slots(stores) == [] and stores.entries.get_state("alice").waiting == 0


def test_while_the_agent_still_has_suggestions_waiting_only_the_decided_conversations_repeats_go(
    api: Any, agents: Any, stores: Any
) -> None:
    _person(api)
    agents.register("s-1", "alice", agent="spy")
    agents.propose("s-1", {"id": "g", "text": GUESS}, {"id": "n", "text": "Likes green tea"})
    agents.register("s-2", "alice", agent="spy")
    agents.propose("s-2", {"id": "g", "text": OTHER_KEPT.upper()}, {"id": "n", "text": "Reads before bed"})
    proposals, repeats = _view(api)
    assert len(proposals) == 2 and len(repeats) == 2
    first = next(p for p in proposals if p["source"]["session_id"] == "s-1")
    assert api.call("POST", f"/v1/memory/{first['id']}/reject", "alice")[0] == 204
    proposals, repeats = _view(api)
    assert [p["source"]["session_id"] for p in proposals] == ["s-2"]
    assert [r["session_id"] for r in repeats] == ["s-2"]  # s-2's suggestion still waits: its repeat stays
    assert stores.entries.get_state("alice").waiting == 2
    # dismissing a repeat is no decision on a suggestion: s-2's suggestion stays
    assert api.call("POST", f"/v1/memory/{repeats[0]['id']}/reject", "alice")[0] == 204
    assert [p["id"] for p in _view(api)[0]] == [proposals[0]["id"]] and _view(api)[1] == []
    assert stores.entries.get_state("alice").waiting == 1
