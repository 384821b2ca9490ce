"""Operators read and forget a named user's memory; every access is journaled first, never with text."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.iam import iam_call
from tests.support.stack import HOST_ARN, OPERATOR_ARN, WORKER_ARN


@pytest.fixture
def alice(api: Any) -> dict[str, Any]:
    api.turn_on("alice")
    return api.add("alice", "Alice's private note about her doctor")


def _access_rows(stores: Any) -> list[dict[str, Any]]:
    return [r.public() for r in stores.journal.all("alice") if r.action == "keep.memory.operator_access"]


def test_operator_reads_a_named_users_memory_and_is_journaled(client: Any, stores: Any, alice: Any) -> None:
    status, body = iam_call(client, "GET", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)
    assert status == 200 and [e["id"] for e in body["items"]] == [alice["id"]]
    [row] = _access_rows(stores)
    assert row["operation"] == "read" and row["operator"] == OPERATOR_ARN and "request_id" in row
    assert "doctor" not in repr(stores.journal.all("alice"))


def test_operator_forgets_one_and_all(client: Any, stores: Any, api: Any, alice: Any) -> None:
    status, _ = iam_call(client, "DELETE", f"/v1/operator/memory/{alice['id']}?user_id=alice", OPERATOR_ARN)
    assert status == 204
    assert iam_call(client, "DELETE", f"/v1/operator/memory/{alice['id']}?user_id=alice", OPERATOR_ARN)[0] == 404
    api.add("alice", "another")
    status, body = iam_call(client, "DELETE", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)
    assert (status, body) == (200, {"deleted": 1})
    assert [r["operation"] for r in _access_rows(stores)] == ["forget_all", "forget", "forget"]
    assert api.call("GET", "/v1/memory", "alice")[1]["items"] == []


def test_user_id_is_required(client: Any) -> None:
    for method, path in (
        ("GET", "/v1/operator/memory"),
        ("DELETE", "/v1/operator/memory"),
        ("DELETE", "/v1/operator/memory/x"),
    ):
        status, body = iam_call(client, method, path, OPERATOR_ARN)
        assert (status, body["code"]) == (400, "invalid_request")


@pytest.mark.parametrize("arn", [HOST_ARN, WORKER_ARN, "arn:aws:iam::999999999999:role/stranger", None])
def test_only_operators_may_call_operator_routes(client: Any, stores: Any, api: Any, alice: Any, arn: Any) -> None:
    for method, path in (
        ("GET", "/v1/operator/memory?user_id=alice"),
        ("DELETE", f"/v1/operator/memory/{alice['id']}?user_id=alice"),
        ("DELETE", "/v1/operator/memory?user_id=alice"),
    ):
        assert iam_call(client, method, path, arn)[0] == 403
    assert iam_call(client, "GET", "/v1/operator/memory?user_id=alice", None, headers=api.headers("alice"))[0] == 403
    assert len(api.call("GET", "/v1/memory", "alice")[1]["items"]) == 1
    assert _access_rows(stores) == []


def test_an_access_whose_journal_write_fails_does_not_happen(
    client: Any, stores: Any, api: Any, alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("journal unavailable")

    monkeypatch.setattr(type(stores.journal), "append", broken)
    original_record = type(stores.journal).record
    monkeypatch.setattr(
        type(stores.journal),
        "record",
        lambda self, *a, **k: {"Put": {**original_record(self, *a, **k)["Put"], "TableName": "missing-table"}},
    )
    status, body = iam_call(client, "GET", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)
    assert status == 500 and "doctor" not in repr(body) and "items" not in body
    assert iam_call(client, "DELETE", f"/v1/operator/memory/{alice['id']}?user_id=alice", OPERATOR_ARN)[0] == 500
    assert iam_call(client, "DELETE", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)[0] == 500
    monkeypatch.undo()
    assert [e["id"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]] == [alice["id"]]
