"""`make bench`: what each operation costs in DynamoDB calls, and ratios that must not grow — never absolute times.

Everything runs in this process against moto (`mock_aws`): the real app, its own stores and moto's real
events stream. Counts come from a botocore `before-call.dynamodb` hook on the stores' client; every
timing is a ratio of medians of interleaved repetitions, so a slow or busy machine moves both sides.
Prints one line per figure and writes them all to bench/results/bench.json. See bench/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import agents_bench, local_stack_bench  # noqa: E402
from bench.stack import (  # noqa: E402
    Stack,
    check,
    consume,
    direct_call,
    drain_inserts,
    entry_text,
    lambda_context,
    open_stack,
    propose_records,
    register,
    seed_journal,
    seed_user,
)
from bench.units import Units  # noqa: E402
from infra import layer  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "bench.json"
PACKAGE_DIR = ROOT / "build" / "package"
WRITE_OPERATIONS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"})
MB = 1_000_000


# ---- figures ------------------------------------------------------------------------------------------


@dataclass
class Figure:
    """One printed line: a count or a ratio, its target, and whether it met it (None: reported only)."""

    name: str
    value: Any
    target: str = "none"
    met: bool | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return "reported" if self.met is None else ("met" if self.met else "MISSED")

    def line(self) -> str:
        return f"{self.name}: {_show(self.value)} (target: {self.target}, {self.status})"


def _show(value: Any) -> str:
    if not isinstance(value, float):
        return str(value)
    if value.is_integer():
        return str(int(value))
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3f}" if abs(value) >= 0.01 else f"{value:.2e}"


def at_most(name: str, value: float, limit: float, **detail: Any) -> Figure:
    return Figure(name, value, f"<= {limit:g}", value <= limit, detail)


# ---- DynamoDB calls per operation ----------------------------------------------------------------------


@dataclass
class OpCount:
    operations: list[str]
    per: int = 1  # how many operations were measured together (a batch)
    units: Units = field(default_factory=Units)  # request units of all `per` of them (bench/units.py)

    @property
    def rru(self) -> float:
        return self.units.rru / self.per

    @property
    def wru(self) -> float:
        return self.units.wru / self.per

    def units_text(self) -> str:
        """`2 RRU + 10 WRU, $6.50 per 1 M`: what one operation costs in DynamoDB on demand."""
        dollars = (self.units.rru * 0.125 + self.units.wru * 0.625) / self.per
        return f"{self.rru:g} RRU + {self.wru:g} WRU, ${dollars:.2f} per 1 M"

    @property
    def calls(self) -> float:
        return len(self.operations) / self.per

    @property
    def writes(self) -> float:
        return sum(1 for name in self.operations if name in WRITE_OPERATIONS) / self.per

    def summary(self) -> str:
        """`GetItem + TransactWriteItems`, or `Query x2`: which calls, per operation."""
        seen: dict[str, int] = {}
        for name in self.operations:
            seen[name] = seen.get(name, 0) + 1
        return " + ".join(name if n == self.per else f"{name} x{n / self.per:g}" for name, n in seen.items()) or "none"


def count_operations(stack: Stack, batch_size: int = 100) -> dict[str, OpCount]:
    """Each operation once, through its route (the Chalice test client) or the stream handler; seeding is uncounted."""
    from tests.support.iam import iam_call
    from tests.support.proposals import add_proposal
    from tests.support.stack import HOST_ARN, WORKER_ARN

    counts: dict[str, OpCount] = {}
    user, api = "count-user", stack.api

    def counted(name: str, action: Callable[[], tuple[int, Any]], status: int, per: int = 1) -> Any:
        with stack.counter.counting() as calls, stack.meter.metering() as units:
            got, body = action()
        check(got == status, f"{name} answered {got}, not {status}")
        counts[name] = OpCount(list(calls), per, units)
        return body

    def user_call(method: str, path: str, body: Any = None) -> Callable[[], tuple[int, Any]]:
        return lambda: api.call(method, path, user, body)

    counted("PUT /v1/memory/settings", user_call("PUT", "/v1/memory/settings", {"enabled": True}), 200)
    counted(FIRST_POST, user_call("POST", "/v1/memory", {"text": entry_text(1)}), 201)
    entry = counted("POST /v1/memory", user_call("POST", "/v1/memory", {"text": entry_text(0)}), 201)
    counted("PATCH /v1/memory/{id}", user_call("PATCH", f"/v1/memory/{entry['id']}", {"pinned": True}), 200)
    # Issue 24: a new text moves its fingerprint in the same transaction; a duplicate is refused by it.
    counted(PATCH_TEXT, user_call("PATCH", f"/v1/memory/{entry['id']}", {"text": entry_text(0) + " Still."}), 200)
    counted(
        "POST /v1/memory, a duplicate (409, refused by its transaction)",
        user_call("POST", "/v1/memory", {"text": entry_text(1)}),
        409,
    )
    seed_user(stack, user, entries=5, proposals=3)
    counted("GET /v1/memory", user_call("GET", "/v1/memory"), 200)
    from chalicelib.crypto.cache import KeyCache

    stack.stores.keyring.cache = (
        KeyCache()
    )  # a new container: its texts' keys (and the data key) in one Query (issue 26)
    counted(GET_COLD, user_call("GET", "/v1/memory"), 200)
    counted("GET /v1/inbox", user_call("GET", "/v1/inbox"), 200)
    for route in ("/v1/memory", "/v1/inbox"):  # a page's poll while nothing changed (issue 14)
        counted(f"GET {route}, unchanged (If-None-Match: 304)", _conditional_get(api, user, route), 304)
    counted("DELETE /v1/memory/{id}", user_call("DELETE", f"/v1/memory/{entry['id']}"), 204)
    proposal = add_proposal(stack.stores, user, "The user's cat is called Miso.")
    accepted = counted("POST /v1/memory/{id}/accept", user_call("POST", f"/v1/memory/{proposal.id}/accept"), 201)
    newer = add_proposal(stack.stores, user, "The user's cat is called Miso, and is nine.")
    counted(
        "POST /v1/memory/{id}/accept, replacing an entry",
        user_call("POST", f"/v1/memory/{newer.id}/accept", {"replaces": accepted["id"]}),
        201,
    )

    register(stack, "count-session", user)
    path = "/v1/sessions/count-session/memory"
    context = counted(
        "GET /v1/sessions/{id}/memory (context)", lambda: iam_call(stack.http, "GET", path, HOST_ARN), 200
    )
    stack.stores.keyring.cache = KeyCache()
    counted(CONTEXT_COLD, lambda: iam_call(stack.http, "GET", path, HOST_ARN), 200)

    event = {"id": "count-one", "type": "memory.propose", "text": "Likes jazz on Fridays."}
    counted(
        POST_EVENT,
        lambda: iam_call(stack.http, "POST", "/v1/sessions/count-session/events", WORKER_ARN, {"events": [event]}),
        202,
    )
    one = drain_inserts(stack)
    check(len(one) == 1, "the worker's event did not reach the stream")
    counted("consumer: one memory.propose", lambda: (200, consume(stack, one)), 200)
    # Issue 39: a proposal naming the entry it updates by its context ref costs the consumer one GetItem more;
    # accepting it replaces that entry in the accept's own transaction.
    update = {"id": "count-update", "type": "memory.propose", "text": "Likes jazz on Saturdays."}
    update["replaces"] = context["items"][0]["ref"]
    events = {"events": [update]}
    iam_call(stack.http, "POST", "/v1/sessions/count-session/events", WORKER_ARN, events)
    linked = drain_inserts(stack)
    check(len(linked) == 1, "the worker's update event did not reach the stream")
    counted(CONSUMER_REPLACES, lambda: (200, consume(stack, linked)), 200)
    [marked] = [p for p in api.call("GET", "/v1/memory", user)[1]["proposals"] if p["replaces"]]
    counted(ACCEPT_MARKED, user_call("POST", f"/v1/memory/{marked['id']}/accept"), 201)

    _count_connection(stack, user, counted)

    batch = propose_records(stack, batch_size, "count-batch")
    check(len(batch) == batch_size, f"{len(batch)} records on the stream, not {batch_size}")
    name = f"consumer: batch of {batch_size} memory.propose, per propose"
    counted(name, lambda: (200, consume(stack, batch)), 200, per=batch_size)
    sessions = [f"count-batch-s{s}" for s in range(math.ceil(batch_size / 5))]
    outcomes = [e.outcome for session in sessions for e in stack.stores.events.list(session)]
    proposed = sum(1 for o in outcomes if (o or {}).get("type") == "memory.proposed")
    check(proposed == batch_size, f"only {proposed} of {batch_size} proposes became proposals")
    return counts


def _count_connection(stack: Stack, user: str, counted: Callable[..., Any]) -> None:
    """Issue 38: a person's own agent by its connection token, on /mcp and the agent routes (the lookup cached or not)."""
    from chalicelib.services import connections

    status, made = stack.api.call("POST", "/v1/connections", user, {"agent": "bench-agent"})
    check(status == 201, f"POST /v1/connections answered {status}")
    headers = {"Authorization": f"Bearer {made['token']}", "Content-Type": "application/json"}

    def mcp(tool: str, arguments: dict[str, Any]) -> Callable[[], tuple[int, Any]]:
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}

        def call() -> tuple[int, Any]:
            response = stack.api.client.http.post("/mcp", headers=headers, body=json.dumps(message))
            answer = json.loads(response.body)
            check("result" in answer and not answer["result"].get("isError"), f"{tool} failed")
            return response.status_code, answer

        return call

    def get(path: str) -> Callable[[], tuple[int, Any]]:
        def call() -> tuple[int, Any]:
            response = stack.api.client.http.get(path, headers=headers)
            return response.status_code, json.loads(response.body)

        return call

    connections.forget_cache()
    counted(MCP_CONTEXT_COLD, mcp("memory_context", {}), 200)
    counted(MCP_CONTEXT, mcp("memory_context", {}), 200)
    counted("GET /v1/agent/memory", get("/v1/agent/memory"), 200)
    proposed = counted(MCP_PROPOSE, mcp("memory_propose", {"text": "Likes jazz on Sundays."}), 200)
    connections.forget_cache()
    counted(MCP_PROPOSE_COLD, mcp("memory_propose", {"text": "Likes jazz on Mondays."}), 200)
    counted(
        "GET /v1/agent/proposals/{event_id}",
        get(f"/v1/agent/proposals/{proposed['result']['structuredContent']['event_id']}"),
        200,
    )
    counted(
        "POST /mcp tools/list (the lookup cached)",
        lambda: (
            stack.api.client.http.post(
                "/mcp", headers=headers, body=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            ).status_code,
            None,
        ),
        200,
    )
    drain_inserts(stack)  # the two suggestions' records: the consumer's counts below are the worker's


