"""`make bench`'s counts for the agents the user allows (issue 23): the grants ride on reads already made.

Counted with the same botocore hook as bench/run.py's other operations: the context fetch and a proposal
with a grant set (allowed and stopped) stay at their ≤ 3 calls; `GET /v1/agents` reads ≤ 3 calls however
long the journal; forgetting an agent's 200 entries takes at most `forget_call_bound(200) + AGENT_FORGET_EXTRA`
= 21 calls.

That bound (issue 37): the forget deletes three items per entry — the entry, its fingerprint (issue 24)
and its text's key (issue 26) — and each call carries the most its API takes. The keys go first, 25 a
BatchWriteItem (ceil(n / 25)); each entry and its fingerprint then go together, 98 deletes a transaction
beside the counters and the journal row (ceil(2n / 98)); three Queries read the entries and proposals
partitions once and recount afterwards. Issue 23's "≤ 4 transactions" was met only while the bench
seeded entries without their fingerprints. An agent's forget adds `AGENT_FORGET_EXTRA` calls that forget-all
does not make: two Queries for the other spellings of its name (agent_names.py), one of its rows (it stays
listed), one UpdateItem (the cut-off that refuses its events still pending) and one transaction (the journal's
receipt of the shredded keys, written before the deletions so a 503 after them still says what was done).
"""

from __future__ import annotations

import math
from typing import Any

AGENT = "bench-agent"
FORGET_ENTRIES = 200


AGENT_FORGET_EXTRA = 5
# Forget-all's own: its data key's transaction first, and last the waiting counter set to the proposals and slots
# still stored (chalicelib/services/orphans.py true_waiting: a GetItem and a Query; items put back from a backup
# were never counted, yet their deletion was).
FORGET_ALL_EXTRA = 3


def forget_call_bound(entries: int) -> int:
    """DynamoDB calls for forgetting `entries` of an agent's entries: keys, then entries with their fingerprints, 3 reads."""
    return math.ceil(entries / 25) + math.ceil(2 * entries / 98) + 3


def _seed_agent_entries(stack: Any, user: str, count: int) -> None:
    """`count` entries accepted from AGENT in one session, stored as an accept stores them (fingerprints and text keys
    included: bench/run.py `seed_items`), uncounted."""
    from bench.stack import seed_items
    from chalicelib.clock import instant
    from chalicelib.models import Entry, Source, new_id

    now = instant(stack.stores.clock).iso
    seed_items(
        stack,
        user,
        [
            Entry(
                id=new_id(),
                user_id=user,
                text=f"Accepted {i}: likes tea.",
                kind="note",
                pinned=False,
                tainted=False,
                origin="agent",
                source=Source(session_id="bench-s", thread_id="t-1", message_id=f"m{i}"),
                created_at=now,
                updated_at=now,
                agent=AGENT,
            )
            for i in range(count)
        ],
    )


def _register(stack: Any, session_id: str, user: str, agent: str) -> None:
    from chalicelib.schemas import SessionBody
    from chalicelib.services import agents

    body = {"user_id": user, "agent": agent, "thread_id": "t-1", "manifest": {"memory": True}}
    agents.register_session(stack.stores, session_id, SessionBody.model_validate(body))


