"""A person's own agent, by the connection token they made on their memory page.

The agent routes, nothing else. No AWS role and no credentials file: the token reaches that one
person's memory, as the one agent the person named when connecting. `context()` reads what a
session of that agent would get;
`propose()` leaves a suggestion for the person to review; `outcome()` tells what became of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from .errors import ProtocolError
from .memory import MemoryItems
from .transport import BearerTransport, RetryPolicy
from .worker import EventOutcome, EventRecord

__all__ = ["ConnectionClient", "ConnectionContext", "Suggestion"]

TOKEN_PREFIX = "pmc_"


@dataclass(frozen=True, slots=True)
class ConnectionContext:
    items: MemoryItems
    agent: str
    tainted: bool


@dataclass(frozen=True, slots=True)
class Suggestion:
    event_id: str
    agent: str
    tainted: bool


def _agent_and_taint(document: Mapping[str, Any], path: str) -> tuple[str, bool]:
    agent, tainted = document.get("agent"), document.get("tainted")
    if not isinstance(agent, str) or not isinstance(tainted, bool):
        raise ProtocolError("GET" if "memory" in path else "POST", path, "agent or tainted missing")
    return agent, tainted


class ConnectionClient:
    """The agent routes, authenticated by `Authorization: Bearer <connection token>`."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX):
            raise ValueError(
                "a connection token starts with pmc_ (made on the Agents tab of the memory page)"
            )
        self._reads = BearerTransport(base_url, token, timeout=timeout, sleep=sleep)
        # A suggestion's id is the service's: a retried POST could leave it twice: sent once.
        self._writes = BearerTransport(
            base_url, token, timeout=timeout, sleep=sleep, retry=RetryPolicy(max_attempts=1)
        )

    @property
    def base_url(self) -> str:
        return self._reads.base_url

    def __repr__(self) -> str:
        return f"ConnectionClient({self.base_url!r})"  # never the token

    def context(self) -> ConnectionContext:
        path = "/v1/agent/memory"
        document = self._reads.request("GET", path)
        if not isinstance(document, Mapping):
            raise ProtocolError("GET", path, "not an object")
        try:
            items = MemoryItems.from_json(document.get("items"))
        except ValueError as exc:
            raise ProtocolError("GET", path, str(exc)) from None
        return ConnectionContext(items, *_agent_and_taint(document, path))

    def propose(self, text: str, kind: str = "note", replaces: str | None = None) -> Suggestion:
        """Suggest a note; `replaces`: the `ref` of the context item it updates (valid in this
        hour's conversation only: an older one makes an ordinary suggestion)."""
        path = "/v1/agent/proposals"
        body: dict[str, str] = {"text": text, "kind": kind}
        if replaces is not None:
            body["replaces"] = replaces
        document = self._writes.request("POST", path, body)
        if not isinstance(document, Mapping) or not isinstance(document.get("event_id"), str):
            raise ProtocolError("POST", path, "event_id missing")
        return Suggestion(document["event_id"], *_agent_and_taint(document, path))

    def outcome(self, event_id: str) -> EventOutcome | None:
        """The suggestion's outcome once the service has handled it; None while it is pending."""
        path = f"/v1/agent/proposals/{quote(event_id, safe='')}"
        document = self._reads.request("GET", path)
        if not isinstance(document, Mapping):
            raise ProtocolError("GET", path, "not an object")
        try:
            record = EventRecord.from_json(
                {
                    "id": document.get("event_id"),
                    "type": "memory.propose",
                    "status": document.get("status"),
                    "outcome": document.get("outcome"),
                }
            )
        except ValueError as exc:
            raise ProtocolError("GET", path, str(exc)) from None
        return record.outcome if record.handled else None
