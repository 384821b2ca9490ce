"""`waiting` never goes below zero (issue 37 #8): a reject releases a waiting place only while one is counted.

The counter can be lower than what is stored (an item put back from a backup was never counted; an altered state
item); a reject then deletes the item uncounted, by a conditional write, never a read of the counter first."""

from __future__ import annotations

from typing import Any


def _set_waiting(stores: Any, user: str, value: int) -> None:
    stores.client.update_item(
        TableName=stores.entries.table,
        Key={"user_id": {"S": user}, "sk": {"S": "#state"}},
        UpdateExpression="SET waiting = :w",
        ExpressionAttributeValues={":w": {"N": str(value)}},
    )


def test_a_reject_at_a_waiting_count_of_zero_deletes_the_proposal_and_leaves_the_count_at_zero(
    api: Any, agents: Any, stores: Any
) -> None:
    api.turn_on("alice")
    agents.register("s-1", "alice", agent="helper")
    agents.propose("s-1", {"id": "e1", "text": "Likes green tea"}, {"id": "e2", "text": "Has a cat"})
    waiting = api.call("GET", "/v1/memory", "alice")[1]["proposals"]
    assert len(waiting) == 2 == stores.entries.get_state("alice").waiting
    _set_waiting(stores, "alice", 1)  # one of them was never counted
    _, _, before = api.tagged_get("/v1/memory", "alice")
    for proposal in waiting:
        assert api.call("POST", f"/v1/memory/{proposal['id']}/reject", "alice")[0] == 204
    assert stores.entries.get_state("alice").waiting == 0
    assert stores.proposals.list("alice") == []
    status, view, after = api.tagged_get("/v1/memory", "alice", before)
    assert status == 200 and after != before and view["proposals"] == []  # the uncounted reject still moves the tag


def test_an_accept_at_a_waiting_count_of_zero_keeps_the_entry_and_leaves_the_count_at_zero(
    api: Any, agents: Any, stores: Any
) -> None:
    """The accept's `waiting - 1` has the reject's floor: a condition in its own write, never a read first."""
    api.turn_on("alice")
    agents.register("s-1", "alice", agent="helper")
    agents.propose("s-1", {"id": "e1", "text": "Likes green tea"}, {"id": "e2", "text": "Has a cat"})
    waiting = api.call("GET", "/v1/memory", "alice")[1]["proposals"]
    _set_waiting(stores, "alice", 1)  # one of them was never counted
    for proposal in waiting:
        status, body = api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")
        assert status == 201, body
    state = stores.entries.get_state("alice")
    assert (state.waiting, state.active) == (0, 2)
    assert stores.proposals.list("alice") == []
    assert sorted(e["text"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]) == [
        "Has a cat",
        "Likes green tea",
    ]
