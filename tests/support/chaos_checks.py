"""The invariants after a chaos run (tests/support/chaos.py), read from the raw tables and the captured logs.

- every response is in the contract (openapi.yaml), none is a 500, every 503 carries Retry-After;
- per user: the state item's counters equal the stored entries and proposals;
- the stored entries are exactly those a 201/200/accept confirmed and no 2xx removed, with the text
  the last 2xx confirmed (nothing stored without a 2xx behind it, nothing a 2xx confirmed lost);
- every posted event has exactly one outcome; each proposal comes from one event (no duplicates);
  a session's proposal count equals its proposed outcomes; handled events keep no text;
- no text the workload sent appears in any log line, journal row or handled event.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any


class Checks:
    def __init__(self) -> None:
        self.count = 0
        self.violations: list[str] = []

    def that(self, ok: bool, message: str) -> None:
        self.count += 1
        if not ok and len(self.violations) < 50:
            self.violations.append(message)


def _stores(stack: Any) -> Any:
    import boto3

    from chalicelib.bootstrap import build_stores
    from chalicelib.config import get_settings

    raw = boto3.client("dynamodb", endpoint_url=stack.dynamodb_url, region_name="us-east-1")  # no fault injector here
    return build_stores(get_settings(), raw)


def _drain(
    stack: Any, stores: Any, sessions: list[str], dead: list[dict[str, Any]] | None = None, timeout: float = 120.0
) -> bool:
    """Wait until the stream pump has handled every posted event (faults still on, as in production)
    or given it up to the dead-letter list."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            stack.pump.drain(timeout=30)
        except TimeoutError:
            pass
        given_up = {
            (r["dynamodb"]["Keys"]["session_id"]["S"], r["dynamodb"]["Keys"]["event_id"]["S"]) for r in dead or []
        }
        if all(e.status != "pending" or (s, e.event_id) in given_up for s in sessions for e in stores.events.list(s)):
            return True
        time.sleep(0.3)
    return False


def check_contract(calls: list[Any], checks: Checks) -> None:
    from tests.support.openapi_check import check

    for call in calls:
        checks.that(call.status != 500, f"500 from {call.method} {call.template}")
        if call.status == 503:
            checks.that(
                bool(call.retry_after) and call.body.get("code") == "unavailable",
                f"503 without Retry-After: {call.template}",
            )
        try:
            check(call.method, call.template, call.status, call.body)
            checks.that(True, "")
        except AssertionError as exc:
            checks.that(False, f"not in the contract: {call.method} {call.template} {call.status}: {str(exc)[:200]}")


def check_user(stores: Any, model: Any, texts: list[str], checks: Checks, calls: list[Any] = ()) -> None:
    state, entries = stores.entries.load(model.user)
    _, refs = stores.entries.stored(model.user)  # counted unopened: a destroyed key's items still count
    proposals = stores.proposals.list(model.user)
    waiting_refs = stores.proposals.stored(model.user)  # unopened, like the entries
    checks.that(state.active == len(refs), f"{model.user}: active={state.active} but {len(refs)} entries stored")
    checks.that(
        state.waiting == len(waiting_refs), f"{model.user}: waiting={state.waiting} but {len(waiting_refs)} stored"
    )
    stored = {e.id: e.text for e in entries}
    allowed = set(model.entries) | model.maybe_forgotten
    checks.that(set(stored) <= allowed, f"{model.user}: stored without a 2xx: {sorted(set(stored) - allowed)}")
    checks.that(
        set(model.entries) <= set(stored),
        f"{model.user}: confirmed but lost: {sorted(set(model.entries) - set(stored))}",
    )
    for entry_id, text in model.entries.items():
        if entry_id in stored:
            history = [f"{c.method} {c.status}" for c in calls if entry_id in c.path]
            checks.that(
                stored[entry_id] == text,
                f"{model.user}: entry {entry_id} holds other text than the last 2xx confirmed {history}",
            )
    proposed: set[str] = set()
    for session in model.sessions:
        events = stores.events.list(session)
        posted = set(model.events.get(session, []))
        stored_ids = {e.event_id for e in events}
        checks.that(
            stored_ids == posted, f"{session}: stored events differ from the 202s: {sorted(stored_ids ^ posted)}"
        )
        outcomes = [e.outcome or {} for e in events]
        checks.that(all(e.status == "handled" and e.outcome for e in events), f"{session}: an event has no outcome")
        checks.that(
            all(e.text is None for e in events if e.status == "handled"), f"{session}: a handled event keeps text"
        )
        ids = [o["proposal_id"] for o in outcomes if o.get("type") == "memory.proposed"]
        checks.that(len(ids) == len(set(ids)), f"{session}: one proposal id twice")
        checks.that(
            stores.sessions.get(session).proposals == len(ids), f"{session}: proposal count differs from outcomes"
        )
        proposed.update(ids)
    waiting = {p.id for p in proposals}
    counted = Counter((p.source.session_id, p.id) for p in proposals)
    checks.that(all(n == 1 for n in counted.values()), f"{model.user}: duplicate proposals")
    checks.that(
        waiting <= proposed - model.decided, f"{model.user}: a proposal without an event, or back after a decision"
    )
    if not model.forgot_all:
        checks.that(
            waiting == proposed - model.decided, f"{model.user}: a proposed outcome without its waiting proposal"
        )
    journal = repr([r.public() for r in stores.journal.all(model.user)])
    checks.that(not any(t in journal for t in texts), f"{model.user}: text in the journal")


