"""A host and a worker driving the agent routes through the test client, plus the stream pump."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support.iam import iam_call
from tests.support.stack import HOST_ARN, WORKER_ARN


@dataclass
class Agents:
    client: Any
    stream: Any

    def register(
        self,
        session_id: str,
        user_id: str | None,
        memory: bool = True,
        thread_id: str | None = "t-1",
        agent: str = "helper",
    ) -> tuple[int, Any]:
        body = {"user_id": user_id, "thread_id": thread_id, "agent": agent, "manifest": {"memory": memory}}
        return iam_call(self.client, "PUT", f"/v1/sessions/{session_id}", HOST_ARN, body)

    def untrusted(self, session_id: str) -> tuple[int, Any]:
        return iam_call(self.client, "POST", f"/v1/sessions/{session_id}/untrusted", HOST_ARN)

    def context(self, session_id: str) -> tuple[int, Any]:
        return iam_call(self.client, "GET", f"/v1/sessions/{session_id}/memory", HOST_ARN)

    def items(self, session_id: str) -> list[dict[str, Any]]:
        status, body = self.context(session_id)
        assert status == 200, body
        return body["items"]

    def propose(self, session_id: str, *events: dict[str, Any], pump: bool = True) -> tuple[int, Any]:
        full = [{"type": "memory.propose", "kind": "note", **e} for e in events]
        result = iam_call(self.client, "POST", f"/v1/sessions/{session_id}/events", WORKER_ARN, {"events": full})
        if pump:
            self.stream.drain()
        return result

    def events(self, session_id: str) -> list[dict[str, Any]]:
        status, body = iam_call(self.client, "GET", f"/v1/sessions/{session_id}/events", WORKER_ARN)
        assert status == 200, body
        return body["events"]

    def outcomes(self, session_id: str) -> dict[str, Any]:
        return {e["id"]: e["outcome"] for e in self.events(session_id)}