MCP_CONTEXT = "POST /mcp memory_context (connection lookup cached)"
MCP_CONTEXT_COLD = "POST /mcp memory_context, lookup not cached (one GetItem more)"
MCP_PROPOSE = "POST /mcp memory_propose (connection lookup cached)"
MCP_PROPOSE_COLD = "POST /mcp memory_propose, lookup not cached (one GetItem more)"


def _conditional_get(api: Any, user: str, route: str) -> Callable[[], tuple[int, Any]]:
    """A GET that sends back the ETag of the answer before it (that first GET is not counted)."""
    first = api.client.http.get(route, headers=api.headers(user))
    etag = {key.lower(): value for key, value in first.headers.items()}["etag"]

    def again() -> tuple[int, Any]:
        response = api.client.http.get(route, headers={**api.headers(user), "If-None-Match": etag})
        return response.status_code, None

    return again


CONTEXT_COLD = "GET /v1/sessions/{id}/memory (context), cold key cache"
GET_COLD = "GET /v1/memory, cold key cache (every text's key in one Query of the keys table)"
CONSUMER_REPLACES = "consumer: one memory.propose with replaces: <ref> (one GetItem more)"
ACCEPT_MARKED = "POST /v1/memory/{id}/accept, replacing the entry its agent named"


# What each count must stay within (issue 7): ("calls" | "writes", limit). Others are reported.
COUNT_TARGETS: dict[str, tuple[str, float]] = {
    "GET /v1/memory": ("calls", 2),
    GET_COLD: ("calls", 3),
    "GET /v1/memory, unchanged (If-None-Match: 304)": ("calls", 1),
    "GET /v1/inbox, unchanged (If-None-Match: 304)": ("calls", 1),
    "GET /v1/sessions/{id}/memory (context)": ("calls", 3),
    CONTEXT_COLD: ("calls", 4),
    "POST /v1/memory": ("writes", 1),
    "PATCH /v1/memory/{id}": ("calls", 2),
    "PATCH /v1/memory/{id}, a new text (moves its fingerprint)": ("calls", 2),
    "consumer: one memory.propose": ("calls", 3),
    CONSUMER_REPLACES: ("calls", 4),  # issue 39: at most one call more than without `replaces`
    MCP_CONTEXT: ("calls", 4),  # issue 38: the session context's calls, no more
    MCP_CONTEXT_COLD: ("calls", 5),  # ... and at most one GetItem for the connection (cached per container <= 60 s)
    MCP_PROPOSE: ("calls", 2),
    MCP_PROPOSE_COLD: ("calls", 3),
}
PATCH_TEXT = "PATCH /v1/memory/{id}, a new text (moves its fingerprint)"
POST_EVENT = "POST /v1/sessions/{id}/events (1 event)"
BATCH_PREFIX = "consumer: batch"
# The user's first stored text also creates their data key (one more transaction: key row + journal row).
FIRST_POST = "POST /v1/memory, the user's first text (creates their key)"


