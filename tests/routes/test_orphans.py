"""What an interrupted forget-all leaves behind (items no key opens) never locks a user out of a cap.

Forget-all destroys the user's key first; if AWS then refuses every deletion, the items stay stored
and counted but can never open. A write refused at a cap recounts, and the recount deletes exactly
those orphans — never an item sealed under the user's current key (chalicelib/services/recount.py).
Each test reads the stored items, counters and journal back.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from local.faults import FaultInjector
from tests.support.invariants import assert_counters_match
from tests.support.proposals import add_proposal


def _interrupted_forget_all(api: Any, faults: FaultInjector, user: str) -> None:
    """The key's destruction goes through; every deletion after it is refused, retries and all."""
    faults.add(error="InternalServerError", operation="TransactWriteItems", after=1)
    response = api.client.http.delete("/v1/memory", headers=api.headers(user))
    body = json.loads(response.body)
    assert response.status_code == 503 and body["deleted"] == 0, body
    faults.clear()


def _actions(stores: Any, user: str) -> list[str]:
    return [r.action for r in stores.journal.all(user)]


@pytest.mark.slow
def test_at_the_entry_cap_orphans_make_room_and_entries_under_the_new_key_stay(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    api.turn_on("alice")
    for n in range(150):
        api.add("alice", f"old note {n}")
    _interrupted_forget_all(api, faults, "alice")
    kept = [api.add("alice", f"new note {n}")["id"] for n in range(50)]  # under her new key: 200 counted
    assert assert_counters_match(stores, "alice")["active"] == 200
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "one more"})
    assert status == 201, body  # refused at the cap, recounted: the 150 orphans went, room was made
    counts = assert_counters_match(stores, "alice")
    assert counts == {"active": 51, "entries": 51, "waiting": 0, "proposals": 0}
    _, entries = stores.entries.load("alice")
    assert sorted(e.id for e in entries) == sorted([*kept, body["id"]])  # every stored entry opens
    assert sorted(e.text for e in entries) == sorted([*(f"new note {n}" for n in range(50)), "one more"])
    actions = _actions(stores, "alice")
    assert "keep.memory.forget_all" not in actions  # the purge journals nothing beyond the key's destruction
    assert actions.count("keep.memory.key_destroyed") == 1 and actions.count("keep.memory.key_created") == 2


@pytest.mark.slow
def test_at_the_entry_cap_with_no_orphan_nothing_is_deleted(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    ids = sorted(api.add("alice", f"note {n}")["id"] for n in range(200))
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "one too many"})
    assert (status, body["code"]) == (409, "limit_reached")
    assert assert_counters_match(stores, "alice")["entries"] == 200
    assert sorted(e.id for e in stores.entries.load("alice")[1]) == ids


def test_at_the_waiting_cap_orphaned_proposals_make_room_for_an_agents_proposal(
    api: Any, agents: Any, stores: Any, faults: FaultInjector
) -> None:
    api.turn_on("alice")
    for n in range(50):
        add_proposal(stores, "alice", f"old idea {n}")
    _interrupted_forget_all(api, faults, "alice")
    assert assert_counters_match(stores, "alice")["waiting"] == 50
    agents.register("s", "alice")
    agents.propose("s", {"id": "e1", "text": "a new idea"})
    assert agents.outcomes("s")["e1"]["type"] == "memory.proposed"
    counts = assert_counters_match(stores, "alice")
    assert counts["waiting"] == 1 and counts["proposals"] == 1
    assert [p.text for p in stores.proposals.list("alice")] == ["a new idea"]
    _, inbox = api.call("GET", "/v1/inbox", "alice")
    assert [p["text"] for p in inbox["memory_proposals"]] == ["a new idea"]


def test_at_the_waiting_cap_with_no_orphan_the_proposal_is_refused_and_nothing_deleted(
    api: Any, agents: Any, stores: Any
) -> None:
    api.turn_on("alice")
    ids = sorted(add_proposal(stores, "alice", f"idea {n}").id for n in range(50))
    agents.register("s", "alice")
    agents.propose("s", {"id": "e1", "text": "one more"})
    assert agents.outcomes("s")["e1"] == {"type": "memory.proposal_refused", "reason": "waiting_cap"}
    assert assert_counters_match(stores, "alice")["proposals"] == 50
    assert sorted(p.id for p in stores.proposals.list("alice")) == ids
