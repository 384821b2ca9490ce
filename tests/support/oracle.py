"""The membership-oracle attack's two people and its agent (issue 37 #8), shared by the outsider tests in tests/stream.

`kept` keeps the guessed words (an entry beyond the agent's 20-entry context), `other` does not; the agent
`spy` runs one script against both and compares every outcome it observes.
"""

from __future__ import annotations

from typing import Any

ENTRY, GUESS = "Has diabetes", "HAS DIABETES."

__all__ = ["ENTRY", "GUESS", "fill", "person"]


def person(api: Any, user: str, keeps: bool) -> None:
    """Memory on, the guessed words kept (or not), and 22 ordinary notes, so the guess is outside the context."""
    api.turn_on(user)
    api.add(user, ENTRY if keeps else "Has asthma")
    for n in range(22):
        api.add(user, f"Ordinary note number {n}")


def fill(agents: Any, user: str, tag: str, texts: list[str]) -> list[Any]:
    """`texts`, five a session, as the agent `spy`: every outcome's type and reason."""
    seen = []
    for number in range(0, len(texts), 5):
        session = f"{tag}-{user}-{number}"
        assert agents.register(session, user, agent="spy")[0] == 200
        agents.propose(session, *({"id": f"e{i}", "text": t} for i, t in enumerate(texts[number : number + 5])))
        seen += [(e["outcome"]["type"], e["outcome"].get("reason")) for e in agents.events(session)]
    return seen