def count_figures(counts: dict[str, OpCount]) -> list[Figure]:
    figures = []
    for op_name, count in counts.items():
        detail = {
            "operations": count.operations,
            "calls": count.calls,
            "write_calls": count.writes,
            "per": count.per,
            "rru": count.rru,
            "wru": count.wru,
        }
        name = f"{op_name} [{count.summary()}; {count.units_text()}]"
        kind, limit = COUNT_TARGETS.get(op_name, ("calls", 3 if op_name.startswith(BATCH_PREFIX) else math.inf))
        if kind == "writes":
            met = count.writes == limit
            figures.append(Figure(f"dynamodb write calls: {name}", count.writes, f"= {limit:g}", met, detail))
        elif limit == math.inf:
            figures.append(Figure(f"dynamodb calls: {name}", count.calls, detail=detail))
        else:
            figures.append(at_most(f"dynamodb calls: {name}", count.calls, limit, **detail))
    return figures


# ---- KMS calls per route, cold and warm key cache (issue 12) --------------------------------------------

# Route → most KMS calls with a cold cache, and with a warm one.
KMS_TARGETS = {"GET /v1/memory": (1, 0), "POST /v1/memory": (1, 0)}


def kms_figures(stack: Stack) -> list[Figure]:
    """KMS requests seen by botocore's `before-call` on the app's own KMS client, per route, cold then warm."""
    from chalicelib.crypto.cache import KeyCache

    seen: list[str] = []
    stack.stores.keyring.kms.client.meta.events.register("before-call.kms", lambda model, **_: seen.append(model.name))
    user = "kms-user"
    stack.api.turn_on(user)
    check(stack.api.call("POST", "/v1/memory", user, {"text": entry_text(0)})[0] == 201, "the first POST failed")
    figures = [
        Figure("kms calls: POST /v1/memory, the user's first text", len(seen), detail={"operations": list(seen)})
    ]
    routes = {
        "GET /v1/memory": ("GET", "/v1/memory", None, 200),
        "POST /v1/memory": ("POST", "/v1/memory", {"text": entry_text(1)}, 201),
    }
    for route, (method, path, body, status) in routes.items():
        for temperature, limit in zip(("cold", "warm"), KMS_TARGETS[route], strict=True):
            if temperature == "cold":
                stack.stores.keyring.cache = KeyCache()  # a new container: nothing unwrapped yet
            seen.clear()
            sent = {"text": f"{entry_text(1)} ({temperature})"} if body is not None else None  # new words: no duplicate
            check(stack.api.call(method, path, user, sent)[0] == status, f"{route} failed")
            figures.append(
                at_most(f"kms calls: {route} ({temperature} key cache)", len(seen), limit, operations=list(seen))
            )
    return figures


