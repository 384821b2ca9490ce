"""The host's side of the API: register sessions, mark them untrusted, fetch the memory context.

The host (the runtime that starts agent sessions) is the only caller that says which user a
session belongs to and whether the agent's manifest asked for memory; the agent itself never can.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ._base import SignedClient, session_path
from .errors import ProtocolError
from .memory import MemoryItems

__all__ = ["HostClient", "Session"]


@dataclass(frozen=True, slots=True)
class Session:
    """A registered session as the server stores it."""

    session_id: str
    user_id: str | None
    thread_id: str | None
    agent: str
    memory: bool
    tainted: bool

    @classmethod
    def from_json(cls, document: object) -> Session:
        if not isinstance(document, Mapping):
            raise ValueError("session is not an object")
        manifest = document.get("manifest")
        memory = manifest.get("memory") if isinstance(manifest, Mapping) else None
        if not isinstance(memory, bool):
            raise ValueError("manifest.memory is missing or not a boolean")
        for name in ("session_id", "agent"):
            if not isinstance(document.get(name), str):
                raise ValueError(f"{name} is missing or not a string")
        for name in ("user_id", "thread_id"):
            if document.get(name) is not None and not isinstance(document.get(name), str):
                raise ValueError(f"{name} is not a string or null")
        if not isinstance(document.get("tainted"), bool):
            raise ValueError("tainted is missing or not a boolean")
        return cls(
            session_id=document["session_id"],
            user_id=document.get("user_id"),
            thread_id=document.get("thread_id"),
            agent=document["agent"],
            memory=memory,
            tainted=document["tainted"],
        )


class HostClient(SignedClient):
    """Signed as a host role."""

    ROLE = "host"

    def register_session(
        self,
        session_id: str,
        *,
        user_id: str | None,
        agent: str,
        memory: bool,
        thread_id: str | None = None,
    ) -> Session:
        """Register (or repeat the registration of) a session.

        `memory` is the agent manifest's `"memory"` flag (from its pack.json). Repeating the same
        registration is harmless; another user or manifest for a known session is a ConflictError.
        """
        if not isinstance(memory, bool):
            raise TypeError("memory must be a boolean (the manifest's flag)")
        body = {
            "user_id": user_id,
            "thread_id": thread_id,
            "agent": agent,
            "manifest": {"memory": memory},
        }
        return self._session("PUT", session_path(session_id), body)

    def mark_untrusted(self, session_id: str) -> Session:
        """Record that the session read untrusted content; proposals from it will be tainted."""
        return self._session("POST", session_path(session_id, "/untrusted"), None)

    def fetch_context(self, session_id: str) -> MemoryItems:
        """The memory items the agent of this session may see (empty unless every gate is open)."""
        path = session_path(session_id, "/memory")
        answer = self._transport.request("GET", path)
        try:
            if not isinstance(answer, dict):
                raise ValueError("body is not an object")
            return MemoryItems.from_json(answer.get("items"))
        except ValueError as exc:
            raise ProtocolError("GET", path, str(exc)) from None

    def _session(self, method: str, path: str, body: Mapping[str, object] | None) -> Session:
        answer = self._transport.request(method, path, body)
        try:
            return Session.from_json(answer)
        except ValueError as exc:
            raise ProtocolError(method, path, str(exc)) from None
