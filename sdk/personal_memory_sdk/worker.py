"""The worker's side of the API: post an agent's events and read back what became of them.

Event ids are chosen by the caller before the first attempt and sent unchanged on every retry; the
server treats a repeated id as a no-op, so a retried post never proposes anything twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._base import SignedClient, session_path
from .errors import ProtocolError

__all__ = [
    "MAX_EVENTS_PER_POST",
    "DUPLICATE",
    "EventOutcome",
    "EventRecord",
    "ProposeEvent",
    "WorkerClient",
    "new_event_id",
]

# The server accepts 1..20 events per post.
MAX_EVENTS_PER_POST = 20
_MAX_EVENT_ID_CHARS = 128


def new_event_id() -> str:
    """A fresh, unguessable event id (uuid4)."""
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class ProposeEvent:
    """A `memory.propose` event. The text is kept out of `repr` so logging an event is safe."""

    id: str
    text: str = field(repr=False)
    kind: str = "note"
    message_id: str | None = None
    replaces: str | None = None  # a context item's `ref`: the note this one updates

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not 0 < len(self.id) <= _MAX_EVENT_ID_CHARS:
            raise ValueError(f"event id must be a string of 1..{_MAX_EVENT_ID_CHARS} characters")
        if not isinstance(self.text, str) or not isinstance(self.kind, str):
            raise TypeError("text and kind must be strings")
        if self.message_id is not None and not isinstance(self.message_id, str):
            raise TypeError("message_id must be a string or None")
        if self.replaces is not None and not isinstance(self.replaces, str):
            raise TypeError("replaces must be a context item's ref (a string) or None")

    def to_json(self) -> dict[str, str]:
        document = {"id": self.id, "type": "memory.propose", "text": self.text, "kind": self.kind}
        if self.message_id is not None:
            document["message_id"] = self.message_id
        if self.replaces is not None:
            document["replaces"] = self.replaces
        return document


# The refusal reason of a proposal whose words the person already keeps, or that already waits.
DUPLICATE = "duplicate"


@dataclass(frozen=True, slots=True)
class EventOutcome:
    """What the stream consumer made of an event: `memory.proposed` or `memory.proposal_refused`.

    A refusal's `reason` is a code, never the text: e.g. `memory_off`, `session_cap`, or
    `agent_blocked` when the user stopped this agent suggesting (`PUT /v1/agents/{id}`).
    """

    type: str
    proposal_id: str | None = None
    reason: str | None = None

    @property
    def proposed(self) -> bool:
        return self.type == "memory.proposed"

    @property
    def refused(self) -> bool:
        return self.type == "memory.proposal_refused"

    @property
    def duplicate(self) -> bool:
        """Refused `duplicate`. The service no longer tells an agent so (it would say what the
        person keeps): a duplicate's outcome is `memory.proposed`. Kept for older services."""
        return self.refused and self.reason == DUPLICATE


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One stored event as the worker sees it; handled events carry no text."""

    id: str
    type: str
    status: str
    kind: str | None = None
    message_id: str | None = None
    outcome: EventOutcome | None = None
    created_at: str | None = None

    @property
    def handled(self) -> bool:
        return self.status == "handled"

    @classmethod
    def from_json(cls, document: object) -> EventRecord:
        if not isinstance(document, Mapping):
            raise ValueError("event is not an object")
        for name in ("id", "type", "status"):
            if not isinstance(document.get(name), str):
                raise ValueError(f"event.{name} is missing or not a string")
        return cls(
            id=document["id"],
            type=document["type"],
            status=document["status"],
            kind=_optional_str(document, "kind"),
            message_id=_optional_str(document, "message_id"),
            outcome=_outcome(document.get("outcome")),
            created_at=_optional_str(document, "created_at"),
        )


def _optional_str(document: Mapping[str, Any], name: str) -> str | None:
    value = document.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"event.{name} is not a string")
    return value


def _outcome(document: object) -> EventOutcome | None:
    if document is None:
        return None
    if not isinstance(document, Mapping) or not isinstance(document.get("type"), str):
        raise ValueError("event.outcome is not an object with a type")
    proposal_id = document.get("proposal_id")
    reason = document.get("reason")
    return EventOutcome(
        type=document["type"],
        proposal_id=proposal_id if isinstance(proposal_id, str) else None,
        reason=reason if isinstance(reason, str) else None,
    )


class WorkerClient(SignedClient):
    """Signed as a worker role: posts a session's agent events and lists their outcomes."""

    ROLE = "worker"

    def post_events(self, session_id: str, events: Sequence[ProposeEvent]) -> int:
        """Post 1..20 events; returns how many the server accepted. Safe to call again."""
        if not 0 < len(events) <= MAX_EVENTS_PER_POST:
            raise ValueError(f"post 1..{MAX_EVENTS_PER_POST} events at a time")
        if not all(isinstance(event, ProposeEvent) for event in events):
            raise TypeError("events must be ProposeEvent values")
        if len({event.id for event in events}) != len(events):
            raise ValueError("event ids must be unique within a post")
        path = session_path(session_id, "/events")
        answer = self._transport.request(
            "POST", path, {"events": [event.to_json() for event in events]}
        )
        accepted = answer.get("accepted") if isinstance(answer, dict) else None
        if not isinstance(accepted, int) or isinstance(accepted, bool):
            raise ProtocolError("POST", path, "accepted is missing or not an integer")
        return accepted

    def propose(
        self,
        session_id: str,
        text: str,
        kind: str = "note",
        message_id: str | None = None,
        *,
        event_id: str | None = None,
        replaces: str | None = None,
    ) -> str:
        """Post one `memory.propose` event and return its id (pass `event_id` to repeat one;
        `replaces`: the `ref` of the context item it updates)."""
        event = ProposeEvent(event_id or new_event_id(), text, kind, message_id, replaces)
        self.post_events(session_id, [event])
        return event.id

    def duplicates(self, session_id: str) -> list[str]:
        """Ids of the session's events refused as `duplicate`: always none from a current service,
        which answers a duplicate as it answers a new text (the person's journal alone says it)."""
        events = self.list_events(session_id)
        return [event.id for event in events if event.outcome and event.outcome.duplicate]

    def list_events(self, session_id: str) -> list[EventRecord]:
        """The session's events and their outcomes, as the server stores them."""
        path = session_path(session_id, "/events")
        answer = self._transport.request("GET", path)
        documents = answer.get("events") if isinstance(answer, dict) else None
        if not isinstance(documents, list):
            raise ProtocolError("GET", path, "events is missing or not a list")
        try:
            return [EventRecord.from_json(document) for document in documents]
        except ValueError as exc:
            raise ProtocolError("GET", path, str(exc)) from None
