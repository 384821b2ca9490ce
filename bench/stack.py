"""The bench's stack and its seeding: moto in-process, the real app and its stores, the events stream, and the
uncounted writes that fill a user's partition (bench/run.py and bench/agents_bench.py measure on it)."""

from __future__ import annotations

import contextlib
import math
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.units import UnitMeter

ROOT = Path(__file__).resolve().parent.parent


class BenchError(RuntimeError):
    """The bench's own setup went wrong (a route refused, a propose was not proposed): no figure is trustworthy."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise BenchError(message)


# ---- the stack: moto in-process, the real app, its stores and the events stream -----------------------


@contextlib.contextmanager
def _environ(values: dict[str, str | None]) -> Iterator[None]:
    """Set (str) or unset (None) environment variables for the block, then put every one back."""

    def apply(changes: dict[str, str | None]) -> None:
        for key, value in changes.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    saved = {key: os.environ.get(key) for key in values}
    apply(values)
    try:
        yield
    finally:
        apply(saved)


class CallCounter:
    """DynamoDB API calls by operation name, seen by botocore's `before-call` event (once per call, not per retry).

    It also adds up the time between `before-call` and `after-call` (botocore and moto), so the
    service's own time can be told apart from the store's.
    """

    def __init__(self, client: Any) -> None:
        self.calls: list[str] | None = None
        self.inside_seconds = 0.0
        self._started = 0.0
        client.meta.events.register("before-call.dynamodb", self._before)
        client.meta.events.register("after-call.dynamodb", self._after)

    def _before(self, model: Any, **_: Any) -> None:
        if self.calls is not None:
            self.calls.append(model.name)
        self._started = time.perf_counter()

    def _after(self, **_: Any) -> None:
        self.inside_seconds += time.perf_counter() - self._started

    @contextlib.contextmanager
    def counting(self) -> Iterator[list[str]]:
        self.calls = []
        try:
            yield self.calls
        finally:
            self.calls = None


@dataclass
class Stack:
    app: Any  # the `app` module
    stores: Any
    counter: CallCounter
    http: Any  # chalice.test.Client
    api: Any  # tests.support.api.Api
    pump: Any  # StreamPump collecting into `records`
    records: list[dict[str, Any]]
    converter: Any  # chalice.local.LambdaEventConverter: API Gateway proxy events for calling the handler directly
    meter: UnitMeter  # read and write request units of the stores' calls (bench/units.py)


@contextlib.contextmanager
def open_stack() -> Iterator[Stack]:
    """moto, the tables of infra/tables.json, settings, the app's own stores, and a collecting stream pump."""
    from chalice.local import LambdaEventConverter, RouteMatcher
    from chalice.test import Client
    from moto import mock_aws

    from chalicelib.bootstrap import get_stores
    from chalicelib.config import TableNames
    from local.dev_tokens import DevTokenIssuer
    from local.kms import create_key
    from local.stream_pump import StreamPump, create_streams_client
    from local.tables import create_tables
    from tests.support.api import Api
    from tests.support.stack import settings_env

    names = TableNames("b-entries", "b-proposals", "b-journal", "b-sessions", "b-events")
    issuer = DevTokenIssuer()
    fake: dict[str, str | None] = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
        "AWS_ENDPOINT_URL": None,  # and each service's own: the bench's moto answers every call
        "AWS_ENDPOINT_URL_DYNAMODB": None,
        "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": None,
        "AWS_ENDPOINT_URL_KMS": None,
        "AWS_PROFILE": None,
    }
    from local import embedded_aws

    embedded_aws.install()  # moto as the local stack and the tests run it: serialized (local/embedded_aws.py)
    with warnings.catch_warnings(), _environ({**fake, **settings_env(names, issuer)}), mock_aws():
        # The test client lets IAM routes through with a warning per request (NOTES.md); the bench knows.
        warnings.filterwarnings("ignore", message=".*not a supported in local mode.*")
        _forget_cached()
        try:
            stores = get_stores()  # the process's own client and repositories, built as a Lambda builds them
            stream_arn = create_tables(stores.client, names)["events_stream"]
            create_key(stores.keyring.kms.client)  # the template's KMS key, in the same moto
            import app as app_module

            records: list[dict[str, Any]] = []
            pump = StreamPump(create_streams_client(), stream_arn, lambda batch: records.extend(batch["Records"]))
            routes = RouteMatcher(list(app_module.app.routes))
            converter = LambdaEventConverter(routes, app_module.app.api.binary_types)
            counter = CallCounter(stores.client)
            import boto3

            meter = UnitMeter(stores.client, boto3.client("dynamodb", region_name="us-east-1"))  # peeks unmetered
            with Client(app_module.app, stage_name="local", project_dir=str(ROOT)) as http:
                yield Stack(app_module, stores, counter, http, Api(http, issuer), pump, records, converter, meter)
        finally:
            _forget_cached()


