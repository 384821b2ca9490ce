"""The membership oracle (issue 37 #8), tried as an agent would: propose a guessed text and read everything the
worker can see afterwards (GET /v1/sessions/{id}/events, later proposals' outcomes: session_cap, waiting_cap).

Two people differ in one thing only: `kept` keeps the guessed words (an entry outside the agent's 20-entry
context, or another agent's waiting suggestion no agent can read), `other` does not. The agent runs the same
script against both and must see the same thing, event by event, except the random ids. The person who keeps
the words sees the refusal `duplicate` in her journal, and nothing is stored.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from chalicelib.crypto.sealing import HEADER_BYTES
from chalicelib.models import MAX_WAITING_PROPOSALS

ENTRY, WAITING = "Has diabetes", "Sees a therapist on Tuesdays"
GUESSES = {"entry": "HAS DIABETES.", "waiting": "sees a THERAPIST on tuesdays"}


def _person(api: Any, agents: Any, user: str, where: str, keeps: bool = True) -> None:
    """The guessed words (or, for `other`, other words in the same place), then 25 entries, so the agent's
    context holds 20 newer ones."""
    api.turn_on(user)
    if where == "entry":
        api.add(user, ENTRY if keeps else "Has asthma")
    if where == "waiting":  # another agent's suggestion, waiting for review: no agent can read it
        agents.register(f"diary-{user}", user, agent="diary-app")
        agents.propose(f"diary-{user}", {"id": "d1", "text": WAITING if keeps else "Sees a dentist on Mondays"})
    for n in range(25):
        api.add(user, f"Ordinary note number {n}")


def _observed(agents: Any, session: str) -> list[dict[str, Any]]:
    """Everything the worker's events route says, with the random ids and instants replaced by their shape."""
    seen = []
    for event in agents.events(session):
        outcome = dict(event["outcome"] or {})
        if "proposal_id" in outcome:
            outcome["proposal_id"] = re.sub("[0-9a-f]", "h", outcome["proposal_id"])
        seen.append({**event, "created_at": "<t>", "outcome": outcome})
    return seen


def _attack(agents: Any, user: str, guess: str, *, tag: str) -> list[Any]:
    """The guess, then enough new texts to fill the waiting list, five per session, and a sixth in the first."""
    trace = []
    texts = [guess] + [f"Probe text {tag}-{n}" for n in range(MAX_WAITING_PROPOSALS)]
    sessions = [texts[i : i + 5] for i in range(0, len(texts), 5)]
    for number, batch in enumerate(sessions):
        session = f"{tag}-{user}-{number}"
        assert agents.register(session, user, agent="spy")[0] == 200
        events = [{"id": f"e{i}", "text": text} for i, text in enumerate(batch)]
        if number == 0:
            events.append({"id": "e5", "text": f"One too many {tag}"})  # the session's sixth
        agents.propose(session, *events)
        trace.append(_observed(agents, session))
    return trace


@pytest.mark.parametrize("reads", [True, False], ids=["reading-agent", "read-blocked-agent"])
@pytest.mark.parametrize("where", ["entry", "waiting"])
def test_a_guessed_text_tells_the_agent_nothing_through_any_outcome_or_later_cap(
    api: Any, agents: Any, stores: Any, where: str, reads: bool
) -> None:
    for user, keeps in (("kept", True), ("other", False)):
        _person(api, agents, user, where, keeps)
        if not reads:
            assert api.call("PUT", "/v1/agents/spy", user, {"read": False})[0] == 200
    kept = _attack(agents, "kept", GUESSES[where], tag="a")
    other = _attack(agents, "other", GUESSES[where], tag="a")
    assert kept == other  # every outcome, field and shape alike, the caps reached at the same proposal
    first = kept[0]
    assert first[0]["outcome"]["type"] == "memory.proposed"
    assert first[5]["outcome"] == {"type": "memory.proposal_refused", "reason": "session_cap"}
    assert kept[-1][-1]["outcome"] == {"type": "memory.proposal_refused", "reason": "waiting_cap"}
    # The person who keeps the words: nothing new stored for the guess, and her journal says why.
    texts = [p.text for p in stores.proposals.list("kept")]
    assert GUESSES[where] not in texts and texts.count(WAITING) == (1 if where == "waiting" else 0)
    assert [e.text for e in stores.entries.load("kept")[1]].count(ENTRY) == (1 if where == "entry" else 0)
    refused = [r.public() for r in stores.journal.all("kept") if r.action == "keep.memory.proposal_refused"]
    assert sorted((r["reason"], r["agent"]) for r in refused if r["reason"] == "duplicate") == [("duplicate", "spy")]
    assert not any(
        r.public()["reason"] == "duplicate"
        for r in stores.journal.all("other")
        if r.action == "keep.memory.proposal_refused"
    )


