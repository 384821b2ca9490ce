"""The domain: entries, proposals, a user's memory state and agent sessions, as frozen dataclasses."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

KINDS = ("preference", "fact", "note")
MAX_ENTRY_BYTES = 2000
MAX_ACTIVE_ENTRIES = 200
MAX_WAITING_PROPOSALS = 50
MAX_PROPOSALS_PER_SESSION = 5
MIN_EXPIRY_DAYS, MAX_EXPIRY_DAYS = 1, 3650
DAY_SECONDS = 86_400


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """Microsecond ISO 8601 in UTC: sorts as text in time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def iso_from_epoch(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_id() -> str:
    """An opaque, unguessable id (128 bits); it says nothing about its owner or its time."""
    return secrets.token_hex(16)


def is_id(value: str) -> bool:
    """Whether `value` could be an id we issued (anything else is simply not found, without a lookup)."""
    return len(value) == 32 and all(c in "0123456789abcdef" for c in value)


@dataclass(frozen=True)
class Source:
    """Where an entry came from: the agent session, thread and message that proposed it (known parts)."""

    session_id: str | None = None
    thread_id: str | None = None
    message_id: str | None = None

    def public(self) -> dict[str, str]:
        return {
            key: value
            for key, value in (
                ("thread_id", self.thread_id),
                ("message_id", self.message_id),
                ("session_id", self.session_id),
            )
            if value is not None
        }


@dataclass(frozen=True)
class Entry:
    """An active entry or a waiting proposal: the two share one shape and differ by the table they live in."""

    id: str
    user_id: str
    text: str
    kind: str
    pinned: bool
    tainted: bool
    origin: str  # "user" | "agent"
    source: Source
    created_at: str
    updated_at: str
    expires_at: int | None = None  # epoch seconds; also the table's TTL attribute
    agent: str | None = None  # the proposing session's agent (None for the user's own entries)
    edited: bool = False  # the user changed the text or kind after it was proposed or first saved
    text_id: bytes | None = field(
        default=None, repr=False, compare=False
    )  # its own key's id, as read from storage; never shown
    # The keyed fingerprint of the text as stored (chalicelib/storage/fingerprints.py); None before issue 24.
    fingerprint: str | None = field(default=None, compare=False, repr=False)
    # A proposal only: the id of the person's entry its agent said it updates (issue 39; bound to the seal).
    replaces: str | None = None

    def is_expired(self, now_epoch: int) -> bool:
        return self.expires_at is not None and self.expires_at <= now_epoch

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "pinned": self.pinned,
            "tainted": self.tainted,
            "origin": self.origin,
            "source": self.source.public(),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "expires_at": iso_from_epoch(self.expires_at) if self.expires_at is not None else None,
            "agent": self.agent,
            "edited": self.edited,
        }

    def context_item(self, ref: str) -> dict[str, Any]:
        """What an agent sees: the text, its provenance flags and its session's `ref`, nothing that identifies the
        person (the ref opens only for this user's session: chalicelib/crypto/refs.py)."""
        return {"text": self.text, "kind": self.kind, "pinned": self.pinned, "tainted": self.tainted, "ref": ref}

    def with_changes(self, **changes: Any) -> Entry:
        return replace(self, **changes)


def display_order(entries: list[Entry]) -> list[Entry]:
    """Pinned first, newest next (ties broken by id so the order is total and stable)."""
    return sorted(entries, key=lambda e: (e.pinned, e.created_at, e.id), reverse=True)


@dataclass(frozen=True)
class AgentGrant:
    """What the user allows one agent, and when it last used their memory (an agent never set may do both)."""

    agent: str
    read: bool = True
    propose: bool = True
    last_read_at: str | None = None
    last_proposal_at: str | None = None
    set_at: str | None = None  # when the user last changed a switch (None: never set, only used)
    key: str = ""  # the folded name (chalicelib/agent_names.py) every decision compares
    row: str = ""  # the stored row's key after `a#` (the folded name, or an older row's own spelling)


def merged(grants: Iterable[AgentGrant], agent: str) -> AgentGrant:
    """The rows of one folded name as one grant: a switch is on only if every row has it on; the latest times.

    The name shown is the folded row's own (else the first found); an agent never set may read and propose.
    """
    from chalicelib.agent_names import fold_agent_name  # the name rules load with the first grant, not at import

    key = fold_agent_name(agent)
    rows = sorted((g for g in grants if g.key == key), key=lambda g: (g.row != key, g.row))
    if not rows:
        return AgentGrant(agent, key=key, row=key)

    def latest(values: Iterable[str | None]) -> str | None:
        return max((v for v in values if v), default=None)

    return AgentGrant(
        agent=rows[0].agent,
        read=all(g.read for g in rows),
        propose=all(g.propose for g in rows),
        last_read_at=latest(g.last_read_at for g in rows),
        last_proposal_at=latest(g.last_proposal_at for g in rows),
        set_at=latest(g.set_at for g in rows),
        key=key,
        row=rows[0].row,
    )


@dataclass(frozen=True)
class MemoryState:
    """A user's switch and counters. No stored state means memory was never turned on: off."""

    enabled: bool = False
    active: int = 0
    waiting: int = 0
    version: int = 0  # bumped by every write that changes what GET /v1/memory or /v1/inbox shows
    switched_at: str = ""  # when the switch last changed (the state item's updated_at; only the switch sets it)
    agents: tuple[AgentGrant, ...] = ()  # read by the same Query as the state item (storage/agents.py)
    agent_rows: int = 0  # the agent rows counted against the cap (storage/agents.py)
    agents_folded: bool = False  # every agent row is keyed by its folded name (storage/agents.py FOLDED_MARK)

    def grant(self, agent: str) -> AgentGrant:
        """The user's grant for `agent`, over every row of its folded name (chalicelib/agent_names.py); one never
        set may read and propose (the three gates alone decide)."""
        return merged(self.agents, agent)


@dataclass(frozen=True)
class Session:
    """An agent session registered by a host: whose it is, what the agent asked for, whether it read untrusted content."""

    session_id: str
    user_id: str | None
    thread_id: str | None
    agent: str
    memory_requested: bool
    tainted: bool = False
    proposals: int = 0
    created_at: str = field(default="")

    def public(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "user_id": self.user_id,
            "thread_id": self.thread_id,
            "agent": self.agent,
            "manifest": {"memory": self.memory_requested},
            "tainted": self.tainted,
        }
