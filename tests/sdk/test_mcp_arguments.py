"""`personal-memory-mcp` answers wrong `memory_propose` arguments with a tool error naming the field, never the
value, and answers a lone surrogate at all (issue 37 #12).

Spoken to as raw JSON-RPC lines over the server's stdio: the official client cannot even send a lone
surrogate (its own serializer refuses it), but any other client, or a model's output copied through, can.
The API behind it is a recording server on 127.0.0.1, so the tests also see that nothing was posted.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_stdio import SDK, local_args, server_command
from sdk_http_support import RecordingServer, Reply

SECRET = "AKIA" + "Z7QW2ERTY5UIOPAS"  # an AWS access key id's shape (not a real key)
SESSION = {
    "session_id": "x",
    "user_id": "alice",
    "thread_id": None,
    "agent": "claude-desktop",
    "manifest": {"memory": True},
    "tainted": True,
    "accepted": 1,
    "received": 1,
    "events": [],
}


class RawStdio:
    """The server as a subprocess, fed one JSON-RPC line at a time."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.next_id = 1

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("ascii") + b"\n")
        self.process.stdin.flush()

    def answer(self, seconds: float = 30) -> dict[str, Any] | None:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], seconds)
        return json.loads(self.process.stdout.readline()) if ready else None

    def call(self, arguments_json: str) -> dict[str, Any] | None:
        """tools/call memory_propose with `arguments_json` written into the line as given (escapes kept)."""
        self.next_id += 1
        self.send(
            f'{{"jsonrpc":"2.0","id":{self.next_id},"method":"tools/call",'
            f'"params":{{"name":"memory_propose","arguments":{arguments_json}}}}}'
        )
        return self.answer()


@pytest.fixture
def api() -> Iterator[RecordingServer]:
    with RecordingServer() as server:
        server.default = Reply(body=SESSION)
        yield server


@pytest.fixture
def mcp(api: RecordingServer, tmp_path: Path) -> Iterator[RawStdio]:
    keys = {"access_key_id": "AKIDTEST", "secret_access_key": "test-secret", "arn": "arn:aws:iam::1:role/r"}
    credentials = tmp_path / "credentials.json"
    credentials.write_text(json.dumps({role: keys for role in ("host", "worker", "operator")}))
    env = {**os.environ, "PYTHONPATH": str(SDK), "PERSONAL_MEMORY_OUTCOME_WAIT": "0"}
    process = subprocess.Popen(
        server_command(local_args(api.url, "alice", credentials)),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    raw = RawStdio(process)
    try:
        raw.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "Claude Desktop", "version": "1"},
                    },
                }
            )
        )
        assert raw.answer() is not None
        raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        yield raw
    finally:
        process.kill()
        process.wait(10)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _tool_error(answer: dict[str, Any] | None) -> str:
    assert answer is not None, "the call was never answered"
    result = answer["result"]
    assert result["isError"] is True
    (content,) = result["content"]
    return str(content["text"])


def _posted_events(api: RecordingServer) -> list[Any]:
    return [r for r in api.requests if r.method == "POST" and r.path.endswith("/events")]


def test_a_lone_surrogate_in_the_text_is_answered_with_a_tool_error(mcp: RawStdio, api: RecordingServer) -> None:
    words = _tool_error(mcp.call('{"text":"Likes \\ud800 tea"}'))
    assert "`text`" in words and "surrogate" in words and "Likes" not in words
    assert _posted_events(api) == []
    # ... and the server still answers what comes next
    assert _tool_error(mcp.call('{"text":"x","kind":"mood"}')).endswith("`kind` must be one of preference, fact, note.")


@pytest.mark.parametrize(
    "arguments",
    [
        {"text": {"secret": SECRET}},
        {"text": [SECRET]},
        {"text": "Likes tea", "kind": SECRET},
        {"kind": SECRET},
    ],
)
def test_a_validation_error_names_the_field_never_the_value(
    mcp: RawStdio, api: RecordingServer, arguments: dict[str, Any]
) -> None:
    words = _tool_error(mcp.call(json.dumps(arguments)))
    assert SECRET not in words and "input_value" not in words and "AKIA" not in words
    assert "`text`" in words or "`kind`" in words
    assert _posted_events(api) == []
