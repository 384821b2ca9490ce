"""What the MCP tools do, without MCP: one memory session per client, its context, its proposals.

The server is a host and a worker at once, for one configured user: it registers a session named
after the MCP client (as a host does), marks it untrusted unless the person's configuration trusts
that client (an MCP client may have read anything: web pages, e-mail, files), reads the gated
context, and posts `memory.propose` events (as a worker does). It never writes, edits or deletes
an entry, and never reads the journal or another user: the host and worker routes it calls are
the only ones it knows.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

import anyio
import anyio.to_thread

from .errors import (
    ApiError,
    CredentialRefusedError,
    ForbiddenError,
    InvalidRequestError,
    MemorySdkError,
    NotFoundError,
    TransportError,
)
from .host import HostClient
from .mcp_config import McpConfig
from .mcp_words import FALLBACK_AGENT, NO_ITEMS_REASON, agent_name, refusal_words
from .memory import MemoryItems
from .worker import EventOutcome, WorkerClient

__all__ = [
    "BridgeError",
    "ContextAnswer",
    "MemoryBridge",
    "ProposeAnswer",
    "SessionInfo",
    "answer_error",
]

_T = TypeVar("_T")
# The API's door refuses longer text (chalicelib/schemas.py); the consumer keeps 2000 bytes.
_MAX_POSTED_CHARS = 8000
_POLL_SECONDS = 0.2
_NAME_REFUSED = (CredentialRefusedError, InvalidRequestError)


class BridgeError(Exception):
    """A failure the model should read in words (never carrying entry or proposal text)."""

    def __init__(self, message: str, cause: MemorySdkError | None = None) -> None:
        super().__init__(message)
        self.cause = cause


def answer_error(exc: MemorySdkError) -> BridgeError:
    """Any other answer of the service, in words (both bridges: host/worker and connection)."""
    if isinstance(exc, ApiError):
        return BridgeError(f"Personal memory answered {exc.status} {exc.code}.", exc)
    return BridgeError(f"Personal memory gave an unexpected answer ({type(exc).__name__}).", exc)


@dataclass(frozen=True, slots=True)
class SessionInfo:
    session_id: str
    agent: str
    tainted: bool


@dataclass(frozen=True, slots=True)
class ContextAnswer:
    session: SessionInfo
    items: MemoryItems
    reason: str | None


@dataclass(frozen=True, slots=True)
class ProposeAnswer:
    session: SessionInfo
    event_id: str | None
    status: Literal["waiting_for_review", "refused", "pending"]
    reason: str | None = None
    proposal_id: str | None = None


class MemoryBridge:
    """One per server process (one stdio connection): one agent, named at the first handshake,
    and its session, registered once, on first need."""

    def __init__(
        self,
        config: McpConfig,
        host: HostClient | None = None,
        worker: WorkerClient | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        self.config = config
        if (host is None and config.host is None) or (worker is None and config.worker is None):
            raise ValueError("the trusted-host mode needs host and worker credentials")
        self._host = host or HostClient.from_botocore(config.base_url, config.host, config.region)
        self._worker = worker or WorkerClient.from_botocore(
            config.base_url, config.worker, config.region
        )
        self._sleep = sleep
        self._sessions: dict[str, SessionInfo] = {}
        self._lock = anyio.Lock()
        self._agent: str | None = None

    @property
    def agent(self) -> str | None:
        """The agent this connection speaks as, once its client first named itself (None before)."""
        return self._agent

    def pin(self, client_name: object) -> str:
        """The agent this connection speaks as: the first client name it gave, for its whole life.

        A client that introduces itself again under another name (a second `initialize`, or a
        different `clientInfo` on each call of the stateless protocol) still speaks as the first: a
        new name would otherwise be a new, unblocked agent with a fresh allowance of suggestions.
        """
        if self._agent is None:
            self._agent = agent_name(client_name)
        return self._agent

    async def session_for(self, client_name: object) -> SessionInfo:
        """The client's session, registered (and marked untrusted) before anything reads it."""
        name = self.pin(client_name)
        async with self._lock:
            if name not in self._sessions:
                # Shielded: a client that disconnects mid-way must not leave a registered session
                # that was never marked untrusted (the PUT and the taint are two calls).
                with anyio.CancelScope(shield=True):
                    self._sessions[name] = await self._register(name)
            return self._sessions[name]

    async def _register(self, agent: str) -> SessionInfo:
        session_id = f"mcp-{uuid.uuid4().hex}"
        try:
            await self._register_as(session_id, agent)
        except BridgeError as exc:
            # A client name the API refuses as an id (a credential-shaped name: a token is never a
            # name) is registered under the generic name instead, and never repeated.
            if agent == FALLBACK_AGENT or not isinstance(exc.cause, _NAME_REFUSED):
                raise
            agent, session_id = FALLBACK_AGENT, f"mcp-{uuid.uuid4().hex}"
            await self._register_as(session_id, agent)
        tainted = not self.config.trusts(agent)
        if tainted:
            # Before the session is remembered: a failure here leaves no untainted session
            # behind (the next call registers a new one), so no proposal skips the taint.
            await self._call(self._host.mark_untrusted, session_id)
        return SessionInfo(session_id, agent, tainted)

    async def _register_as(self, session_id: str, agent: str) -> None:
        await self._call(
            self._host.register_session,
            session_id,
            user_id=self.config.user_id,
            agent=agent,
            memory=True,
        )

    def _forget(self, session: SessionInfo) -> None:
        """Drop a session the API no longer knows (sessions expire 30 days after registration)."""
        for name in [name for name, known in self._sessions.items() if known == session]:
            del self._sessions[name]

    async def context(self, client_name: object) -> ContextAnswer:
        session = await self.session_for(client_name)
        try:
            items = await self._call(self._host.fetch_context, session.session_id)
        except BridgeError as exc:
            if not isinstance(exc.cause, NotFoundError):
                raise
            self._forget(session)  # expired: once more, with a new session
            session = await self.session_for(client_name)
            items = await self._call(self._host.fetch_context, session.session_id)
        return ContextAnswer(session, items, None if items else NO_ITEMS_REASON)

    async def propose(
        self, client_name: object, text: str, kind: str, replaces: str | None = None
    ) -> ProposeAnswer:
        session = await self.session_for(client_name)
        answer = await self._propose_once(session, text, kind, replaces)
        if answer.status == "refused" and answer.reason == "unknown_session":
            self._forget(
                answer.session
            )  # expired: once more, with a new session (its refs are not this one's)
            answer = await self._propose_once(await self.session_for(client_name), text, kind, None)
        return answer

    async def _propose_once(
        self, session: SessionInfo, text: str, kind: str, replaces: str | None
    ) -> ProposeAnswer:
        if len(text) > _MAX_POSTED_CHARS:  # the door would refuse it; the consumer's own reason
            return ProposeAnswer(session, None, "refused", "too_long")
        given = (
            {"replaces": replaces} if replaces is not None else {}
        )  # absent: the call it always was
        event_id = await self._call(self._worker.propose, session.session_id, text, kind, **given)
        outcome = await self._outcome(session.session_id, event_id)
        if outcome is None:
            return ProposeAnswer(session, event_id, "pending")
        if outcome.type == "memory.proposed":
            return ProposeAnswer(session, event_id, "waiting_for_review", None, outcome.proposal_id)
        return ProposeAnswer(session, event_id, "refused", outcome.reason)

    async def _outcome(self, session_id: str, event_id: str) -> EventOutcome | None:
        """Poll the session's events briefly; None if the stream has not handled it yet."""
        deadline = time.monotonic() + self.config.outcome_wait
        while True:
            events = await self._call(self._worker.list_events, session_id)
            mine = next((event for event in events if event.id == event_id), None)
            if mine is not None and mine.handled and mine.outcome is not None:
                return mine.outcome
            if time.monotonic() >= deadline:
                return None
            await self._sleep(_POLL_SECONDS)

    async def _call(self, function: Callable[..., _T], *args: object, **kwargs: object) -> _T:
        """Run one blocking SDK call off the event loop; SDK errors become sentences."""
        try:
            return await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))
        except TransportError as exc:
            raise BridgeError(
                f"Personal memory could not be reached at {self.config.base_url} ({exc.reason}); "
                "try again later.",
                exc,
            ) from None
        except ForbiddenError as exc:
            raise BridgeError(
                "Personal memory refused this server's credentials (403 forbidden): the host and "
                "worker keys must belong to roles the deployment allows.",
                exc,
            ) from None
        except MemorySdkError as exc:
            raise answer_error(exc) from None

    def describe(self, answer: ProposeAnswer) -> str:
        """The tool's answer in words: "suggested — waiting for <user> to review", never "saved"."""
        user = self.config.user_id
        if answer.status == "refused":
            return (
                f"Not suggested: Personal memory refused it because "
                f"{refusal_words(answer.reason)}. "
                "Nothing was kept."
            )
        head = f"Suggested — waiting for {user} to review."
        if answer.status == "waiting_for_review":
            return (
                f"{head} It is on {user}'s memory page as a suggestion from "
                f"{answer.session.agent}; it becomes a note only if {user} accepts it."
            )
        return (
            f"{head} Its outcome is not known yet: if it is accepted for review it will appear on "
            f"{user}'s memory page as a suggestion from {answer.session.agent}."
        )