def test_the_slot_a_duplicate_holds_shows_only_as_a_textless_repeat_and_goes_with_its_agent(
    api: Any, agents: Any, stores: Any
) -> None:
    _person(api, agents, "kept", "entry")
    agents.register("s-1", "kept", agent="spy")
    agents.propose("s-1", {"id": "e1", "text": GUESSES["entry"]})
    (outcome,) = agents.outcomes("s-1").values()
    assert outcome["type"] == "memory.proposed"
    slot_id = outcome["proposal_id"]
    assert stores.entries.get_state("kept").waiting == 1  # counted as a new text would be ...
    _, view = api.call("GET", "/v1/memory", "kept")
    assert view["proposals"] == []  # ... shown as no suggestion, only as a repeat: who, when, never what
    assert [(r["id"], r["agent"], r["session_id"]) for r in view["repeats"]] == [(slot_id, "spy", "s-1")]
    assert ENTRY.lower() not in repr(view["repeats"]).lower()
    assert api.call("POST", f"/v1/memory/{slot_id}/accept", "kept")[0] == 404  # nothing to accept (a reject frees it)
    raw = stores.client.get_item(
        TableName=stores.proposals.table, Key={"user_id": {"S": "kept"}, "sk": {"S": "p#" + slot_id}}
    )["Item"]
    # no fingerprint, and no text: its seal binds who and when to an empty text, the GCM tag alone (storage/slots.py)
    assert "fingerprint" not in raw and len(raw["sealed_text"]["B"]) == HEADER_BYTES + 16
    assert not any(ENTRY.lower() in repr(e).lower() for e in agents.events("s-1"))
    status, body = api.call("POST", "/v1/agents/spy/forget", "kept", {})
    assert status == 200 and body["deleted"] == 0  # no proposal the person saw, and none of her entries
    assert stores.entries.get_state("kept").waiting == 0


def test_the_waiting_cap_frees_the_slots_of_duplicates_once_their_time_is_up(
    api: Any, agents: Any, stores: Any, clock: Any
) -> None:
    _person(api, agents, "kept", "entry")
    agents.register("s-0", "kept", agent="spy")
    agents.propose("s-0", {"id": "dup", "text": GUESSES["entry"]})
    for n in range(1, 11):
        agents.register(f"s-{n}", "kept", agent="spy")
        agents.propose(f"s-{n}", *({"id": f"e{i}", "text": f"Fill {n}-{i}"} for i in range(5)))
    assert stores.entries.get_state("kept").waiting == MAX_WAITING_PROPOSALS
    assert len(stores.proposals.list("kept")) == MAX_WAITING_PROPOSALS - 1
    (rejected, *_) = stores.proposals.list("kept")
    clock.advance(days=31)
    agents.register("s-late", "kept", agent="spy")
    agents.propose("s-late", {"id": "e1", "text": "A later new text"})
    assert agents.outcomes("s-late")["e1"]["type"] == "memory.proposed"  # the old slot made room
    assert stores.entries.get_state("kept").waiting == MAX_WAITING_PROPOSALS
    assert rejected.id in {p.id for p in stores.proposals.list("kept")}  # no proposal the person sees was touched


def test_forget_all_deletes_the_slots_and_counts_only_what_the_person_saw(api: Any, agents: Any, stores: Any) -> None:
    _person(api, agents, "kept", "entry")
    agents.register("s-1", "kept", agent="spy")
    agents.propose("s-1", {"id": "dup", "text": GUESSES["entry"]}, {"id": "new", "text": "Has a cat"})
    assert stores.entries.get_state("kept").waiting == 2
    status, body = api.call("DELETE", "/v1/memory", "kept")
    assert status == 200 and body["deleted"] == 26 + 1  # the entries and the one proposal she could see
    assert stores.entries.get_state("kept").waiting == 0
    assert stores.proposals.stored("kept") == []
