"""Agent-path promises no other test pinned down, found by `make mutate` (see scripts/mutate.py).

Each test drives the real routes and moto's real stream: a session without a user never reads anyone's
memory, a session's taint and proposal count survive an identical re-registration, and entries past
their expiry never reach an agent even while DynamoDB's TTL has not removed them yet.
"""

from __future__ import annotations

from typing import Any


def _context_rows(stores: Any, user_id: str) -> list[Any]:
    return [r for r in stores.journal.all(user_id) if r.action == "keep.memory.context"]


def test_a_session_without_a_user_gets_nothing_whatever_its_other_ids_name(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "alice's private preference")
    status, _ = agents.register("alice", None, memory=True, thread_id="alice", agent="alice")
    assert status == 200
    assert agents.items("alice") == []
    assert _context_rows(stores, "alice") == []


def test_re_registering_a_tainted_session_keeps_its_proposals_tainted(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    assert agents.untrusted("s")[1]["tainted"] is True
    assert agents.register("s", "alice")[0] == 200  # the identical PUT again: allowed, changes nothing
    agents.propose("s", {"id": "e1", "text": "Maybe likes cats"})
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [p["tainted"] for p in view["proposals"]] == [True]


def test_re_registering_a_session_does_not_reset_its_proposal_cap(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    agents.propose("s", *[{"id": f"e{n}", "text": f"fact number {n}"} for n in range(5)])
    assert agents.register("s", "alice")[0] == 200
    agents.propose("s", {"id": "e5", "text": "fact number 5"})
    assert agents.outcomes("s")["e5"] == {"type": "memory.proposal_refused", "reason": "session_cap"}
    _, view = api.call("GET", "/v1/memory", "alice")
    assert len(view["proposals"]) == 5


def test_expired_entries_are_never_given_to_agents(api: Any, agents: Any, stores: Any, clock: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "short-lived note", expires_in_days=1, pinned=True)
    api.add("alice", "stays")
    clock.advance(days=1, seconds=1)  # past the expiry; moto, like DynamoDB's TTL, has not deleted it
    agents.register("s", "alice")
    assert [item["text"] for item in agents.items("s")] == ["stays"]
    assert [row.details["count"] for row in _context_rows(stores, "alice")] == [1]
