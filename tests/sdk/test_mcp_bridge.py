"""The MCP server's calls behind the tools, against a recording HTTP server on 127.0.0.1: the order of
the host's calls (register, then taint, then read), a refused client name, and an expired session."""

from __future__ import annotations

import asyncio
from typing import Any

from botocore.credentials import Credentials
from personal_memory_sdk.mcp_bridge import MemoryBridge
from personal_memory_sdk.mcp_config import McpConfig
from personal_memory_sdk.worker import EventOutcome, EventRecord
from sdk_http_support import RecordingServer, Reply

from local.fresh_loop import run_apart


def _session(agent: str, tainted: bool = False) -> dict[str, Any]:
    return {
        "session_id": "x",
        "user_id": "alice",
        "thread_id": None,
        "agent": agent,
        "manifest": {"memory": True},
        "tainted": tainted,
    }


def _bridge(server: RecordingServer, *trusted: str) -> MemoryBridge:
    keys = Credentials("AKIDTEST", "test-secret")
    config = McpConfig(server.url, "alice", keys, keys, trusted_clients=frozenset(trusted), outcome_wait=0)

    async def no_sleep(seconds: float) -> None:
        return None

    return MemoryBridge(config, sleep=no_sleep)


def test_the_session_is_registered_then_tainted_before_anything_is_read(server: RecordingServer) -> None:
    server.reply(
        Reply(200, _session("claude-desktop")),
        Reply(200, _session("claude-desktop", True)),
        Reply(200, {"items": []}),
        Reply(200, {"items": []}),
    )
    bridge = _bridge(server)
    run_apart(bridge.context("Claude Desktop"))
    run_apart(bridge.context("claude desktop"))  # the same agent: no second registration
    methods = [(r.method, r.path.rsplit("/", 1)[-1]) for r in server.requests]
    session_id = server.requests[0].path.rsplit("/", 1)[-1]
    assert session_id.startswith("mcp-") and len(session_id) == 36
    assert methods == [("PUT", session_id), ("POST", "untrusted"), ("GET", "memory"), ("GET", "memory")]
    assert server.requests[0].json() == {
        "user_id": "alice",
        "thread_id": None,
        "agent": "claude-desktop",
        "manifest": {"memory": True},
    }


def test_a_trusted_client_is_never_marked_untrusted(server: RecordingServer) -> None:
    server.reply(Reply(200, _session("claude-code")), Reply(200, {"items": []}))
    answer = run_apart(_bridge(server, "claude-code").context("Claude Code"))
    assert answer.session.tainted is False
    assert [r.method for r in server.requests] == ["PUT", "GET"]


def test_a_client_name_the_api_refuses_is_registered_as_mcp_client(server: RecordingServer) -> None:
    server.reply(
        Reply(422, {"code": "credential_refused", "message": "x", "shape": "github_token"}),
        Reply(200, _session("mcp-client")),
        Reply(200, _session("mcp-client", True)),
        Reply(200, {"items": []}),
    )
    answer = run_apart(_bridge(server).context("ghp_sometokenlikename"))
    first, second = server.requests[0], server.requests[1]
    assert first.json()["agent"] == "ghp_sometokenlikename" and second.json()["agent"] == "mcp-client"
    assert first.path != second.path  # a new session id, so nothing half-registered is reused
    assert answer.session.agent == "mcp-client" and answer.session.tainted is True


def test_an_expired_session_is_registered_anew_and_the_read_repeated(server: RecordingServer) -> None:
    items = {"items": [{"text": "Likes rain", "kind": "fact", "pinned": False, "tainted": False}]}
    server.reply(
        Reply(200, _session("zed")),
        Reply(200, _session("zed", True)),
        Reply(200, {"items": []}),
        Reply(404, {"code": "not_found", "message": "No such session."}),
        Reply(200, _session("zed")),
        Reply(200, _session("zed", True)),
        Reply(200, items),
    )
    bridge = _bridge(server)
    first = run_apart(bridge.context("Zed"))
    second = run_apart(bridge.context("Zed"))
    assert [item.text for item in second.items] == ["Likes rain"] and second.reason is None
    assert first.session.session_id != second.session.session_id
    assert [r.method for r in server.requests] == ["PUT", "POST", "GET", "GET", "PUT", "POST", "GET"]


class FakeWorker:
    """Stands in for the worker routes: each post's outcome is scripted."""

    def __init__(self, *outcomes: EventOutcome) -> None:
        self.outcomes = list(outcomes)
        self.posted: list[str] = []

    def propose(self, session_id: str, text: str, kind: str) -> str:
        self.posted.append(session_id)
        return f"event-{len(self.posted)}"

    def list_events(self, session_id: str) -> list[EventRecord]:
        n = len(self.posted)
        return [EventRecord(f"event-{n}", "memory.propose", "handled", outcome=self.outcomes[n - 1])]


def test_a_proposal_refused_as_unknown_session_is_made_once_more_in_a_new_session(server: RecordingServer) -> None:
    worker = FakeWorker(
        EventOutcome("memory.proposal_refused", reason="unknown_session"),
        EventOutcome("memory.proposed", proposal_id="p-1"),
    )
    bridge = _bridge(server, "zed")
    bridge._worker = worker  # type: ignore[assignment]
    server.reply(Reply(200, _session("zed")), Reply(200, _session("zed")))
    answer = run_apart(bridge.propose("Zed", "Prefers tea", "preference"))
    assert answer.status == "waiting_for_review" and answer.proposal_id == "p-1"
    puts = [r.path for r in server.requests if r.method == "PUT"]
    assert len(puts) == 2 and puts[0] != puts[1]
    assert worker.posted == [p.rsplit("/", 1)[-1] for p in puts]


def test_a_second_refusal_is_told_not_retried(server: RecordingServer) -> None:
    worker = FakeWorker(EventOutcome("memory.proposal_refused", reason="session_cap"))
    bridge = _bridge(server, "zed")
    bridge._worker = worker  # type: ignore[assignment]
    server.reply(Reply(200, _session("zed")))
    answer = run_apart(bridge.propose("Zed", "Prefers tea", "preference"))
    assert (answer.status, answer.reason) == ("refused", "session_cap") and len(worker.posted) == 1
    assert bridge.describe(answer) == (
        "Not suggested: Personal memory refused it because this conversation has already made 5 "
        "suggestions. Nothing was kept."
    )


def test_two_first_calls_at_once_register_one_session(server: RecordingServer) -> None:
    server.reply(Reply(200, _session("zed")), Reply(200, _session("zed", True)))
    server.default = Reply(200, {"items": []})
    bridge = _bridge(server)

    async def both() -> list[Any]:
        return list(await asyncio.gather(bridge.context("Zed"), bridge.context("zed")))

    first, second = run_apart(both())
    assert first.session == second.session
    assert [r.method for r in server.requests].count("PUT") == 1


def test_text_the_api_door_would_refuse_is_refused_as_too_long_without_posting(server: RecordingServer) -> None:
    server.reply(Reply(200, _session("zed")), Reply(200, _session("zed", True)))
    bridge = _bridge(server)
    answer = run_apart(bridge.propose("Zed", "x" * 8001, "note"))
    assert (answer.status, answer.reason, answer.event_id) == ("refused", "too_long", None)
    assert [r.method for r in server.requests] == ["PUT", "POST"]  # register and taint, no event
    assert "longer than 2000 bytes" in bridge.describe(answer)