# ---- ratios: medians of interleaved repetitions -----------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """Medians of two interleaved series: wall clock (perf_counter) and CPU time (this process and its children)."""

    wall: tuple[float, float]
    cpu: tuple[float, float]

    @property
    def ratio(self) -> float:
        return self.wall[0] / self.wall[1]

    @property
    def cpu_ratio(self) -> float:
        return self.cpu[0] / self.cpu[1]

    def detail(self, a: str, b: str) -> dict[str, Any]:
        return {
            f"{a}_median_ms": self.wall[0] * 1e3,
            f"{b}_median_ms": self.wall[1] * 1e3,
            f"{a}_cpu_median_ms": self.cpu[0] * 1e3,
            f"{b}_cpu_median_ms": self.cpu[1] * 1e3,
        }


def _cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def interleaved_medians(a: Callable[[], Any], b: Callable[[], Any], reps: int) -> Timing:
    """Time `a` and `b` alternately (which goes first alternates too) after one warm-up each; medians."""
    a(), b()
    wall: tuple[list[float], list[float]] = ([], [])
    cpu: tuple[list[float], list[float]] = ([], [])
    gc.collect()
    gc.disable()
    try:
        for rep in range(reps):
            for index in (0, 1) if rep % 2 == 0 else (1, 0):
                started, cpu_started = time.perf_counter(), _cpu()
                (a, b)[index]()
                wall[index].append(time.perf_counter() - started)
                cpu[index].append(_cpu() - cpu_started)
    finally:
        gc.enable()
    median = statistics.median
    return Timing((median(wall[0]), median(wall[1])), (median(cpu[0]), median(cpu[1])))


