"""What the alarms read when the app breaks while still answering: 500s and 503s, failed records, throttling.

Lambda's `Errors` metric counts only invocations that fail; the API catches every exception and answers
the contract's 500 (or 503), and the consumer reports failed records in `batchItemFailures`. So an
outage like issue 37's (botocore raising AttributeError on every DynamoDB and KMS call: every data route
500, every record failed) left `Errors` at 0. These tests break the real routes and consumer that way and
read the EMF lines the alarms are built on (infra/stack.json), checking they carry no text.
"""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.storage import retries
from local.faults import FaultInjector
from tests.faults.test_faults_stream import Lambda, _post
from tests.routes.test_metrics import _counts, _emf

DISTINCT = "Alarmed-the-pied-flycatcher-8812"


@pytest.fixture
def broken_botocore(stores: Any) -> Any:
    """Every DynamoDB call raises AttributeError before it is sent, as botocore 1.43.11 did under the old hook."""

    def explode(**_: Any) -> None:
        raise AttributeError(f"'AWSPreparedRequest' object has no attribute 'context' {DISTINCT}")

    raw = stores.client.unguarded
    raw.meta.events.register("before-send.dynamodb", explode, unique_id="t-broken-botocore")
    yield raw
    raw.meta.events.unregister("before-send.dynamodb", unique_id="t-broken-botocore")


def test_every_500_the_api_answers_is_counted_with_no_text(
    api: Any, stores: Any, broken_botocore: Any, capsys: Any
) -> None:
    capsys.readouterr()
    statuses = [
        api.call("GET", "/v1/memory", "alice")[0],
        api.call("POST", "/v1/memory", "alice", {"text": DISTINCT})[0],
    ]
    assert statuses == [500, 500]
    captured = capsys.readouterr()
    counts = _counts(_emf(captured.out))
    assert counts[("ServerErrors",)] == 2 and counts[("Unavailable",)] == 0
    assert DISTINCT not in captured.out + captured.err
    broken_botocore.meta.events.unregister("before-send.dynamodb", unique_id="t-broken-botocore")
    assert api.call("GET", "/v1/memory", "alice")[1]["items"] == []  # nothing was stored by the failed POST


def test_a_503_is_counted_as_unavailable_and_every_throttled_attempt_by_service(
    api: Any, stores: Any, faults: FaultInjector, capsys: Any
) -> None:
    api.turn_on("alice")
    faults.add(error="ThrottlingException", operation="Query", times=retries.MAX_ATTEMPTS)
    capsys.readouterr()
    status, body = api.call("GET", "/v1/memory", "alice")
    assert (status, body["code"]) == (503, "unavailable")
    counts = _counts(_emf(capsys.readouterr().out))
    assert counts[("Unavailable",)] == 1 and counts[("ServerErrors",)] == 0
    assert counts[("Throttled", "dynamodb")] == retries.MAX_ATTEMPTS  # each attempt AWS slowed down
    assert api.call("GET", "/v1/memory", "alice")[0] == 200  # the faults are spent: nothing else was harmed


def test_kms_throttling_is_counted_apart_from_dynamodbs(
    api: Any, stores: Any, faults: FaultInjector, capsys: Any
) -> None:
    api.turn_on("alice")
    faults.add(
        error="ThrottlingException", service="kms", operation="GenerateDataKey", times=1
    )  # the user's first text makes a key
    capsys.readouterr()
    status, entry = api.call("POST", "/v1/memory", "alice", {"text": "a retried note"})
    assert status == 201
    counts = _counts(_emf(capsys.readouterr().out))
    assert counts[("Throttled", "kms")] == 1 and counts[("Throttled", "dynamodb")] == 0
    assert [e["id"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]] == [entry["id"]]


def test_failed_stream_records_are_counted(
    api: Any, agents: Any, stores: Any, client: Any, broken_botocore: Any, capsys: Any
) -> None:
    broken_botocore.meta.events.unregister("before-send.dynamodb", unique_id="t-broken-botocore")
    api.turn_on("alice")
    agents.register("s", "alice")
    _post(client, "s", {"id": "e1", "text": DISTINCT + " one"}, {"id": "e2", "text": DISTINCT + " two"})
    records = [
        {"eventName": "INSERT", "dynamodb": {"SequenceNumber": str(n), "NewImage": item}}
        for n, item in enumerate(stores.client.unguarded.scan(TableName=stores.events.table)["Items"], start=1)
    ]
    broken_botocore.meta.events.register("before-send.dynamodb", _raise_attribute_error, unique_id="t-broken-botocore")
    capsys.readouterr()
    answer = Lambda(client)({"Records": records})
    assert len(answer["batchItemFailures"]) == 2
    captured = capsys.readouterr()
    assert _counts(_emf(captured.out))[("RecordFailures",)] == 2
    assert DISTINCT not in captured.out + captured.err
    broken_botocore.meta.events.unregister("before-send.dynamodb", unique_id="t-broken-botocore")
    assert all(e.status == "pending" for e in stores.events.list("s"))  # still there for the retry or a redrive


def _raise_attribute_error(**_: Any) -> None:
    raise AttributeError("'AWSPreparedRequest' object has no attribute 'context'")
