"""Bidirectional controls (issue 37 #15): a text holding one could show the person other words than agents are
given ("Do not share my passwords" on the page, "Do ton share..." to the agent), so no route keeps one.

Refused: the embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069). Kept: the marks (U+200E,
U+200F, U+061C), which move no word and come with right-to-left text copied from other apps.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.proposals import add_proposal

RLO, PDF = "\u202e", "\u202c"
# Shown by a browser as "Do not share my passwords"; stored (and given to agents) as "Do ton share...".
DISGUISED = f"Do {RLO}ton{PDF} share my passwords"
CONTROLS = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]


def _bidi_refusal(status: int, body: Any) -> None:
    assert (status, body["code"], body.get("field")) == (400, "invalid_request", "text")
    assert "bidirectional" in body["message"] and "share" not in body["message"]  # names the class, never the text


@pytest.mark.parametrize("control", CONTROLS)
def test_post_of_a_text_holding_a_bidi_control_is_400_and_stores_nothing(api: Any, stores: Any, control: str) -> None:
    api.turn_on("alice")
    status, body = api.call("POST", "/v1/memory", "alice", {"text": f"Do {control}ton share my passwords"})
    _bidi_refusal(status, body)
    assert stores.entries.load("alice")[1] == [] and stores.entries.get_state("alice").active == 0


def test_patch_to_a_text_holding_a_bidi_control_is_400_and_keeps_the_words(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "Do not share my passwords")
    _bidi_refusal(*api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"text": DISGUISED}))
    (stored,) = stores.entries.load("alice")[1]
    assert (stored.text, stored.edited) == ("Do not share my passwords", False)


def test_accept_corrected_to_a_text_holding_a_bidi_control_is_400_and_the_proposal_keeps_waiting(
    api: Any, stores: Any
) -> None:
    api.turn_on("alice")
    proposal = add_proposal(stores, "alice", "Likes tea")
    _bidi_refusal(*api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice", {"text": DISGUISED}))
    assert [p.id for p in stores.proposals.list("alice")] == [proposal.id]
    assert stores.entries.load("alice")[1] == []


def test_a_proposal_holding_a_bidi_control_is_refused_invalid_text_and_nothing_waits(
    api: Any, agents: Any, stores: Any
) -> None:
    api.turn_on("alice")
    agents.register("s-1", "alice")
    agents.propose("s-1", {"id": "e1", "text": DISGUISED}, {"id": "e2", "text": "Likes \u2067tea\u2069"})
    assert agents.outcomes("s-1") == {
        "e1": {"type": "memory.proposal_refused", "reason": "invalid_text"},
        "e2": {"type": "memory.proposal_refused", "reason": "invalid_text"},
    }
    assert stores.proposals.list("alice") == [] and stores.entries.get_state("alice").waiting == 0
    refused = [r.public() for r in stores.journal.all("alice") if r.action == "keep.memory.proposal_refused"]
    assert sorted(r["reason"] for r in refused) == ["invalid_text", "invalid_text"]
    assert "share" not in repr(refused)


@pytest.mark.parametrize(
    "text", ["\u05e9\u05dc\u05d5\u05dd\u200f (shalom)", "\u0645\u0631\u062d\u0628\u0627\u061c 2024", "left\u200emark"]
)
def test_bidi_marks_are_kept_as_typed(api: Any, text: str) -> None:
    api.turn_on("alice")
    status, entry = api.call("POST", "/v1/memory", "alice", {"text": text})
    assert status == 201 and entry["text"] == text
