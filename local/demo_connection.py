"""`make demo`'s connection path (issue 38): a person connects "claude-code" and that client works with no role.

She makes the connection (as the Agents tab does), pastes its token into an MCP client's configuration, and
the client reads her notes and leaves a suggestion two ways: `personal-memory-mcp --token` over stdio, and
`POST /mcp` with the bearer header (the official Python SDK's client). No credentials file or AWS key is
given to either. Then she revokes it, and both stop at their next call. She is left as she was found (off).
"""

from __future__ import annotations

from typing import Any

from local.demo_steps import NEW_ENTRY_TEXT, PUMP_WAIT_SECONDS, PersonStory, Step, StepFailed, expect, http

AGENT = "claude-code"
STDIO_TEXT = "Prefers short answers in the morning"
HTTP_TEXT = "Reads on the train"

__all__ = ["ConnectionStory"]


class ConnectionStory:
    def __init__(self, story: PersonStory) -> None:
        self.story = story
        self.state: dict[str, Any] = {}

    def steps(self) -> list[Step]:
        a = self.story.alice
        return [
            Step(
                f"{a} connects “{AGENT}” (POST /v1/connections): its token is shown once; no role, no credentials file",
                self.connects,
            ),
            Step(
                f"personal-memory-mcp with only --token reads her notes and suggests: it waits on her page from {AGENT}",
                self.stdio_with_token,
            ),
            Step(
                "an MCP client over HTTP (POST /mcp, Authorization: Bearer) reads and suggests the same way",
                self.http_with_bearer,
            ),
            Step(
                f"{a} revokes it: the next call on /mcp and the agent routes is 401; what it suggested stays for her",
                self.revoked,
            ),
        ]

    def connects(self) -> None:
        a = self.story.alice
        self.story._set_enabled(a, True)
        status, made, raw = self.story._user(a, "POST", "/v1/connections", {"agent": AGENT})
        expect(status, 201, "POST /v1/connections")
        if not made["token"].startswith("pmc_"):
            raise StepFailed("the token is not a connection token")
        status, listed, raw = self.story._user(a, "GET", "/v1/connections")
        if status != 200 or made["token"] in raw or listed["connections"][0]["last_used_at"] is not None:
            raise StepFailed("the list shows the token, or a use before any")
        self.state["made"] = made

    def _made(self) -> dict[str, Any]:
        if "made" not in self.state:
            raise StepFailed("needs the connection from the step before")
        return dict(self.state["made"])

    def _waiting_from_agent(self, text: str) -> dict[str, Any]:
        mine = [p for p in self.story._view(self.story.alice)["proposals"] if p["text"] == text]
        if len(mine) != 1 or mine[0]["agent"] != AGENT or mine[0]["tainted"] is not True:
            raise StepFailed(f"the suggestion is not waiting on her page from {AGENT}, tainted")
        return mine[0]

    def stdio_with_token(self) -> None:
        from local.demo_mcp import _Session

        session = _Session(self.story.url, "", self.story.credentials_file, token=self._made()["token"])
        try:
            context = session.call("memory_context", {})
            proposed = session.call("memory_propose", {"text": STDIO_TEXT, "kind": "preference"})
        finally:
            session.close()
        seen = context.structured_content or {}
        if (
            context.is_error
            or [i["text"] for i in seen.get("items", [])] != [NEW_ENTRY_TEXT]
            or seen.get("agent") != AGENT
        ):
            raise StepFailed("memory_context did not give her one entry as claude-code")
        if proposed.is_error or (proposed.structured_content or {}).get("status") != "waiting_for_review":
            raise StepFailed("memory_propose did not leave a suggestion for review")
        self._waiting_from_agent(STDIO_TEXT)

    def http_with_bearer(self) -> None:
        import time

        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        from local.fresh_loop import run_apart

        token = self._made()["token"]

        async def use() -> tuple[Any, Any]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
            async with (
                http,
                Client(streamable_http_client(self.story.url + "/mcp", http_client=http), mode="legacy") as client,
            ):
                return await client.call_tool("memory_context", {}), await client.call_tool(
                    "memory_propose", {"text": HTTP_TEXT}
                )

        context, proposed = run_apart(use())
        if [i["text"] for i in (context.structured_content or {}).get("items", [])] != [NEW_ENTRY_TEXT]:
            raise StepFailed("POST /mcp memory_context did not give her one entry")
        if (proposed.structured_content or {}).get("status") != "pending":
            raise StepFailed("POST /mcp memory_propose did not take the suggestion")
        deadline = time.monotonic() + PUMP_WAIT_SECONDS
        while True:  # the pump hands the event to the consumer, as Lambda would
            try:
                self._waiting_from_agent(HTTP_TEXT)
                return
            except StepFailed:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def revoked(self) -> None:
        a, made = self.story.alice, self._made()
        status, _, _ = self.story._user(a, "DELETE", f"/v1/connections/{made['id']}")
        expect(status, 204, "DELETE /v1/connections/{id}")
        bearer = {"Authorization": f"Bearer {made['token']}", "Content-Type": "application/json"}
        ping = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_context"}}'
        for method, path, body in (("POST", "/mcp", ping), ("GET", "/v1/agent/memory", None)):
            status, _ = http(self.story.url + path, method, bearer, body)
            expect(status, 401, f"{method} {path} with the revoked token")
        for text in (STDIO_TEXT, HTTP_TEXT):
            waiting = self._waiting_from_agent(text)
            status, _, _ = self.story._user(a, "POST", f"/v1/memory/{waiting['id']}/reject")
            if status != 204:
                raise StepFailed(f"rejecting a suggestion answered {status}")
        self.story._set_enabled(a, False)  # as the earlier steps left her