def check_all(
    stack: Any, http: Any, crew: list[Any], read_logs: Callable[[], str], dead_letters: list[dict[str, Any]]
) -> dict[str, Any]:
    from chalicelib.storage import retries

    checks = Checks()
    for worker in crew:
        for error in worker.errors:
            checks.that(False, f"the workload crashed: {error}")
    stores = _stores(stack)
    models = [m for w in crew for m in w.models]
    sessions = [s for m in models for s in m.sessions]
    _drain(stack, stores, sessions, dead_letters)
    # Records the pump gave up on went to the dead-letter list (the deployed stack's SQS queue): each
    # must have left its event pending and whole. Redriven once AWS is calm, each must then settle once.
    dead = list(dead_letters)
    for record in dead:
        keys = record["dynamodb"]["Keys"]
        event = stores.events.get(keys["session_id"]["S"], keys["event_id"]["S"])
        checks.that(
            event is not None and (event.status == "pending" or event.outcome is not None),
            "a dead letter's event is half-handled",
        )
    if stack.faults is not None:
        stack.faults.clear()
    if dead:
        from app import handle_events_stream
        from local.lambda_context import consumer_context

        answer = handle_events_stream({"Records": dead}, consumer_context())
        checks.that(answer == {"batchItemFailures": []}, f"the redrive failed: {answer}")
    checks.that(_drain(stack, stores, sessions), "the stream pump did not handle every event")
    check_contract(http.calls, checks)
    texts = [t for w in crew for t in w.texts]
    for model in models:
        check_user(stores, model, texts, checks, http.calls)
    logs = read_logs()  # everything this process wrote, the redrive included
    checks.that(not any(t in logs for t in texts), "text in the logs")
    statuses = Counter(call.status for call in http.calls)
    faults = stack.faults.stats() if stack.faults is not None else {}
    return {
        "requests": len(http.calls),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "unavailable_503": statuses.get(503, 0),
        "server_errors_500": statuses.get(500, 0),
        "dynamodb_calls": faults.get("calls", 0),
        "faults_injected": faults.get("faults", 0),
        "faults_by_kind": faults.get("by_fault", {}),
        "botocore_retries": faults.get("retries", 0),
        "conflict_retries": retries.counts.get("conflict_retries", 0),
        "invariants_checked": checks.count,
        "dead_letters_redriven": len(dead),
        "violations": checks.violations,
        "log_bytes_scanned": len(logs),
        "error_types_logged": sorted(
            {line.split('"error_type": "')[1].split('"')[0] for line in logs.splitlines() if '"error_type": "' in line}
        ),
    }
