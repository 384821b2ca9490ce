"""`POST /mcp` through the real HTTP server, driven by both official MCP clients (Python and TypeScript SDKs).

The TypeScript client is pinned in tests/http/mcp_client_ts/package-lock.json and installed with `npm ci`
the first time (offline from npm's cache when it holds the pins).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

TS_CLIENT = Path(__file__).resolve().parent / "mcp_client_ts"


@pytest.fixture(scope="module")
def ts_client() -> Path:
    if not (TS_CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        npm = shutil.which("npm")
        assert npm, "npm is needed to install the pinned MCP TypeScript client"
        subprocess.run(
            [npm, "ci", "--prefer-offline", "--no-audit", "--no-fund"],
            cwd=TS_CLIENT,
            check=True,
            capture_output=True,
            timeout=300,
        )
    return TS_CLIENT / "client.mjs"


def _person(live: Any, *texts: str, trusted: bool = False) -> tuple[str, str, str]:
    """A person with memory on and `texts` kept, and a connection "claude-code": (user, sign-in token, connection token)."""
    user = f"mcp-{uuid.uuid4().hex[:8]}"
    token = live.token(user)
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    for text in texts:
        assert live.request("POST", "/v1/memory", token=token, body={"text": text})[0] == 201
    status, made, _ = live.request(
        "POST", "/v1/connections", token=token, body={"agent": "claude-code", "trusted": trusted}
    )
    assert status == 201, made
    return user, token, made["token"]


def _run_ts(client: Path, url: str, token: str | None, calls: list[Any]) -> dict[str, Any]:
    node = shutil.which("node")
    assert node
    done = subprocess.run(
        [node, str(client), url, token or "-", json.dumps(calls)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return dict(json.loads(done.stdout))


def _waiting(live: Any, token: str, attempts: int = 300) -> list[dict[str, Any]]:
    import time

    for _ in range(attempts):  # the stack's pump hands the event to the consumer within a few seconds
        status, view, _ = live.request("GET", "/v1/memory", token=token)
        if view["proposals"]:
            return list(view["proposals"])
        time.sleep(0.1)
    return []


def test_the_typescript_client_reads_and_suggests_with_a_bearer_token(live: Any, ts_client: Path) -> None:
    _, token, connection = _person(live, "likes green tea")
    out = _run_ts(
        ts_client,
        live.url + "/mcp",
        connection,
        [
            ["memory_context", {}],
            ["memory_propose", {"text": "Prefers tea to coffee", "kind": "preference"}],
            ["memory_delete", {}],
        ],
    )
    assert "error" not in out, out
    assert out["sessionId"] is None and out["server"]["name"] == "personal-memory"
    assert [t["name"] for t in out["tools"]] == ["memory_context", "memory_propose"]
    context, proposed, unknown = out["calls"]
    [item] = context["structuredContent"]["items"]
    assert item == {"text": "likes green tea", "kind": "note", "pinned": False, "tainted": False, "ref": item["ref"]}
    assert f"ref={item['ref']}" in context["content"][0]["text"]  # the model sees it in the block as well
    assert (
        proposed["structuredContent"]["status"] == "pending" and proposed["structuredContent"]["agent"] == "claude-code"
    )
    assert unknown.get("isError") is True or unknown.get("thrown") == "-32602"
    (waiting,) = _waiting(live, token)
    assert (waiting["text"], waiting["agent"], waiting["tainted"]) == ("Prefers tea to coffee", "claude-code", True)


def test_the_typescript_client_without_a_token_is_told_401(live: Any, ts_client: Path) -> None:
    out = _run_ts(ts_client, live.url + "/mcp", None, [])
    assert "error" in out and out["code"] == 401
    status, body, headers = live.request("POST", "/mcp", body={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert status == 401 and body["code"] == "unauthorized"
    challenge = {k.lower(): v for k, v in headers.items()}["www-authenticate"]
    assert challenge == f'Bearer resource_metadata="{live.url}/.well-known/oauth-protected-resource/mcp"'
    status, metadata, _ = live.request("GET", "/.well-known/oauth-protected-resource/mcp")
    assert status == 200 and metadata["resource"] == live.url + "/mcp"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_python_client_reads_and_suggests_with_a_bearer_token(live: Any, mode: str) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from local.fresh_loop import run_apart

    _, token, connection = _person(live, "walks at six", trusted=True)

    async def session() -> tuple[Any, Any, Any]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {connection}"}, timeout=60)
        async with http, Client(streamable_http_client(live.url + "/mcp", http_client=http), mode=mode) as client:
            tools = (await client.list_tools()).tools
            context = await client.call_tool("memory_context", {})
            proposed = await client.call_tool("memory_propose", {"text": "Reads before bed", "kind": "fact"})
            return tools, context, proposed

    tools, context, proposed = run_apart(session())
    assert [t.name for t in tools] == ["memory_context", "memory_propose"]
    assert context.structured_content["items"][0]["text"] == "walks at six"
    assert (
        proposed.structured_content["status"] == "pending" and proposed.structured_content["session_tainted"] is False
    )
    (waiting,) = _waiting(live, token)
    assert (waiting["text"], waiting["agent"], waiting["tainted"]) == ("Reads before bed", "claude-code", False)


def test_a_revoked_connection_stops_at_the_next_call(live: Any, ts_client: Path) -> None:
    _, token, connection = _person(live, "likes green tea")
    status, listed, _ = live.request("GET", "/v1/connections", token=token)
    assert live.request("DELETE", f"/v1/connections/{listed['connections'][0]['id']}", token=token)[0] == 204
    out = _run_ts(ts_client, live.url + "/mcp", connection, [["memory_context", {}]])
    assert out.get("code") == 401, out