def agent_counts(
    stack: Any, seed_user: Any, seed_journal: Any, journal_rows: int
) -> list[tuple[str, Any, float | None, dict[str, Any]]]:
    """(name, value, limit or None, detail) per figure, as bench/local_stack_bench.py's results."""
    from bench.stack import consume, drain_inserts
    from chalicelib.storage.fingerprints import FINGERPRINT_PREFIX
    from tests.support.iam import iam_call
    from tests.support.stack import HOST_ARN, WORKER_ARN

    results: list[tuple[str, Any, float | None, dict[str, Any]]] = []
    user = "agents-user"
    forgot_units: Any = None  # the last counted call's request units (bench/units.py)

    def counted(name: str, limit: float | None, action: Any) -> Any:
        nonlocal forgot_units
        with stack.counter.counting() as calls, stack.meter.metering() as units:
            answer = action()
        forgot_units = units
        results.append((name, len(calls), limit, {"operations": list(calls), "rru": units.rru, "wru": units.wru}))
        return answer

    seed_user(stack, user, entries=20)
    _seed_agent_entries(stack, user, FORGET_ENTRIES)
    seed_journal(stack, user, journal_rows)
    check = stack.api.call
    assert check("PUT", f"/v1/agents/{AGENT}", user, {"propose": False})[0] == 200
    assert check("PUT", "/v1/agents/stopped", user, {"read": False})[0] == 200
    for session, agent in (("agents-s-allowed", AGENT), ("agents-s-stopped", "stopped")):
        _register(stack, session, user, agent)
    path = "/v1/sessions/{}/memory"
    got = counted(
        "dynamodb calls: context fetch, agent with a grant set",
        3,
        lambda: iam_call(stack.http, "GET", path.format("agents-s-allowed"), HOST_ARN),
    )
    assert got[0] == 200 and got[1]["items"], got
    got = counted(
        "dynamodb calls: context fetch, agent stopped reading",
        3,
        lambda: iam_call(stack.http, "GET", path.format("agents-s-stopped"), HOST_ARN),
    )
    assert got == (200, {"items": []}), got
    for session, event_id in (("agents-s-allowed", "refused"), ("agents-s-stopped", "proposed")):
        event = {"id": event_id, "type": "memory.propose", "text": "Likes jazz on Fridays."}
        assert iam_call(stack.http, "POST", f"/v1/sessions/{session}/events", WORKER_ARN, {"events": [event]})[0] == 202
        records = drain_inserts(stack)
        # Refused, it costs what every refusal found by the proposal's transaction costs (session_cap too):
        # the cancelled transaction, then the refusal's own. Reported; the grant itself adds no call.
        stopped = event_id == "refused"
        counted(
            f"dynamodb calls: consumer: one memory.propose, agent {'stopped proposing' if stopped else 'allowed'}",
            None if stopped else 3,
            lambda records=records: consume(stack, records),
        )
        [outcome] = [e.outcome for e in stack.stores.events.list(session)]
        assert (outcome or {}).get("reason" if event_id == "refused" else "type") == (
            "agent_blocked" if event_id == "refused" else "memory.proposed"
        ), outcome
    listed = counted(
        f"dynamodb calls: GET /v1/agents, {journal_rows} journal rows", 3, lambda: check("GET", "/v1/agents", user)
    )
    assert listed[0] == 200 and next(r for r in listed[1]["agents"] if r["agent"] == AGENT)["entries"] == FORGET_ENTRIES
    # Issue 26: the texts' own keys go first, outside the transactions (BatchWriteItem, 25 a call), so each
    # counted transaction still holds 98 entries: the transactions stay 3, the key deletions are reported.
    keys_before, prints_before = (
        _rows(stack, user, stack.stores.keyring.keys.table, "t#"),
        _rows(stack, user, stack.stores.entries.table, FINGERPRINT_PREFIX),
    )
    forgot = counted(
        f"dynamodb calls: POST /v1/agents/{{id}}/forget, {FORGET_ENTRIES} entries",
        forget_call_bound(FORGET_ENTRIES) + AGENT_FORGET_EXTRA,
        lambda: check("POST", f"/v1/agents/{AGENT}/forget", user),
    )
    assert forgot == (200, {"deleted": FORGET_ENTRIES}), forgot
    assert keys_before - _rows(stack, user, stack.stores.keyring.keys.table, "t#") == FORGET_ENTRIES, (
        "each forgotten text's key row is gone"
    )
    assert prints_before - _rows(stack, user, stack.stores.entries.table, FINGERPRINT_PREFIX) == FORGET_ENTRIES, (
        "each forgotten text's fingerprint is gone"
    )
    operations = results[-1][3]["operations"]
    for name in ("TransactWriteItems", "BatchWriteItem", "Query"):
        results.append((f"  {name} calls of that forget", operations.count(name), None, {}))
    results.append(("  request units of that forget", f"{forgot_units.rru:g} RRU + {forgot_units.wru:g} WRU", None, {}))
    # Forget-all of a full memory (200 entries, 50 proposals): its data key (one transaction), the same reads,
    # every text key, then every item with its fingerprint, then the waiting counter's check (FORGET_ALL_EXTRA).
    everyone = "forget-all-user"
    seed_user(stack, everyone, entries=FORGET_ENTRIES, proposals=50)
    counted(
        f"dynamodb calls: DELETE /v1/memory, {FORGET_ENTRIES} entries and 50 proposals",
        forget_call_bound(FORGET_ENTRIES + 50) + FORGET_ALL_EXTRA,
        lambda: check("DELETE", "/v1/memory", everyone),
    )
    results.append(
        ("  request units of that forget-all", f"{forgot_units.rru:g} RRU + {forgot_units.wru:g} WRU", None, {})
    )
    return results


