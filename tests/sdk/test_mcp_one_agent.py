"""Issue 37 #9: one MCP connection is one agent, named at its first handshake.

A client that sends `initialize` again under another name, or (on the stateless 2026-07-28 protocol)
names a different client on each call, used to go on as a new, unblocked agent with a fresh allowance of
suggestions. Spoken to as raw JSON-RPC over the server's stdio (the official client never re-initializes),
against the real local stack; then the stored proposals and sessions are read back.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from mcp_stdio import local_args, parameters, unique
from personal_memory_sdk.mcp_words import agent_name

from chalicelib.storage import dynamo
from tests.support.stored import StoredState

_MODERN = "2026-07-28"


class RawClient:
    """The server in a subprocess, spoken to one JSON-RPC line at a time."""

    def __init__(self, args: list[str]) -> None:
        params = parameters(args)
        self.process = subprocess.Popen(  # noqa: S603 - this interpreter, the SDK's console script
            [params.command, *params.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**__import__("os").environ, **(params.env or {})},
            cwd=params.cwd,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            answer = json.loads(self.lines.get(timeout=90))
            if answer.get("id") == self.next_id:
                return dict(answer)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def _initialize(name: str) -> dict[str, Any]:
    return {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": name, "version": "1.0.0"}}


def _propose(text: str, client: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "memory_propose", "arguments": {"text": text}}
    if client is not None:  # the stateless protocol: every request carries its envelope
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": _MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1.0.0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    return params


def _user(live: Any) -> tuple[str, str]:
    user = unique("mcp-one")
    token = live.token(user)
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    return user, token


def _stored_agents(live: Any, user: str) -> tuple[set[str], set[str]]:
    stored = StoredState(Path(live.credentials_file).parent / "stack.json")
    proposals = stored.proposals(user)
    return {str(p["agent"]) for p in proposals}, {str(p["src_session"]) for p in proposals}


def test_a_second_initialize_under_another_name_is_refused_and_the_connection_stays_the_first_agent(live: Any) -> None:
    user, token = _user(live)
    client = RawClient(local_args(live.url, user, live.credentials_file))
    try:
        assert "result" in client.request("initialize", _initialize("claude-code"))
        client.send({"method": "notifications/initialized"})
        first = client.request("tools/call", _propose("Likes hiking"))["result"]["structuredContent"]
        again = client.request("initialize", _initialize("Cursor"))
        assert again["error"]["code"] == -32600 and "claude-code" in again["error"]["message"], again
        second = client.request("tools/call", _propose("Likes sailing"))["result"]["structuredContent"]
    finally:
        client.close()
    assert first["agent"] == second["agent"] == "claude-code"
    assert first["status"] == second["status"] == "waiting_for_review"
    agents, sessions = _stored_agents(live, user)
    assert agents == {"claude-code"} and len(sessions) == 1
    page = live.request("GET", "/v1/agents", token=token)[1]
    assert [row["agent"] for row in page["agents"]] == ["claude-code"]


def test_on_the_stateless_protocol_the_first_client_name_holds_for_every_call(live: Any) -> None:
    user, _ = _user(live)
    client = RawClient(local_args(live.url, user, live.credentials_file))
    try:
        answers = [
            client.request("tools/call", _propose(f"Fact {n}", client=name))
            for n, name in enumerate(["claude-code", "Cursor", "claude_code 2"])
        ]
    finally:
        client.close()
    assert [a["result"]["structuredContent"]["agent"] for a in answers] == ["claude-code"] * 3, answers
    agents, sessions = _stored_agents(live, user)
    assert agents == {"claude-code"} and len(sessions) == 1


def test_a_cyrillic_look_alike_client_name_is_the_latin_agent() -> None:
    assert agent_name("\u0441laude-code") == "claude-code"  # Cyrillic "с": was "laude-code", a new agent
    assert agent_name("Сlaude Сode") == "claude-code"
    assert agent_name("Клод") == "mcp-client"  # wholly Cyrillic: no disguise, read as written (nothing ASCII left)


# Clients that write `helper` with letters of other scripts, a trademark sign or a Turkish dotless i: each
# was a different agent (`elper`, `hlper`, `helpertm`, `mcp-client`...) that a block on `helper` missed.
LOOK_ALIKE_HELPERS = [
    "\u0570elper",  # Armenian հ
    "h\u13acl\u13e2er",  # Cherokee Ꭼ, Ꮲ
    "he\u13deper",  # Cherokee Ꮮ
    "\u13bb\u13ac\u13de\u13e2\u13ac\u13d2",  # ᎻᎬᏞᏢᎬᏒ, wholly Cherokee look-alikes
    "HELPER\u2122",  # HELPER™
    "helper\u2120",  # helper℠
    "h\u0435lper\u2122",
]


def test_look_alike_client_names_of_every_script_are_the_latin_agent() -> None:
    from chalicelib.agent_names import fold_agent_name

    for name in LOOK_ALIKE_HELPERS:
        assert fold_agent_name(agent_name(name)) == "helper", name
    assert fold_agent_name(agent_name("\u0131gnite")) == "ignite"  # Turkish dotless ı, was "gnite"
    assert fold_agent_name(agent_name("stra\u00dfe")) == fold_agent_name("strasse")  # ß, was "strae"
    assert agent_name("Клод") == "mcp-client"  # wholly Cyrillic, not all look-alikes: read as written


def test_a_block_on_helper_holds_for_mcp_clients_spelling_it_with_other_scripts(
    api: Any, agents: Any, stores: Any
) -> None:
    """The MCP server names its agent from the client's name (sdk mcp_words.agent_name); a client spelling
    `helper` with Armenian or Cherokee look-alikes or a trademark sign was another, unblocked agent."""
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    assert api.call("PUT", "/v1/agents/helper", "alice", {"read": False, "propose": False})[0] == 200
    for n, client in enumerate(LOOK_ALIKE_HELPERS):
        agents.register(f"s{n}", "alice", agent=agent_name(client))
        assert agents.items(f"s{n}") == [], client
        agents.propose(f"s{n}", {"id": "e1", "text": "Walks the dog at six"})
        assert agents.outcomes(f"s{n}")["e1"]["reason"] == "agent_blocked", client
    assert stores.proposals.list("alice") == []
    assert [
        i["sk"]
        for i in dynamo.query_partition(stores.client, stores.entries.table, "user_id", "alice", consistent=True)
        if i["sk"].startswith("a#")
    ] == ["a#helper"]
