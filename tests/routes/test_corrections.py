"""Correcting a proposal while accepting it, changing an entry's kind, and the agent's name on proposals."""

from __future__ import annotations

from typing import Any

from tests.support.proposals import add_proposal

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n-----END RSA PRIVATE KEY-----"


def _stored_entries(stores: Any, user: str) -> list[Any]:
    return stores.entries.load(user)[1]


def test_a_proposal_names_the_agent_of_its_session_and_the_entry_keeps_it(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    agents.register("s-9", "alice", agent="memory-agent", thread_id="t-web2")
    agents.propose("s-9", {"id": "e1", "text": "Likes maps", "message_id": "m-9"})
    (proposal,) = api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]
    assert (proposal["agent"], proposal["edited"]) == ("memory-agent", False)
    status, entry = api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")
    assert status == 201 and (entry["agent"], entry["origin"], entry["edited"]) == ("memory-agent", "agent", False)


def test_accept_with_corrections_keeps_origin_source_and_taint_and_records_the_edit(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    proposal = add_proposal(stores, "alice", "Likes jaz", tainted=True, kind="note")
    body = {"text": "  Likes jazz  ", "kind": "preference", "pinned": True, "expires_in_days": 10}
    status, entry = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice", body)
    assert status == 201
    assert (entry["text"], entry["kind"], entry["pinned"], entry["edited"]) == ("Likes jazz", "preference", True, True)
    assert (entry["origin"], entry["tainted"]) == ("agent", True)
    assert entry["source"] == {"session_id": "s-1", "thread_id": "t-1", "message_id": "m-1"}
    assert entry["expires_at"] is not None
    (stored,) = _stored_entries(stores, "alice")
    assert (stored.text, stored.kind, stored.edited, stored.tainted, stored.origin) == (
        "Likes jazz",
        "preference",
        True,
        True,
        "agent",
    )
    assert stores.entries.get_state("alice").waiting == 0 and stores.entries.get_state("alice").active == 1


def test_accept_with_an_empty_body_or_the_same_words_is_not_an_edit(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    first, second = add_proposal(stores, "alice", "one"), add_proposal(stores, "alice", "two")
    assert api.call("POST", f"/v1/memory/{first.id}/accept", "alice", {})[1]["edited"] is False
    _, entry = api.call("POST", f"/v1/memory/{second.id}/accept", "alice", {"text": "two", "pinned": True})
    assert (entry["edited"], entry["pinned"]) == (False, True)


def test_corrected_text_passes_the_same_rules_and_a_refusal_loses_nothing(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    proposal = add_proposal(stores, "alice", "Likes tea")
    path = f"/v1/memory/{proposal.id}/accept"
    for body, status, code in (
        ({"text": "   "}, 400, "invalid_request"),
        ({"text": "é" * 1001}, 400, "invalid_request"),
        ({"text": PEM}, 422, "credential_refused"),
        ({"kind": "mood"}, 400, "invalid_request"),
        ({"colour": "red"}, 400, "invalid_request"),
        ({"expires_in_days": 0}, 400, "invalid_request"),
    ):
        answer_status, answer = api.call("POST", path, "alice", body)
        assert (answer_status, answer["code"]) == (status, code)
        assert "PRIVATE KEY" not in answer["message"] and "é" not in answer["message"]
    assert api.call("POST", path, "alice", raw="{not json")[0] == 400
    assert [p["id"] for p in api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]] == [proposal.id]
    assert _stored_entries(stores, "alice") == []
    state = stores.entries.get_state("alice")
    assert (state.active, state.waiting) == (0, 1)


def test_another_users_proposal_with_corrections_is_404(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.turn_on("bob")
    proposal = add_proposal(stores, "alice", "Likes tea")
    status, body = api.call("POST", f"/v1/memory/{proposal.id}/accept", "bob", {"text": "mine now"})
    assert (status, body["code"]) == (404, "not_found")
    assert _stored_entries(stores, "bob") == [] and len(stores.proposals.list("alice")) == 1


def test_patch_changes_the_kind_and_marks_the_entry_edited(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "Walks at noon")
    status, changed = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"kind": "fact"})
    assert status == 200 and (changed["kind"], changed["edited"], changed["text"]) == ("fact", True, "Walks at noon")
    assert api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"kind": "mood"})[0] == 400
    pinned = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"kind": None, "pinned": True})[1]
    assert (pinned["kind"], pinned["pinned"]) == ("fact", True)
    (stored,) = _stored_entries(stores, "alice")
    assert (stored.kind, stored.edited, stored.pinned) == ("fact", True, True)
