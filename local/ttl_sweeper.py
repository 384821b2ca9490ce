"""DynamoDB's Time to Live for the local stack: DynamoDB Local (like moto) stores TTL settings but deletes nothing.

What AWS documents, and what this sweeper does the same way through DynamoDB's own API:
- An item is deleted once its TTL attribute (a Number of epoch seconds) is in the past; items
  whose attribute is missing, not a Number, or more than five years in the past are never deleted.
- Deletion lags: AWS deletes expired items "typically within a few days". The background sweep
  deletes items expired for at least `lag_seconds` (default 60 s of the dev clock), so the app
  really meets expired-but-stored items; `sweep(lag_seconds=0)` (`POST /dev/ttl-sweep`) deletes
  everything expired now.
- A TTL deletion is written to the table's stream as a REMOVE record. AWS marks it with a
  `userIdentity` of `{"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}`; a DeleteItem
  cannot, so the local record has none (the consumer's filter drops every REMOVE either way).
Each deletion is conditional (the item is still expired by the same rule), so an item the app rewrote
since the Scan saw it is never deleted; up to 100 go in one TransactWriteItems (200 expired entries: two
calls instead of 200, which took over 30 s of a `POST /dev/ttl-sweep` on a loaded machine).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

__all__ = ["TtlSweeper", "FIVE_YEARS_SECONDS"]

logger = logging.getLogger(__name__)

FIVE_YEARS_SECONDS = 5 * 365 * 86_400
_EXPIRED = "attribute_type(#ttl, :number) AND #ttl BETWEEN :oldest AND :cutoff"
_ACTIONS_PER_TRANSACTION = 100  # DynamoDB's limit for one TransactWriteItems


class TtlSweeper:
    """Deletes expired items of the TTL-enabled tables among `tables`, as TTL does.

    Only the tables it is given, never every table of the endpoint: stacks and tests share a DynamoDB Local
    (local/shared_dynamodb.py), and one's dev clock must never expire another's items.
    """

    def __init__(
        self,
        client: Any,
        clock: Callable[[], datetime],
        *,
        tables: Sequence[str],
        lag_seconds: int = 60,
    ) -> None:
        self._client = client
        self._tables = tuple(tables)
        self._clock = clock
        self._lag = lag_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._one_at_a_time = threading.Lock()  # the background sweep and `POST /dev/ttl-sweep`

    def sweep(self, lag_seconds: int | None = None) -> int:
        """One pass over its tables; returns how many items TTL deleted."""
        lag = self._lag if lag_seconds is None else lag_seconds
        deleted = 0
        with self._one_at_a_time:
            now = int(self._clock().timestamp())
            for table in self._tables:
                attribute = self._ttl_attribute(table)
                if attribute is not None:
                    deleted += self._sweep_table(table, attribute, oldest=now - FIVE_YEARS_SECONDS, cutoff=now - lag)
        return deleted

    def _ttl_attribute(self, table: str) -> str | None:
        ttl = self._client.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
        return ttl.get("AttributeName") if ttl.get("TimeToLiveStatus") == "ENABLED" else None

    def _sweep_table(self, table: str, attribute: str, *, oldest: int, cutoff: int) -> int:
        keys = [k["AttributeName"] for k in self._client.describe_table(TableName=table)["Table"]["KeySchema"]]
        expired: dict[str, dict[str, Any]] = {
            "ExpressionAttributeNames": {"#ttl": attribute},
            "ExpressionAttributeValues": {
                ":number": {"S": "N"},
                ":oldest": {"N": str(oldest)},
                ":cutoff": {"N": str(cutoff)},
            },
        }
        names = {f"#k{i}": key for i, key in enumerate(keys)}
        deleted = 0
        for page in self._client.get_paginator("scan").paginate(
            TableName=table,
            FilterExpression=_EXPIRED,
            ProjectionExpression=", ".join(names),
            ExpressionAttributeNames={**expired["ExpressionAttributeNames"], **names},
            ExpressionAttributeValues=expired["ExpressionAttributeValues"],
        ):
            for start in range(0, len(page["Items"]), _ACTIONS_PER_TRANSACTION):
                deleted += self._delete(table, page["Items"][start : start + _ACTIONS_PER_TRANSACTION], expired)
        return deleted

    def _delete(self, table: str, keys: list[dict[str, Any]], expired: dict[str, Any]) -> int:
        """Delete `keys` if still expired: one transaction of up to 100 (a call each, not a call per item);
        where one of them is no longer expired (rewritten, or deleted meanwhile) the transaction changes
        nothing, and each is deleted alone."""
        action = {"TableName": table, "ConditionExpression": _EXPIRED, **expired}
        try:
            self._client.transact_write_items(TransactItems=[{"Delete": {**action, "Key": key}} for key in keys])
            return len(keys)
        except self._client.exceptions.TransactionCanceledException:
            pass
        deleted = 0
        for key in keys:
            try:
                self._client.delete_item(Key=key, **action)
            except self._client.exceptions.ConditionalCheckFailedException:
                continue  # rewritten (or deleted) since the Scan: no longer expired
            deleted += 1
        return deleted

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
