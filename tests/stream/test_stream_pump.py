"""The local stream pump delivers moto's DynamoDB stream the way Lambda's event source mapping does."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeDeserializer

from local.stream_pump import StreamPump, create_streams_client, wake_on_events_write
from tests.support import ddb_local
from tests.support.moto import fresh_moto

SAMPLE = Path(__file__).resolve().parents[1] / "events" / "stream_record_sample.json"
TABLE = "events-test"


@dataclass
class Stream:
    table: Any
    client: Any
    arn: str

    def put(self, *event_ids: str) -> None:
        for event_id in event_ids:
            self.table.put_item(Item={"session_id": "s-1", "event_id": event_id, "type": "memory.propose"})


@dataclass
class Recorder:
    """A handler that remembers every batch and fails the records it is told to."""

    batches: list[list[str]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    fail_times: dict[str, int] = field(default_factory=dict)  # event id -> failures left
    raise_times: int = 0

    def __call__(self, event: dict[str, Any]) -> dict[str, Any] | None:
        ids = [_event_id(r) for r in event["Records"]]
        self.batches.append(ids)
        self.records.extend(event["Records"])
        if self.raise_times:
            self.raise_times -= 1
            raise RuntimeError("the consumer is down")
        failures = []
        for record in event["Records"]:
            if self.fail_times.get(_event_id(record), 0) > 0:
                self.fail_times[_event_id(record)] -= 1
                failures.append({"itemIdentifier": record["dynamodb"]["SequenceNumber"]})
        return {"batchItemFailures": failures}

    @property
    def delivered(self) -> list[str]:
        return [event_id for batch in self.batches for event_id in batch]


def _event_id(record: dict[str, Any]) -> str:
    return str(record["dynamodb"]["NewImage"]["event_id"]["S"])


@pytest.fixture
def stream(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stream]:
    for variable in ddb_local.ENDPOINT_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    # create_streams_client must make Streams work on moto without the environment's help.
    monkeypatch.delenv("AWS_ACCOUNT_ID_ENDPOINT_MODE", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with fresh_moto(monkeypatch):
        dynamodb = boto3.resource("dynamodb", region_name="us-east-1")
        table = dynamodb.create_table(
            TableName=TABLE,
            KeySchema=[
                {"AttributeName": "session_id", "KeyType": "HASH"},
                {"AttributeName": "event_id", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "session_id", "AttributeType": "S"},
                {"AttributeName": "event_id", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        )
        yield Stream(table, create_streams_client(), table.latest_stream_arn)


def test_records_arrive_in_order_shaped_like_a_lambda_event(stream: Stream) -> None:
    stream.put("e1", "e2", "e3")
    handler = Recorder()
    assert StreamPump(stream.client, stream.arn, handler).pump_once() == 3
    assert handler.delivered == ["e1", "e2", "e3"]
    record = handler.records[0]
    assert record["eventSourceARN"] == stream.arn
    assert record["awsRegion"] == "us-east-1"
    assert record["eventSource"] == "aws:dynamodb"
    assert record["eventName"] == "INSERT"
    assert record["eventID"] and record["eventVersion"]
    ddb = record["dynamodb"]
    assert isinstance(ddb["ApproximateCreationDateTime"], int)
    assert ddb["StreamViewType"] == "NEW_IMAGE"
    assert isinstance(ddb["SizeBytes"], int)
    assert ddb["Keys"] == {"session_id": {"S": "s-1"}, "event_id": {"S": "e1"}}
    image = {k: TypeDeserializer().deserialize(v) for k, v in ddb["NewImage"].items()}
    assert image == {"session_id": "s-1", "event_id": "e1", "type": "memory.propose"}
    sequence = [int(r["dynamodb"]["SequenceNumber"]) for r in handler.records]
    assert sequence == sorted(sequence)
    json.dumps(handler.records)  # what Lambda hands over is plain JSON


def test_binary_attributes_arrive_as_base64_text_like_lambda(stream: Stream) -> None:
    stream.table.put_item(Item={"session_id": "s-1", "event_id": "b", "blob": b"\x00\xff"})
    handler = Recorder()
    StreamPump(stream.client, stream.arn, handler).pump_once()
    assert handler.records[0]["dynamodb"]["NewImage"]["blob"] == {"B": "AP8="}


def test_batches_never_exceed_batch_size(stream: Stream) -> None:
    stream.put(*[f"e{i:02}" for i in range(7)])
    handler = Recorder()
    assert StreamPump(stream.client, stream.arn, handler, batch_size=3).pump_once() == 7
    assert [len(b) for b in handler.batches] == [3, 3, 1]
    assert handler.delivered == [f"e{i:02}" for i in range(7)]


def test_second_pump_delivers_only_new_records(stream: Stream) -> None:
    stream.put("e1", "e2")
    handler = Recorder()
    pump = StreamPump(stream.client, stream.arn, handler)
    assert pump.pump_once() == 2
    assert pump.pump_once() == 0
    stream.put("e3")
    assert pump.pump_once() == 1
    assert handler.delivered == ["e1", "e2", "e3"]


def test_partial_failure_redelivers_the_failed_record_and_those_after_it(stream: Stream) -> None:
    stream.put("e1", "e2", "e3", "e4")
    handler = Recorder(fail_times={"e2": 1})
    assert StreamPump(stream.client, stream.arn, handler).pump_once() == 4
    assert handler.batches == [["e1", "e2", "e3", "e4"], ["e2", "e3", "e4"]]


def test_lowest_reported_failure_is_the_retry_point(stream: Stream) -> None:
    stream.put("e1", "e2", "e3", "e4")
    handler = Recorder(fail_times={"e4": 1, "e2": 1})
    StreamPump(stream.client, stream.arn, handler).pump_once()
    assert handler.batches[:2] == [["e1", "e2", "e3", "e4"], ["e2", "e3", "e4"]]
    assert handler.delivered.count("e1") == 1


def test_poison_record_is_given_up_after_max_attempts_and_the_rest_arrive(stream: Stream) -> None:
    stream.put("e1", "e2", "e3")
    given_up: list[tuple[str, str]] = []
    handler = Recorder(fail_times={"e2": 99})
    pump = StreamPump(
        stream.client,
        stream.arn,
        handler,
        max_attempts=3,
        on_give_up=lambda record, reason: given_up.append((_event_id(record), reason)),
    )
    assert pump.pump_once() == 2
    assert handler.delivered.count("e2") == 3
    assert handler.batches[-1] == ["e3"]
    assert [event_id for event_id, _ in given_up] == ["e2"]
    assert given_up[0][1].startswith("batch_item_failure")
    assert pump.pump_once() == 0
    assert handler.batches[-1] == ["e3"]


def test_raising_handler_fails_the_batch_and_is_retried(stream: Stream) -> None:
    stream.put("e1", "e2")
    given_up: list[str] = []
    handler = Recorder(raise_times=2)
    pump = StreamPump(
        stream.client,
        stream.arn,
        handler,
        on_give_up=lambda record, reason: given_up.append(reason),
    )
    assert pump.pump_once() == 2
    assert handler.batches == [["e1", "e2"]] * 3
    assert given_up == []


def test_always_raising_handler_gives_records_up_one_at_a_time(stream: Stream) -> None:
    stream.put("e1", "e2")
    given_up: list[tuple[str, str]] = []
    handler = Recorder(raise_times=1000)
    pump = StreamPump(
        stream.client,
        stream.arn,
        handler,
        max_attempts=2,
        on_give_up=lambda record, reason: given_up.append((_event_id(record), reason)),
    )
    assert pump.pump_once() == 0
    assert handler.batches == [["e1", "e2"], ["e1", "e2"], ["e2"], ["e2"]]
    assert [event_id for event_id, _ in given_up] == ["e1", "e2"]
    assert given_up[0][1].startswith("handler_error:RuntimeError")


@pytest.mark.parametrize(
    "response",
    [
        {"batchItemFailures": [{"itemIdentifier": ""}]},
        {"batchItemFailures": [{"itemIdentifier": None}]},
        {"batchItemFailures": [{"wrongKey": "1"}]},
        {"batchItemFailures": [{"itemIdentifier": "999"}]},
    ],
)
def test_malformed_failure_report_fails_the_whole_batch(stream: Stream, response: dict[str, Any]) -> None:
    stream.put("e1", "e2")
    calls: list[int] = []

    def handler(event: dict[str, Any]) -> dict[str, Any]:
        calls.append(len(event["Records"]))
        return response if len(calls) == 1 else {"batchItemFailures": []}

    assert StreamPump(stream.client, stream.arn, handler).pump_once() == 2
    assert calls == [2, 2]


def test_empty_or_missing_failure_report_is_success(stream: Stream) -> None:
    stream.put("e1", "e2")
    for response in (None, {}, {"batchItemFailures": None}):
        calls: list[int] = []
        pump = StreamPump(stream.client, stream.arn, lambda event, r=response, c=calls: c.append(1) or r)  # type: ignore[misc]
        assert pump.pump_once() == 2
        assert calls == [1]


def test_background_pump_delivers_and_stops(stream: Stream) -> None:
    handler = Recorder()
    pump = StreamPump(stream.client, stream.arn, handler)
    pump.start(interval=0.01)
    try:
        stream.put("e1", "e2")
        pump.drain()
    finally:
        pump.stop()
    assert handler.delivered == ["e1", "e2"]
    stream.put("e3")
    assert pump.pump_once() == 1


def test_drain_returns_once_nothing_new_is_left(stream: Stream) -> None:
    stream.put("e1", "e2", "e3")
    handler = Recorder(fail_times={"e3": 1})
    StreamPump(stream.client, stream.arn, handler, batch_size=2).drain()
    assert handler.batches == [["e1", "e2"], ["e3"], ["e3"]]


def test_sample_record_has_the_shape_the_pump_delivers(stream: Stream) -> None:
    stream.put("e1")
    handler = Recorder()
    StreamPump(stream.client, stream.arn, handler).pump_once()
    sample = json.loads(SAMPLE.read_text())
    (record,) = handler.records
    assert set(sample) == set(record)
    assert set(sample["dynamodb"]) == set(record["dynamodb"])
    assert sample["eventSourceARN"].startswith("arn:aws:dynamodb:us-east-1:")
    assert isinstance(sample["dynamodb"]["ApproximateCreationDateTime"], int)


def test_a_write_to_the_table_wakes_a_pump_that_would_otherwise_wait_a_minute(stream: Stream) -> None:
    """The local stack's pump polls once the app has written to the events table (local/stack.py), not on a short timer."""
    handler = Recorder()
    pump = StreamPump(stream.client, stream.arn, handler)
    writer = stream.table.meta.client
    wake_on_events_write(writer, TABLE, pump.wake)
    stream.put("first")
    pump.start(interval=60.0)
    try:
        _wait_for(handler, "first")  # the pass at start; then the pump waits its minute
        stream.put("woken")
        _wait_for(handler, "woken")
        assert handler.delivered == ["first", "woken"]
    finally:
        pump.stop()


def test_only_a_write_that_names_the_table_wakes_the_pump(stream: Stream) -> None:
    woken: list[str] = []
    writer = stream.table.meta.client
    wake_on_events_write(writer, TABLE, lambda: woken.append("woken"))
    key = {"session_id": "s-1", "event_id": "e"}
    writer.get_item(TableName=TABLE, Key=key)  # the resource's client: plain Python values
    assert woken == []  # a read
    stream.put("e")
    put = {"Put": {"TableName": TABLE, "Item": {"session_id": "s-1", "event_id": "t"}}}
    writer.transact_write_items(TransactItems=[put])
    assert woken == ["woken", "woken"]


def _wait_for(handler: Recorder, event_id: str, seconds: float = 30.0) -> None:
    """Until `event_id` was delivered: generous for a loaded machine, yet half the minute an unwoken pump waits."""
    deadline = time.monotonic() + seconds
    while event_id not in handler.delivered and time.monotonic() < deadline:
        time.sleep(0.05)
