"""The journal table: per user, append-only records of who used the memory and what changed — counts, never text."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib.storage import dynamo
from chalicelib.storage.unreadable import unreadable

# What a journal row may carry besides its action and time. Anything else is dropped, so no caller can
# put entry text into the journal by accident.
ALLOWED_DETAILS = frozenset(
    {
        "count",
        "entries",
        "proposals",
        "enabled",
        "session_id",
        "agent",
        "operator",
        "operation",
        "request_id",
        "reason",
        "entry_id",
        "read",
        "propose",
        "unrecoverable_by",  # a forget's receipt (services/shredding.py)
        "connection_id",
        "trusted",
        "expires_at",  # a connection made or revoked (services/connections.py)
        "unreadable",  # an agent's forget: how many texts' keys it deleted (issue 37 #12)
    }
)


# Counts a multi-transaction operation adds to its row (see `add_counts`), read back into its details.
COUNT_PREFIX = "n_"

# How long a journal row is kept: DynamoDB's TTL deletes it after that (infra/tables.json, attribute
# `ttl`). Over a year, so a user can always look back across a full year of who read their memory and
# what changed (an annual review, a late complaint); bounded, so the trail is not a profile kept for
# ever. docs/deploy.md says the same.
RETENTION_DAYS = 400
TTL_ATTRIBUTE = "ttl"

# A row's sort key is its ISO time and a short random suffix (see `record`); a cursor is the last row's
# sort key with `_` for `#` (URL-safe as it is). openapi.yaml gives the exact pattern, and every string
# of it names a position (one that holds no row still pages on from there).
_CURSOR = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{8,15}Z_[0-9a-f]{1,32}", re.ASCII)


@dataclass(frozen=True)
class JournalRecord:
    at: str
    action: str
    details: Mapping[str, Any]

    def public(self) -> dict[str, Any]:
        return {"at": self.at, "action": self.action, **self.details}


class JournalRepository:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self.table = table

    def record(
        self, user_id: str, action: str, now_iso: str, details: Mapping[str, Any], row_id: str | None = None
    ) -> dict[str, Any]:
        """A Put action appending one row. `row_id` makes a retried write land on the same row."""
        item = {
            "user_id": user_id,
            "sk": f"{now_iso}#{row_id or secrets.token_hex(6)}",
            "action": action,
            "at": now_iso,
            "details": _details_json(details),
            TTL_ATTRIBUTE: expiry_epoch(now_iso),
        }
        return {"Put": {"TableName": self.table, "Item": dynamo.dump(item)}}

    def add_counts(
        self,
        user_id: str,
        action: str,
        now_iso: str,
        row_id: str,
        counts: Mapping[str, int],
        details: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """An Update action adding `counts` to one row (created on first use, with `details`): an operation
        done in several transactions keeps one row that always says exactly what its committed parts did."""
        names = {"#a": "action", "#t": "at", "#d": "details", "#x": TTL_ATTRIBUTE}
        adds = []
        for position, key in enumerate(sorted(k for k in counts if k in ALLOWED_DETAILS)):
            names[f"#c{position}"] = COUNT_PREFIX + key
            adds.append(f"#c{position} :c{position}")
        vals = {
            f"c{position}": counts[key]
            for position, key in enumerate(sorted(k for k in counts if k in ALLOWED_DETAILS))
        }
        return {
            "Update": {
                "TableName": self.table,
                "Key": dynamo.dump({"user_id": user_id, "sk": f"{now_iso}#{row_id}"}),
                "UpdateExpression": "SET #a = :a, #t = :t, #d = if_not_exists(#d, :d), #x = :x ADD " + ", ".join(adds),
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": dynamo.values(
                    a=action, t=now_iso, d=_details_json(details or {}), x=expiry_epoch(now_iso), **vals
                ),
            }
        }

    def append(
        self, user_id: str, action: str, now_iso: str, details: Mapping[str, Any], row_id: str | None = None
    ) -> None:
        put = self.record(user_id, action, now_iso, details, row_id)["Put"]
        self._client.put_item(**put)

    def page(self, user_id: str, limit: int = 50, cursor: str | None = None) -> tuple[list[JournalRecord], str | None]:
        """Newest first, `limit` rows, continuing after an opaque cursor from the previous page."""
        request: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "user_id = :u",
            "ExpressionAttributeValues": dynamo.values(u=user_id),
            "ScanIndexForward": False,
            "Limit": limit,
        }
        if cursor:
            request["ExclusiveStartKey"] = dynamo.dump({"user_id": user_id, "sk": _decode_cursor(cursor)})
        page = self._client.query(**request)
        rows = _rows(dynamo.load(raw) for raw in page.get("Items", []))
        last = page.get("LastEvaluatedKey")
        next_cursor = _encode_cursor(dynamo.load(last)["sk"]) if last else None
        return rows, next_cursor

    def erase(self, user_id: str) -> int:
        """Delete every item of the user's partition (an operator's account erasure); how many there were."""
        return dynamo.batch_delete(
            self._client, self.table, dynamo.partition_keys(self._client, self.table, "user_id", user_id, "sk")
        )

    def all(self, user_id: str) -> list[JournalRecord]:
        return _rows(dynamo.query_partition(self._client, self.table, "user_id", user_id, newest_first=True))


def _details_json(details: Mapping[str, Any]) -> str:
    return json.dumps({key: value for key, value in details.items() if key in ALLOWED_DETAILS}, sort_keys=True)


def expiry_epoch(now_iso: str) -> int:
    """When TTL may delete a row written at `now_iso` (epoch seconds)."""
    written = datetime.fromisoformat(now_iso.replace("Z", "+00:00"))
    return int(written.timestamp()) + RETENTION_DAYS * 86_400


def _rows(items: Iterable[Mapping[str, Any]]) -> list[JournalRecord]:
    return [row for row in map(_row, items) if row is not None]


def _row(item: Mapping[str, Any]) -> JournalRecord | None:
    """The row in `item`; None (absent, logged) when it was altered into what `record` never writes.

    Only the allowed details are read back, as they are written: a row can never carry more (text,
    or an `at` or `action` of its own) into the page or the export.
    """
    at, action, stored = item.get("at"), item.get("action"), item.get("details", "{}")
    counts = {key[len(COUNT_PREFIX) :]: value for key, value in item.items() if key.startswith(COUNT_PREFIX)}
    try:
        details = json.loads(stored) if isinstance(stored, str) else None
    except ValueError:
        details = None
    if (
        not isinstance(details, dict)
        or not isinstance(at, str)
        or not isinstance(action, str)
        or not all(isinstance(value, int) and not isinstance(value, bool) for value in counts.values())
    ):
        unreadable("journal", "row")
        return None
    details.update(counts)
    return JournalRecord(at=at, action=action, details={k: v for k, v in details.items() if k in ALLOWED_DETAILS})


def _encode_cursor(sort_key: str) -> str:
    return sort_key.replace("#", "_", 1)


def _decode_cursor(cursor: str) -> str:
    """The cursor only names a position in the caller's own partition; a forged one reads nothing else."""
    from chalicelib.errors import InvalidRequest

    if not _CURSOR.fullmatch(cursor):  # DynamoDB would refuse an empty or oversized key with a 500
        raise InvalidRequest("The cursor is not valid.")
    return cursor.replace("_", "#", 1)
