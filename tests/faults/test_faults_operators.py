"""Operator, host and worker routes under AWS faults: 503 and nothing changed; an operator access whose journal write is refused does not happen."""

from __future__ import annotations

import json
from typing import Any

import pytest

from local.faults import FaultInjector
from tests.support.iam import calling_as
from tests.support.invariants import assert_counters_match
from tests.support.openapi_check import check
from tests.support.stack import OPERATOR_ARN


def _operator(client: Any, method: str, path: str) -> tuple[int, Any, dict[str, str]]:
    with calling_as(OPERATOR_ARN):
        response = getattr(client.http, method.lower())(path, headers={"Content-Type": "application/json"})
    text = response.body.decode() if isinstance(response.body, bytes) else response.body
    return response.status_code, (json.loads(text) if text else None), dict(response.headers)


def _access_rows(stores: Any) -> list[dict[str, Any]]:
    return [dict(r.details) for r in stores.journal.all("alice") if r.action == "keep.memory.operator_access"]


@pytest.fixture
def alice(api: Any) -> dict[str, Any]:
    api.turn_on("alice")
    return api.add("alice", "Alice's private note about her doctor")


@pytest.mark.parametrize("fault", ["ThrottlingException", "InternalServerError", "Timeout", "TransactionConflict"])
@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/v1/operator/memory?user_id=alice"),
        ("DELETE", "/v1/operator/memory/{id}?user_id=alice"),
        ("DELETE", "/v1/operator/memory?user_id=alice"),
    ],
)
def test_an_operator_access_whose_journal_write_is_refused_does_not_happen(
    client: Any,
    stores: Any,
    api: Any,
    alice: Any,
    faults: FaultInjector,
    fault: str,
    method: str,
    path: str,
    table_names: Any,
) -> None:
    entries, proposals, journal = table_names.entries, table_names.proposals, table_names.journal
    faults.calls.clear()
    faults.add(error=fault, table=journal)  # every call that touches the journal is refused
    status, body, headers = _operator(client, method, path.format(id=alice["id"]))
    assert (status, body["code"]) == (503, "unavailable") and int(headers["Retry-After"]) >= 1
    assert "doctor" not in json.dumps(body) and "items" not in body
    check(method, path.split("?")[0], status, body)
    # Nothing of alice's memory was read or touched once the journal had refused the access.
    touched = [c for c in faults.seen() if entries in c.tables or proposals in c.tables]
    assert all(journal in c.tables for c in touched), touched  # only a transaction that holds the journal row
    faults.clear()
    assert _access_rows(stores) == []
    assert [e["id"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]] == [alice["id"]]
    assert_counters_match(stores, "alice")


def test_an_operator_forget_retried_through_a_conflict_is_done_and_journaled_once(
    client: Any, stores: Any, api: Any, alice: Any, faults: FaultInjector
) -> None:
    faults.add(error="TransactionConflict", operation="TransactWriteItems", times=2)
    status, _, _ = _operator(client, "DELETE", f"/v1/operator/memory/{alice['id']}?user_id=alice")
    assert status == 204
    assert [r["operation"] for r in _access_rows(stores)] == ["forget"]
    assert api.call("GET", "/v1/memory", "alice")[1]["items"] == []
    assert assert_counters_match(stores, "alice")["active"] == 0


def _host_or_worker(client: Any, arn: str, method: str, path: str, body: Any) -> tuple[int, Any, dict[str, str]]:
    with calling_as(arn):
        response = getattr(client.http, method.lower())(
            path, headers={"Content-Type": "application/json"}, body=json.dumps(body) if body is not None else None
        )
    text = response.body.decode() if isinstance(response.body, bytes) else response.body
    return response.status_code, (json.loads(text) if text else None), dict(response.headers)


AGENT_ROUTES = [
    (
        "host",
        "PUT",
        "/v1/sessions/new",
        "/v1/sessions/{session_id}",
        {"user_id": "alice", "thread_id": "t", "agent": "a", "manifest": {"memory": True}},
    ),
    ("host", "POST", "/v1/sessions/s/untrusted", "/v1/sessions/{session_id}/untrusted", None),
    ("host", "GET", "/v1/sessions/s/memory", "/v1/sessions/{session_id}/memory", None),
    (
        "worker",
        "POST",
        "/v1/sessions/s/events",
        "/v1/sessions/{session_id}/events",
        {"events": [{"id": "e9", "type": "memory.propose", "text": "t", "kind": "note"}]},
    ),
    ("worker", "GET", "/v1/sessions/s/events", "/v1/sessions/{session_id}/events", None),
]


@pytest.mark.parametrize(
    "caller, method, path, template, body", AGENT_ROUTES, ids=[f"{r[1]} {r[3]}" for r in AGENT_ROUTES]
)
def test_host_and_worker_routes_answer_503_and_change_nothing_when_aws_keeps_refusing(
    client: Any,
    stores: Any,
    api: Any,
    agents: Any,
    alice: Any,
    faults: FaultInjector,
    caller: str,
    method: str,
    path: str,
    template: str,
    body: Any,
) -> None:
    from tests.support.stack import HOST_ARN, WORKER_ARN

    agents.register("s", "alice")
    before = (
        stores.sessions.get("s"),
        stores.sessions.get("new"),
        stores.events.list("s"),
        [r.public() for r in stores.journal.all("alice")],
    )
    faults.add(error="ThrottlingException")
    status, answer, headers = _host_or_worker(client, HOST_ARN if caller == "host" else WORKER_ARN, method, path, body)
    assert (status, answer["code"]) == (503, "unavailable") and int(headers["Retry-After"]) >= 1
    check(method, template, status, answer)
    faults.clear()
    after = (
        stores.sessions.get("s"),
        stores.sessions.get("new"),
        stores.events.list("s"),
        [r.public() for r in stores.journal.all("alice")],
    )
    assert after == before  # a context that could not be journaled was not given either
