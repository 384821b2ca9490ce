"""DynamoDB's Time to Live for the embedded moto, which never deletes anything by itself.

What AWS documents, and what this sweeper does the same way:
- An item is deleted once its TTL attribute (a Number of epoch seconds) is in the past; items
  whose attribute is missing, not a Number, or more than five years in the past are never deleted.
- Deletion lags: AWS deletes expired items "typically within a few days". The background sweep
  deletes items expired for at least `lag_seconds` (default 60 s of the dev clock), so the app
  really meets expired-but-stored items; `sweep(lag_seconds=0)` (`POST /dev/ttl-sweep`) deletes
  everything expired now.
- A TTL deletion is written to the table's stream (if it has one) as a REMOVE record whose
  `userIdentity` is `{"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}`.
- The stream keeps records for 24 hours: older records are trimmed (by the dev clock), so a
  long-running stack stays bounded.
All of it runs under the embedded backend's lock (local/embedded_aws.py), like any other request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from local import embedded_aws

__all__ = ["TtlSweeper", "TTL_IDENTITY"]

logger = logging.getLogger(__name__)

TTL_IDENTITY = {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}
FIVE_YEARS_SECONDS = 5 * 365 * 86_400
STREAM_RETENTION_SECONDS = 24 * 3600


def _backends() -> Iterator[Any]:
    from moto.dynamodb.models import dynamodb_backends

    for regions in list(dynamodb_backends.values()):
        yield from list(regions.values())


def _stored_items(table: Any) -> list[tuple[Any, Any, Any]]:
    """(hash key, range key or None, item) for every item of a moto table."""
    if table.range_key_attr is None:
        return [(hash_key, None, item) for hash_key, item in table.items.items()]
    return [
        (hash_key, range_key, item)
        for hash_key, by_range in table.items.items()
        for range_key, item in by_range.items()
    ]


def _expiry(item: Any, attribute: str) -> int | None:
    value = item.attrs.get(attribute)
    if value is None or value.type != "N":
        return None
    try:
        return int(float(value.value))
    except ValueError:
        return None


class TtlSweeper:
    """Deletes expired items of every TTL-enabled table of the embedded DynamoDB, as TTL does."""

    def __init__(self, clock: Callable[[], datetime], *, lag_seconds: int = 60) -> None:
        self._clock = clock
        self._lag = lag_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self, lag_seconds: int | None = None) -> int:
        """One pass over every table; returns how many items TTL deleted."""
        lag = self._lag if lag_seconds is None else lag_seconds
        now = int(self._clock().timestamp())
        deleted = 0
        with embedded_aws.lock():
            for backend in _backends():
                for table in list(backend.tables.values()):
                    deleted += self._sweep_table(table, now, lag)
                    self._trim_stream(table, now)
        return deleted

    def _sweep_table(self, table: Any, now: int, lag: int) -> int:
        ttl = getattr(table, "ttl", None) or {}
        if ttl.get("TimeToLiveStatus") != "ENABLED" or not ttl.get("AttributeName"):
            return 0
        attribute = ttl["AttributeName"]
        deleted = 0
        for hash_key, range_key, item in _stored_items(table):
            expiry = _expiry(item, attribute)
            if expiry is None or expiry < now - FIVE_YEARS_SECONDS or expiry > now - lag:
                continue
            shard = table.stream_shard
            before = len(shard.items) if shard is not None else 0
            table.delete_item(hash_key, range_key)
            if shard is not None and len(shard.items) > before:
                shard.items[-1].record["userIdentity"] = dict(TTL_IDENTITY)
            deleted += 1
        return deleted

    @staticmethod
    def _trim_stream(table: Any, now: int) -> None:
        """Drop stream records older than the stream's 24-hour retention (sequence numbers stay as they were)."""
        shard = getattr(table, "stream_shard", None)
        if shard is None or not shard.items:
            return
        cutoff = now - STREAM_RETENTION_SECONDS
        old = 0
        for record in shard.items:
            created = record.record["dynamodb"].get("ApproximateCreationDateTime")
            if not isinstance(created, datetime):
                break
            if created.tzinfo is None:  # moto stamps records with naive UTC datetimes
                created = created.replace(tzinfo=UTC)
            if created.timestamp() >= cutoff:
                break
            old += 1
        if old:
            # moto numbers a record as starting_sequence_number + its index, so shift the start.
            del shard.items[:old]
            shard.starting_sequence_number += old

    def start(self, interval: float = 5.0) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(interval,), name="ttl-sweeper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                self.sweep()
            except Exception as exc:  # noqa: BLE001 - keep sweeping; the type only (items hold text)
                logger.warning("ttl sweep failed: %s", type(exc).__name__)
