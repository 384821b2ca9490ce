"""`make demo`'s MCP session (local/demo_mcp.py): a call never outwaits the session it was queued on, and
a call the session could not take says why the session ended."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from local import demo_mcp


class _EndsWhileTheCallIsQueued(demo_mcp._Session):
    """Its start fails while a call is on its way in: the loop thread is held (`gate`) after the session has
    started serving, so the call looks at a live session and queues itself behind the held loop; the session
    then ends, turning away an empty queue, before the call reaches the queue. A server that could not start
    once stalled the demo test this way for the whole 60 s timeout."""

    def __init__(self, *args: object) -> None:
        self.serving = threading.Event()
        self.gate = threading.Event()
        super().__init__(*args)  # type: ignore[arg-type]

    async def _serve(self) -> None:
        self.serving.set()
        try:
            self.gate.wait(10)  # blocks the loop itself
            raise RuntimeError("the server cannot start")
        finally:
            self._turn_away_queued_calls()


class _FailsWithACallQueued(demo_mcp._Session):
    """Its start fails after a call has reached the queue: the call is turned away as the session ends."""

    async def _serve(self) -> None:
        try:
            while self._calls.empty():
                await asyncio.sleep(0.01)
            raise RuntimeError("the server cannot start")
        finally:
            self._turn_away_queued_calls()


class _FailsAtOnce(demo_mcp._Session):
    async def _serve(self) -> None:
        raise RuntimeError("the server cannot start")


def _session(kind: type[demo_mcp._Session], tmp_path: Path) -> demo_mcp._Session:
    return kind("http://127.0.0.1:9", "alice", tmp_path / "keys.json")


def test_a_call_queued_as_the_session_ends_gets_the_sessions_error_not_the_timeout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(demo_mcp, "_CALL_TIMEOUT_S", 5.0)  # the old wait: a TimeoutError after this
    session = _session(_EndsWhileTheCallIsQueued, tmp_path)
    assert isinstance(session, _EndsWhileTheCallIsQueued)
    assert session.serving.wait(5)
    threading.Timer(0.3, session.gate.set).start()
    try:
        with pytest.raises(RuntimeError, match="the server cannot start"):
            session.call("memory_context", {})
    finally:
        session.close()
    assert not session._thread.is_alive()


@pytest.mark.parametrize("kind", [_FailsWithACallQueued, _FailsAtOnce])
def test_a_call_the_session_could_not_take_says_why_it_ended(
    kind: type[demo_mcp._Session], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(demo_mcp, "_CALL_TIMEOUT_S", 5.0)
    session = _session(kind, tmp_path)
    try:
        with pytest.raises(RuntimeError, match="the server cannot start"):
            session.call("memory_context", {})
        with pytest.raises(RuntimeError, match="the server cannot start"):
            session.call("memory_context", {})  # and so does every call after it
    finally:
        session.close()
    assert not session._thread.is_alive()
