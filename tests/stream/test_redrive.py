"""`make redrive` against moto (SQS, DynamoDB and its stream): a dead-letter message's pending events get handled, once.

The dead-letter messages are what Lambda's on-failure destination writes for a DynamoDB stream batch
(`DDBStreamBatchInfo`: stream, shard, first and last sequence numbers, arrival times; never records),
built here from moto's real stream records.
"""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DISTINCT = "Redrives-the-little-egret-3318"


def _load_tool() -> Any:
    spec = importlib.util.spec_from_file_location("redrive_tool", ROOT / "scripts" / "redrive.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


redrive = _load_tool()


@pytest.fixture
def queue(dynamodb: Any) -> tuple[Any, str]:
    import boto3

    sqs = boto3.client("sqs", region_name="us-east-1")
    return sqs, sqs.create_queue(QueueName="events-dlq")["QueueUrl"]


@pytest.fixture
def streams(tables: dict[str, str]) -> Any:
    from local.stream_pump import create_streams_client

    return create_streams_client()


def _stream_records(streams: Any, stream_arn: str) -> tuple[str, list[dict[str, Any]]]:
    shard = streams.describe_stream(StreamArn=stream_arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=stream_arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")[
        "ShardIterator"
    ]
    return shard, streams.get_records(ShardIterator=iterator)["Records"]


def _dead_letter(stream_arn: str, shard: str, records: list[dict[str, Any]], arrival: str) -> str:
    """Lambda's on-failure record for a DynamoDB stream batch (AWS Lambda developer guide's example shape)."""
    return json.dumps(
        {
            "requestContext": {
                "requestId": "r-1",
                "functionArn": "arn:aws:lambda:us-east-1:123456789012:function:consumer",
                "condition": "RetryAttemptsExhausted",
                "approximateInvokeCount": 6,
            },
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
            "version": "1.0",
            "timestamp": arrival,
            "DDBStreamBatchInfo": {
                "shardId": shard,
                "startSequenceNumber": records[0]["dynamodb"]["SequenceNumber"],
                "endSequenceNumber": records[-1]["dynamodb"]["SequenceNumber"],
                "approximateArrivalOfFirstRecord": arrival,
                "approximateArrivalOfLastRecord": arrival,
                "batchSize": len(records),
                "streamArn": stream_arn,
            },
        }
    )


def _pending_batch(
    agents: Any, streams: Any, tables: dict[str, str], session: str = "s"
) -> tuple[str, list[dict[str, Any]]]:
    """Three propose events posted and never delivered: the batch Lambda gave up on."""
    agents.register(session, "alice")
    events = [{"id": f"e{n}", "text": f"{DISTINCT} {n}"} for n in range(3)]
    assert agents.propose(session, *events, pump=False)[0] == 202
    shard, records = _stream_records(streams, tables["events_stream"])
    inserts = [r for r in records if r["eventName"] == "INSERT"]
    assert len(inserts) == 3
    return shard, inserts


def _state(api: Any, agents: Any, stores: Any, session: str = "s") -> tuple[Any, ...]:
    proposals = api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]
    return (
        sorted(p["text"] for p in proposals),
        stores.entries.get_state("alice").waiting,
        sorted((e["id"], e["status"]) for e in agents.events(session)),
    )


def test_a_dead_letter_message_redrives_its_pending_events_once_and_is_deleted(
    api: Any,
    agents: Any,
    stores: Any,
    streams: Any,
    tables: dict[str, str],
    queue: tuple[Any, str],
    dynamodb: Any,
    capsys: Any,
) -> None:
    from chalicelib.clock import instant
    from chalicelib.services import consumer
    from chalicelib.storage import dynamo

    api.turn_on("alice")
    shard, inserts = _pending_batch(agents, streams, tables)
    # One of the three was handled by an earlier delivery before the batch was given up on.
    consumer.handle_record(stores, {**inserts[1], "eventSourceARN": tables["events_stream"]})
    sqs, url = queue
    sqs.send_message(
        QueueUrl=url, MessageBody=_dead_letter(tables["events_stream"], shard, inserts, instant(stores.clock).iso)
    )

    sink = redrive.local_sink(stores)
    (outcome,) = redrive.run(sqs, url, streams=streams, dynamodb=dynamodb, sink=sink)
    assert (outcome.source, outcome.named, outcome.redriven, outcome.skipped, outcome.failed, outcome.deleted) == (
        "stream",
        3,
        2,
        1,
        0,
        True,
    )
    after_first = _state(api, agents, stores)
    assert after_first == (
        [f"{DISTINCT} {n}" for n in range(3)],
        3,
        [("e0", "handled"), ("e1", "handled"), ("e2", "handled")],
    )
    assert sqs.receive_message(QueueUrl=url).get("Messages") is None  # deleted

    # The same message again (an operator re-sends it, or SQS delivers it twice): nothing changes.
    sqs.send_message(
        QueueUrl=url, MessageBody=_dead_letter(tables["events_stream"], shard, inserts, instant(stores.clock).iso)
    )
    (again,) = redrive.run(sqs, url, streams=streams, dynamodb=dynamodb, sink=sink)
    assert (again.named, again.redriven, again.skipped, again.deleted) == (3, 0, 3, True)
    assert _state(api, agents, stores) == after_first
    raw = dynamodb.query(
        TableName=stores.events.table,
        KeyConditionExpression="session_id = :s",
        ExpressionAttributeValues={":s": {"S": "s"}},
    )["Items"]
    assert all("text" not in dynamo.load(item) for item in raw)  # handled events keep no text
    assert DISTINCT not in capsys.readouterr().out


