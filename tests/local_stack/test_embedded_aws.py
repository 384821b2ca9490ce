"""The embedded moto keeps DynamoDB's promises: isolated all-or-nothing transactions, TTL with its stream records, bounds."""

from __future__ import annotations

import dataclasses
import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import given, settings
from hypothesis import strategies as st

from local import embedded_aws
from local.dev_clock import DevClock
from local.stream_pump import StreamPump, create_streams_client
from local.ttl_sweeper import TtlSweeper


def _put(table: str, pk: str, sk: str, **extra: Any) -> dict[str, Any]:
    item = {"user_id": {"S": pk}, "sk": {"S": sk}, **extra}
    return {"Put": {"TableName": table, "Item": item, "ConditionExpression": "attribute_not_exists(sk)"}}


def _items(dynamodb: Any, table: str, pk: str) -> set[str]:
    page = dynamodb.query(
        TableName=table, KeyConditionExpression="user_id = :u", ExpressionAttributeValues={":u": {"S": pk}}
    )
    return {item["sk"]["S"] for item in page["Items"]}


def test_a_cancelled_transaction_writes_nothing_and_reports_every_action(
    dynamodb: Any, tables: dict[str, str], table_names: Any
) -> None:
    entries = table_names.entries
    dynamodb.put_item(TableName=entries, Item={"user_id": {"S": "u"}, "sk": {"S": "taken"}})
    with pytest.raises(ClientError) as refused:
        dynamodb.transact_write_items(TransactItems=[_put(entries, "u", "new"), _put(entries, "u", "taken")])
    reasons = [r["Code"] for r in refused.value.response["CancellationReasons"]]
    assert reasons == ["None", "ConditionalCheckFailed"]
    assert _items(dynamodb, entries, "u") == {"taken"}  # the first Put did not happen


def test_a_transaction_touching_one_item_twice_is_refused_whole(
    dynamodb: Any, tables: dict[str, str], table_names: Any
) -> None:
    entries = table_names.entries
    with pytest.raises(ClientError) as refused:
        dynamodb.transact_write_items(TransactItems=[_put(entries, "u", "a"), _put(entries, "u", "a")])
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert _items(dynamodb, entries, "u") == set()


def test_a_committed_transaction_writes_every_action_and_its_stream_records(
    dynamodb: Any, tables: dict[str, str], table_names: Any
) -> None:
    events = table_names.events
    put = {"Put": {"TableName": events, "Item": {"session_id": {"S": "s"}, "event_id": {"S": "e1"}}}}
    second = {"Put": {"TableName": events, "Item": {"session_id": {"S": "s"}, "event_id": {"S": "e2"}}}}
    dynamodb.transact_write_items(TransactItems=[put, second])
    records: list[dict[str, Any]] = []
    StreamPump(create_streams_client(), tables["events_stream"], lambda b: records.extend(b["Records"])).drain()
    assert [r["eventName"] for r in records] == ["INSERT", "INSERT"]


