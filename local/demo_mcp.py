"""`make demo`'s MCP path: an MCP client (named Claude Code) drives `personal-memory-mcp` over stdio.

The server is started as a desktop client starts it, with the stack's address and keys file; the
client is the official MCP SDK's. The three steps share one session, as a client keeps one for a
conversation (`_Session`: the client's task lives on a loop thread of its own, so its anyio scopes open and
close in one task); the last step ends it. The steps read what the person's page then shows.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import Any

from local.demo_steps import NEW_ENTRY_TEXT, PersonStory, Step, StepFailed

ROOT = Path(__file__).resolve().parent.parent
CLIENT_NAME = "Claude Code"
AGENT = "claude-code"  # the client's name folded to the id rules
MCP_PROPOSAL_TEXT = "Likes examples before theory"

__all__ = ["AGENT", "CLIENT_NAME", "McpStory"]


class McpStory:
    """Three steps over MCP, after the main story; they leave the first user as they found her (off)."""

    def __init__(self, story: PersonStory) -> None:
        self.story = story
        self.state: dict[str, Any] = {}

    def steps(self) -> list[Step]:
        a = self.story.alice
        return [
            Step(
                f"an MCP client ({CLIENT_NAME}, stdio) is given nothing while {a}'s memory is off, "
                "and is told why in words",
                self.nothing_while_off,
            ),
            Step(f"{a} turns memory on; memory_context gives her entry in the data-only block", self.context_once_on),
            Step(
                f"memory_propose only suggests: it waits on {a}'s page from {AGENT}, tainted; she rejects it",
                self.suggestion_waits,
            ),
        ]

    def _call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """One tool call in the story's MCP session (started by the first): the result's structured content."""
        if "session" not in self.state:
            self.state["session"] = _Session(self.story.url, self.story.alice, self.story.credentials_file)
        result = self.state["session"].call(tool, arguments)
        if result.is_error or not isinstance(result.structured_content, dict):
            raise StepFailed(f"{tool} answered an error")
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        return result.structured_content, text

    def _end_session(self) -> None:
        session = self.state.pop("session", None)
        if session is not None:
            session.close()

    def nothing_while_off(self) -> None:
        answer, text = self._call("memory_context", {})
        if answer["items"]:
            raise StepFailed(f"memory_context gave {len(answer['items'])} items while memory is off")
        if "memory is off, or this client isn't allowed to read it" not in text:
            raise StepFailed("memory_context gave no reason in words")

    def context_once_on(self) -> None:
        self.story._set_enabled(self.story.alice, True)
        answer, text = self._call("memory_context", {})
        texts = [item["text"] for item in answer["items"]]
        if texts != [NEW_ENTRY_TEXT]:
            raise StepFailed(f"memory_context gave {len(texts)} items, expected her one entry")
        if not text.startswith("<<<MEMORY_NOTES_BEGIN ") or answer["agent"] != AGENT:
            raise StepFailed("the context is not the SDK's prompt block, or the client is not named")

    def suggestion_waits(self) -> None:
        try:
            self._suggestion_waits()
        finally:
            self._end_session()  # the last MCP step, held or not: the server stops with it

    def _suggestion_waits(self) -> None:
        a = self.story.alice
        answer, text = self._call("memory_propose", {"text": MCP_PROPOSAL_TEXT, "kind": "preference"})
        if answer["status"] != "waiting_for_review" or not text.startswith(f"Suggested — waiting for {a}"):
            raise StepFailed(f"memory_propose answered {answer['status']}")
        mine = [p for p in self.story._view(a)["proposals"] if p["id"] == answer["proposal_id"]]
        if len(mine) != 1 or mine[0]["agent"] != AGENT or mine[0]["tainted"] is not True:
            raise StepFailed("the suggestion is not waiting on the page from the client, tainted")
        status, _, _ = self.story._user(a, "POST", f"/v1/memory/{answer['proposal_id']}/reject")
        if status != 204:
            raise StepFailed(f"rejecting the suggestion answered {status}")
        self.story._set_enabled(a, False)  # as the main story left her


class _SessionEnded(RuntimeError):
    """A call the session turned away as it ended (the reason is the session's own error)."""


_CALL_TIMEOUT_S = (
    90.0  # a step that hangs fails; the client gives up reading first (60 s), a suggestion waits 30 s at most
)


class _Session:
    """`personal-memory-mcp` over stdio with one MCP client session, held open across calls.

    The SDK's client must be entered and left in one task: that task runs on a loop thread of its own and
    takes calls from a queue (a test process may already run a loop in its own thread: Playwright's).
    """

    def __init__(self, base_url: str, user: str, credentials_file: Path, *, token: str | None = None) -> None:
        from mcp.client.stdio import StdioServerParameters

        # A connection token (issue 38) is all a person's own client needs; otherwise the trusted-host mode.
        who = ["--token", token] if token else ["--user", user, "--credentials-file", str(credentials_file)]
        self._params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m",
                "personal_memory_sdk.mcp_cli",
                "--base-url",
                base_url,
                *who,
                # the longest wait allowed: the answer comes as soon as the pump has handled the suggestion,
                # and a loaded machine's pump can take more than the default 3 s
                "--outcome-wait",
                "30",
            ],
            env={"PYTHONPATH": str(ROOT / "sdk")},
            cwd=str(ROOT),
        )
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-session", daemon=True)
        self._thread.start()
        self._calls: asyncio.Queue[tuple[str, dict[str, Any], Future[Any]] | None] = asyncio.Queue()
        self._task = asyncio.run_coroutine_threadsafe(self._serve(), self._loop)

    async def _serve(self) -> None:
        from mcp import Client
        from mcp_types import Implementation

        info = Implementation(name=CLIENT_NAME, version="1.0.0")
        try:
            async with Client(self._params, client_info=info, mode="legacy", read_timeout_seconds=60) as client:
                while (call := await self._calls.get()) is not None:
                    tool, arguments, answer = call
                    try:
                        answer.set_result(await client.call_tool(tool, arguments))
                    except Exception as exc:  # noqa: BLE001 - handed to the step that asked, which fails
                        answer.set_exception(exc)
        finally:
            self._turn_away_queued_calls()

    def _turn_away_queued_calls(self) -> None:
        """Calls still queued as the session ends fail with `_SessionEnded`, never hang (on the loop thread)."""
        while not self._calls.empty():
            pending = self._calls.get_nowait()
            if pending is not None:
                pending[2].set_exception(_SessionEnded("the MCP session ended"))

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The tool's result, or the session's own error if it failed to start or broke, even while this call
        was being queued: a call put after the session's last look at its queue is answered by no one, so it
        waits on the session too, never the whole timeout."""
        answer: Future[Any] = Future()
        self._loop.call_soon_threadsafe(self._calls.put_nowait, (tool, arguments, answer))
        wait([answer, self._task], timeout=_CALL_TIMEOUT_S, return_when=FIRST_COMPLETED)
        if answer.done() and not isinstance(answer.exception(), _SessionEnded):
            return answer.result()  # the tool's answer, or the error the client raised for it
        if answer.done():
            wait([self._task], timeout=5)  # turned away as the session ended: say why it ended
        if self._task.done():
            self._task.result()  # the session failed to start or broke: its error, for the step
            raise _SessionEnded("the MCP session ended")
        raise TimeoutError(f"{tool} gave no answer in {_CALL_TIMEOUT_S:.0f} s")

    def close(self) -> None:
        """Ends the session (the server exits with its stdin) and the loop thread."""
        self._loop.call_soon_threadsafe(self._calls.put_nowait, None)
        try:
            self._task.result(timeout=_CALL_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - a session that broke has already failed its step
            pass
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            if not self._thread.is_alive():
                self._loop.close()