def _rows(stack: Any, user: str, table: str, prefix: str) -> int:
    """How many of the user's items in `table` have a sort key starting with `prefix` (text keys, fingerprints)."""
    from chalicelib.storage import dynamo

    return sum(
        1
        for row in dynamo.query_partition(stack.stores.client, table, "user_id", user)
        if str(row["sk"]).startswith(prefix)
    )


MANY_AGENTS = 2000


def many_agent_counts(
    stack: Any, seed_user: Any, attempts: int = MANY_AGENTS
) -> list[tuple[str, float, float | None, dict[str, Any]]]:
    """Issue 37 #10: one person whose memory `attempts` differently named agents read (each its own session),
    then what every later request pays: DynamoDB calls and items read by a context fetch and `GET /v1/memory`,
    and the bytes of `GET /v1/agents` (first page) and of the export's `agents`. The attempts are seeding (through
    the service, uncounted); the agent rows they leave are what the cap bounds."""
    import json

    from chalicelib.schemas import SessionBody
    from chalicelib.services import agents
    from tests.support.iam import iam_call
    from tests.support.stack import HOST_ARN

    user, results = "many-agents-user", []
    seed_user(stack, user, entries=20)
    for n in range(attempts):
        body = {"user_id": user, "agent": f"agent-{n:04d}x", "thread_id": "t-1", "manifest": {"memory": True}}
        agents.register_session(stack.stores, f"many-{n}", SessionBody.model_validate(body))
        agents.context(stack.stores, f"many-{n}")
    read: list[int] = []

    def items_read(parsed: Any = None, model: Any = None, **_: Any) -> None:
        if isinstance(parsed, dict) and model is not None and model.name == "Query":
            read.append(int(parsed.get("Count", 0)))
        elif isinstance(parsed, dict) and model is not None and model.name == "GetItem":
            read.append(1 if parsed.get("Item") else 0)

    stack.stores.client.meta.events.register("after-call.dynamodb", items_read)
    try:
        for name, action in (
            (
                "context fetch",
                lambda: iam_call(stack.http, "GET", f"/v1/sessions/many-{attempts - 1}/memory", HOST_ARN),
            ),
            ("GET /v1/memory", lambda: stack.api.call("GET", "/v1/memory", user)),
        ):
            read.clear()
            with stack.counter.counting() as calls:
                answer = action()
            assert answer[0] == 200, answer
            results.append(
                (f"dynamodb calls: {name}, {attempts} agents attempted", len(calls), None, {"operations": list(calls)})
            )
            results.append((f"  items read by that {name}", sum(read), None, {}))
    finally:
        stack.stores.client.meta.events.unregister("after-call.dynamodb", items_read)
    status, listed = stack.api.call("GET", "/v1/agents", user)
    assert status == 200, listed
    results.append(
        (
            f"bytes: GET /v1/agents (first page), {attempts} agents attempted",
            len(json.dumps(listed)),
            None,
            {"rows": len(listed["agents"])},
        )
    )
    status, export = stack.api.call("GET", "/v1/memory/export", user)
    assert status == 200, export
    results.append(
        (
            f"bytes: the export's agents, {attempts} agents attempted",
            len(json.dumps(export["agents"])),
            None,
            {"rows": len(export["agents"])},
        )
    )
    return results


if __name__ == "__main__":  # `python -m bench.agents_bench`: only the many-agents figures
    import contextlib
    import os

    from bench.stack import open_stack, seed_user

    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull), open_stack() as opened:
        figures = many_agent_counts(opened, seed_user)
    for name, value, _, detail in figures:
        print(f"{name}: {value:g}", detail.get("operations") or detail.get("rows") or "")
