"""The README snippets for MCP clients work as written: each is parsed as its client would read it,
and the server it describes is started over stdio against a local stack and reads the gated context.

Only what a reader must change is replaced: the address and credentials path of *their* `make run`
(here the test stack's), the deployed stage's address, and the user. The command must be the SDK's
console script, which is run exactly as its installed wrapper would run it.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_stdio import ROOT, console_script, parameters, run_client, structured, unique

READMES = {"docs/agents.md": 2, "sdk/README.md": 4}  # the pages a person connecting a client reads
_FENCE = re.compile(r"^```(\w+) ([\w.-]+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
PLACEHOLDERS = {
    "url": ("http://127.0.0.1:8000", "https://abc123.execute-api.us-east-1.amazonaws.com/api"),
    "credentials": ("/path/to/personal-memory/.local/credentials.json",),
    "user": ("alice", "your-sign-in-subject"),
    "token": ("pmc_YOUR_CONNECTION_TOKEN",),
}
# A person's own client is given a connection, never a role (issue 38): no snippet may name one.
ROLE_WORDS = ("--credentials-file", "--user", "PROFILE", "PERSONAL_MEMORY_USER", "AWS_", "credentials.json")


def _snippets() -> list[tuple[str, str, str]]:
    found = []
    for readme, expected in READMES.items():
        blocks = [(readme, tag, body) for _, tag, body in _FENCE.findall((ROOT / readme).read_text())]
        blocks = [b for b in blocks if b[1] in ("claude_desktop_config.json", "claude-code", "mcp-client", "mcp-http")]
        assert len(blocks) == expected, f"{readme}: {[b[1] for b in blocks]}"
        found.extend(blocks)
    return found


def _as_client_reads_it(tag: str, body: str) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) as Claude Desktop / Claude Code / a generic client would take them."""
    if tag == "claude-code":
        words = shlex.split(body.strip())
        assert words[:3] == ["claude", "mcp", "add"] and "--" in words
        split = words.index("--")
        options, name = words[3 : split - 1], words[split - 1]
        assert name == "personal-memory" and options[:2] == ["--transport", "stdio"]
        assert not any(option.startswith(("-e", "--env")) for option in options)
        return words[split + 1], words[split + 2 :], {}
    server = json.loads(body)["mcpServers"]["personal-memory"]
    assert set(server) <= {"command", "args", "env"}
    return server["command"], list(server.get("args", [])), dict(server.get("env", {}))


def _localize(value: str, live: Any, user: str, token: str = "") -> str:
    replacements = {"url": live.url, "credentials": str(live.credentials_file), "user": user, "token": token}
    for what, spelled in PLACEHOLDERS.items():
        if value in spelled:
            return replacements[what]
    return value


@pytest.mark.parametrize("snippet", _snippets(), ids=lambda s: f"{s[0]}:{s[1]}")
def test_the_readme_snippet_starts_a_server_that_reads_the_gated_context(
    snippet: tuple[str, str, str], live: Any, tmp_path: Path
) -> None:
    readme, tag, body = snippet
    assert not any(word in body for word in ROLE_WORDS), f"{readme}:{tag} names a role or a credentials file"
    user = unique("readme")
    token = live.token(user)
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    assert live.request("POST", "/v1/memory", token=token, body={"text": "Reads the README"})[0] == 201
    status, made, _ = live.request("POST", "/v1/connections", token=token, body={"agent": "claude-code"})
    assert status == 201, made
    if tag == "mcp-http":
        answer = _over_http(body, live, made["token"])
    else:
        command, args, env = _as_client_reads_it(tag, body)
        assert command == "personal-memory-mcp" and console_script(command) == (
            "personal_memory_sdk.mcp_cli",
            "main",
        )
        args = [_localize(arg, live, user, made["token"]) for arg in args]
        env = {name: _localize(value, live, user, made["token"]) for name, value in env.items()}

        async def read(client: Client) -> Any:
            return await client.call_tool("memory_context", {})

        answer = structured(run_client(parameters(args, env), read, client_name="Some Client"))
    assert [item["text"] for item in answer["items"]] == ["Reads the README"], readme
    assert answer["agent"] == "claude-code" and answer["session_tainted"] is True


def _over_http(body: str, live: Any, token: str) -> dict[str, Any]:
    """`claude mcp add --transport http NAME URL --header H`, as Claude Code reads it, through the Python MCP client."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from local.fresh_loop import run_apart

    words = shlex.split(body.strip())
    assert words[:5] == ["claude", "mcp", "add", "--transport", "http"]
    url, header = words[-3], words[-1]
    assert words[-2] == "--header" and url == PLACEHOLDERS["url"][0] + "/mcp"
    name, _, value = header.partition(": ")
    value = value.replace(PLACEHOLDERS["token"][0], token)

    async def read() -> Any:
        http = httpx2.AsyncClient(headers={name: value}, timeout=60)
        async with http, Client(streamable_http_client(live.url + "/mcp", http_client=http), mode="legacy") as client:
            return await client.call_tool("memory_context", {})

    return structured(run_apart(read()))
