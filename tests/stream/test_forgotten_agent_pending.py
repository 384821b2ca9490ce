"""An agent's events still pending when the person forgets that agent's writes never become suggestions later
(issue 37 #12): the stream's next delivery or an operator's redrive settles them refused `agent_forgotten`."""

from __future__ import annotations

from typing import Any

from chalicelib.services.consumer import redrive


def _earlier_suggestion(api: Any, agents: Any) -> None:
    """The agent had a suggestion through before (what gives the person something of it to forget)."""
    agents.register("s-0", "alice")
    agents.propose("s-0", {"id": "e0", "text": "Likes maps"})
    assert agents.outcomes("s-0")["e0"]["type"] == "memory.proposed"


def _pending(api: Any, agents: Any, session: str, text: str) -> None:
    agents.propose(session, {"id": "e1", "text": text}, pump=False)  # posted, not yet handled
    assert agents.events(session)[0]["status"] == "pending"


def _refused_forgotten(agents: Any, stores: Any, session: str) -> None:
    assert agents.outcomes(session) == {"e1": {"type": "memory.proposal_refused", "reason": "agent_forgotten"}}
    refused = [r.public() for r in stores.journal.all("alice") if r.action == "keep.memory.proposal_refused"]
    assert [(r["reason"], r["session_id"]) for r in refused] == [("agent_forgotten", session)]


def test_an_event_pending_when_its_agent_is_forgotten_is_refused_when_the_stream_delivers_it(
    api: Any, agents: Any, stores: Any, clock: Any
) -> None:
    api.turn_on("alice")
    _earlier_suggestion(api, agents)
    agents.register("s-1", "alice")
    _pending(api, agents, "s-1", "Likes sailing")
    assert api.call("POST", "/v1/agents/helper/forget", "alice", {}) == (200, {"deleted": 1})
    agents.stream.drain()
    _refused_forgotten(agents, stores, "s-1")
    assert stores.proposals.list("alice") == [] and stores.entries.get_state("alice").waiting == 0
    clock.advance(seconds=2)  # what the agent suggests after the forget is a suggestion again
    agents.propose("s-1", {"id": "e2", "text": "Likes rowing"})
    assert agents.outcomes("s-1")["e2"]["type"] == "memory.proposed"


def test_a_redrive_after_the_forget_refuses_the_pending_event(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    _earlier_suggestion(api, agents)
    agents.register("s-1", "alice")
    _pending(api, agents, "s-1", "Likes sailing")
    assert api.call("POST", "/v1/agents/helper/forget", "alice", {}) == (200, {"deleted": 1})
    assert redrive(stores, [{"session_id": "s-1", "event_id": "e1"}])["batchItemFailures"] == []
    _refused_forgotten(agents, stores, "s-1")
    assert stores.proposals.list("alice") == []
    agents.stream.drain()  # the stream's own delivery afterwards changes nothing
    assert stores.proposals.list("alice") == []


def test_forgetting_one_session_refuses_only_that_sessions_pending_events(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    agents.register("s-1", "alice")
    agents.register("s-2", "alice")
    _pending(api, agents, "s-1", "Likes sailing")
    _pending(api, agents, "s-2", "Likes hiking")
    assert api.call("POST", "/v1/agents/helper/forget", "alice", {"session_id": "s-1"})[0] == 200
    agents.stream.drain()
    _refused_forgotten(agents, stores, "s-1")
    assert agents.outcomes("s-2")["e1"]["type"] == "memory.proposed"
    assert [p.text for p in stores.proposals.list("alice")] == ["Likes hiking"]


def test_another_persons_forget_naming_a_session_marks_nothing(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.turn_on("bob")
    agents.register("s-1", "alice")
    _pending(api, agents, "s-1", "Likes sailing")
    assert api.call("POST", "/v1/agents/helper/forget", "bob", {"session_id": "s-1"})[0] == 200
    agents.stream.drain()
    assert agents.outcomes("s-1")["e1"]["type"] == "memory.proposed"