def ratio_figures(name: str, timing: Timing, limit: float | None, a: str, b: str, **detail: Any) -> list[Figure]:
    """The CPU-time ratio (the figure, the one a target judges) and, under it, the same medians in wall clock.

    On a machine shared with other work, their processes stretch this one's wall-clock samples at random (`import
    app` ÷ hello world: 1.03 to 1.50 in four runs of one tree within minutes) while its CPU time barely moves (1.24
    to 1.37 in the same runs): a bound on the wall-clock ratio would pass or miss the same code by chance.
    """
    detail = {**detail, **timing.detail(a, b)}
    value = timing.cpu_ratio
    main = Figure(name, value, detail=detail) if limit is None else at_most(name, value, limit, **detail)
    return [main, Figure("  same ratio in wall clock", timing.ratio)]


def get_memory_ratio(stack: Stack, entries: int = 200, proposals: int = 50, reps: int = 30) -> list[Figure]:
    """GET /v1/memory ÷ the two bare Queries (entries partition + proposals partition) it cannot avoid."""
    from chalicelib.services import memory

    user = "ratio-user"
    seed_user(stack, user, entries, proposals)
    client, tables = stack.stores.client, (stack.stores.entries.table, stack.stores.proposals.table)

    def bare() -> None:
        for table in tables:
            request: dict[str, Any] = {
                "TableName": table,
                "KeyConditionExpression": "user_id = :u",
                "ExpressionAttributeValues": {":u": {"S": user}},
            }
            while True:  # follow pages as the service does (200 entries fit in one)
                last = client.query(**request).get("LastEvaluatedKey")
                if not last:
                    break
                request["ExclusiveStartKey"] = last

    route = direct_call(stack, "GET", "/v1/memory", user=user)
    body = json.loads(route()["body"])
    check((len(body["items"]), len(body["proposals"])) == (entries, proposals), "the seeded memory is not all there")
    token = stack.api.headers(user)
    baseline = "Query of the entries partition (state item + entries) + Query of the proposals partition, no decoding"
    label = f"GET /v1/memory ({entries} entries, {proposals} proposals) / 2 bare Queries"
    service = interleaved_medians(lambda: memory.view(stack.stores, user), bare, reps)
    via_client = interleaved_medians(lambda: stack.http.http.get("/v1/memory", headers=token), bare, reps)
    return [
        *ratio_figures(
            label, interleaved_medians(route, bare, reps), 1.3, "route", "bare", reps=reps, baseline=baseline
        ),
        *ratio_figures("  memory.view service alone / 2 bare Queries", service, None, "service", "bare"),
        *ratio_figures(
            "  via Chalice test client, authorizer's JWT check included / 2 bare Queries",
            via_client,
            None,
            "test_client",
            "bare",
        ),
    ]


def context_history_ratio(stack: Stack, entries: int = 200, journal_rows: int = 10_000, reps: int = 30) -> list[Figure]:
    """The host's context fetch for a user with a long journal ÷ the same for a user with none."""
    from tests.support.stack import HOST_ARN

    for user, rows in (("history-user", journal_rows), ("fresh-user", 0)):
        seed_user(stack, user, entries)
        seed_journal(stack, user, rows)
        register(stack, f"{user}-session", user)
    long = direct_call(stack, "GET", "/v1/sessions/history-user-session/memory", arn=HOST_ARN)
    fresh = direct_call(stack, "GET", "/v1/sessions/fresh-user-session/memory", arn=HOST_ARN)
    check(len(json.loads(long()["body"])["items"]) == min(20, entries), "the context is not the 20 newest entries")
    label = f"context fetch with {journal_rows} journal rows / with none ({entries} entries each)"
    return ratio_figures(
        label,
        interleaved_medians(long, fresh, reps),
        1.1,
        "history",
        "fresh",
        reps=reps,
        note="every fetch appends a journal row: the fresh user ends with reps + 2 rows",
    )


