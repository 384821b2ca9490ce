"""The example memory agent: its pack asks for memory; it reads items and proposes one entry."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import pytest
from personal_memory_sdk import AgentContext, AgentMemory, MemoryItem, ProposeEvent
from sdk_http_support import RecordingServer, Reply

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memory-agent"
HOST_KEYS = {"access_key_id": "AKIDHOST", "secret_access_key": "host-secret", "arn": "arn:host"}
WORKER_KEYS = {"access_key_id": "AKIDWORKER", "secret_access_key": "worker-secret", "arn": "arn:w"}


@pytest.fixture(scope="module")
def agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memory_agent_example", EXAMPLE / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeWorker:
    def __init__(self) -> None:
        self.events: list[ProposeEvent] = []

    def post_events(self, session_id: str, events: Sequence[ProposeEvent]) -> int:
        self.events.extend(events)
        return len(events)


def test_pack_manifest_asks_for_memory_and_names_the_entrypoint(agent: ModuleType) -> None:
    pack = json.loads((EXAMPLE / "pack.json").read_text())
    assert pack == {
        "name": "memory-agent",
        "version": "0.1.0",
        "entrypoint": "agent.py:run",
        "manifest": {"memory": True},
    }
    module_file, function = pack["entrypoint"].split(":")
    assert (EXAMPLE / module_file).is_file() and callable(getattr(agent, function))


def test_run_puts_the_items_in_a_block_and_proposes_one_entry(agent: ModuleType) -> None:
    worker = FakeWorker()
    items = [MemoryItem("Prefers metric units", "preference", True, False)]
    prompt = agent.run(AgentContext("s-1", AgentMemory(items, "s-1", worker)))
    assert prompt.count('text="Prefers metric units"') == 1
    assert "<<<MEMORY_NOTES_BEGIN " in prompt and prompt.rstrip().endswith(">>>")
    assert [(e.text, e.kind) for e in worker.events] == [(agent.NOTICED_TEXT, "preference")]


def test_run_does_not_propose_what_the_person_already_has(agent: ModuleType) -> None:
    worker = FakeWorker()
    items = [MemoryItem(agent.NOTICED_TEXT.upper(), "preference", False, False)]
    agent.run(AgentContext("s-1", AgentMemory(items, "s-1", worker)))
    assert worker.events == []


def test_the_cli_fetches_as_host_and_proposes_as_worker(
    agent: ModuleType,
    server: RecordingServer,
    tmp_path: Path,
    verify_sigv4: Callable[..., bool],
    capsys: pytest.CaptureFixture[str],
) -> None:
    credentials = tmp_path / "credentials.json"
    credentials.write_text(json.dumps({"host": HOST_KEYS, "worker": WORKER_KEYS}))
    server.reply(
        Reply(
            200,
            {"items": [{"text": "Likes rain", "kind": "fact", "pinned": False, "tainted": True}]},
        ),
        Reply(202, {"accepted": 1}),
    )
    code = agent.main(
        [
            "--session-id",
            "s-7",
            "--base-url",
            server.url,
            "--credentials",
            str(credentials),
            "--json",
        ]
    )
    assert code == 0
    fetch, post = server.requests
    assert (fetch.method, fetch.path) == ("GET", "/v1/sessions/s-7/memory")
    assert verify_sigv4(fetch, "AKIDHOST", "host-secret")
    assert (post.method, post.path) == ("POST", "/v1/sessions/s-7/events")
    assert verify_sigv4(post, "AKIDWORKER", "worker-secret")
    report = json.loads(capsys.readouterr().out)
    assert report["items"] == 1
    assert report["proposed"] == [post.json()["events"][0]["id"]]
    assert all(r.method != "PUT" for r in server.requests)  # the host registers, not the agent


def test_the_cli_reports_sdk_errors_without_text(
    agent: ModuleType, server: RecordingServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    credentials = tmp_path / "credentials.json"
    credentials.write_text(json.dumps({"host": HOST_KEYS, "worker": WORKER_KEYS}))
    server.reply(Reply(404, {"code": "not_found", "message": "no such session"}))
    code = agent.main(["--session-id", "nope", "--base-url", server.url, "--credentials", str(credentials)])
    assert code == 1
    assert "404 not_found" in capsys.readouterr().err