def _forget_cached() -> None:
    """Drop the cached settings, stores and client, so the app builds them from this environment (or the next)."""
    from chalicelib.bootstrap import reset_stores
    from chalicelib.config import reset_settings
    from chalicelib.crypto import kms
    from chalicelib.storage import dynamo

    reset_settings()
    reset_stores(None)
    dynamo.reset_client(None)
    kms.reset_client(None)


def lambda_context(name: str = "api_handler") -> Any:
    from local.lambda_context import lambda_context as configured  # the function's own timeout, as Lambda gives it

    return configured(name)


def direct_call(
    stack: Stack, method: str, path: str, *, user: str | None = None, arn: str | None = None
) -> Callable[[], Any]:
    """The API function as API Gateway invokes it once the authorizer (or SigV4) has let the caller in."""
    event = stack.converter.create_lambda_event(method=method, path=path, headers={"content-type": "application/json"})
    if user is not None:
        event["requestContext"]["authorizer"] = {
            "principalId": user,
            "tokenExpires": "4102444800",
        }  # 2100: the cached answer still holds
    if arn is not None:
        event["requestContext"]["identity"]["userArn"] = arn

    def call() -> Any:
        # A fresh context per invocation, as Lambda gives: one kept across a long series ran out of its 28 s
        # on a busy machine, and the app's deadline (storage/retries.py) then answered 503.
        response = stack.app.app(event, lambda_context())
        check(response["statusCode"] == 200, f"{method} {path} answered {response['statusCode']}")
        return response

    return call


# ---- seeding (never counted or timed) ------------------------------------------------------------------


def entry_text(i: int) -> str:
    return f"Entry {i}: prefers short answers, tea over coffee, and meetings after ten in the morning."


def seed_user(stack: Stack, user: str, entries: int, proposals: int = 0) -> None:
    """Memory on, `entries` entries and `proposals` waiting proposals, with the state item's counters to match.

    Each item as the product stores it (`seed_items`), its fingerprint and its text's key included; only the
    writing differs: BatchWriteItem rather than the service's transactions, since seeding is neither counted
    nor timed and one BatchWriteItem per 25 items is the quickest way to fill a partition.
    """
    from chalicelib.clock import instant
    from chalicelib.models import Entry, Source, new_id
    from chalicelib.services import memory

    memory.set_enabled(stack.stores, user, True)
    now = instant(stack.stores.clock).iso

    def entry(i: int, text: str, origin: str) -> Entry:
        source = Source() if origin == "user" else Source(session_id="s-old", thread_id="t-1", message_id=f"m{i}")
        return Entry(
            id=new_id(),
            user_id=user,
            text=text,
            kind="note",
            pinned=origin == "user" and i % 10 == 0,
            tainted=False,
            origin=origin,
            source=source,
            created_at=now,
            updated_at=now,
        )

    seed_items(
        stack,
        user,
        [entry(i, "Seeded. " + entry_text(i), "user") for i in range(entries)],
        [entry(i, f"Proposal {i}: a cat called Miso.", "agent") for i in range(proposals)],
    )


