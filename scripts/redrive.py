"""`make redrive`: re-drive the events a failed stream batch left pending, from its dead-letter message, idempotently.

When Lambda gives up on a batch of the events table's stream, the on-failure destination (the SQS
dead-letter queue) receives its description only: `DDBStreamBatchInfo` with the stream, the shard and
the first and last sequence numbers, never the records. For each such message this command

1. reads those records back from the stream (24 h retention) and keeps their keys only (session id,
   worker event id) — never their images, so it holds no memory text; when the stream no longer has
   them, it finds the events table's pending propose events from the batch's arrival window instead
   (a Scan projecting the keys only: an operator's tool, never a request path);
2. hands the keys to the consumer — the deployed stream function (`--function`, a Lambda invoke with
   `{"redrive": {"events": [...]}}`), or the consumer in this process (`--local`, the local stack) —
   which handles every event that is still pending exactly as its stream record would have been and
   skips the rest;
3. deletes the message once every named event is handled; a failure leaves it in the queue (it
   shows again after its visibility timeout) and the command exits 1.

Running it twice changes nothing: handled events are skipped, and proposals are keyed by event id.
Prints one JSON line per message (counts and ids, never text). See docs/deploy.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

Sink = Callable[[list[dict[str, str]]], dict[str, Any]]
CHUNK = 100  # keys per consumer invocation
WINDOW = timedelta(minutes=5)  # around the batch's arrival times, for the scan fallback
STREAM_GONE = ("TrimmedDataAccessException", "ExpiredIteratorException", "ResourceNotFoundException")


@dataclass(frozen=True)
class BatchInfo:
    stream_arn: str
    shard_id: str
    start: str
    end: str
    first_arrival: str | None
    last_arrival: str | None

    @property
    def table(self) -> str:
        """The table name inside the stream ARN (arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>)."""
        return self.stream_arn.split(":table/", 1)[1].split("/stream/", 1)[0]


@dataclass
class Outcome:
    message_id: str
    source: str = "stream"
    named: int = 0
    redriven: int = 0
    skipped: int = 0
    failed: int = 0
    deleted: bool = False
    error: str | None = None


def batch_info(body: str) -> BatchInfo:
    """The batch a Lambda on-failure record names; ValueError for anything else."""
    try:
        info = json.loads(body)["DDBStreamBatchInfo"]
        return BatchInfo(
            str(info["streamArn"]),
            str(info["shardId"]),
            str(info["startSequenceNumber"]),
            str(info["endSequenceNumber"]),
            info.get("approximateArrivalOfFirstRecord"),
            info.get("approximateArrivalOfLastRecord"),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError("not a Lambda DynamoDB-stream failure record") from exc


def keys_from_stream(streams: Any, info: BatchInfo) -> list[dict[str, str]]:
    """The keys of the INSERT records from `start` to `end` of the shard (their images are dropped unread)."""
    from boto3.dynamodb.types import TypeDeserializer

    load = TypeDeserializer().deserialize
    iterator = streams.get_shard_iterator(
        StreamArn=info.stream_arn,
        ShardId=info.shard_id,
        ShardIteratorType="AT_SEQUENCE_NUMBER",
        SequenceNumber=info.start,
    )["ShardIterator"]
    keys: list[dict[str, str]] = []
    end = int(info.end)
    for _ in range(10_000):  # a batch holds at most 10 000 records; each call returns at least one or ends
        page = streams.get_records(ShardIterator=iterator, Limit=1000)
        records = page.get("Records", [])
        for record in records:
            if int(record["dynamodb"]["SequenceNumber"]) > end:
                return keys
            if record.get("eventName") == "INSERT":
                raw = record["dynamodb"]["Keys"]
                keys.append({"session_id": str(load(raw["session_id"])), "event_id": str(load(raw["event_id"]))})
        iterator = page.get("NextShardIterator")
        if not iterator or not records:
            return keys
    return keys


def keys_from_table(dynamodb: Any, info: BatchInfo) -> list[dict[str, str]]:
    """Pending propose events created in the batch's arrival window: the fallback once the stream has trimmed it."""
    from chalicelib.models import iso  # the events' created_at format: microsecond ISO, sorts as text

    if not info.first_arrival or not info.last_arrival:
        raise ValueError("the message has no arrival times to search the events table by")
    first = datetime.fromisoformat(info.first_arrival.replace("Z", "+00:00")) - WINDOW
    last = datetime.fromisoformat(info.last_arrival.replace("Z", "+00:00")) + WINDOW
    keys: list[dict[str, str]] = []
    request: dict[str, Any] = {
        "TableName": info.table,
        "ProjectionExpression": "session_id, event_id",  # keys only: the text is never read
        "FilterExpression": "#st = :pending AND #ty = :propose AND created_at BETWEEN :a AND :b",
        "ExpressionAttributeNames": {"#st": "status", "#ty": "type"},
        "ExpressionAttributeValues": {
            ":pending": {"S": "pending"},
            ":propose": {"S": "memory.propose"},
            ":a": {"S": iso(first)},
            ":b": {"S": iso(last)},
        },
        "ConsistentRead": True,
    }
    while True:
        page = dynamodb.scan(**request)
        keys += [{"session_id": i["session_id"]["S"], "event_id": i["event_id"]["S"]} for i in page.get("Items", [])]
        if "LastEvaluatedKey" not in page:
            return keys
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def redrive_message(message: dict[str, Any], *, streams: Any, dynamodb: Any, sink: Sink) -> Outcome:
    """Re-drive one dead-letter message; True in `.deleted` only when every named event is handled."""
    outcome = Outcome(message_id=str(message.get("MessageId", "")))
    info = batch_info(message["Body"])
    try:
        keys = keys_from_stream(streams, info)
    except Exception as exc:  # noqa: BLE001 - botocore's ClientError, by its AWS error code
        if getattr(exc, "response", {}).get("Error", {}).get("Code") not in STREAM_GONE:
            raise
        outcome.source = "events-table"
        keys = keys_from_table(dynamodb, info)
    outcome.named = len(keys)
    for first in range(0, len(keys), CHUNK):
        answer = sink(keys[first : first + CHUNK])
        outcome.redriven += int(answer.get("redriven", 0))
        outcome.skipped += int(answer.get("skipped", 0))
        outcome.failed += len(answer.get("batchItemFailures") or [])
    return outcome