def consumer_throughput(size: int = 100, batches: int = 3, reps: int = 30) -> list[Figure]:
    """Records per second through the real consumer ÷ through a no-op handler, over the same records.

    Each batch gets a fresh stack: moto deep-copies every table a TransactWriteItems touches (for its
    rollback), so in a stack already holding the other figures' data each propose would mostly time that copy.
    """
    from chalice import Chalice

    noop_app = Chalice(app_name="noop")

    @noop_app.on_dynamodb_record(stream_arn="arn:aws:dynamodb:us-east-1:000000000000:table/noop/stream/x")
    def noop(event: Any) -> dict[str, Any]:
        for record in event:  # Chalice's record objects, as the real handler's event gives them
            _ = record.new_image
        return {"batchItemFailures": []}

    first: list[dict[str, Any]] = []
    real: list[float] = []
    outside: list[float] = []  # the handler's own time: everything but the DynamoDB calls
    for n in range(batches):  # a propose is handled only once (idempotent): fresh events for each batch
        with open_stack() as stack:
            records = propose_records(stack, size, f"tp{n}")
            first = first or records
            gc.collect()
            inside, started = stack.counter.inside_seconds, time.perf_counter()
            consume(stack, records)
            real.append(time.perf_counter() - started)
            outside.append(real[-1] - (stack.counter.inside_seconds - inside))
    context = lambda_context("noop")
    idle = []
    for _ in range(reps):
        started = time.perf_counter()
        noop({"Records": first}, context)
        idle.append(time.perf_counter() - started)
    real_rate, idle_rate = size / statistics.median(real), size / statistics.median(idle)
    detail = {"records_per_second": real_rate, "noop_records_per_second": idle_rate, "batches": batches, "reps": reps}
    return [
        Figure(f"consumer throughput, batch of {size} proposes / no-op handler", real_rate / idle_rate, detail=detail),
        Figure("  consumer records/s (real handler, moto)", real_rate),
        Figure("  no-op handler records/s (same records)", idle_rate),
        Figure(
            "  consumer's own time (outside DynamoDB calls) / whole handler",
            statistics.median(outside) / statistics.median(real),
        ),
    ]


# ---- outside the stack: cold import, package size, the credentials bench -------------------------------------


HELLO = 'from chalice import Chalice\napp = Chalice(app_name="x")\n'


def import_ratio(reps: int = 7) -> list[Figure]:
    """`import app` in a fresh interpreter ÷ a bare Chalice hello-world app, medians of interleaved runs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "PYTHONPATH"}

    def importing(cwd: str) -> Callable[[], None]:
        command = [sys.executable, "-c", "import app"]
        return lambda: subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)

    with tempfile.TemporaryDirectory() as hello_dir:
        Path(hello_dir, "app.py").write_text(HELLO)
        timing = interleaved_medians(importing(str(ROOT)), importing(hello_dir), reps)
    detail: dict[str, Any] = {"reps": reps}
    if timing.cpu_ratio > 1.5:
        detail["imports_of_app_ms"] = imports_of_app()
    return ratio_figures("import app / Chalice hello world (fresh interpreters)", timing, 1.5, "app", "hello", **detail)


def imports_of_app(top: int = 10) -> dict[str, float]:
    """What `import app` spends its time on: app's direct imports by cumulative ms (`-X importtime`), for the report."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import app"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    children: dict[str, float] = {}
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)", line)
        if not match:
            continue
        self_us, total_us, indent, name = match.groups()
        if len(indent) == 3:  # a direct import of the next module printed at indent 1
            children[name] = int(total_us) / 1e3
        elif name == "app":
            children["app.py itself"] = int(self_us) / 1e3
            children["total"] = int(total_us) / 1e3
            break
        elif len(indent) == 1:
            children.clear()
    return dict(sorted(children.items(), key=lambda kv: -kv[1])[:top])


# issue 12: cryptography (AES-GCM) joined the Lambda package (7.7 MB, target 10); issue 37: the layer carries the
# AWS SDK the tests run with (boto3/botocore, +17.7 MB), never the runtime's: 25.6 MB measured.
PACKAGE_LIMIT_MB = 30


