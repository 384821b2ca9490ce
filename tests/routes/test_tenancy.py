"""Another user's id is a 404 identical to a missing id, on every id-bearing route; `?user_id=` is ignored."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.proposals import add_proposal

ID_ROUTES = [
    ("PATCH", "/v1/memory/{id}", {"pinned": True}),
    ("DELETE", "/v1/memory/{id}", None),
    ("POST", "/v1/memory/{id}/accept", None),
    ("POST", "/v1/memory/{id}/reject", None),
]


@pytest.fixture
def alices(api: Any, stores: Any) -> dict[str, str]:
    api.turn_on("alice")
    api.turn_on("bob")
    entry = api.add("alice", "alice's entry")
    proposal = add_proposal(stores, "alice", "alice's proposal")
    return {"entry": entry["id"], "proposal": proposal.id}


@pytest.mark.parametrize(("method", "path", "body"), ID_ROUTES)
@pytest.mark.parametrize("kind", ["entry", "proposal"])
def test_another_users_id_is_404_identical_to_a_missing_id(
    api: Any, alices: dict[str, str], method: str, path: str, body: Any, kind: str
) -> None:
    foreign = api.call(method, path.format(id=alices[kind]), "bob", body)
    missing = api.call(method, path.format(id="0" * 32), "bob", body)
    assert foreign == missing and foreign[0] == 404


def test_nothing_changed_after_the_refusals(api: Any, alices: dict[str, str]) -> None:
    for method, path, body in ID_ROUTES:
        for item in alices.values():
            api.call(method, path.format(id=item), "bob", body)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [e["id"] for e in view["items"]] == [alices["entry"]] and view["items"][0]["pinned"] is False
    assert [p["id"] for p in view["proposals"]] == [alices["proposal"]]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v1/memory?user_id=alice", None),
        ("GET", "/v1/inbox?user_id=alice", None),
        ("GET", "/v1/memory/journal?user_id=alice", None),
        ("GET", "/v1/memory/export?user_id=alice", None),
        ("DELETE", "/v1/memory?user_id=alice", None),
        ("PUT", "/v1/memory/settings?user_id=alice", {"enabled": False}),
        ("POST", "/v1/memory?user_id=alice", {"text": "bob writes"}),
    ],
)
def test_user_id_query_is_ignored_for_user_tokens(
    api: Any, alices: dict[str, str], method: str, path: str, body: Any
) -> None:
    status, answer = api.call(method, path, "bob", body)
    assert status in (200, 201)
    assert "alice's" not in repr(answer)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["enabled"] is True and [e["id"] for e in view["items"]] == [alices["entry"]]
