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

READMES = {"README.md": 2, "sdk/README.md": 3}
_FENCE = re.compile(r"^```(\w+) ([\w.-]+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
PLACEHOLDERS = {
    "url": ("http://127.0.0.1:8000", "https://abc123.execute-api.us-east-1.amazonaws.com/api"),
    "credentials": ("/path/to/personal-memory/.local/credentials.json",),
    "user": ("alice", "your-sign-in-subject"),
}


def _snippets() -> list[tuple[str, str, str]]:
    found = []
    for readme, expected in READMES.items():
        blocks = [(readme, tag, body) for _, tag, body in _FENCE.findall((ROOT / readme).read_text())]
        blocks = [b for b in blocks if b[1] in ("claude_desktop_config.json", "claude-code", "mcp-client")]
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


def _localize(value: str, live: Any, user: str) -> str:
    replacements = {"url": live.url, "credentials": str(live.credentials_file), "user": user}
    for what, spelled in PLACEHOLDERS.items():
        if value in spelled:
            return replacements[what]
    return value


@pytest.mark.parametrize("snippet", _snippets(), ids=lambda s: f"{s[0]}:{s[1]}")
def test_the_readme_snippet_starts_a_server_that_reads_the_gated_context(
    snippet: tuple[str, str, str], live: Any, tmp_path: Path
) -> None:
    readme, tag, body = snippet
    command, args, env = _as_client_reads_it(tag, body)
    assert command == "personal-memory-mcp" and console_script(command) == ("personal_memory_sdk.mcp_server", "main")
    user = unique("readme")
    token = live.token(user)
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    assert live.request("POST", "/v1/memory", token=token, body={"text": "Reads the README"})[0] == 201
    args = [_localize(arg, live, user) for arg in args]
    env = {name: _localize(value, live, user) for name, value in env.items()}
    if "PERSONAL_MEMORY_HOST_PROFILE" in env:  # the deployed-stage form: the profiles it names
        keys = json.loads(Path(live.credentials_file).read_text())
        shared = tmp_path / "aws-credentials"
        shared.write_text(
            "".join(
                f"[{env[f'PERSONAL_MEMORY_{role.upper()}_PROFILE']}]\naws_access_key_id = "
                f"{keys[role]['access_key_id']}\naws_secret_access_key = {keys[role]['secret_access_key']}\n"
                for role in ("host", "worker")
            )
        )
        env.update({"AWS_SHARED_CREDENTIALS_FILE": str(shared), "AWS_CONFIG_FILE": str(tmp_path / "none")})

    async def read(client: Client) -> Any:
        return await client.call_tool("memory_context", {})

    answer = structured(run_client(parameters(args, env), read, client_name="Claude Code"))
    assert [item["text"] for item in answer["items"]] == ["Reads the README"], readme
    assert answer["agent"] == "claude-code" and answer["session_tainted"] is True
