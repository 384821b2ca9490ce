"""An agent the person blocks (PUT /v1/agents/{id}, issue 23) gets `[]` and its suggestions refused,
over MCP: the block is the person's, and it holds for the agent named after the MCP client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp import Client
from mcp_stdio import local_args, parameters, run_client, structured, text_of, unique

from tests.support.stored import StoredState


def test_a_blocked_client_gets_nothing_and_its_suggestions_are_refused(live: Any) -> None:
    stored = StoredState(Path(live.credentials_file).parent / "stack.json")
    user = unique("mcp-blocked")
    token = live.token(user)
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    assert live.request("POST", "/v1/memory", token=token, body={"text": "Plays the cello"})[0] == 201
    status, row, _ = live.request(
        "PUT", "/v1/agents/claude-desktop", token=token, body={"read": False, "propose": False}
    )
    assert status == 200 and row["read"] is False and row["propose"] is False, row

    async def read_and_propose(client: Client) -> Any:
        return (
            await client.call_tool("memory_context", {}),
            await client.call_tool("memory_propose", {"text": "Practises daily"}),
        )

    server = parameters(local_args(live.url, user, live.credentials_file))
    context, proposal = run_client(server, read_and_propose, client_name="Claude Desktop")
    assert structured(context)["items"] == [] and "isn't allowed to read it" in text_of(context)
    assert "Plays the cello" not in text_of(context)
    answer = structured(proposal)
    assert (answer["status"], answer["reason"]) == ("refused", "agent_blocked")
    assert "does not allow this client" in text_of(proposal) and "Practises" not in text_of(proposal)
    status, page, _ = live.request("GET", "/v1/memory", token=token)
    assert status == 200 and page["proposals"] == [] and stored.proposals(user) == []
    journal = [r for r in stored.partition("journal", user) if r.get("action") == "keep.memory.context"]
    assert len(journal) == 1 and "agent_blocked" in json.dumps(journal[0], default=repr)

    # Another client of the same person is not blocked by it.
    async def read(client: Client) -> Any:
        return await client.call_tool("memory_context", {})

    other = structured(run_client(server, read, client_name="Claude Code"))
    assert [item["text"] for item in other["items"]] == ["Plays the cello"]
