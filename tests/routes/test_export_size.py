"""`GET /v1/memory/export` for the largest possible user fits in one Lambda response (6 MB), journal paged.

Largest possible: 200 entries and 50 proposals of 2000 bytes each, written with the character that
grows most when the body is JSON-escaped twice (once in the body, once in Lambda's response
document): U+0001 becomes `\\u0001` (6 bytes) and then `\\\\u0001` (7). Plus expired entries that TTL
has not removed yet beyond the export's bound, sources and ids at their longest, and a journal far
longer than one page. Lambda refuses a synchronous response over 6 MB (API Gateway then answers 502),
so the measure is the serialized proxy response, as Lambda's Python runtime sends it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.models import MAX_ACTIVE_ENTRIES, MAX_ENTRY_BYTES, MAX_WAITING_PROPOSALS, Entry, Source, new_id
from chalicelib.services import memory
from chalicelib.storage import dynamo
from chalicelib.storage.entries import STATE_KEY

LAMBDA_RESPONSE_LIMIT = 6 * 1024 * 1024  # bytes, synchronous invocation
WORST = "\x01" * MAX_ENTRY_BYTES  # 2000 bytes of UTF-8, 14000 once escaped twice
LONG_ID = "\x01" * 256  # thread and message ids are free strings of up to 256 characters
JOURNAL_ROWS = 6_000  # 400 days of ~15 context fetches a day: a full journal
EXPIRED = memory.EXPORT_EXPIRED_ENTRIES + 30


def _entry(user: str, origin: str, now_iso: str, expires_at: int | None = None) -> Entry:
    source = Source() if origin == "user" else Source(session_id="s" * 128, thread_id=LONG_ID, message_id=LONG_ID)
    return Entry(
        id=new_id(),
        user_id=user,
        text=WORST,
        kind="preference",
        pinned=True,
        tainted=True,
        origin=origin,
        source=source,
        created_at=now_iso,
        updated_at=now_iso,
        expires_at=expires_at,
    )


def _batch_put(stores: Any, puts: list[tuple[str, dict[str, Any]]]) -> None:
    """BatchWriteItem, 25 at a time: moto copies whole tables per transaction, so seeding through them would take minutes."""
    for first in range(0, len(puts), 25):
        batch: dict[str, list[dict[str, Any]]] = {}
        for table, item in puts[first : first + 25]:
            batch.setdefault(table, []).append({"PutRequest": {"Item": item}})
        stores.client.batch_write_item(RequestItems=batch)


def _seed_largest_user(stores: Any, clock: Any, user: str) -> None:
    from chalicelib.clock import instant

    memory.set_enabled(stores, user, True)
    now = instant(stores.clock)
    entries = [stores.entries.put_new(_entry(user, "user", now.iso))["Put"]["Item"] for _ in range(MAX_ACTIVE_ENTRIES)]
    expired = [
        stores.entries.put_new(_entry(user, "agent", now.iso, expires_at=now.epoch - 60))["Put"]["Item"]
        for _ in range(EXPIRED)
    ]
    proposals = [
        stores.proposals.put_new(_entry(user, "agent", now.iso))["Put"]["Item"] for _ in range(MAX_WAITING_PROPOSALS)
    ]
    operator = "arn:aws:sts::123456789012:assumed-role/" + "r" * 64 + "/" + "s" * 64
    journal = [
        stores.journal.record(
            user,
            "keep.memory.operator_access",
            f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.{i:06d}Z",
            {"operation": "read", "operator": operator, "request_id": "r" * 64},
            row_id=f"{i:012x}",
        )["Put"]["Item"]
        for i in range(JOURNAL_ROWS)
    ]
    # Each text's own key row (issue 26), as the service's transactions write it beside the item.
    text_keys = [
        a["Put"]["Item"]
        for a in stores.keyring.guard([{"Put": {"Item": i}} for i in entries + expired + proposals])
        if "Put" in a and a["Put"].get("TableName") == stores.keyring.keys.table
    ]
    _batch_put(
        stores,
        [(stores.entries.table, i) for i in entries + expired]
        + [(stores.proposals.table, i) for i in proposals]
        + [(stores.journal.table, i) for i in journal]
        + [(stores.keyring.keys.table, i) for i in text_keys],
    )
    stores.client.update_item(
        TableName=stores.entries.table,
        Key=dynamo.dump({"user_id": user, "sk": STATE_KEY}),
        UpdateExpression="SET active = :a, waiting = :w",
        ExpressionAttributeValues=dynamo.values(a=MAX_ACTIVE_ENTRIES, w=MAX_WAITING_PROPOSALS),
    )


def _proxy_event(user: str, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
    """The event API Gateway sends the API function once the authorizer let `user` in."""
    return {
        "resource": path,
        "path": path,
        "httpMethod": "GET",
        "body": None,
        "isBase64Encoded": False,
        "headers": {"Accept": "application/json"},
        "multiValueHeaders": {"Accept": ["application/json"]},
        "queryStringParameters": query,
        "multiValueQueryStringParameters": {k: [v] for k, v in (query or {}).items()} or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": "GET",
            "path": "/api" + path,
            "stage": "api",
            "requestId": "req-1",
            "authorizer": {"principalId": user, "tokenExpires": "4102444800"},
            "identity": {"sourceIp": "127.0.0.1"},
        },
    }


def _invoke(user: str, path: str, query: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    from app import app
    from local.lambda_context import lambda_context

    response = app(_proxy_event(user, path, query), lambda_context("api_handler"))
    return len(json.dumps(response).encode()), response


@pytest.mark.slow
def test_the_largest_users_export_fits_one_lambda_response_and_the_journal_follows_by_cursor(
    stores: Any, clock: Any
) -> None:
    _seed_largest_user(stores, clock, "alice")
    size, response = _invoke("alice", "/v1/memory/export")
    assert response["statusCode"] == 200
    print(f"export of the largest user: {size} bytes")
    assert size < LAMBDA_RESPONSE_LIMIT, f"{size} bytes"
    assert size > 3_500_000  # the worst case really was built: 250 texts of 14000 bytes each
    doc = json.loads(response["body"])
    assert len(doc["entries"]) == MAX_ACTIVE_ENTRIES and len(doc["proposals"]) == MAX_WAITING_PROPOSALS
    assert all(e["text"] == WORST for e in doc["entries"] + doc["proposals"])
    assert len(doc["expired_entries_awaiting_deletion"]) == memory.EXPORT_EXPIRED_ENTRIES
    assert doc["expired_entries_awaiting_deletion_total"] == EXPIRED
    assert len(doc["journal"]) == memory.EXPORT_JOURNAL_ROWS and doc["journal_next_cursor"]
    # the rest of the journal, page by page from the export's cursor: every row once, newest first
    seen = [row["at"] for row in doc["journal"]]
    cursor = doc["journal_next_cursor"]
    while cursor:
        page_size, page = _invoke("alice", "/v1/memory/journal", {"cursor": cursor, "limit": "100"})
        assert page["statusCode"] == 200 and page_size < LAMBDA_RESPONSE_LIMIT
        body = json.loads(page["body"])
        seen += [row["at"] for row in body["items"]]
        cursor = body["next_cursor"]
    stored = stores.journal.all("alice")
    assert len(seen) == len(set(seen)) == len(stored) == JOURNAL_ROWS + 2  # + turning memory on, + her key made
    assert seen == sorted(seen, reverse=True)


def test_every_journal_row_expires_after_the_retention_period(
    api: Any, stores: Any, table_names: Any, dynamodb: Any
) -> None:
    from chalicelib.storage.journal import RETENTION_DAYS, TTL_ATTRIBUTE, expiry_epoch

    api.turn_on("alice")
    api.call("DELETE", "/v1/memory", "alice")
    raw = dynamodb.query(
        TableName=table_names.journal,
        KeyConditionExpression="user_id = :u",
        ExpressionAttributeValues={":u": {"S": "alice"}},
    )["Items"]
    assert len(raw) == 2
    for item in raw:
        row = dynamo.load(item)
        assert row[TTL_ATTRIBUTE] == expiry_epoch(row["at"])
    assert expiry_epoch("2026-01-01T00:00:00.000Z") - expiry_epoch("2025-01-01T00:00:00.000Z") == 365 * 86_400
    assert expiry_epoch("2026-01-01T00:00:00Z") == 1767225600 + RETENTION_DAYS * 86_400
    described = dynamodb.describe_time_to_live(TableName=table_names.journal)["TimeToLiveDescription"]
    assert described == {"TimeToLiveStatus": "ENABLED", "AttributeName": TTL_ATTRIBUTE}
