"""`POST /mcp` through the real route against moto: the protocol's stateless subset, the two tools, and bad input."""

from __future__ import annotations

import asyncio
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from chalicelib.services import connections as connections_service
from tests.support.raw_storage import every_item

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_cached_lookup() -> None:
    connections_service.forget_cache()


def _token(api: Any, user: str = "alice", **fields: Any) -> str:
    status, body = api.call("POST", "/v1/connections", user, {"agent": "claude-code", **fields})
    assert status == 201, body
    return str(body["token"])


def _mcp(
    client: Any, token: str | None, message: Any = None, raw: str | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, dict[str, str]]:
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    response = client.http.post("/mcp", headers=sent, body=raw if raw is not None else json.dumps(message))
    text = response.body.decode() if isinstance(response.body, bytes) else response.body
    return (
        response.status_code,
        (json.loads(text) if text else None),
        {k.lower(): v for k, v in response.headers.items()},
    )


def _call(client: Any, token: str, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    status, body, _ = _mcp(
        client,
        token,
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": arguments or {}}},
    )
    assert status == 200 and body["id"] == 7, body
    return dict(body["result"])


def test_without_a_token_it_is_401_naming_the_resource_metadata(api: Any, client: Any, issuer: Any) -> None:
    for token in (None, issuer.mint("alice"), "pmc_" + "A" * 43 + "00000000"):
        status, body, headers = _mcp(
            client, token, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Host": "api.example.org"}
        )
        assert status == 401 and body["code"] == "unauthorized"
        assert (
            headers["www-authenticate"]
            == 'Bearer resource_metadata="http://api.example.org/.well-known/oauth-protected-resource/mcp"'
        )
    response = client.http.get("/.well-known/oauth-protected-resource/mcp", headers={"Host": "api.example.org"})
    assert response.status_code == 200
    assert json.loads(response.body)["resource"] == "http://api.example.org/mcp"


def test_a_smuggled_host_header_never_reaches_the_challenge(client: Any) -> None:
    for host in ('evil.org" x="y', "a b", "x" * 300, "evil.org/path"):
        _, _, headers = _mcp(client, None, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Host": host})
        assert headers["www-authenticate"] == 'Bearer resource_metadata="/.well-known/oauth-protected-resource/mcp"'


def test_initialize_ping_and_notifications_are_stateless(api: Any, client: Any) -> None:
    token = _token(api)
    status, body, headers = _mcp(
        client,
        token,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"},
            },
        },
    )
    assert status == 200 and body["result"]["protocolVersion"] == "2025-06-18"
    assert body["result"]["capabilities"] == {"tools": {"listChanged": False}} and "mcp-session-id" not in headers
    assert _mcp(client, token, {"jsonrpc": "2.0", "method": "notifications/initialized"})[:2] == (202, None)
    assert _mcp(client, token, {"jsonrpc": "2.0", "id": "p", "method": "ping"})[1] == {
        "jsonrpc": "2.0",
        "id": "p",
        "result": {},
    }
    assert client.http.get("/mcp", headers={"Authorization": f"Bearer {token}"}).status_code == 405


