"""A refused suggestion's journal row names the session's agent (the page says who tried), never the text."""

from __future__ import annotations

from typing import Any


def test_a_refused_suggestion_is_journaled_with_its_agent_and_no_text(api: Any, stores: Any, agents: Any) -> None:
    api.turn_on("rita")
    agents.register("s-9", "rita", agent="memory-agent")
    agents.propose("s-9", {"id": "e1", "text": "   "}, {"id": "e2", "text": "x" * 2001})
    rows = [r for r in stores.journal.all("rita") if r.action == "keep.memory.proposal_refused"]
    assert sorted(dict(r.details)["reason"] for r in rows) == ["empty", "too_long"]
    assert {dict(r.details)["agent"] for r in rows} == {"memory-agent"}
    assert all("xxxx" not in str(dict(r.details)) for r in rows)
    status, page = api.call("GET", "/v1/memory/journal", "rita")
    assert status == 200 and {row.get("agent") for row in page["items"] if row["action"].endswith("refused")} == {
        "memory-agent"
    }
