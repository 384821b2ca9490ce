"""`ctx.memory` for agent code: read the items the host fetched, propose new ones.

Agents never write memory: `propose` only posts a `memory.propose` event, which the person later
accepts or rejects. Whether a proposal is allowed at all (manifest, user, memory on, caps, text
rules) is the server's decision; its answer appears in `WorkerClient.list_events`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .host import HostClient
from .memory import KINDS, MemoryItem, MemoryItems
from .worker import ProposeEvent, new_event_id

__all__ = ["AgentContext", "AgentMemory", "EventPoster", "load_context"]


class EventPoster(Protocol):
    """Anything that can post events for a session: a `WorkerClient`, or a fake in tests."""

    def post_events(self, session_id: str, events: Sequence[ProposeEvent]) -> int: ...


@dataclass(frozen=True, slots=True, init=False)
class AgentMemory:
    """The memory an agent sees in one session."""

    items: MemoryItems
    session_id: str
    worker: EventPoster = field(repr=False)
    id_factory: Callable[[], str] = field(default=new_event_id, repr=False)

    def __init__(
        self,
        items: Iterable[MemoryItem],
        session_id: str,
        worker: EventPoster,
        id_factory: Callable[[], str] = new_event_id,
    ) -> None:
        # Written through object.__setattr__ because the instance is frozen; a plain list of items
        # is accepted and sealed into MemoryItems here.
        sealed = items if isinstance(items, MemoryItems) else MemoryItems(items)
        object.__setattr__(self, "items", sealed)
        object.__setattr__(self, "session_id", session_id)
        object.__setattr__(self, "worker", worker)
        object.__setattr__(self, "id_factory", id_factory)

    def propose(
        self,
        text: str,
        kind: str = "note",
        message_id: str | None = None,
        *,
        event_id: str | None = None,
        replaces: str | None = None,
    ) -> str:
        """Propose an entry for the person to accept; returns the event id.

        Pass a previous return value as `event_id` to repeat a proposal whose post failed: the
        server treats the same id as the same event, so it is never proposed twice. Pass an item's
        `ref` as `replaces` when the proposal updates that item (`replaces=item.ref`): the person
        then sees what it updates and accepting it replaces that note. A ref that names nothing
        any more makes an ordinary proposal.
        """
        if not isinstance(text, str):
            raise TypeError("text must be a string")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}")
        event = ProposeEvent(event_id or self.id_factory(), text, kind, message_id, replaces)
        self.worker.post_events(self.session_id, [event])
        return event.id


@dataclass(frozen=True, slots=True)
class AgentContext:
    """What an agent's `run(ctx)` receives."""

    session_id: str
    memory: AgentMemory


def load_context(session_id: str, host: HostClient, worker: EventPoster) -> AgentContext:
    """Fetch the session's memory as the host and wire proposals to the worker."""
    items = host.fetch_context(session_id)
    return AgentContext(session_id, AgentMemory(items, session_id, worker))