def test_the_tools_are_the_stdio_servers_own(api: Any, client: Any) -> None:
    sys.path.insert(0, str(ROOT / "sdk"))
    from personal_memory_sdk.mcp_server import build_server

    # In a thread of its own: a test before this one on the same worker may have left an event loop running
    # in this thread (asyncio.run refuses to nest), which made this test fail depending on the order.
    listing = build_server(object(), bridge=object()).list_tools()  # type: ignore[arg-type]
    with ThreadPoolExecutor(max_workers=1) as pool:
        stdio = pool.submit(asyncio.run, listing).result()
    expected = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in stdio]
    status, body, _ = _mcp(client, _token(api), {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert status == 200 and body["result"]["tools"] == expected


def test_the_prompt_block_is_the_sdks_own_code() -> None:
    sdk = (ROOT / "sdk/personal_memory_sdk/prompt.py").read_text()
    copy = (ROOT / "chalicelib/mcp/prompt.py").read_text()
    head, _, rest = copy.partition("\n\n")
    assert head.startswith('"""A copy of sdk/personal_memory_sdk/prompt.py')
    protocol = rest[rest.index("from typing import Protocol\n") : rest.index("__all__")]
    assert '"""' + rest.replace(protocol, "\nfrom .memory import MemoryItem\n\n") == sdk


def test_memory_context_gives_items_and_the_block_and_is_journaled(api: Any, client: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea", pinned=True)
    result = _call(client, _token(api), "memory_context")
    ref = result["structuredContent"]["items"][0]["ref"]
    assert isinstance(ref, str) and len(ref) == 44
    assert result["structuredContent"] == {
        "items": [{"text": "likes green tea", "kind": "note", "pinned": True, "tainted": False, "ref": ref}],
        "reason": None,
        "agent": "claude-code",
        "session_tainted": True,
    }
    assert "likes green tea" in result["content"][0]["text"] and "MEMORY_NOTES_BEGIN" in result["content"][0]["text"]
    rows = [r.public() for r in stores.journal.all("alice") if r.action == "keep.memory.context"]
    assert [(r["agent"], r["count"]) for r in rows] == [("claude-code", 1)]


def test_memory_propose_leaves_a_suggestion_for_the_consumer(api: Any, client: Any, stream: Any) -> None:
    api.turn_on("alice")
    token = _token(api, trusted=True)
    result = _call(client, token, "memory_propose", {"text": "Prefers tea", "kind": "preference"})
    assert (
        result["structuredContent"]["status"] == "pending" and result["structuredContent"]["session_tainted"] is False
    )
    stream.drain()
    (proposal,) = api.call("GET", "/v1/memory", "alice")[1]["proposals"]
    assert (proposal["agent"], proposal["kind"], proposal["tainted"]) == ("claude-code", "preference", False)
    outcome = client.http.get(
        f"/v1/agent/proposals/{result['structuredContent']['event_id']}", headers={"Authorization": f"Bearer {token}"}
    )
    assert json.loads(outcome.body)["outcome"]["type"] == "memory.proposed"


def test_memory_propose_replaces_a_ref_from_memory_context(api: Any, client: Any, stream: Any) -> None:
    api.turn_on("alice")
    old = api.add("alice", "Is vegetarian")
    token = _token(api)
    ref = _call(client, token, "memory_context")["structuredContent"]["items"][0]["ref"]
    result = _call(client, token, "memory_propose", {"text": "Is vegan now", "kind": "fact", "replaces": ref})
    assert result["structuredContent"]["status"] == "pending"
    stream.drain()
    (proposal,) = api.call("GET", "/v1/memory", "alice")[1]["proposals"]
    assert proposal["replaces"] == {"id": old["id"], "text": "Is vegetarian"}
    assert api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")[0] == 201
    assert [e["text"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]] == ["Is vegan now"]


BAD_MESSAGES: list[tuple[str, Any, int, int | None]] = [
    ("parse error", "{not json", 400, -32700),
    ("empty body", "", 400, -32700),
    ("lone surrogate", '{"jsonrpc": "2.0", "id": 1, "method": "\\ud800"}', 400, -32700),
    ("batch", [{"jsonrpc": "2.0", "id": 1, "method": "ping"}], 400, -32600),
    ("not an object", "7", 400, -32600),
    ("no jsonrpc", {"id": 1, "method": "ping"}, 400, -32600),
    ("wrong version", {"jsonrpc": "1.0", "id": 1, "method": "ping"}, 400, -32600),
    ("method a number", {"jsonrpc": "2.0", "id": 1, "method": 5}, 400, -32600),
    ("params a list", {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}, 400, -32600),
    ("an unknown member", {"jsonrpc": "2.0", "id": 1, "method": "ping", "extra": 1}, 400, -32600),
    ("params null", {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": None}, 400, -32600),
    ("id an object", {"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, 400, -32600),
    ("id a bool", {"jsonrpc": "2.0", "id": True, "method": "ping"}, 400, -32600),
    ("neither", {"jsonrpc": "2.0", "id": 1}, 400, -32600),
    ("unknown method", {"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, 200, -32601),
    (
        "unknown tool",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_delete"}},
        200,
        -32602,
    ),
    ("tool name a list", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": ["x"]}}, 200, -32602),
    (
        "arguments a list",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_propose", "arguments": []}},
        200,
        -32602,
    ),
    ("huge body", {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "a" * 70_000}}, 413, -32600),
    ("a client's response", {"jsonrpc": "2.0", "id": 1, "result": {}}, 202, None),
]


@pytest.mark.parametrize(("name", "message", "status", "code"), BAD_MESSAGES, ids=[b[0] for b in BAD_MESSAGES])
def test_bad_input_is_a_json_rpc_error_never_a_500(
    api: Any, client: Any, name: str, message: Any, status: int, code: int | None
) -> None:
    raw = message if isinstance(message, str) else json.dumps(message)
    got, body, _ = _mcp(client, _token(api), raw=raw)
    assert got == status, (name, body)
    if code is None:
        assert body is None
    else:
        assert body["jsonrpc"] == "2.0" and body["error"]["code"] == code and "a" * 50 not in json.dumps(body)


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"text": 5},
        {"text": "x", "kind": "recipe"},
        {"text": "x", "user": "bob"},
        {"text": "x", "kind": None},
        {"text": "x", "replaces": 5},
        {"text": "x", "replaces": "r" * 257},
    ],
)
def test_wrong_tool_arguments_are_a_tool_error_and_store_nothing(
    api: Any, client: Any, dynamodb: Any, arguments: dict[str, Any]
) -> None:
    api.turn_on("alice")
    token = _token(api)
    before = every_item(dynamodb)["t-events"]
    result = _call(client, token, "memory_propose", arguments)
    assert result["isError"] is True
    assert every_item(dynamodb)["t-events"] == before


def test_odd_unicode_text_is_proposed_or_refused_never_a_500(api: Any, client: Any, stream: Any) -> None:
    api.turn_on("alice")
    token = _token(api)
    for text in ("\u202etea\u202c", "\u0000nul", "e\u0301\u0301\u0301", "\U0001f600" * 10, "x" * 8001):
        result = _call(client, token, "memory_propose", {"text": text})
        assert result["structuredContent"]["status"] in ("pending", "refused"), text
    stream.drain()


def test_an_unsupported_protocol_header_is_400(api: Any, client: Any) -> None:
    status, body, _ = _mcp(
        client,
        _token(api),
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"MCP-Protocol-Version": "1999-01-01"},
    )
    assert status == 400 and body["error"]["code"] == -32600