def test_refused_transactions_racing_with_writes_never_undo_or_resurrect_them(
    dynamodb: Any, tables: dict[str, str], table_names: Any
) -> None:
    """moto as shipped puts whole-table copies back on a refusal: here 40 refusals race 40 writes and 40 deletes."""
    entries = table_names.entries
    dynamodb.put_item(TableName=entries, Item={"user_id": {"S": "u"}, "sk": {"S": "taken"}})
    for n in range(40):
        dynamodb.put_item(TableName=entries, Item={"user_id": {"S": "u"}, "sk": {"S": f"old{n}"}})
    barrier = threading.Barrier(120)
    errors: list[str] = []

    def refuse(n: int) -> None:
        barrier.wait()
        try:
            dynamodb.transact_write_items(TransactItems=[_put(entries, "u", f"ghost{n}"), _put(entries, "u", "taken")])
        except ClientError as exc:
            errors.append(exc.response["Error"]["Code"])

    def write(n: int) -> None:
        barrier.wait()
        dynamodb.transact_write_items(TransactItems=[_put(entries, "u", f"new{n}")])

    def delete(n: int) -> None:
        barrier.wait()
        dynamodb.delete_item(TableName=entries, Key={"user_id": {"S": "u"}, "sk": {"S": f"old{n}"}})

    threads = [threading.Thread(target=f, args=(n,)) for n in range(40) for f in (refuse, write, delete)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == ["TransactionCanceledException"] * 40
    assert _items(dynamodb, entries, "u") == {"taken"} | {f"new{n}" for n in range(40)}


def test_moto_keeps_no_record_of_every_item_it_ever_made(
    dynamodb: Any, tables: dict[str, str], table_names: Any
) -> None:
    """moto tracks every model instance for its dashboard: for DynamoDB, every item and every copy a Query makes, for ever."""
    import gc

    from moto.dynamodb.models.dynamo_type import Item

    entries = table_names.entries
    dynamodb.transact_write_items(TransactItems=[_put(entries, "u", f"e#{n}") for n in range(50)])
    gc.collect()
    alive = sum(1 for o in gc.get_objects() if isinstance(o, Item))
    for _ in range(40):  # each Query copies the 50 items it answers with
        assert len(_items(dynamodb, entries, "u")) == 50
    gc.collect()
    assert sum(1 for o in gc.get_objects() if isinstance(o, Item)) <= alive + 50
    assert len(Item.instances_tracked) < 50  # type: ignore[attr-defined]


# ---- TTL -------------------------------------------------------------------------------------------------


def _event(session: str, event_id: str, ttl: Any) -> dict[str, Any]:
    item = {"session_id": {"S": session}, "event_id": {"S": event_id}, "type": {"S": "memory.other"}}
    if ttl is not None:
        item["ttl"] = ttl
    return item


@pytest.mark.storage
def test_ttl_deletes_expired_items_after_its_lag_and_streams_them_as_dynamodb_does(
    dynamodb: Any, tables: dict[str, str], table_names: Any
) -> None:
    clock = DevClock()
    # A month ahead: every TTL below is still in the future of real time, where DynamoDB Local's own TTL
    # (real time, within a minute here: docs/local-stack.md) never reaches it; only the sweeper's dev clock does.
    clock.advance(30 * 86_400)
    now = clock.epoch()
    rows = {
        "expired-long-ago": {"N": str(now - 3600)},
        "expired-just-now": {"N": str(now - 5)},
        "not-yet": {"N": str(now + 3600)},
        "no-ttl": None,
        "not-a-number": {"S": str(now - 3600)},
        "older-than-five-years": {"N": str(now - 6 * 365 * 86_400)},
    }
    for event_id, ttl in rows.items():
        dynamodb.put_item(TableName=table_names.events, Item=_event("s", event_id, ttl))
    records: list[dict[str, Any]] = []
    pump = StreamPump(create_streams_client(), tables["events_stream"], lambda b: records.extend(b["Records"]))
    pump.drain()
    records.clear()
    sweeper = TtlSweeper(dynamodb, clock, tables=_names(table_names), lag_seconds=60)

    assert sweeper.sweep() == 1  # only the item past the lag
    assert sweeper.sweep(lag_seconds=0) == 1  # POST /dev/ttl-sweep: everything expired now
    clock.advance(7200)
    assert sweeper.sweep(lag_seconds=0) == 1  # "not-yet" is expired on the moved clock
    left = {
        i["event_id"]["S"]
        for i in dynamodb.query(
            TableName=table_names.events,
            KeyConditionExpression="session_id = :s",
            ExpressionAttributeValues={":s": {"S": "s"}},
        )["Items"]
    }
    assert left == {"no-ttl", "not-a-number", "older-than-five-years"}

    pump.drain()
    assert [r["eventName"] for r in records] == ["REMOVE"] * 3  # AWS adds a Service userIdentity: see the module


@pytest.mark.storage
def test_the_consumer_ignores_ttl_removals(
    dynamodb: Any, tables: dict[str, str], table_names: Any, stores: Any
) -> None:
    from chalicelib.services.consumer import handle_batch

    clock = DevClock()
    # Expired on the dev clock only: DynamoDB Local deletes items expired in real time by itself, within seconds,
    # and its own deletion's record is no REMOVE (docs/notes.md), so a real-time expiry would race the sweeper.
    dynamodb.put_item(TableName=table_names.events, Item=_event("s", "old", {"N": str(clock.epoch() + 3600)}))
    records: list[dict[str, Any]] = []
    pump = StreamPump(create_streams_client(), tables["events_stream"], lambda b: records.extend(b["Records"]))
    pump.drain()
    clock.advance(7200)
    TtlSweeper(dynamodb, clock, tables=_names(table_names)).sweep(lag_seconds=0)
    pump.drain()
    removal = [r for r in records if r["eventName"] == "REMOVE"]
    assert len(removal) == 1 and handle_batch(stores, removal) == {"batchItemFailures": []}


@pytest.mark.storage
def test_the_pump_stamps_records_with_the_dev_clock(dynamodb: Any, tables: dict[str, str], table_names: Any) -> None:
    clock = DevClock()
    clock.advance(25 * 3600)
    records: list[dict[str, Any]] = []
    dynamodb.put_item(TableName=table_names.events, Item=_event("s", "day-two", None))
    StreamPump(
        create_streams_client(), tables["events_stream"], lambda b: records.extend(b["Records"]), clock=clock
    ).drain()
    stamped = datetime.fromtimestamp(records[0]["dynamodb"]["ApproximateCreationDateTime"], UTC)
    assert abs(stamped - clock()) < timedelta(minutes=5)  # the dev clock's day, not the stream's real time


@pytest.mark.storage
def test_the_sweeper_never_deletes_an_item_rewritten_since_its_scan(
    dynamodb: Any, tables: dict[str, str], table_names: Any
) -> None:
    clock = DevClock()
    keys = {"session_id": {"S": "s"}, "event_id": {"S": "kept"}}
    # Expired on the dev clock only (DynamoDB Local deletes real-time expiries by itself, racing the sweeper).
    dynamodb.put_item(TableName=table_names.events, Item=_event("s", "kept", {"N": str(clock.epoch() + 3600)}))
    clock.advance(7200)
    fresh = _event("s", "kept", {"N": str(clock.epoch() + 3600)})

    def rewrite_first(**_: Any) -> None:  # the app writes the item again between the Scan and the delete
        dynamodb.meta.events.unregister("before-call.dynamodb.TransactWriteItems", unique_id="rewrite")
        dynamodb.put_item(TableName=table_names.events, Item=fresh)

    dynamodb.meta.events.register("before-call.dynamodb.TransactWriteItems", rewrite_first, unique_id="rewrite")
    try:
        assert TtlSweeper(dynamodb, clock, tables=_names(table_names)).sweep(lag_seconds=0) == 0
    finally:
        dynamodb.meta.events.unregister("before-call.dynamodb.TransactWriteItems", unique_id="rewrite")
    assert dynamodb.get_item(TableName=table_names.events, Key=keys)["Item"]["ttl"] == fresh["ttl"]


def _names(table_names: Any) -> list[str]:
    """The test's own tables: the worker's DynamoDB Local also holds the local stacks' (tests/support/live.py)."""
    return [getattr(table_names, f.name) for f in dataclasses.fields(table_names)]


def test_the_dev_clock_only_moves_forward() -> None:
    clock = DevClock()
    before = clock()
    with pytest.raises(ValueError):
        clock.advance(-1)
    moved = clock.advance(86_400)
    assert moved - before >= timedelta(seconds=86_400)
    assert clock() >= moved - timedelta(seconds=1)


# ---- local/moto_wire.py: plain JSON answers equal moto's own serializer's -------------------------

_EVERY_TYPE = {
    "s": {"S": 'é ✓ \u0000 "quoted"'},
    "n": {"N": "-12.50"},
    "b": {"B": b"\x00\xffbinary"},
    "t": {"BOOL": True},
    "z": {"NULL": True},
    "l": {"L": [{"S": "x"}, {"N": "1"}, {"B": b"\x01"}]},
    "m": {"M": {"k": {"SS": ["a", "b"]}}},
    "ns": {"NS": ["1", "2"]},
    "bs": {"BS": [b"\x02", b"\x03"]},
}


def _exercise(dynamodb: Any, table: str) -> list[Any]:
    """One answer of each data-plane kind the app uses, with every attribute type, and one refusal."""
    key = {"user_id": {"S": "u"}, "sk": {"S": "one"}}
    answers: list[Any] = [
        dynamodb.put_item(TableName=table, Item={**key, **_EVERY_TYPE}, ReturnConsumedCapacity="TOTAL"),
        dynamodb.get_item(TableName=table, Key=key),
        dynamodb.get_item(TableName=table, Key={"user_id": {"S": "u"}, "sk": {"S": "missing"}}),
        dynamodb.query(
            TableName=table, KeyConditionExpression="user_id = :u", ExpressionAttributeValues={":u": {"S": "u"}}
        ),
        dynamodb.query(
            TableName=table,
            KeyConditionExpression="user_id = :u",
            ExpressionAttributeValues={":u": {"S": "u"}},
            Limit=1,
            ProjectionExpression="sk, b",
        ),
        dynamodb.update_item(
            TableName=table,
            Key=key,
            UpdateExpression="SET n = n + :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="ALL_NEW",
        ),
        dynamodb.batch_get_item(RequestItems={table: {"Keys": [key]}}),
        dynamodb.transact_write_items(TransactItems=[_put(table, "u", "two")]),
        dynamodb.delete_item(TableName=table, Key=key, ReturnValues="ALL_OLD"),
    ]
    with pytest.raises(ClientError) as refused:
        dynamodb.put_item(TableName=table, Item=key, ConditionExpression="attribute_exists(sk)")
    answers.append(refused.value.response["Error"])
    for answer in answers:
        answer.pop("ResponseMetadata", None)
    return answers


def test_plain_json_answers_equal_motos_own_serializer(
    dynamodb: Any, tables: dict[str, str], table_names: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.dynamodb.responses import DynamoResult

    from local import moto_wire

    written: list[bool] = []
    monkeypatch.setattr(moto_wire, "wire_body", _recording(moto_wire.wire_body, written))
    fast = _exercise(dynamodb, table_names.entries)
    assert written.count(True) >= 8, "the plain-JSON path did not answer the data-plane calls"
    assert moto_wire.moto_execute_result is not None
    monkeypatch.setattr(DynamoResult, "execute_result", moto_wire.moto_execute_result)
    slow = _exercise(dynamodb, table_names.proposals)
    assert json.loads(json.dumps(fast, default=repr).replace(table_names.entries, "T")) == json.loads(
        json.dumps(slow, default=repr).replace(table_names.proposals, "T")
    )


def _recording(wire_body: Any, written: list[bool]) -> Any:
    def record(result: Any) -> Any:
        body = wire_body(result)
        written.append(body is not None)
        return body

    return record


def _query_pages(dynamodb: Any, table: str, pk: str, **extra: Any) -> list[list[str]]:
    values = {":u": {"S": pk}, **extra.pop("ExpressionAttributeValues", {})}
    condition = "user_id = :u"
    if "prefix" in extra:
        condition += " AND begins_with(sk, :p)"
        values[":p"] = {"S": extra.pop("prefix")}
    pages: list[list[str]] = []
    kwargs = {"TableName": table, "KeyConditionExpression": condition, "ExpressionAttributeValues": values, **extra}
    while True:
        page = dynamodb.query(**kwargs)
        pages.append([item["sk"]["S"] for item in page["Items"]])
        if "LastEvaluatedKey" not in page:
            return pages
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_a_query_reads_only_its_partition_and_answers_as_motos_own_query(
    dynamodb: Any, tables: dict[str, str], table_names: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DynamoDB reads one partition per Query; moto walked and sorted the whole table each time, so every Query
    grew with other users' data. The patched query never walks the table and gives moto's own answer, page
    for page: forward and backward, with a limit, a sort-key condition and a filter."""
    from moto.dynamodb.models.table import Table

    entries = table_names.entries
    for user in ("a", "b", "c"):
        for n in range(40):
            dynamodb.put_item(
                TableName=entries,
                Item={"user_id": {"S": user}, "sk": {"S": f"{'e' if n % 3 else 'f'}#{n:03}"}, "n": {"N": str(n)}},
            )
    shapes: list[dict[str, Any]] = [
        {},
        {"Limit": 7},
        {"ScanIndexForward": False, "Limit": 9},
        {"prefix": "e#"},
        {"prefix": "f#", "ScanIndexForward": False, "Limit": 4},
        {"FilterExpression": "n > :m", "ExpressionAttributeValues": {":m": {"N": "20"}}, "Limit": 5},
    ]
    walked: list[int] = []
    all_items = Table.all_items
    monkeypatch.setattr(Table, "all_items", lambda self: walked.append(1) or all_items(self))
    answers = {
        (user, i): _query_pages(dynamodb, entries, user, **dict(shape))
        for user in ("b", "nobody")
        for i, shape in enumerate(shapes)
    }
    assert walked == []  # no Query read the whole table
    assert answers[("b", 0)] == [sorted(f"{'e' if n % 3 else 'f'}#{n:03}" for n in range(40))]
    assert all(answers[("nobody", i)] == [[]] for i in range(len(shapes)))

    monkeypatch.setattr(Table, "query", embedded_aws._UNPATCHED_QUERY)  # moto's own query, for the same answers
    assert {
        (user, i): _query_pages(dynamodb, entries, user, **dict(shape))
        for user in ("b", "nobody")
        for i, shape in enumerate(shapes)
    } == answers
    assert walked  # and moto's own query does walk the table


_EXPRESSIONS = [
    "attribute_not_exists(sk)",
    "attribute_exists(session_id) AND proposals < :cap",
    "#st = :pending",
    "attribute_not_exists(sk) OR #w = :w",
    "enabled = :on AND active <= :room",
    "user_id = :u AND begins_with(sk, :p)",
    "attribute_exists(sk) AND (attribute_not_exists(#e) OR #e > :now) AND updated_at = :seen",
    "NOT (a.b[0] <> :x) AND size(#n) BETWEEN :lo AND :hi OR c IN (:one, :two)",
    "  spaced   =  :out  ",
]


def test_an_expression_is_lexed_once_into_the_nodes_motos_lexer_makes(
    dynamodb: Any, tables: dict[str, str], table_names: Any
) -> None:
    """moto lexed every expression from scratch, every time (twice for each transaction action): the patch keeps
    the tokens per text. Its nodes equal moto's own lexer's, each parse gets nodes of its own, a text moto cannot
    lex is refused as before, and a conditional write through the real API still decides on the item's values."""
    from moto.dynamodb.comparisons import ConditionExpressionParser

    assert embedded_aws._UNPATCHED_LEX is not None
    for expression in _EXPRESSIONS:
        own = list(embedded_aws._UNPATCHED_LEX(ConditionExpressionParser(expression, {}, {})))
        first = list(ConditionExpressionParser(expression, {}, {})._lex_condition_expression())
        again = list(ConditionExpressionParser(expression, {}, {})._lex_condition_expression())
        assert first == own == again and own
        assert all(a.children is not b.children for a, b in zip(first, again, strict=True))
    for broken in ("a = :b !", "a = :b & c"):
        with pytest.raises(ValueError):
            ConditionExpressionParser(broken, {}, {})._lex_condition_expression()

    entries = table_names.entries
    hits = ConditionExpressionParser._lex_condition_expression.cache_info().hits
    for n in range(3):
        dynamodb.put_item(
            TableName=entries,
            Item={"user_id": {"S": "u"}, "sk": {"S": "n"}, "v": {"N": str(n)}},
            ConditionExpression="attribute_not_exists(sk) OR v < :v",
            ExpressionAttributeValues={":v": {"N": str(n)}},
        )
    with pytest.raises(ClientError) as refused:
        dynamodb.put_item(
            TableName=entries,
            Item={"user_id": {"S": "u"}, "sk": {"S": "n"}, "v": {"N": "9"}},
            ConditionExpression="attribute_not_exists(sk) OR v < :v",
            ExpressionAttributeValues={":v": {"N": "1"}},
        )
    assert refused.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert dynamodb.get_item(TableName=entries, Key={"user_id": {"S": "u"}, "sk": {"S": "n"}})["Item"]["v"] == {
        "N": "2"
    }
    assert ConditionExpressionParser._lex_condition_expression.cache_info().hits > hits


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet=" ()=<>,.:#[]0123456789_-abAB\u00e9!&\t", max_size=40))
def test_any_text_is_lexed_as_motos_own_lexer_lexes_it_or_refused_alike(expression: str) -> None:
    """Whatever the text, the remembered lexer gives moto's own tokens, or the same refusal, every time it is asked."""
    from moto.dynamodb.comparisons import ConditionExpressionParser

    embedded_aws.install()

    def outcome(lex: Any) -> Any:
        try:
            return [tuple(node) for node in lex(ConditionExpressionParser(expression, {}, {}))]
        except ValueError as refused:
            return ("refused", str(refused))

    own = outcome(embedded_aws._UNPATCHED_LEX)
    assert outcome(ConditionExpressionParser._lex_condition_expression) == own
    assert outcome(ConditionExpressionParser._lex_condition_expression) == own  # the second time, from the cache
