"""`make demo`'s MCP path: an MCP client (named Claude Code) drives `personal-memory-mcp` over stdio.

The server is started as a desktop client starts it, with the stack's address and keys file; the
client is the official MCP SDK's. The steps read what the person's page then shows.
"""
from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local.fresh_loop import run_apart

if TYPE_CHECKING:
    from local.demo import Step, Story

ROOT = Path(__file__).resolve().parent.parent
CLIENT_NAME = "Claude Code"
AGENT = "claude-code"  # the client's name folded to the id rules
MCP_PROPOSAL_TEXT = "Likes examples before theory"

__all__ = ["AGENT", "CLIENT_NAME", "McpStory"]


class McpStory:
    """Three steps over MCP, after the main story; they leave the first user as they found her (off)."""

    def __init__(self, story: Story) -> None:
        self.story = story
        self.state: dict[str, Any] = {}

    def steps(self) -> list[Step]:
        from local.demo import Step

        a = self.story.alice
        return [
            Step(f"an MCP client ({CLIENT_NAME}, stdio) is given nothing while {a}'s memory is off, "
                 "and is told why in words", self.nothing_while_off),
            Step(f"{a} turns memory on; memory_context gives her entry in the data-only block",
                 self.context_once_on),
            Step(f"memory_propose only suggests: it waits on {a}'s page from {AGENT}, tainted; she rejects it",
                 self.suggestion_waits),
        ]

    def _call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """One MCP session: start the server, call one tool, stop; the result's structured content."""
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters
        from mcp_types import Implementation

        from local.demo import StepFailed

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "personal_memory_sdk.mcp_server", "--base-url", self.story.url,
                  "--user", self.story.alice, "--credentials-file", str(self.story.credentials_file)],
            env={"PYTHONPATH": str(ROOT / "sdk")},
            cwd=str(ROOT),
        )

        async def session(body: Callable[[Any], Awaitable[Any]]) -> Any:
            info = Implementation(name=CLIENT_NAME, version="1.0.0")
            async with Client(params, client_info=info, mode="legacy", read_timeout_seconds=30) as client:
                return await body(client)

        result = run_apart(session(lambda client: client.call_tool(tool, arguments)))
        if result.is_error or not isinstance(result.structured_content, dict):
            raise StepFailed(f"{tool} answered an error")
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        return result.structured_content, text

    def nothing_while_off(self) -> None:
        from local.demo import StepFailed

        answer, text = self._call("memory_context", {})
        if answer["items"]:
            raise StepFailed(f"memory_context gave {len(answer['items'])} items while memory is off")
        if "memory is off, or this client isn't allowed to read it" not in text:
            raise StepFailed("memory_context gave no reason in words")

    def context_once_on(self) -> None:
        from local.demo import NEW_ENTRY_TEXT, StepFailed

        self.story._set_enabled(self.story.alice, True)
        answer, text = self._call("memory_context", {})
        texts = [item["text"] for item in answer["items"]]
        if texts != [NEW_ENTRY_TEXT]:
            raise StepFailed(f"memory_context gave {len(texts)} items, expected her one entry")
        if not text.startswith("<<<MEMORY_NOTES_BEGIN ") or answer["agent"] != AGENT:
            raise StepFailed("the context is not the SDK's prompt block, or the client is not named")

    def suggestion_waits(self) -> None:
        from local.demo import StepFailed

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
