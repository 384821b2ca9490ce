"""moto copies a table, stream included, when a transaction on it is cancelled: the pump must keep reading."""

from __future__ import annotations

from typing import Any


def test_proposals_after_a_refusal_are_still_handled(api: Any, agents: Any) -> None:
    agents.register("s", "alice")
    agents.propose("s", {"id": "e1", "text": "while memory is off"})  # refused: a cancelled transaction
    api.turn_on("alice")
    agents.propose("s", {"id": "e2", "text": "after turning it on"})
    outcomes = agents.outcomes("s")
    assert outcomes["e1"] == {"type": "memory.proposal_refused", "reason": "memory_off"}
    assert outcomes["e2"] is not None and outcomes["e2"]["type"] == "memory.proposed"
