"""`make bench`'s figures about the local stack itself: what serializing moto costs, and whether a long run stays bounded.

- serialization: one fixed sequential workload (adds, refusals at the cap, deletes, forget-all)
  through the service layer against `mock_aws`, in fresh interpreters, with moto as shipped and
  with local/embedded_aws.py installed; the ratio of CPU-time medians.
- memory: `make run`'s launcher in a subprocess, its RSS before and after a fixed workload of
  mixed HTTP requests (user routes with refusals of every kind, sessions, proposals through the
  stream, accepts and rejects, forget-all), from several threads at once; plus its 5xx count.
- the cap path: DynamoDB calls of a POST refused at the cap, and of one whose counter TTL left too
  high (recount, correct, insert).
Every figure is a count or a ratio; `run.py` prints them with the rest.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# (name, value, limit or None, detail): run.py turns these into its Figures.
Result = tuple[str, Any, float | None, dict[str, Any]]

_WORKLOAD = r"""
import os, sys, time
sys.path.insert(0, {root!r})
os.environ.update(AWS_ACCESS_KEY_ID="t", AWS_SECRET_ACCESS_KEY="t", AWS_DEFAULT_REGION="us-east-1",
                  AWS_ACCOUNT_ID_ENDPOINT_MODE="disabled")
os.environ.pop("AWS_ENDPOINT_URL", None)
if {serialized!r}:
    from local import embedded_aws
    embedded_aws.install()
import boto3
from moto import mock_aws
from chalicelib.bootstrap import build_stores
from chalicelib.config import TableNames, load_settings
from chalicelib.errors import LimitReached
from chalicelib.schemas import NewEntryBody
from chalicelib.services import memory
from local.dev_tokens import DevTokenIssuer
from local.kms import create_key
from local.tables import create_tables
from tests.support.stack import settings_env
names = TableNames("w-entries", "w-proposals", "w-journal", "w-sessions", "w-events")
with mock_aws():
    client = boto3.client("dynamodb", region_name="us-east-1")
    create_tables(client, names)
    create_key(boto3.client("kms", region_name="us-east-1"))
    stores = build_stores(load_settings(settings_env(names, DevTokenIssuer())), client)
    started = time.process_time()
    for user in ("a", "b", "c"):
        memory.set_enabled(stores, user, True)
        ids = [memory.add(stores, user, NewEntryBody(text=f"note {{n}}")).id for n in range(200)]
        for _ in range(20):
            try:
                memory.add(stores, user, NewEntryBody(text="one too many"))
            except LimitReached:
                pass
        for entry_id in ids[:50]:
            memory.forget(stores, user, entry_id)
        memory.forget_all(stores, user)
    print(time.process_time() - started)
"""


def _workload_seconds(serialized: bool) -> float:
    script = _WORKLOAD.format(root=str(ROOT), serialized=serialized)
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=900, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def serialization_cost(reps: int = 3) -> list[Result]:
    """CPU time of the same sequential workload, serialized ÷ moto as shipped (interleaved fresh interpreters)."""
    stock: list[float] = []
    serial: list[float] = []
    for rep in range(reps):
        order = (False, True) if rep % 2 == 0 else (True, False)
        for serialized in order:
            (serial if serialized else stock).append(_workload_seconds(serialized))
    ratio = statistics.median(serial) / statistics.median(stock)
    detail = {"serialized_cpu_s": serial, "stock_cpu_s": stock, "operations": 3 * (1 + 200 + 20 + 50 + 1)}
    return [("serialized moto ÷ moto as shipped, CPU time of one workload", ratio, 1.5, detail)]


# ---- memory over a long run ----------------------------------------------------------------------------------


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _children(pid: int) -> list[int]:
    """The launcher's child processes (DynamoDB Local's JVM)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.extend(int(child) for child in (task / "children").read_text().split())
    return found