def test_a_failing_consumer_leaves_the_message_and_the_events_pending(
    api: Any, agents: Any, stores: Any, streams: Any, tables: dict[str, str], queue: tuple[Any, str], dynamodb: Any
) -> None:
    from chalicelib.clock import instant

    api.turn_on("alice")
    shard, inserts = _pending_batch(agents, streams, tables)
    sqs, url = queue
    sqs.send_message(
        QueueUrl=url, MessageBody=_dead_letter(tables["events_stream"], shard, inserts, instant(stores.clock).iso)
    )
    before = _state(api, agents, stores)

    def broken(keys: list[dict[str, str]]) -> dict[str, Any]:
        return {"batchItemFailures": [{"itemIdentifier": f"{k['session_id']}/{k['event_id']}"} for k in keys]}

    (outcome,) = redrive.run(sqs, url, streams=streams, dynamodb=dynamodb, sink=broken)
    assert (outcome.failed, outcome.deleted) == (3, False)
    assert _state(api, agents, stores) == before and before[1] == 0
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"])
    assert attributes["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "1"  # back after its visibility timeout


def test_once_the_stream_has_trimmed_the_batch_the_events_table_names_the_pending_events(
    api: Any, agents: Any, stores: Any, streams: Any, tables: dict[str, str], queue: tuple[Any, str], dynamodb: Any
) -> None:
    from chalicelib.clock import instant

    api.turn_on("alice")
    shard, inserts = _pending_batch(agents, streams, tables)
    agents.register("other", "alice")
    stores_clock_later = instant(stores.clock)
    sqs, url = queue
    sqs.send_message(
        QueueUrl=url, MessageBody=_dead_letter(tables["events_stream"], shard, inserts, stores_clock_later.iso)
    )

    class TrimmedStream:
        """DynamoDB Streams past its 24 h for these records. moto never trims (and an unknown shard is an
        AssertionError inside moto, not AWS's ResourceNotFoundException), so this one call answers as AWS does."""

        def get_shard_iterator(self, **_: Any) -> Any:
            from botocore.exceptions import ClientError

            raise ClientError(
                {"Error": {"Code": "TrimmedDataAccessException", "Message": "trimmed"}}, "GetShardIterator"
            )

    (outcome,) = redrive.run(sqs, url, streams=TrimmedStream(), dynamodb=dynamodb, sink=redrive.local_sink(stores))
    assert (outcome.source, outcome.named, outcome.redriven, outcome.deleted) == ("events-table", 3, 3, True)
    assert _state(api, agents, stores)[1] == 3


def test_the_lambda_sink_invokes_the_consumer_with_keys_only_and_a_function_error_fails_the_chunk() -> None:
    import boto3
    from botocore.response import StreamingBody
    from botocore.stub import Stubber

    client = boto3.client("lambda", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    keys = [{"session_id": "s", "event_id": "e1"}]
    payload = json.dumps({"redrive": {"events": keys}}).encode()
    with Stubber(client) as stub:
        ok = json.dumps({"batchItemFailures": [], "redriven": 1, "skipped": 0}).encode()
        stub.add_response(
            "invoke",
            {"StatusCode": 200, "Payload": StreamingBody(io.BytesIO(ok), len(ok))},
            {"FunctionName": "consumer", "InvocationType": "RequestResponse", "Payload": payload},
        )
        crashed = b'{"errorMessage": "boom"}'
        stub.add_response(
            "invoke",
            {
                "StatusCode": 200,
                "FunctionError": "Unhandled",
                "Payload": StreamingBody(io.BytesIO(crashed), len(crashed)),
            },
            {"FunctionName": "consumer", "InvocationType": "RequestResponse", "Payload": payload},
        )
        sink = redrive.lambda_sink(client, "consumer")
        assert sink(keys) == {"batchItemFailures": [], "redriven": 1, "skipped": 0}
        assert sink(keys) == {"batchItemFailures": [{"itemIdentifier": "s/e1"}]}


def test_the_deployed_consumer_takes_a_redrive_invocation(api: Any, agents: Any, client: Any, stores: Any) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    agents.propose("s", {"id": "e1", "text": DISTINCT}, pump=False)
    answer = client.lambda_.invoke(
        "handle_events_stream",
        {
            "redrive": {
                "events": [{"session_id": "s", "event_id": "e1"}, {"session_id": "s", "event_id": "never-posted"}]
            }
        },
    ).payload
    assert answer == {"batchItemFailures": [], "redriven": 1, "skipped": 1}
    assert [p["text"] for p in api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]] == [DISTINCT]


def test_a_message_that_is_not_a_stream_failure_record_is_kept() -> None:
    with pytest.raises(ValueError):
        redrive.batch_info(json.dumps({"Records": []}))
    info = redrive.batch_info(
        _dead_letter(
            "arn:aws:dynamodb:us-east-1:1:table/pm-EventsTable-X/stream/2026",
            "sh",
            [{"dynamodb": {"SequenceNumber": "1"}}],
            "2026-01-01T00:00:00Z",
        )
    )
    assert info.table == "pm-EventsTable-X" and (info.start, info.end) == ("1", "1")