def crypto_cold_start(reps: int = 7) -> list[Figure]:
    """What `cryptography` adds to a cold start: loading AES-GCM and sealing once, in fresh interpreters (median ms).

    The app loads it lazily, on the first text it seals or opens, so `import app` does not pay it.
    """
    code = (
        "import time; t = time.perf_counter(); "
        "from cryptography.hazmat.primitives.ciphers.aead import AESGCM; "
        "AESGCM(bytes(32)).encrypt(bytes(12), b'x', b''); print((time.perf_counter() - t) * 1000)"
    )
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(reps)
    ]
    return [
        Figure(
            "cold start: first AES-GCM seal, cryptography loaded on first use (ms, median)",
            statistics.median(runs),
            detail={"runs_ms": runs},
        )
    ]


def package_size() -> list[Figure]:
    """The zips `make package` builds (function code + dependency layer); the SDK in the layer, not in the app zip."""
    zip_path = PACKAGE_DIR / "deployment.zip"
    if not zip_path.exists() and (ROOT / "scripts" / "package.sh").exists():
        subprocess.run(["bash", "scripts/package.sh"], cwd=ROOT, capture_output=True, timeout=900, check=False)
    if not zip_path.exists():
        return [Figure("package", "not built", f"<= {PACKAGE_LIMIT_MB:g} MB, the SDK in the layer")]
    layer_zip = PACKAGE_DIR / "layer-deployment.zip"
    parts = [p for p in (zip_path, layer_zip) if p.exists()]
    app_has_boto = any(re.search(r"^(boto3|botocore)/", n) for n in zipfile.ZipFile(zip_path).namelist())
    layer_has_sdk = layer_zip.exists() and not layer.sdk_problems(layer_zip, ROOT / "requirements.txt")
    sizes = {p.name: p.stat().st_size / MB for p in parts}
    total = sum(sizes.values())
    figure = at_most("Lambda package MB (function zip + dependency layer)", total, PACKAGE_LIMIT_MB, **sizes)
    figure.met = bool(figure.met) and not app_has_boto and layer_has_sdk
    return [
        figure,
        *(Figure(f"  {name} MB", size) for name, size in sizes.items()),
        Figure("  boto3/botocore in the app zip", app_has_boto, "False", not app_has_boto),
        Figure("  the pinned boto3/botocore in the layer", layer_has_sdk, "True", layer_has_sdk),
    ]


CREDENTIALS_SUMMARY = (
    "recall.overall",
    "fpr.overall",
    "time_us.typical_note",
    "time_us.long_benign_note",
    "time_us.adversarial_worst",
    "time.adversarial_worst_input",
    "time.adversarial_worst_ratio_to_typical",
    "recall.disguise.overall",
    "fpr.whole_corpus",
    "time.hard_input_worst_growth_2000_over_1000",
    "time.hard_input_worst_growth_input",
    "issue13_targets_missed",
    "issue21.recall.corpus.credential_corpus",
    "issue21.recall.corpus.evasion",
    "issue21.recall.corpus.new_shapes",
    "issue21.recall.corpus.worded_split_tokens",
    "issue21.recall.corpus.encoded",
    "issue21.recall.corpus.grouped_after_a_key_word",
    "issue21.fpr.overall",
    "issue21.fpr.categories_with_a_false_alarm",
    "issue21.time.adversarial_search_worst_input",
)
# issue 21: the detector's cost is linear: twice the input costs at most 2.2 times as much (CPU time, best of 7)
CREDENTIALS_GROWTH = (
    "issue21.time.hard_input_worst_growth_2000_over_1000",
    "issue21.time.adversarial_search_worst_growth_2000_over_1000",
)
CREDENTIALS_GROWTH_LIMIT = 2.2
# About 80 s of CPU; on two cores shared with other work its wall time has been several times that.
CREDENTIALS_TIMEOUT_S = 3600


