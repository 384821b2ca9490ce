"""Accept, reject and the inbox on proposals written as the consumer writes them."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.models import MAX_ACTIVE_ENTRIES
from tests.support.proposals import add_proposal


def test_accept_makes_an_active_entry_that_keeps_its_provenance(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    proposal = add_proposal(stores, "alice", "Prefers aisle seats", tainted=True, kind="preference")
    status, entry = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")
    assert status == 201
    assert (entry["origin"], entry["tainted"], entry["kind"], entry["text"]) == (
        "agent",
        True,
        "preference",
        "Prefers aisle seats",
    )
    assert entry["source"] == {"session_id": "s-1", "thread_id": "t-1", "message_id": "m-1"}
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [e["id"] for e in view["items"]] == [entry["id"]] and view["proposals"] == []
    assert stores.entries.get_state("alice").waiting == 0


def test_accepting_or_rejecting_what_no_longer_waits_is_404(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    first = add_proposal(stores, "alice", "one")
    second = add_proposal(stores, "alice", "two")
    assert api.call("POST", f"/v1/memory/{first.id}/accept", "alice")[0] == 201
    assert api.call("POST", f"/v1/memory/{first.id}/accept", "alice")[0] == 404
    assert api.call("POST", f"/v1/memory/{first.id}/reject", "alice")[0] == 404
    assert api.call("POST", f"/v1/memory/{second.id}/reject", "alice") == (204, None)
    assert api.call("POST", f"/v1/memory/{second.id}/accept", "alice")[0] == 404
    assert api.call("GET", "/v1/inbox", "alice")[1] == {"memory_proposals": [], "repeats": []}


def test_accepting_while_off_is_memory_off_and_keeps_the_proposal(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    proposal = add_proposal(stores, "alice", "idea")
    api.call("PUT", "/v1/memory/settings", "alice", {"enabled": False})
    status, body = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")
    assert (status, body["code"]) == (409, "memory_off")
    assert [p["id"] for p in api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]] == [proposal.id]


@pytest.mark.slow
def test_accepting_at_200_entries_is_limit_reached(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    for n in range(MAX_ACTIVE_ENTRIES):
        api.add("alice", f"entry {n}")
    proposal = add_proposal(stores, "alice", "one too many")
    status, body = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")
    assert (status, body["code"]) == (409, "limit_reached")
    assert stores.entries.get_state("alice").waiting == 1


def test_accepting_a_proposal_rejected_in_between_is_404_and_stores_nothing(api: Any, stores: Any) -> None:
    """Accept and reject of one proposal at once (two tabs): the reject lands between the accept's read and its
    transaction, deleting the proposal and its text key. The accept is 404, as if it came second; never a 503
    after re-sealing for a key that can never come back (the HTTP race burst answered 503 this way)."""
    from chalicelib.services.memory import reject

    api.turn_on("alice")
    proposal = add_proposal(stores, "alice", "Prefers aisle seats")
    keyring = stores.keyring
    guard = keyring.guard
    rejected: list[int] = []

    def reject_first(actions: Any, **options: Any) -> Any:
        if not rejected:
            reject(stores, "alice", proposal.id)  # the other tab's reject commits first
        rejected.append(1)
        return guard(actions, **options)

    keyring.guard = reject_first
    status, body = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")
    keyring.guard = guard
    assert (status, body["code"]) == (404, "not_found"), body
    assert rejected == [1]  # one attempt: nothing was sealed again
    assert stores.entries.stored("alice")[1] == [] and stores.entries.get_state("alice").active == 0
    assert api.call("GET", "/v1/inbox", "alice")[1] == {"memory_proposals": [], "repeats": []}
