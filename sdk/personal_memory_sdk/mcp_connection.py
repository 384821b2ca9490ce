"""What the MCP tools do with a person's connection token (`personal-memory-mcp --token`).

The agent routes only.

This is the mode for a person's own client: no AWS role, no credentials file. The connection names
the agent (its name on the person's page) and whether its suggestions are trusted; the client's own
name changes neither. The host/worker mode (mcp_bridge.py) stays for a trusted host only.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from .connection import ConnectionClient
from .errors import MemorySdkError, TransportError, UnauthorizedError
from .mcp_bridge import BridgeError, ContextAnswer, ProposeAnswer, SessionInfo, answer_error
from .mcp_config import McpConfig
from .mcp_words import NO_ITEMS_REASON, refusal_words

__all__ = ["ConnectionBridge"]

_T = TypeVar("_T")
_MAX_POSTED_CHARS = 8000  # the API's door (chalicelib/schemas.py); the consumer keeps 2000 bytes
_POLL_SECONDS = 0.2


class ConnectionBridge:
    """One per server process, for the one connection its token names."""

    def __init__(
        self,
        config: McpConfig,
        client: ConnectionClient | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        assert config.token is not None
        self.config = config
        self._client = client or ConnectionClient(config.base_url, config.token)
        self._sleep = sleep
        self._session: SessionInfo | None = None  # what the service said the connection is

    @property
    def agent(self) -> str | None:
        """None: the token names the agent, whatever the client calls itself, so no
        client name is pinned here (mcp_server's handshake check skips)."""
        return None

    def pin(self, client_name: object) -> None:
        """Nothing to pin: the token names the agent (see `agent`)."""

    async def session_for(self, client_name: object) -> SessionInfo:
        """The connection as the service last described it (nothing to register)."""
        return self._session or SessionInfo("connection", "connection", True)

    def _learn(self, agent: str, tainted: bool) -> SessionInfo:
        self._session = SessionInfo("connection", agent, tainted)
        return self._session

    async def context(self, client_name: object) -> ContextAnswer:
        answer = await self._call(self._client.context)
        session = self._learn(answer.agent, answer.tainted)
        return ContextAnswer(session, answer.items, None if answer.items else NO_ITEMS_REASON)

    async def propose(
        self, client_name: object, text: str, kind: str, replaces: str | None = None
    ) -> ProposeAnswer:
        if len(text) > _MAX_POSTED_CHARS:
            return ProposeAnswer(await self.session_for(client_name), None, "refused", "too_long")
        given = (replaces,) if replaces is not None else ()  # absent: the call it always was
        suggestion = await self._call(self._client.propose, text, kind, *given)
        session = self._learn(suggestion.agent, suggestion.tainted)
        deadline = time.monotonic() + self.config.outcome_wait
        while True:
            outcome = await self._call(self._client.outcome, suggestion.event_id)
            if outcome is not None:
                if outcome.type == "memory.proposed":
                    return ProposeAnswer(
                        session,
                        suggestion.event_id,
                        "waiting_for_review",
                        None,
                        outcome.proposal_id,
                    )
                return ProposeAnswer(session, suggestion.event_id, "refused", outcome.reason)
            if time.monotonic() >= deadline:
                return ProposeAnswer(session, suggestion.event_id, "pending")
            await self._sleep(_POLL_SECONDS)

    async def _call(self, function: Callable[..., _T], *args: object) -> _T:
        try:
            return await anyio.to_thread.run_sync(lambda: function(*args))
        except TransportError as exc:
            raise BridgeError(
                f"Personal memory could not be reached at {self.config.base_url} "
                f"({exc.reason}); try again later.",
                exc,
            ) from None
        except UnauthorizedError as exc:
            raise BridgeError(
                "Personal memory refused this connection token (401): it was revoked, expired or "
                "mistyped. Make a new connection on the Agents tab of the memory page.",
                exc,
            ) from None
        except MemorySdkError as exc:
            raise answer_error(exc) from None

    def describe(self, answer: ProposeAnswer) -> str:
        if answer.status == "refused":
            why = refusal_words(answer.reason)
            return f"Not suggested: Personal memory refused it because {why}. Nothing was kept."
        head = "Suggested — waiting for the person to review."
        if answer.status == "waiting_for_review":
            return (
                f"{head} It is on their memory page as a suggestion from {answer.session.agent}; "
                "it becomes a note only if they accept it."
            )
        return (
            f"{head} Its outcome is not known yet: if it is accepted for review it will appear "
            f"on their memory page as a suggestion from {answer.session.agent}."
        )