def credentials_figures() -> list[Figure]:
    """bench/credentials_bench.py's summary (someone else's bench: run as it is, read from the JSON it writes)."""
    script, written = ROOT / "bench" / "credentials_bench.py", ROOT / "bench" / "results" / "credentials.json"
    if not script.exists():
        return []
    started = time.time()
    command = [sys.executable, str(script)]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=CREDENTIALS_TIMEOUT_S)
    except subprocess.TimeoutExpired:  # a wall-clock guard against a hang, never a target: say so and go on
        why = f"no answer in {CREDENTIALS_TIMEOUT_S} s of wall clock"
        return [Figure("credentials bench exit code", "timed out", "0", False, {"why": why})]
    fresh = written.exists() and written.stat().st_mtime >= started
    figures = [
        Figure(
            "credentials bench exit code",
            done.returncode,
            "0",
            done.returncode == 0 and fresh,
            {"stderr_tail": done.stderr[-500:]} if done.returncode else {},
        )
    ]
    if fresh:
        results = json.loads(written.read_text())
        figures += [Figure(f"  credentials {key}", results[key]) for key in CREDENTIALS_SUMMARY if key in results]
        figures += [
            at_most(f"  credentials {key}", results[key], CREDENTIALS_GROWTH_LIMIT)
            for key in CREDENTIALS_GROWTH
            if key in results
        ]
    return figures


def local_figures(results: list[Any]) -> list[Figure]:
    """bench/local_stack_bench.py's (name, value, limit, detail) results as Figures."""
    return [
        Figure(name, value, detail=detail) if limit is None else at_most(name, value, limit, **detail)
        for name, value, limit, detail in results
    ]


# ---- main ---------------------------------------------------------------------------------------------------


def run_all(
    args: argparse.Namespace, emit: Callable[[Figure], None], sections: dict[str, float] | None = None
) -> list[Figure]:
    figures: list[Figure] = []
    last = [time.perf_counter()]

    def add(new: list[Figure]) -> None:
        """Emit each figure; the wall time since the previous group goes to `sections` under this group's first."""
        now = time.perf_counter()
        if new and sections is not None:
            sections[new[0].name] = round(now - last[0], 1)
        last[0] = now
        for figure in new:
            figures.append(figure)
            emit(figure)

    # The app's JSON log lines go where Lambda's would (a stream; here /dev/null): not part of the report.
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        with open_stack() as stack:
            add(count_figures(count_operations(stack, args.batch)))
            add(kms_figures(stack))
            add(get_memory_ratio(stack, args.entries, args.proposals, args.reps))
            add(context_history_ratio(stack, args.entries, args.journal_rows, args.reps))
            add(local_figures(local_stack_bench.cap_path_counts(stack, seed_user)))
            add(local_figures(agents_bench.agent_counts(stack, seed_user, seed_journal, args.journal_rows)))
            add(local_figures(agents_bench.many_agent_counts(stack, seed_user)))  # issue 37 #10
            from bench.poll_schedule import poll_figures  # requests per idle tab-hour (issue 21 item 19)

            add(poll_figures(stack, Figure, at_most))
        add(consumer_throughput(args.batch, args.batches, args.reps))
        add(local_figures(local_stack_bench.serialization_cost()))
        add(local_figures(local_stack_bench.memory_figures(args.rss_requests)))
    add(import_ratio(args.import_reps))
    add(crypto_cold_start(args.import_reps))
    from bench.auth_cost import auth_figures  # the token check's cold and warm cost (reported only)

    add(auth_figures(Figure, args.import_reps))
    add(package_size())
    add(credentials_figures())
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=30, help="repetitions of each timed pair")
    parser.add_argument("--import-reps", type=int, default=7, help="fresh interpreters per side")
    parser.add_argument("--batch", type=int, default=100, help="proposes per consumer batch")
    parser.add_argument("--batches", type=int, default=3, help="consumer batches timed")
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--proposals", type=int, default=50)
    parser.add_argument("--journal-rows", type=int, default=10_000)
    parser.add_argument("--rss-requests", type=int, default=5000, help="requests in the local stack's memory workload")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    out = sys.stdout
    started, sections = time.perf_counter(), dict[str, float]()
    figures = run_all(args, lambda f: print(f.line(), file=out, flush=True), sections)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "load_average": os.getloadavg(),
        "settings": vars(args),
        "figures": [{**asdict(f), "status": f.status} for f in figures],
        "wall_seconds": round(time.perf_counter() - started, 1),
        "wall_seconds_by_group": sections,  # each group of figures by its first figure's name
    }
    RESULTS.write_text(json.dumps(document, indent=2, default=str) + "\n")
    missed = [f.name for f in figures if f.met is False]
    slowest = sorted(sections.items(), key=lambda kv: -kv[1])[:3]
    print("  slowest groups (wall s): " + "; ".join(f"{name[:50]}: {s:g}" for name, s in slowest))
    print(f"{len(figures)} figures, {len(missed)} missed; JSON: {RESULTS.relative_to(ROOT)}")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