def seed_items(stack: Stack, user: str, entries: Sequence[Any], proposals: Sequence[Any] = ()) -> None:
    """Store these entries and waiting proposals of `user` through the repositories' own writes — each item,
    its fingerprint item (issue 24) and its text's key row (issue 26), exactly the items a POST or a proposal
    stores — in BatchWriteItem calls, and move the state item's counters to match. Texts must be distinct
    (and new to the user): the product would refuse a duplicate."""
    from chalicelib.clock import instant
    from chalicelib.storage import dynamo
    from chalicelib.storage.entries import STATE_KEY

    stores, now = stack.stores, instant(stack.stores.clock).epoch
    actions = [a for e in entries for a in stores.entries.put_unique(e, now_epoch=now)]
    actions += [a for p in proposals for a in stores.proposals.put_unique(p, entries_check=None, now_epoch=now)]
    written = stores.keyring.guard(actions)  # each text's key row, as the write's transaction carries it
    puts = [(action["Put"]["TableName"], action["Put"]["Item"]) for action in written if "Put" in action]
    for first in range(0, len(puts), 25):
        batch: dict[str, list[dict[str, Any]]] = {}
        for table, item in puts[first : first + 25]:
            batch.setdefault(table, []).append({"PutRequest": {"Item": item}})
        stores.client.batch_write_item(RequestItems=batch)
    stores.keyring.written(written)
    stores.client.update_item(
        TableName=stores.entries.table,
        Key=dynamo.dump({"user_id": user, "sk": STATE_KEY}),
        UpdateExpression="SET active = if_not_exists(active, :z) + :a, waiting = if_not_exists(waiting, :z) + :w",
        ExpressionAttributeValues=dynamo.values(a=len(entries), w=len(proposals), z=0),
    )


def seed_journal(stack: Stack, user: str, rows: int) -> None:
    """`rows` old context rows in the user's journal, written 25 at a time straight to the table."""
    from chalicelib.models import iso

    start = datetime.now(UTC) - timedelta(days=365)
    journal = stack.stores.journal
    details = {"session_id": "old", "agent": "helper", "count": 20}
    for first in range(0, rows, 25):
        puts = [
            {
                "PutRequest": {
                    "Item": journal.record(
                        user, "keep.memory.context", iso(start + timedelta(seconds=i)), details, row_id=f"{i:08d}"
                    )["Put"]["Item"]
                }
            }
            for i in range(first, min(rows, first + 25))
        ]
        stack.stores.client.batch_write_item(RequestItems={journal.table: puts})


def register(stack: Stack, session_id: str, user: str) -> None:
    from chalicelib.schemas import SessionBody
    from chalicelib.services import agents

    fields = {"user_id": user, "agent": "helper", "thread_id": "t-1", "manifest": {"memory": True}}
    body = SessionBody.model_validate(fields)
    agents.register_session(stack.stores, session_id, body)


def propose_records(stack: Stack, size: int, tag: str) -> list[dict[str, Any]]:
    """`size` memory.propose INSERT records from moto's stream, within the caps (5 per session, 25 per user here)."""
    from chalicelib.schemas import EventsBody
    from chalicelib.services import agents, memory

    for s in range(math.ceil(size / 5)):
        user = f"{tag}-user-{s // 5}"
        if s % 5 == 0:
            memory.set_enabled(stack.stores, user, True)
        register(stack, f"{tag}-s{s}", user)
        events = [
            {"id": f"{tag}-e{i}", "type": "memory.propose", "text": entry_text(i), "message_id": f"m{i}"}
            for i in range(s * 5, min(size, s * 5 + 5))
        ]
        agents.post_events(stack.stores, f"{tag}-s{s}", EventsBody.model_validate({"events": events}))
    return drain_inserts(stack)


def drain_inserts(stack: Stack) -> list[dict[str, Any]]:
    """Everything new on the events stream, as Lambda records; only the INSERTs (the posts), not our settle steps."""
    stack.records.clear()
    stack.pump.drain()
    return [r for r in stack.records if r["eventName"] == "INSERT"]


def consume(stack: Stack, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The real stream handler, called as Lambda calls it, with real moto stream records."""
    result = stack.app.handle_events_stream({"Records": records}, lambda_context("handle_events_stream"))
    check(not result["batchItemFailures"], f"the consumer failed records: {result}")
    return dict(result)
