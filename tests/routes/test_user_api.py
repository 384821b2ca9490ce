"""The user's memory API through the real Chalice router against moto: shapes, order, rules, errors."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.models import MAX_ACTIVE_ENTRIES


def test_memory_is_off_until_the_user_turns_it_on(api: Any) -> None:
    status, body = api.call("GET", "/v1/memory", "alice")
    assert status == 200
    assert body["enabled"] is False and body["items"] == [] and body["proposals"] == []
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "prefers tea"})
    assert status == 409 and body["code"] == "memory_off"


def test_added_entry_has_the_contract_shape(api: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "  prefers window seats  ", kind="preference", pinned=True, expires_in_days=30)
    assert set(entry) == {
        "id",
        "text",
        "kind",
        "pinned",
        "tainted",
        "origin",
        "source",
        "created_at",
        "updated_at",
        "expires_at",
        "agent",
        "edited",
    }
    assert (entry["agent"], entry["edited"]) == (None, False)
    assert entry["text"] == "prefers window seats"
    assert (entry["kind"], entry["pinned"], entry["tainted"], entry["origin"]) == ("preference", True, False, "user")
    assert entry["source"] == {} and entry["expires_at"].endswith("Z")
    assert api.add("alice", "likes jazz")["kind"] == "note"


def test_entries_come_pinned_first_then_newest(api: Any, clock: Any) -> None:
    api.turn_on("alice")
    first = api.add("alice", "one")
    clock.advance(seconds=1)
    pinned_old = api.add("alice", "two", pinned=True)
    clock.advance(seconds=1)
    newest = api.add("alice", "three")
    _, body = api.call("GET", "/v1/memory", "alice")
    assert [e["id"] for e in body["items"]] == [pinned_old["id"], newest["id"], first["id"]]


def test_turning_memory_off_keeps_entries_and_blocks_adding(api: Any) -> None:
    api.turn_on("alice")
    kept = api.add("alice", "kept while off")
    status, body = api.call("PUT", "/v1/memory/settings", "alice", {"enabled": False})
    assert (status, body) == (200, {"enabled": False})
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["enabled"] is False and [e["id"] for e in view["items"]] == [kept["id"]]
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "new"})
    assert status == 409 and body["code"] == "memory_off"


def test_patch_changes_text_pin_and_expiry(api: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "old text", expires_in_days=5)
    status, body = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"text": "new text", "pinned": True})
    assert status == 200 and body["text"] == "new text" and body["pinned"] is True
    assert body["expires_at"] == entry["expires_at"]
    status, body = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"expires_in_days": None})
    assert status == 200 and body["expires_at"] is None and body["text"] == "new text"


def test_expired_entries_are_never_returned_or_editable(api: Any, clock: Any) -> None:
    api.turn_on("alice")
    short = api.add("alice", "short-lived", expires_in_days=1)
    api.add("alice", "stays")
    clock.advance(days=1, seconds=1)
    _, body = api.call("GET", "/v1/memory", "alice")
    assert [e["text"] for e in body["items"]] == ["stays"]
    status, _ = api.call("PATCH", f"/v1/memory/{short['id']}", "alice", {"pinned": True})
    assert status == 404


def test_delete_one_forgets_it(api: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "forget me")
    status, body = api.call("DELETE", f"/v1/memory/{entry['id']}", "alice")
    assert status == 204 and body is None
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["items"] == []
    status, body = api.call("DELETE", f"/v1/memory/{entry['id']}", "alice")
    assert status == 404 and body["code"] == "not_found"


def test_forget_all_removes_entries_and_proposals_keeps_switch_and_journals_counts(api: Any, stores: Any) -> None:
    from tests.support.proposals import add_proposal

    api.turn_on("alice")
    api.add("alice", "secret-ish note one")
    api.add("alice", "note two")
    add_proposal(stores, "alice", "an agent's idea")
    status, body = api.call("DELETE", "/v1/memory", "alice")
    assert (status, body) == (200, {"deleted": 3})
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view == {**view, "enabled": True, "items": [], "proposals": []}
    rows = [r.public() for r in stores.journal.all("alice")]
    forget_rows = [r for r in rows if r["action"] == "keep.memory.forget_all"]
    assert forget_rows and forget_rows[0]["entries"] == 2 and forget_rows[0]["proposals"] == 1
    assert "note" not in repr(rows) and "idea" not in repr(rows)
    assert stores.entries.get_state("alice").active == 0 and stores.entries.get_state("alice").waiting == 0


def test_settings_changes_are_journaled(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.call("PUT", "/v1/memory/settings", "alice", {"enabled": False})
    actions = [(r.action, r.details.get("enabled")) for r in stores.journal.all("alice")]
    assert actions == [("keep.memory.settings", False), ("keep.memory.settings", True)]


@pytest.mark.slow
def test_the_entry_cap_is_200_and_expired_entries_do_not_count(api: Any, stores: Any, clock: Any) -> None:
    api.turn_on("alice")
    for n in range(MAX_ACTIVE_ENTRIES - 1):
        api.add("alice", f"note {n}")
    api.add("alice", "expires soon", expires_in_days=1)
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "one too many"})
    assert status == 409 and body["code"] == "limit_reached" and "one too many" not in body["message"]
    clock.advance(days=2)
    status, _ = api.call("POST", "/v1/memory", "alice", {"text": "room after expiry"})
    assert status == 201
    assert stores.entries.get_state("alice").active == MAX_ACTIVE_ENTRIES
