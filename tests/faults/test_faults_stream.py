"""The stream consumer under faults: partial failures, a Lambda timeout mid-batch, duplicate deliveries, a poison record.

Records come from moto's real stream of the events table and reach the real handler through the
Chalice test client (as Lambda would call it). Afterwards the stored proposals, refusals, counters,
session counts and journal are read back: every event has exactly one outcome, nothing twice.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from local.faults import FaultInjector
from local.lambda_context import invoke_consumer
from local.stream_pump import StreamPump, create_streams_client
from tests.support.iam import iam_call
from tests.support.invariants import assert_counters_match
from tests.support.stack import WORKER_ARN


class LambdaTimedOut(BaseException):
    """Lambda stopping the function mid-batch: not an Exception, so no handler code can catch it."""


class Lambda:
    """Calls the real stream handler as Lambda does and keeps every response it returned."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.responses: list[dict[str, Any]] = []
        self.batches: list[list[dict[str, Any]]] = []

    def __call__(self, event: dict[str, Any]) -> Any:
        self.batches.append(copy.deepcopy(event["Records"]))
        try:
            payload = invoke_consumer(event)  # the consumer's real timeout, not chalice's 3 s default
        except LambdaTimedOut as exc:
            raise TimeoutError("Task timed out") from exc  # Lambda reports the whole batch as failed
        self.responses.append(payload)
        return payload


@pytest.fixture
def lam(client: Any) -> Lambda:
    return Lambda(client)


@pytest.fixture
def pump(tables: dict[str, str], lam: Lambda) -> StreamPump:
    return StreamPump(create_streams_client(), tables["events_stream"], lam, max_attempts=10)


def _post(client: Any, session: str, *events: dict[str, Any]) -> None:
    body = {"events": [{"type": "memory.propose", "kind": "note", **e} for e in events]}
    status, answer = iam_call(client, "POST", f"/v1/sessions/{session}/events", WORKER_ARN, body)
    assert status == 202, answer


def _outcomes(stores: Any, session: str) -> dict[str, Any]:
    return {e.event_id: e.outcome for e in stores.events.list(session)}


def _refusal_rows(stores: Any, user: str) -> list[dict[str, Any]]:
    return [dict(r.details) for r in stores.journal.all(user) if r.action == "keep.memory.proposal_refused"]


def _assert_each_event_once(stores: Any, user: str, session: str, proposed: int, refused: int) -> None:
    outcomes = _outcomes(stores, session)
    assert all(o is not None for o in outcomes.values()), outcomes
    ids = sorted(o["proposal_id"] for o in outcomes.values() if o["type"] == "memory.proposed")
    assert len(ids) == proposed and sorted(p.id for p in stores.proposals.list(user)) == ids
    assert sum(1 for o in outcomes.values() if o["type"] == "memory.proposal_refused") == refused
    assert len(_refusal_rows(stores, user)) == refused
    assert stores.sessions.get(session).proposals == proposed
    assert_counters_match(stores, user)


def test_throttling_fails_only_the_affected_record_and_the_retry_converges(
    api: Any,
    agents: Any,
    stores: Any,
    faults: FaultInjector,
    pump: StreamPump,
    lam: Lambda,
    client: Any,
    table_names: Any,
) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    _post(client, "s", *[{"id": f"e{n}", "text": f"fact {n}"} for n in range(4)])
    # The 2nd record's transaction is throttled on every attempt; the others go through.
    faults.add(
        error="ProvisionedThroughputExceededException",
        operation="TransactWriteItems",
        table=table_names.proposals,
        after=1,
        times=5,
    )
    pump.drain()
    first = lam.responses[0]["batchItemFailures"]
    second_record = lam.batches[0][1]["dynamodb"]["SequenceNumber"]
    assert first == [{"itemIdentifier": second_record}]  # only the affected record
    # Lambda starts again at the failed record (the ones after it come again and change nothing).
    assert lam.batches[1][0]["dynamodb"]["SequenceNumber"] == second_record
    assert all(r["batchItemFailures"] == [] for r in lam.responses[1:])
    _assert_each_event_once(stores, "alice", "s", proposed=4, refused=0)


def test_a_lambda_timeout_after_some_records_committed_creates_nothing_twice(
    api: Any, agents: Any, stores: Any, pump: StreamPump, lam: Lambda, client: Any
) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    _post(client, "s", *[{"id": f"e{n}", "text": f"fact {n}"} for n in range(6)])  # the 6th: session_cap
    committed = []

    def time_out_after_the_third(**_: Any) -> None:
        committed.append(1)
        if len(committed) == 3:
            raise LambdaTimedOut()  # the 3rd transaction is stored, then the function is stopped

    raw = stores.client.unguarded
    raw.meta.events.register("after-call.dynamodb.TransactWriteItems", time_out_after_the_third, unique_id="t-o")
    try:
        pump.drain()
    finally:
        raw.meta.events.unregister("after-call.dynamodb.TransactWriteItems", unique_id="t-o")
    sequences = [[r["dynamodb"]["SequenceNumber"] for r in batch] for batch in lam.batches]
    assert len(sequences[0]) == 6 and sequences[1][:6] == sequences[0]  # the whole batch came again
    _assert_each_event_once(stores, "alice", "s", proposed=5, refused=1)


