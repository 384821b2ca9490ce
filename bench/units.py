"""Read and write request units of each DynamoDB call, computed from the items it really touches (moto's are not real).

Per AWS's documentation (Amazon DynamoDB Developer Guide), quoted:

- "DynamoDB item sizes and formats" (CapacityUnitCalculations.html): "The total size of an item is the sum
  of the lengths of its attribute names and values"; "The size of a string is (number of UTF-8-encoded bytes
  of attribute name) + (number of UTF-8-encoded bytes)"; a number is "(1 byte per two significant digits) +
  (1 byte)"; "the value's raw byte length is used" for a binary; "a null attribute or a Boolean attribute is
  ... (1 byte)"; "An attribute of type List or Map requires 3 bytes of overhead" and "Each List or Map
  element also requires 1 byte of overhead".
- "DynamoDB read and write operations" (read-write-operations.html): "Item sizes for reads are rounded up
  to the next 4 KB multiple"; a strongly consistent read of up to 4 KB is one read unit, an eventually
  consistent one half; "If you perform a read operation on an item that doesn't exist, DynamoDB will
  still consume read throughput"; "you can request a subset of attributes to retrieve. However, doing so
  has no impact on the item size calculations"; a Query's items are "treated as a single read operation,
  where DynamoDB computes the total size of all items and then rounds up to the next 4 KB boundary".
  Writes: "Item sizes for writes are rounded up to the next 1 KB multiple"; PutItem and UpdateItem cost
  the larger of the item's size before and after, DeleteItem "the size of the deleted item"; BatchWriteItem
  "processes each item in the batch as an individual PutItem or DeleteItem request".
- "Managing complex workflows with DynamoDB transactions" (transaction-apis.html, capacity management):
  "Transactional write requests require two write capacity units for each write" of up to 1 KB: each
  action of a TransactWriteItems costs twice its single write. A ConditionCheck is counted here as a
  transactional write of the item it checks (DynamoDB reports it in the write units); a cancelled
  transaction is counted as if it ran (an upper bound).
- "Using Global Secondary Indexes in DynamoDB" (GSI.html, "Provisioned throughput considerations"): a write
  to the table that puts an item into an index, or removes it, is one more write there; "If an update to the
  table changes the value of an indexed key attribute (from A to B), two writes are required"; an update
  that changes only projected attributes is one write; an item in the index neither before nor after costs
  the index nothing. Each index write is counted here in 1 KB blocks of the projected entry, once (also
  under a transaction, whose doubling the guide states for the items' own writes).
- On-demand prices ("Amazon DynamoDB pricing", us-east-1, 2025): $0.625 per million write request units,
  $0.125 per million read request units.

`UnitMeter` sits on a client's botocore events: before a write it reads the stored size of each item the
call names, after it the new size (and, for a Query, the full size of each item returned), through a
second client its hooks do not see (a Query's page is read again whole).
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

WRU_PRICE, RRU_PRICE = 0.625, 0.125  # USD per million request units, on-demand, us-east-1
READ_BLOCK, WRITE_BLOCK = 4096, 1024


def value_size(value: Mapping[str, Any]) -> int:
    """The size of one typed value (DynamoDB JSON), without its attribute name."""
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(str(inner).encode())
    if kind == "N":
        return _number_size(str(inner))
    if kind == "B":
        return len(_raw(inner))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(value_size({kind[0]: element}) for element in inner)
    if kind == "L":
        return 3 + sum(value_size(element) + 1 for element in inner)
    if kind == "M":
        return 3 + sum(len(name.encode()) + value_size(element) + 1 for name, element in inner.items())
    raise ValueError(f"unknown DynamoDB type {kind}")


def item_size(item: Mapping[str, Mapping[str, Any]] | None) -> int:
    return sum(len(name.encode()) + value_size(value) for name, value in (item or {}).items())


def _raw(inner: Any) -> bytes:
    return inner if isinstance(inner, bytes) else base64.b64decode(inner)


def _number_size(text: str) -> int:
    digits = Decimal(text).normalize().as_tuple().digits
    significant = str(int("".join(map(str, digits)) or "0")).rstrip("0") or "0"
    return math.ceil(len(significant) / 2) + 1


def write_units(before: int, after: int) -> int:
    return max(1, math.ceil(max(before, after) / WRITE_BLOCK))


def read_units(size: int, consistent: bool) -> float:
    blocks = max(1, math.ceil(size / READ_BLOCK))
    return float(blocks) if consistent else blocks / 2


@dataclass
class Units:
    rru: float = 0.0
    wru: float = 0.0

    def dollars_per_million(self) -> float:
        return self.rru * RRU_PRICE + self.wru * WRU_PRICE


class UnitMeter:
    """Request units of the calls made on `client` while `metering()` is open; `peek` reads what is stored, unmetered."""

    def __init__(self, client: Any, peek: Any) -> None:
        self._peek = peek
        self._keys: dict[str, list[str]] = {}
        self._indexes: dict[str, list[tuple[list[str], dict[str, Any]]]] = {}
        self._pending: list[tuple[str, dict[str, Any], dict[tuple[str, str], int]]] = []
        self.units: Units | None = None
        client.meta.events.register("before-parameter-build.dynamodb", self._before)
        client.meta.events.register("after-call.dynamodb", self._after)

    @contextmanager
    def metering(self) -> Iterator[Units]:
        self.units = Units()
        try:
            yield self.units
        finally:
            self.units = None

    # ---- hooks ---------------------------------------------------------------------------------

    def _before(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        if self.units is None:
            return
        before = {
            (table, _key_text(key)): self._stored(table, key) for table, key in self._written_keys(model.name, params)
        }
        self._pending.append((model.name, params, before))

    def _after(self, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        if self.units is None or not self._pending:
            return
        name, params, before = self._pending.pop()
        if name != model.name:
            return
        units = self.units
        if name == "GetItem":
            units.rru += read_units(
                item_size(self._stored(params["TableName"], params["Key"])), bool(params.get("ConsistentRead"))
            )
        elif name == "Query":  # the same page again, whole items: a projection reads (and costs) them whole
            whole = {k: v for k, v in params.items() if k not in ("ProjectionExpression", "Select")}
            if "ProjectionExpression" in params and "ExpressionAttributeNames" in whole:
                used = whole["KeyConditionExpression"] + " " + whole.get("FilterExpression", "")
                whole["ExpressionAttributeNames"] = {
                    k: v for k, v in whole["ExpressionAttributeNames"].items() if k in used
                }
                if not whole["ExpressionAttributeNames"]:
                    del whole["ExpressionAttributeNames"]
            sizes = sum(item_size(item) for item in self._peek.query(**whole).get("Items", []))
            units.rru += read_units(sizes, bool(params.get("ConsistentRead")))
        elif name in ("PutItem", "UpdateItem", "DeleteItem"):
            units.wru += self._written(
                params["TableName"], params.get("Key") or self._key_of(params["TableName"], params["Item"]), before
            )
        elif name == "BatchWriteItem":
            for table, requests in params["RequestItems"].items():
                for request in requests:
                    key = request.get("DeleteRequest", {}).get("Key") or self._key_of(
                        table, request["PutRequest"]["Item"]
                    )
                    units.wru += self._written(table, key, before)
        elif name == "TransactWriteItems":
            for action in params["TransactItems"]:
                ((_, inner),) = action.items()
                table = inner["TableName"]
                key = inner.get("Key") or self._key_of(table, inner["Item"])
                units.wru += self._written(table, key, before, transactional=True)

    # ---- sizes ---------------------------------------------------------------------------------

    def _written(
        self,
        table: str,
        key: Mapping[str, Any],
        before: Mapping[tuple[str, str], dict[str, Any] | None],
        transactional: bool = False,
    ) -> int:
        """The item's own write units (twice in a transaction) and its indexes' (once)."""
        old, new = before.get((table, _key_text(key))), self._stored(table, key)
        indexes = self._index_schemas(table)
        index_units = sum(_index_writes(self._keys[table] + keys, projection, old, new) for keys, projection in indexes)
        return (2 if transactional else 1) * write_units(item_size(old), item_size(new)) + index_units

    def _index_schemas(self, table: str) -> list[tuple[list[str], dict[str, Any]]]:
        if table not in self._indexes:
            described = self._peek.describe_table(TableName=table)["Table"]
            self._keys[table] = [k["AttributeName"] for k in described["KeySchema"]]
            self._indexes[table] = [
                ([k["AttributeName"] for k in index["KeySchema"]], index.get("Projection", {}))
                for index in described.get("GlobalSecondaryIndexes", [])
            ]
        return self._indexes[table]

    def _written_keys(self, name: str, params: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
        if name in ("PutItem", "UpdateItem", "DeleteItem"):
            return [(params["TableName"], params.get("Key") or self._key_of(params["TableName"], params["Item"]))]
        if name == "BatchWriteItem":
            return [
                (table, r.get("DeleteRequest", {}).get("Key") or self._key_of(table, r["PutRequest"]["Item"]))
                for table, requests in params["RequestItems"].items()
                for r in requests
            ]
        if name == "TransactWriteItems":
            found = []
            for action in params["TransactItems"]:
                ((_, inner),) = action.items()
                found.append((inner["TableName"], inner.get("Key") or self._key_of(inner["TableName"], inner["Item"])))
            return found
        return []

    def _key_of(self, table: str, item: Mapping[str, Any]) -> dict[str, Any]:
        if table not in self._keys:
            schema = self._peek.describe_table(TableName=table)["Table"]["KeySchema"]
            self._keys[table] = [k["AttributeName"] for k in schema]
        return {name: item[name] for name in self._keys[table]}

    def _stored(self, table: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        found = self._peek.get_item(TableName=table, Key=dict(key), ConsistentRead=True).get("Item")
        return dict(found) if found else None


def _index_writes(
    keys: list[str], projection: Mapping[str, Any], old: dict[str, Any] | None, new: dict[str, Any] | None
) -> int:
    """What one write of an item costs an index: `keys` are the table's and the index's key attributes (index last)."""

    def entry(item: dict[str, Any] | None) -> dict[str, Any] | None:
        if item is None or not all(k in item for k in keys):
            return None  # a sparse index: an item without its key attributes is not in it
        if projection.get("ProjectionType") == "ALL":
            return dict(item)
        named = set(keys) | set(projection.get("NonKeyAttributes", []))
        return {k: v for k, v in item.items() if k in named}

    was, now = entry(old), entry(new)
    if was == now:  # in neither, or the same entry
        return 0
    if was is not None and now is not None and any(was[k] != now[k] for k in keys):
        return write_units(item_size(was), 0) + write_units(0, item_size(now))  # out of the old key, into the new
    return write_units(item_size(was), item_size(now))


def _key_text(key: Mapping[str, Any]) -> str:
    return json.dumps(key, sort_keys=True, default=lambda b: base64.b64encode(b).decode())
