"""The user's own journal (paginated, never text) and the export of everything held about them."""

from __future__ import annotations

from typing import Any

from tests.support.iam import iam_call
from tests.support.stack import OPERATOR_ARN


def test_journal_shows_who_used_memory_newest_first_without_text(
    api: Any, agents: Any, client: Any, clock: Any
) -> None:
    api.turn_on("alice")
    api.add("alice", "Alice hums when thinking")
    clock.advance(seconds=1)
    agents.register("s", "alice")
    agents.items("s")
    clock.advance(seconds=1)
    iam_call(client, "GET", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)
    clock.advance(seconds=1)
    agents.propose("s", {"id": "e1", "text": "   "})
    status, body = api.call("GET", "/v1/memory/journal", "alice")
    assert status == 200
    actions = [row["action"] for row in body["items"]]
    assert actions == [
        "keep.memory.proposal_refused",
        "keep.memory.operator_access",
        "keep.memory.context",
        "keep.memory.key_created",
        "keep.memory.settings",
    ]  # the first stored text made alice's key
    assert body["items"][0]["reason"] == "empty" and body["items"][2]["count"] == 1
    assert "hums" not in repr(body)


def test_journal_pages_with_an_opaque_cursor(api: Any, clock: Any) -> None:
    for n in range(5):
        api.call("PUT", "/v1/memory/settings", "alice", {"enabled": n % 2 == 0})
        clock.advance(seconds=1)
    seen: list[str] = []
    cursor = None
    while True:
        path = "/v1/memory/journal?limit=2" + (f"&cursor={cursor}" if cursor else "")
        status, body = api.call("GET", path, "alice")
        assert status == 200 and len(body["items"]) <= 2
        seen += [row["at"] for row in body["items"]]
        cursor = body["next_cursor"]
        if not cursor:
            break
    assert len(seen) == 5 and seen == sorted(seen, reverse=True)


def test_journal_is_only_the_users_own(api: Any) -> None:
    api.turn_on("alice")
    status, body = api.call("GET", "/v1/memory/journal", "bob")
    assert (status, body["items"]) == (200, [])
    assert api.call("GET", "/v1/memory/journal?limit=0", "bob")[0] == 400


def test_export_holds_everything_and_after_forget_all_only_the_journal(api: Any, stores: Any) -> None:
    from tests.support.proposals import add_proposal

    api.turn_on("alice")
    entry = api.add("alice", "Alice's export test note", pinned=True)
    add_proposal(stores, "alice", "a waiting idea")
    status, doc = api.call("GET", "/v1/memory/export", "alice")
    assert status == 200 and doc["schema_version"] == 2 and doc["settings"] == {"enabled": True}
    assert doc["entries"] == [entry] and doc["proposals"][0]["text"] == "a waiting idea"
    assert [r["action"] for r in doc["journal"]] == ["keep.memory.key_created", "keep.memory.settings"]
    api.call("DELETE", "/v1/memory", "alice")
    _, doc = api.call("GET", "/v1/memory/export", "alice")
    assert doc["entries"] == [] and doc["proposals"] == [] and doc["expired_entries_awaiting_deletion"] == []
    assert [r["action"] for r in doc["journal"]] == [
        "keep.memory.key_destroyed",
        "keep.memory.forget_all",
        "keep.memory.key_created",
        "keep.memory.settings",
    ]
    assert "export test" not in repr(doc) and "waiting idea" not in repr(doc)
    assert api.call("GET", "/v1/memory/export", "bob")[1]["entries"] == []