def test_a_batch_delivered_twice_changes_nothing_the_second_time(
    api: Any, agents: Any, stores: Any, pump: StreamPump, lam: Lambda, client: Any
) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    _post(client, "s", *[{"id": f"e{n}", "text": f"fact {n}"} for n in range(5)], {"id": "bad", "text": "  "})
    pump.drain()
    before = (
        _outcomes(stores, "s"),
        sorted(p.id for p in stores.proposals.list("alice")),
        _refusal_rows(stores, "alice"),
    )
    again = lam({"Records": lam.batches[0]})
    assert again == {"batchItemFailures": []}
    assert (
        _outcomes(stores, "s"),
        sorted(p.id for p in stores.proposals.list("alice")),
        _refusal_rows(stores, "alice"),
    ) == before
    _assert_each_event_once(stores, "alice", "s", proposed=5, refused=1)


def test_a_poison_record_is_reported_alone(
    api: Any, agents: Any, stores: Any, pump: StreamPump, lam: Lambda, client: Any
) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    _post(client, "s", *[{"id": f"e{n}", "text": f"fact {n}"} for n in range(3)])
    records = pump._read_from_checkpoint(pump._shards()[0]["ShardId"])["Records"]
    batch = [pump._to_lambda_record(r) for r in records]
    poison = copy.deepcopy(batch[1])
    poison["dynamodb"]["SequenceNumber"] = "9" * 20
    del poison["dynamodb"]["NewImage"]["session_id"]  # an image the consumer cannot read
    response = lam({"Records": [batch[0], poison, batch[1], batch[2]]})
    assert response == {"batchItemFailures": [{"itemIdentifier": "9" * 20}]}
    _assert_each_event_once(stores, "alice", "s", proposed=3, refused=0)


@pytest.mark.slow
def test_random_faults_in_the_consumer_converge_to_one_outcome_per_event(
    api: Any, agents: Any, stores: Any, faults: FaultInjector, pump: StreamPump, lam: Lambda, client: Any
) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    agents.register("off", "bob")  # bob never turned memory on: refusals with a user
    _post(
        client, "s", *[{"id": f"e{n}", "text": f"fact {n}"} for n in range(7)], {"id": "k", "text": "x", "kind": "nope"}
    )
    _post(client, "off", {"id": "o1", "text": "fact"})
    faults.add(rate=0.7, errors=("ThrottlingException", "TransactionConflict", "InternalServerError", "Timeout"))
    pump.drain(timeout=60)
    faults.clear()
    assert faults.stats()["faults"] > 5 and any(r["batchItemFailures"] for r in lam.responses)
    _assert_each_event_once(stores, "alice", "s", proposed=5, refused=3)  # 2 over the session cap, 1 bad kind
    assert _outcomes(stores, "off") == {"o1": {"type": "memory.proposal_refused", "reason": "memory_off"}}
    assert len(_refusal_rows(stores, "bob")) == 1


def test_a_session_marked_untrusted_after_posting_but_before_handling_yields_a_tainted_proposal(
    api: Any, agents: Any, stores: Any, client: Any
) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    agents.propose("s", {"id": "e1", "text": "likes cats"}, pump=False)  # posted, not handled yet
    assert agents.untrusted("s")[0] == 200
    agents.stream.drain()
    [proposal] = stores.proposals.list("alice")
    assert proposal.tainted is True  # taint at handling time counts
    status, entry = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")
    assert status == 201 and entry["tainted"] is True


def test_a_post_of_events_refused_midway_stores_none_and_its_retry_stores_each_once(
    api: Any, agents: Any, stores: Any, faults: FaultInjector, client: Any, table_names: Any
) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    _post(client, "s", {"id": "old", "text": "posted before"})
    body = {
        "events": [
            {"type": "memory.propose", "kind": "note", "id": i, "text": f"fact {i}"} for i in ("old", "a", "b", "a")
        ]
    }
    faults.add(error="ThrottlingException", operation="TransactWriteItems", table=table_names.events)
    status, answer = iam_call(client, "POST", "/v1/sessions/s/events", WORKER_ARN, body)
    assert (status, answer["code"]) == (503, "unavailable")
    faults.clear()
    assert sorted(e.event_id for e in stores.events.list("s")) == ["old"]  # all or nothing
    status, answer = iam_call(client, "POST", "/v1/sessions/s/events", WORKER_ARN, body)
    assert (status, answer) == (202, {"accepted": 2, "received": 4})
    assert sorted(e.event_id for e in stores.events.list("s")) == ["a", "b", "old"]
    agents.stream.drain()
    _assert_each_event_once(stores, "alice", "s", proposed=3, refused=0)