class _Client:
    """Counts every response by status; the workload's only window on the server."""

    def __init__(self, live: Any) -> None:
        self.live = live
        self.statuses: dict[int, int] = {}
        self._lock = threading.Lock()

    def __call__(self, method: str, path: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
        status, payload, _ = self.live.request(method, path, token=token, body=body)
        with self._lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1
        return status, payload

    def signed(self, method: str, path: str, creds: dict[str, str], body: Any = None) -> tuple[int, Any]:
        from tests.support.signing import signed_request

        status, payload = signed_request(self.live.url, method, path, creds, body)
        with self._lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1
        return status, payload

    @property
    def total(self) -> int:
        return sum(self.statuses.values())


def _one_user_cycle(call: _Client, creds: dict[str, dict[str, str]], n: int) -> None:
    """About 120 requests of every kind for one fresh user, refusals included."""
    user = f"bench-{uuid.uuid4().hex[:8]}"
    token = call.live.token(user)
    call("POST", "/v1/memory", token, {"text": "before memory is on"})  # memory_off refusal
    call("PUT", "/v1/memory/settings", token, {"enabled": True})
    ids = []
    for i in range(60):
        status, entry = call("POST", "/v1/memory", token, {"text": f"note {n}-{i}", "expires_in_days": 1 + i % 3})
        if status == 201:
            ids.append(entry["id"])
    call("POST", "/v1/memory", token, {"text": "key AKIAIOSFODNN7EXAMPL3"})  # credential refusal
    for entry_id in ids[:10]:
        call("PATCH", f"/v1/memory/{entry_id}", token, {"pinned": True})
        call("DELETE", f"/v1/memory/{uuid.uuid4().hex}", token)  # 404, a cancelled transaction
    for entry_id in ids[10:20]:
        call("DELETE", f"/v1/memory/{entry_id}", token)
    for _ in range(5):
        call("GET", "/v1/memory", token)
    session = f"/v1/sessions/{uuid.uuid4().hex}"
    call.signed(
        "PUT",
        session,
        creds["host"],
        {"user_id": user, "thread_id": "t", "agent": "bench", "manifest": {"memory": True}},
    )
    events = [{"id": f"e{i}", "type": "memory.propose", "text": f"proposal {n}-{i}", "kind": "note"} for i in range(7)]
    call.signed("POST", session + "/events", creds["worker"], {"events": events})  # 5 proposed, 2 refused (session cap)
    call.signed("GET", session + "/memory", creds["host"])
    proposals: list[str] = []
    for _ in range(50):
        status, inbox = call("GET", "/v1/inbox", token)
        proposals = [p["id"] for p in inbox["memory_proposals"]] if status == 200 else []
        if len(proposals) >= 5:
            break
        time.sleep(0.1)
    for index, proposal in enumerate(proposals):
        verdict = "accept" if index % 2 == 0 else "reject"
        call("POST", f"/v1/memory/{proposal}/{verdict}", token)
        call("POST", f"/v1/memory/{proposal}/{verdict}", token)  # 404: no longer waiting
    call("PUT", "/v1/memory/settings", token, {"enabled": False})
    call("POST", "/v1/memory", token, {"text": "while off"})
    call("PUT", "/v1/memory/settings", token, {"enabled": True})
    call("DELETE", "/v1/memory", token)


def memory_figures(requests: int = 5000, threads: int = 4) -> list[Result]:
    """RSS of `make run`'s server and of its DynamoDB Local before and after at least `requests` mixed requests."""
    from tests.support.live import start_live_stack

    with tempfile.TemporaryDirectory() as workdir:
        live = start_live_stack(Path(workdir), own_dynamodb=True)  # the stack's own JVM, measured below
        try:
            pid = live.process.process.pid
            call = _Client(live)
            creds = json.loads(live.credentials_file.read_text())
            call("GET", "/page-config")
            (jvm,) = _children(pid)  # DynamoDB Local (local/dynamodb_local.py)
            before, jvm_before = _rss_mb(pid), _rss_mb(jvm)
            started = time.monotonic()
            counter = iter(range(10**9))
            lock = threading.Lock()

            def worker() -> None:
                while call.total < requests:
                    with lock:
                        n = next(counter)
                    _one_user_cycle(call, creds, n)

            pool = [threading.Thread(target=worker) for _ in range(threads)]
            for thread in pool:
                thread.start()
            for thread in pool:
                thread.join()
            seconds = time.monotonic() - started
            after, jvm_after = _rss_mb(pid), _rss_mb(jvm)
        finally:
            live.stop()
    errors = sum(count for status, count in call.statuses.items() if status >= 500)
    detail = {
        "requests": call.total,
        "statuses": {str(k): v for k, v in sorted(call.statuses.items())},
        "rss_before_mb": round(before, 1),
        "rss_after_mb": round(after, 1),
        "dynamodb_local_rss_before_mb": round(jvm_before, 1),
        "dynamodb_local_rss_after_mb": round(jvm_after, 1),
        "threads": threads,
        "requests_per_second": round(call.total / seconds, 1),
    }
    return [
        ("local stack: requests in the memory workload", call.total, None, detail),
        ("local stack: RSS growth over the workload, MB", round(after - before, 1), 100, detail),
        (
            "local stack: DynamoDB Local's RSS growth over the workload, MB",
            round(jvm_after - jvm_before, 1),
            150,
            detail,
        ),
        ("local stack: 5xx answers in the memory workload", errors, 0, {"statuses": detail["statuses"]}),
        ("local stack: requests per second, 4 threads (reported)", detail["requests_per_second"], None, {}),
    ]


# ---- the cap path ------------------------------------------------------------------------------------------


def _counted_post(stack: Any, user: str, name: str, expected: int, limit: float) -> Result:
    """One POST /v1/memory through the route, its DynamoDB calls counted; the bench's setup is wrong unless it answers `expected`."""
    with stack.counter.counting() as calls:
        status, _ = stack.api.call("POST", "/v1/memory", user, {"text": "one more"})
    if status != expected:
        raise RuntimeError(f"{name} answered {status}, not {expected}")
    return (f"dynamodb calls: {name} [" + " + ".join(calls) + "]", len(calls), limit, {"operations": list(calls)})


def cap_path_counts(stack: Any, seed_user: Any) -> list[Result]:
    """DynamoDB calls of POST /v1/memory refused at the cap, and of one after TTL removed 200 entries."""
    from chalicelib.storage import dynamo

    # The limits include the GetItem of the user's key row that sealing a text costs (issue 12), and
    # at a full cap the recount's Query of the user's keys, to find items whose key is gone (services/recount.py).
    seed_user(stack, "cap-full", entries=200)
    full = _counted_post(stack, "cap-full", "POST /v1/memory refused at the cap", 409, 4)
    seed_user(stack, "cap-ttl", entries=200)
    table = stack.stores.entries.table
    for item in list(dynamo.query_partition(stack.stores.client, table, "user_id", "cap-ttl")):
        if item["sk"] != "#state":  # as DynamoDB's TTL would: deleted behind the app's back, no counter moved
            stack.stores.client.delete_item(TableName=table, Key=dynamo.dump({"user_id": "cap-ttl", "sk": item["sk"]}))
    after_ttl = _counted_post(stack, "cap-ttl", "POST /v1/memory after TTL removed 200 entries", 201, 5)
    return [full, after_ttl]