def lambda_sink(lambda_client: Any, function: str) -> Sink:
    """The deployed consumer: one synchronous invoke per chunk of keys."""

    def deliver(keys: list[dict[str, str]]) -> dict[str, Any]:
        answer = lambda_client.invoke(
            FunctionName=function,
            InvocationType="RequestResponse",
            Payload=json.dumps({"redrive": {"events": keys}}).encode(),
        )
        body = json.loads(answer["Payload"].read() or b"{}")
        if answer.get("FunctionError") or not isinstance(body, dict):  # the whole chunk failed
            return {"batchItemFailures": [{"itemIdentifier": f"{k['session_id']}/{k['event_id']}"} for k in keys]}
        return body

    return deliver


def local_sink(stores: Any) -> Sink:
    """The consumer in this process, over the local stack's (or a test's) stores."""
    from chalicelib.services import consumer

    return lambda keys: consumer.redrive(stores, keys)


def run(sqs: Any, queue_url: str, *, streams: Any, dynamodb: Any, sink: Sink, max_messages: int = 10) -> list[Outcome]:
    """Receive up to `max_messages` dead-letter messages and re-drive each; delete the fully handled ones."""
    outcomes: list[Outcome] = []
    while len(outcomes) < max_messages:
        received = sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=min(10, max_messages - len(outcomes)), WaitTimeSeconds=0
        ).get("Messages", [])
        if not received:
            break
        for message in received:
            try:
                outcome = redrive_message(message, streams=streams, dynamodb=dynamodb, sink=sink)
            except ValueError as exc:
                outcome = Outcome(message_id=str(message.get("MessageId", "")), error=str(exc))
            if outcome.failed == 0 and outcome.error is None:
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
                outcome.deleted = True
            outcomes.append(outcome)
    return outcomes


def _clients(endpoint: str | None) -> tuple[Any, Any, Any, Any]:
    import boto3
    from botocore.config import Config

    config = Config(account_id_endpoint_mode="disabled")
    return (
        boto3.client("sqs", endpoint_url=endpoint),
        boto3.client("dynamodbstreams", endpoint_url=endpoint, config=config),
        boto3.client("dynamodb", endpoint_url=endpoint, config=config),
        boto3.client("lambda", endpoint_url=endpoint),
    )


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queue-url", required=True, help="the stack output EventsStreamDeadLetterQueueUrl")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--function", help="the deployed stream consumer's function name (HandleEventsStream)")
    target.add_argument("--local", action="store_true", help="run the consumer in this process (the local stack)")
    parser.add_argument("--max-messages", type=int, default=10)
    parser.add_argument(
        "--endpoint-url", default=None, help="a local endpoint (.local/stack.json), never needed on AWS"
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    sqs, streams, dynamodb, lambda_client = _clients(args.endpoint_url)
    if args.local:
        from chalicelib.bootstrap import get_stores

        sink = local_sink(get_stores())
    else:
        sink = lambda_sink(lambda_client, args.function)
    outcomes = run(sqs, args.queue_url, streams=streams, dynamodb=dynamodb, sink=sink, max_messages=args.max_messages)
    for outcome in outcomes:
        print(json.dumps(asdict(outcome), sort_keys=True))
    print(json.dumps({"messages": len(outcomes), "deleted": sum(o.deleted for o in outcomes)}))
    return 0 if all(o.deleted for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
