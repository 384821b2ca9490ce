"""Feeds a DynamoDB stream to a handler the way Lambda's event source mapping does, for `make run`.

Deployed, Lambda reads the events table's stream, hands the consumer batches of records, honours
its partial batch response (`ReportBatchItemFailures`), retries, and finally sends what keeps
failing to the on-failure destination. `chalice local` runs no event sources, so this pump does
that job on one machine, against DynamoDB Local's streams (moto's in the quick tier's tests).

Semantics (what a handler can rely on, deployed or local):
- Records of a shard arrive in sequence order, in batches of at most `batch_size`, shaped like a
  real Lambda DynamoDB event (`eventSourceARN`, `awsRegion`, epoch-second
  `ApproximateCreationDateTime`, base64 text for binary attributes).
- `{"batchItemFailures": [{"itemIdentifier": seq}, ...]}`: everything before the lowest reported
  sequence number is checkpointed; that record and all after it are delivered again.
- A handler that raises, or answers with a malformed failure list (empty/null identifier, one that
  is not in the batch), failed the whole batch: treated as a failure reported at its first record.
- A record that is the failure point `max_attempts` times is given up alone: `on_give_up(record,
  reason)` (deployed: the on-failure destination) and the pump moves past it. Records after it
  are never given up on its account. This matches Lambda with `BisectBatchOnFunctionError`
  bisecting down to the failing record; without bisect, Lambda would drop the whole batch.
- Retries are immediate (no backoff): the local consumer's failures are bugs or moto hiccups.
Delivery is at least once, as deployed: a record after a failure point is delivered again.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

__all__ = ["StreamPump", "create_streams_client", "wake_on_events_write"]

logger = logging.getLogger(__name__)

Record = dict[str, Any]
Handler = Callable[[dict[str, Any]], "dict[str, Any] | None"]
GiveUp = Callable[[Record, str], None]

# GetRecords returns at most 1000 records per call; one call fills one batch here.
MAX_BATCH_SIZE = 1000


def create_streams_client(endpoint_url: str | None = None, region: str = "us-east-1") -> Any:
    """A DynamoDB Streams client that works against moto with botocore 1.44.

    botocore 1.44 otherwise routes Streams calls to an account-id endpoint moto does not serve
    (404 "Not yet implemented"); see NOTES.md. Built on call, never at import.
    """
    import boto3
    from botocore.config import Config

    return boto3.client(
        "dynamodbstreams",
        region_name=region,
        endpoint_url=endpoint_url,
        config=Config(account_id_endpoint_mode="disabled"),
    )


_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})


def _names_table(params: dict[str, Any], table: str) -> bool:
    if params.get("TableName") == table or table in params.get("RequestItems", {}):
        return True
    return any(action.get("TableName") == table for item in params.get("TransactItems", []) for action in item.values())


def wake_on_events_write(client: Any, table: str, wake: Callable[[], None]) -> None:
    """Call `wake` after each call of `client` that wrote to `table` (its stream then has a record to read).

    botocore's `before-parameter-build` sees the call's parameters and marks its request context;
    `after-call` (the answer is in, retries done) wakes the pump, so a poll never runs before the write.
    """

    def mark(params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        if model.name in _WRITES and _names_table(params, table):
            context["memory_events_write"] = True

    def woken(context: dict[str, Any], **_: Any) -> None:
        if context.get("memory_events_write"):
            wake()

    client.meta.events.register("before-parameter-build.dynamodb", mark, unique_id=f"events-write-{table}")
    client.meta.events.register("after-call.dynamodb", woken, unique_id=f"events-woken-{table}")


class StreamPump:
    """Polls every shard of one stream and delivers its records to `handler`, in order."""

    def __init__(
        self,
        streams_client: Any,
        stream_arn: str,
        handler: Handler,
        *,
        batch_size: int = 100,
        max_attempts: int = 3,
        region: str = "us-east-1",
        on_give_up: GiveUp | None = None,
        record_filter: Callable[[Record], bool] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH_SIZE}")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._client = streams_client
        self._stream_arn = stream_arn
        self._handler = handler
        self._batch_size = batch_size
        self._max_attempts = max_attempts
        self._region = region
        self._on_give_up = on_give_up
        # Lambda's FilterCriteria (local/event_filter.py): a record it drops is never delivered and
        # counts as processed.
        self._accepts = record_filter or (lambda record: True)
        # The local stack's dev clock: a record's real-time stamp is moved by the clock's offset, so the
        # stream, the app and the TTL sweeper agree on the time (None: the stamps as the stream gave them).
        self._clock = clock
        # shard id -> sequence number of the last record handled (delivered or given up).
        self._checkpoints: dict[str, str] = {}
        self._finished_shards: set[str] = set()
        self._known_shards: set[str] = set()
        # sequence number -> how many times that record was the failure point.
        self._failures: dict[str, int] = {}
        # One pass at a time: the background thread and drain() must never deliver concurrently.
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wakeup = threading.Event()
        self._thread: threading.Thread | None = None

    def pump_once(self) -> int:
        """Deliver everything new on every shard; return how many records the handler accepted."""
        with self._lock:
            delivered, _seen = self._pass()
        return delivered

    def drain(self, timeout: float = 10.0) -> None:
        """Pump until a pass finds nothing new; TimeoutError if that takes longer than `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                _delivered, seen = self._pass()
            if seen == 0:
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the stream kept producing records past the drain timeout")

    def wake(self) -> None:
        """A record may be waiting: poll now instead of at the end of the interval (safe from any thread)."""
        self._wakeup.set()

    def start(self, interval: float = 0.2) -> None:
        """Poll in a daemon thread every `interval` seconds, or at once after `wake()`, until `stop()`."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(interval,), name="stream-pump", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the polling thread, letting a pass in progress finish."""
        self._stop.set()
        self._wakeup.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _run(self, interval: float) -> None:
        while not self._stop.is_set():
            try:
                self.pump_once()
            except Exception as exc:  # noqa: BLE001 - keep polling: moto restarting must not kill the pump
                # The type only: a message could quote a record, and records hold memory text.
                logger.warning("stream pump pass failed: %s", type(exc).__name__)
            self._wakeup.wait(interval)
            self._wakeup.clear()  # a record written from here on wakes the next wait again

    # --- one pass over the stream -------------------------------------------------------------

    def _pass(self) -> tuple[int, int]:
        delivered = seen = 0
        for shard in self._shards():
            parent = shard.get("ParentShardId")
            if shard["ShardId"] in self._finished_shards:
                continue
            # A child shard waits until its parent is read to the end (order across a split).
            if parent in self._known_shards and parent not in self._finished_shards:
                continue
            shard_delivered, shard_seen = self._pump_shard(shard["ShardId"])
            delivered += shard_delivered
            seen += shard_seen
        return delivered, seen

    def _shards(self) -> list[dict[str, Any]]:
        shards: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"StreamArn": self._stream_arn}
        while True:
            description = self._client.describe_stream(**kwargs)["StreamDescription"]
            shards.extend(description.get("Shards", []))
            last = description.get("LastEvaluatedShardId")
            if not last:
                break
            kwargs["ExclusiveStartShardId"] = last
        self._known_shards = {shard["ShardId"] for shard in shards}
        return _parents_first(shards)

    def _pump_shard(self, shard_id: str) -> tuple[int, int]:
        delivered = seen = 0
        while True:
            raw, shard_closed = self._read(shard_id)
            if not raw:
                if shard_closed:
                    self._finished_shards.add(shard_id)
                return delivered, seen
            seen += len(raw)
            records = [self._to_lambda_record(r) for r in raw]
            kept = [r for r in records if self._accepts(r)]
            if kept:
                delivered += self._deliver(shard_id, kept, records)
            else:
                self._checkpoint(shard_id, records)

    def _read(self, shard_id: str) -> tuple[list[Record], bool]:
        # Every read starts from the checkpoint with a fresh iterator. moto replaces a table, stream
        # shards included, with a copy whenever a transaction on it is cancelled (the consumer's
        # refusals do that); an iterator taken before then would read the stale copy forever.
        page = self._read_from_checkpoint(shard_id)
        return page.get("Records", []), page.get("NextShardIterator") is None

    def _read_from_checkpoint(self, shard_id: str) -> dict[str, Any]:
        checkpoint = self._checkpoints.get(shard_id)
        position: dict[str, Any] = (
            {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": checkpoint}
            if checkpoint is not None
            else {"ShardIteratorType": "TRIM_HORIZON"}
        )
        iterator = self._client.get_shard_iterator(StreamArn=self._stream_arn, ShardId=shard_id, **position)[
            "ShardIterator"
        ]
        return dict(self._client.get_records(ShardIterator=iterator, Limit=self._batch_size))

    def _deliver(self, shard_id: str, records: list[Record], read: list[Record] | None = None) -> int:
        """Hand one batch to the handler, checkpoint what succeeded; return how many succeeded.

        `read` is everything read from the shard when the filter dropped some of it: the dropped
        records count as processed, so they are checkpointed with their neighbours.
        """
        read = records if read is None else read
        failed_at, reason = self._invoke(records)
        if failed_at is None:
            self._checkpoint(shard_id, read)
            return len(records)
        failed = records[failed_at]
        self._checkpoint(shard_id, read[: next(i for i, r in enumerate(read) if r is failed)])
        sequence = failed["dynamodb"]["SequenceNumber"]
        self._failures[sequence] = self._failures.get(sequence, 0) + 1
        if self._failures[sequence] >= self._max_attempts:
            self._checkpoint(shard_id, [failed])
            self._give_up(failed, reason)
        return failed_at

    def _invoke(self, records: list[Record]) -> tuple[int | None, str]:
        """Index of the first record to redeliver (None: all succeeded), and why."""
        try:
            response = self._handler({"Records": records})
        except Exception as exc:  # noqa: BLE001 - a raising handler failed the batch, as in Lambda
            return 0, f"handler_error:{type(exc).__name__}"
        if response is None:
            return None, ""
        if not isinstance(response, dict):
            return 0, "invalid_response"
        failures = response.get("batchItemFailures")
        if not failures:  # absent, null or empty: the whole batch succeeded
            return None, ""
        positions = {r["dynamodb"]["SequenceNumber"]: i for i, r in enumerate(records)}
        indexes: list[int] = []
        for failure in failures if isinstance(failures, list) else [None]:
            identifier = failure.get("itemIdentifier") if isinstance(failure, dict) else None
            if not isinstance(identifier, str) or identifier not in positions:
                return 0, "invalid_response"
            indexes.append(positions[identifier])
        return min(indexes), "batch_item_failure"

    def _checkpoint(self, shard_id: str, records: list[Record]) -> None:
        for record in records:
            self._failures.pop(record["dynamodb"]["SequenceNumber"], None)
        if records:
            self._checkpoints[shard_id] = records[-1]["dynamodb"]["SequenceNumber"]

    def _give_up(self, record: Record, reason: str) -> None:
        sequence = record["dynamodb"]["SequenceNumber"]
        reason = f"{reason} after {self._max_attempts} attempts"
        logger.warning("stream record %s given up: %s", sequence, reason)
        if self._on_give_up is None:
            return
        try:
            self._on_give_up(record, reason)
        except Exception as exc:  # noqa: BLE001 - the record is already skipped; a broken hook must not stall
            logger.warning("on_give_up failed for %s: %s", sequence, type(exc).__name__)

    def _to_lambda_record(self, raw: Record) -> Record:
        """Add what Lambda adds to a GetRecords record, and use its JSON types."""
        record = dict(raw)
        record["eventSource"] = raw.get("eventSource", "aws:dynamodb")
        record["awsRegion"] = self._region
        record["eventSourceARN"] = self._stream_arn
        identity = raw.get("userIdentity")
        if isinstance(identity, dict):  # the Streams API's {PrincipalId, Type}; Lambda's event: {principalId, type}
            record["userIdentity"] = {"principalId": identity.get("PrincipalId"), "type": identity.get("Type")}
        dynamodb = dict(raw["dynamodb"])
        created = dynamodb.get("ApproximateCreationDateTime")
        if isinstance(created, datetime):
            if self._clock is not None:
                created += self._clock() - datetime.now(UTC)
            # Lambda sends epoch seconds, rounded down to the second.
            dynamodb["ApproximateCreationDateTime"] = int(created.timestamp())
        for image in ("Keys", "NewImage", "OldImage"):
            if image in dynamodb:
                dynamodb[image] = {k: _to_json_value(v) for k, v in dynamodb[image].items()}
        record["dynamodb"] = dynamodb
        return record


def _to_json_value(value: dict[str, Any]) -> dict[str, Any]:
    """boto3 decodes binary attributes to bytes; Lambda's JSON event carries them as base64 text."""
    ((kind, inner),) = value.items()
    if kind == "B":
        return {"B": base64.b64encode(inner).decode("ascii")}
    if kind == "BS":
        return {"BS": [base64.b64encode(item).decode("ascii") for item in inner]}
    if kind == "M":
        return {"M": {k: _to_json_value(v) for k, v in inner.items()}}
    if kind == "L":
        return {"L": [_to_json_value(item) for item in inner]}
    return {kind: inner}


def _error_code(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


def _parents_first(shards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Order shards so that a parent listed in the stream comes before its children."""
    ids = {shard["ShardId"] for shard in shards}
    ordered: list[dict[str, Any]] = []
    placed: set[str] = set()
    remaining = list(shards)
    while remaining:
        ready = [s for s in remaining if s.get("ParentShardId") not in ids or s.get("ParentShardId") in placed]
        if not ready:  # a cycle cannot happen on AWS; keep the given order rather than loop
            return ordered + remaining
        ordered.extend(ready)
        placed.update(s["ShardId"] for s in ready)
        remaining = [s for s in remaining if s["ShardId"] not in placed]
    return ordered
