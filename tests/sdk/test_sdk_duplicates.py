"""The SDK and the example agent know about duplicates (issue 24): they skip what the context holds,
and a worker learns `duplicate` from its events (against the real local stack)."""

from __future__ import annotations

import importlib.util
import time
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from personal_memory_sdk import (
    AgentContext,
    AgentMemory,
    EventOutcome,
    EventRecord,
    HostClient,
    MemoryItem,
    MemoryItems,
    ProposeEvent,
    WorkerClient,
    comparable,
)

from chalicelib.comparison import comparison_form

AGENT = Path(__file__).resolve().parents[2] / "examples" / "memory-agent" / "agent.py"


class FakeWorker:
    def __init__(self) -> None:
        self.events: list[ProposeEvent] = []

    def post_events(self, session_id: str, events: Any) -> int:
        self.events.extend(events)
        return len(events)


@pytest.fixture
def agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memory_agent_dups", AGENT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAME = [
    "Prefers tea",
    "  prefers   TEA ",
    "Pre\u200bfers\ttea",
    "Ｐｒｅｆｅｒｓ tea",
    "PREFERS TEA\n",
    "Prefers tea.",
    "Prefers\u2800tea…",
    "Prefers\u3164tea",
    "Prefers tea,",
    "Prefers tea;",
]
OTHER = ["Prefers tea?", "Prefers green tea", "Prefers coffee", "Preferstea"]


@pytest.mark.parametrize("text", SAME + OTHER)
def test_the_sdk_compares_as_the_service_does_for_plain_disguises(text: str) -> None:
    assert comparable(text) == comparison_form(text)
    assert MemoryItems([MemoryItem("Prefers tea", "preference", False, False)]).holds(text) is (text in SAME)


@pytest.mark.parametrize("held", ["  PREFERS short, direct\u200b answers ", "Ｐrefers short, direct answers"])
def test_the_example_agent_does_not_propose_what_its_context_already_holds(agent: ModuleType, held: str) -> None:
    worker = FakeWorker()
    agent.run(AgentContext("s-1", AgentMemory([MemoryItem(held, "preference", False, False)], "s-1", worker)))
    assert worker.events == []


def test_an_outcome_refused_duplicate_says_so() -> None:
    record = EventRecord.from_json(
        {
            "id": "e1",
            "type": "memory.propose",
            "status": "handled",
            "outcome": {"type": "memory.proposal_refused", "reason": "duplicate"},
        }
    )
    assert record.outcome is not None and record.outcome.duplicate and record.outcome.refused
    assert not EventOutcome("memory.proposal_refused", reason="session_cap").duplicate
    assert not EventOutcome("memory.proposed", proposal_id="x").duplicate


def test_a_worker_learns_nothing_from_a_duplicate_over_the_real_stack(live: Any) -> None:
    """Issue 37 #8: `duplicate` would tell an agent what the person keeps; it is told what a new text gets."""
    creds = live.credentials_file
    host = HostClient.from_credentials_file(live.url, creds)
    worker = WorkerClient.from_credentials_file(live.url, creds)
    user = f"sdk-{uuid.uuid4().hex[:8]}"
    assert live.request("PUT", "/v1/memory/settings", token=live.token(user), body={"enabled": True})[0] == 200
    session = uuid.uuid4().hex
    host.register_session(session, user_id=user, thread_id="t-1", agent="memory-agent", memory=True)
    first = worker.propose(session, "Has a cat called Miso", "fact")
    second = worker.propose(session, "has a cat  called MISO", "fact")
    deadline = time.monotonic() + 60  # the stack's stream pump, on a shared machine
    while time.monotonic() < deadline and not (
        len(events := worker.list_events(session)) == 2 and all(e.handled for e in events)
    ):
        time.sleep(0.2)
    outcomes = {e.id: e.outcome for e in worker.list_events(session)}
    assert outcomes[first] is not None and outcomes[first].proposed
    assert outcomes[second] is not None and outcomes[second].proposed and outcomes[second].proposal_id
    assert worker.duplicates(session) == []
    status, page, _ = live.request("GET", "/v1/memory", token=live.token(user))
    assert status == 200 and [p["text"] for p in page["proposals"]] == ["Has a cat called Miso"]
