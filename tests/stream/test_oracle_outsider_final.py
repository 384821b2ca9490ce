"""An outsider's rerun of issue 37 #8 against the merged product: the guess, then the person acting on what she sees.

`kept` keeps the guessed words (an entry beyond the agent's context), `other` does not; both people do the
same thing with everything their page shows them. The agent runs one script against both.
"""

from __future__ import annotations

from typing import Any

from chalicelib.models import MAX_WAITING_PROPOSALS
from tests.support.oracle import GUESS, fill, person


def _reject_all_she_sees(api: Any, user: str) -> None:
    """What "Reject all" and each "Dismiss" on her page do: reject every suggestion and every repeat listed."""
    _, view = api.call("GET", "/v1/memory", user)
    for shown in view["proposals"] + view["repeats"]:
        assert api.call("POST", f"/v1/memory/{shown['id']}/reject", user)[0] == 204
    _, after = api.call("GET", "/v1/memory", user)
    assert after["proposals"] == after["repeats"] == []


def test_after_the_person_rejects_every_suggestion_she_sees_the_agent_cannot_tell_a_kept_guess(
    api: Any, agents: Any
) -> None:
    traces = {}
    for user, keeps in (("kept", True), ("other", False)):
        person(api, user, keeps)
        fill(agents, user, "a", [GUESS])
        _reject_all_she_sees(api, user)
        traces[user] = fill(agents, user, "b", [f"Probe {n}" for n in range(MAX_WAITING_PROPOSALS)])
    assert traces["kept"] == traces["other"]


def test_the_person_can_always_make_room_for_suggestions_by_rejecting_what_she_sees(
    api: Any, agents: Any, stores: Any
) -> None:
    person(api, "kept", True)
    fill(agents, "kept", "a", [GUESS] * MAX_WAITING_PROPOSALS)  # fifty duplicates of a kept entry
    _, view = api.call("GET", "/v1/memory", "kept")
    assert view["proposals"] == [] and len(view["repeats"]) == MAX_WAITING_PROPOSALS  # no card each: repeats
    assert {r["agent"] for r in view["repeats"]} == {"spy"}
    _reject_all_she_sees(api, "kept")
    assert stores.entries.get_state("kept").waiting == 0 and stores.proposals.stored("kept") == []
    (outcome,) = fill(agents, "kept", "b", ["A real new suggestion"])
    assert outcome == ("memory.proposed", None)  # ... so nothing stands in the way of a real suggestion
    assert [p["text"] for p in api.call("GET", "/v1/memory", "kept")[1]["proposals"]] == ["A real new suggestion"]
