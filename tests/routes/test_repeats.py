"""Repeats (issue 37 #8): the waiting places an agent's repeats of kept notes hold, listed by GET /v1/memory and
/v1/inbox without text, and freed by a reject on their id exactly as a rejected proposal frees its place."""

from __future__ import annotations

from typing import Any

KEPT, REPEAT = "Has a cat named Tom", "has a CAT named tom."


def _repeated(api: Any, agents: Any, user: str, session: str) -> str:
    """`user` keeps KEPT; the agent `spy` repeats it once and proposes one new text: the repeat's id."""
    api.turn_on(user)
    api.add(user, KEPT)
    agents.register(session, user, agent="spy")
    agents.propose(session, {"id": "dup", "text": REPEAT}, {"id": "new", "text": f"Something new for {user}"})
    return str(agents.outcomes(session)["dup"]["proposal_id"])


def _stored_waiting(stores: Any, user: str) -> int:
    """The state item's `waiting`, read back from the table (not through the app's reader)."""
    item = stores.client.get_item(
        TableName=stores.entries.table, Key={"user_id": {"S": user}, "sk": {"S": "#state"}}, ConsistentRead=True
    )["Item"]
    return int(item["waiting"]["N"])


def _slot_stored(stores: Any, user: str, slot_id: str) -> bool:
    key = {"user_id": {"S": user}, "sk": {"S": "p#" + slot_id}}
    return "Item" in stores.client.get_item(TableName=stores.proposals.table, Key=key, ConsistentRead=True)


def test_a_repeat_is_listed_without_text_and_its_reject_frees_its_waiting_place(
    api: Any, agents: Any, stores: Any
) -> None:
    slot_id = _repeated(api, agents, "alice", "s-alice")
    assert _stored_waiting(stores, "alice") == 2
    status, view, etag = api.tagged_get("/v1/memory", "alice")
    assert status == 200 and [p["text"] for p in view["proposals"]] == ["Something new for alice"]
    (repeat,) = view["repeats"]
    assert (repeat["id"], repeat["agent"], repeat["session_id"]) == (slot_id, "spy", "s-alice")
    assert set(repeat) == {"id", "agent", "session_id", "created_at"}
    assert api.call("GET", "/v1/inbox", "alice")[1]["repeats"] == [repeat]
    assert api.call("POST", f"/v1/memory/{slot_id}/accept", "alice")[0] == 404  # nothing to accept: no text
    assert api.call("POST", f"/v1/memory/{slot_id}/reject", "alice")[0] == 204
    assert _stored_waiting(stores, "alice") == 1 and not _slot_stored(stores, "alice", slot_id)
    status, after, new_tag = api.tagged_get("/v1/memory", "alice", etag)
    assert status == 200 and new_tag != etag and after["repeats"] == [] and len(after["proposals"]) == 1
    assert api.call("POST", f"/v1/memory/{slot_id}/reject", "alice")[0] == 404  # once only: no second release
    assert _stored_waiting(stores, "alice") == 1


def test_another_users_repeat_is_a_404_like_a_missing_id_and_stays(api: Any, agents: Any, stores: Any) -> None:
    slot_id = _repeated(api, agents, "alice", "s-alice")
    api.turn_on("mallory")
    theirs = api.call("POST", f"/v1/memory/{slot_id}/reject", "mallory")
    missing = api.call("POST", f"/v1/memory/{'0' * 32}/reject", "mallory")
    assert theirs == missing and theirs[0] == 404
    assert _slot_stored(stores, "alice", slot_id) and _stored_waiting(stores, "alice") == 2
    assert api.call("GET", "/v1/memory", "mallory")[1]["repeats"] == []
    assert [r["id"] for r in api.call("GET", "/v1/memory", "alice")[1]["repeats"]] == [slot_id]


def test_an_altered_slot_item_shows_nothing_and_never_fails_the_view(api: Any, agents: Any, stores: Any) -> None:
    slot_id = _repeated(api, agents, "alice", "s-alice")
    key = {"user_id": {"S": "alice"}, "sk": {"S": "p#" + slot_id}}
    stores.client.update_item(
        TableName=stores.proposals.table,
        Key=key,
        UpdateExpression="SET created_at = :n",
        ExpressionAttributeValues={":n": {"N": "1"}},
    )
    status, view = api.call("GET", "/v1/memory", "alice")
    assert status == 200 and view["repeats"] == [] and len(view["proposals"]) == 1
