"""`make bench`'s counts for the agents the user allows (issue 23): the grants ride on reads already made.

Counted with the same botocore hook as bench/run.py's other operations: the context fetch and a proposal
with a grant set (allowed and stopped) stay at their ≤ 3 calls; `GET /v1/agents` reads ≤ 3 calls however
long the journal; forgetting an agent's 200 entries takes ≤ 4 transactions.
"""
from __future__ import annotations

from typing import Any

AGENT = "bench-agent"
FORGET_ENTRIES = 200


def _seed_agent_entries(stack: Any, user: str, count: int) -> None:
    """`count` entries accepted from AGENT in one session, stored as an accept stores them (fingerprints and text keys
    included: bench/run.py `seed_items`), uncounted."""
    from bench.run import seed_items
    from chalicelib.clock import instant
    from chalicelib.models import Entry, Source, new_id

    now = instant(stack.stores.clock).iso
    seed_items(stack, user, [
        Entry(id=new_id(), user_id=user, text=f"Accepted {i}: likes tea.", kind="note", pinned=False, tainted=False,
              origin="agent", source=Source(session_id="bench-s", thread_id="t-1", message_id=f"m{i}"),
              created_at=now, updated_at=now, agent=AGENT)
        for i in range(count)
    ])


def _register(stack: Any, session_id: str, user: str, agent: str) -> None:
    from chalicelib.schemas import SessionBody
    from chalicelib.services import agents

    body = {"user_id": user, "agent": agent, "thread_id": "t-1", "manifest": {"memory": True}}
    agents.register_session(stack.stores, session_id, SessionBody.model_validate(body))


def agent_counts(stack: Any, seed_user: Any, seed_journal: Any, journal_rows: int) -> list[tuple[str, float, float | None, dict[str, Any]]]:
    """(name, value, limit or None, detail) per figure, as bench/local_stack_bench.py's results."""
    from bench.run import consume, drain_inserts
    from tests.support.iam import iam_call
    from tests.support.stack import HOST_ARN, WORKER_ARN

    results: list[tuple[str, float, float | None, dict[str, Any]]] = []
    user = "agents-user"

    def counted(name: str, limit: float | None, action: Any, *, transactions: bool = False) -> Any:
        with stack.counter.counting() as calls:
            answer = action()
        value = sum(1 for c in calls if c == "TransactWriteItems") if transactions else len(calls)
        results.append((name, value, limit, {"operations": list(calls)}))
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
    got = counted("dynamodb calls: context fetch, agent with a grant set", 3,
                  lambda: iam_call(stack.http, "GET", path.format("agents-s-allowed"), HOST_ARN))
    assert got[0] == 200 and got[1]["items"], got
    got = counted("dynamodb calls: context fetch, agent stopped reading", 3,
                  lambda: iam_call(stack.http, "GET", path.format("agents-s-stopped"), HOST_ARN))
    assert got == (200, {"items": []}), got
    for session, event_id in (("agents-s-allowed", "refused"), ("agents-s-stopped", "proposed")):
        event = {"id": event_id, "type": "memory.propose", "text": "Likes jazz on Fridays."}
        assert iam_call(stack.http, "POST", f"/v1/sessions/{session}/events", WORKER_ARN, {"events": [event]})[0] == 202
        records = drain_inserts(stack)
        # Refused, it costs what every refusal found by the proposal's transaction costs (session_cap too):
        # the cancelled transaction, then the refusal's own. Reported; the grant itself adds no call.
        stopped = event_id == "refused"
        counted(f"dynamodb calls: consumer: one memory.propose, agent {'stopped proposing' if stopped else 'allowed'}",
                None if stopped else 3, lambda records=records: consume(stack, records))
        [outcome] = [e.outcome for e in stack.stores.events.list(session)]
        assert (outcome or {}).get("reason" if event_id == "refused" else "type") == (
            "agent_blocked" if event_id == "refused" else "memory.proposed"), outcome
    listed = counted(f"dynamodb calls: GET /v1/agents, {journal_rows} journal rows", 3, lambda: check("GET", "/v1/agents", user))
    assert listed[0] == 200 and next(r for r in listed[1]["agents"] if r["agent"] == AGENT)["entries"] == FORGET_ENTRIES
    # Issue 26: the texts' own keys go first, outside the transactions (BatchWriteItem, 25 a call), so each
    # counted transaction still holds 98 entries: the transactions stay 3, the key deletions are reported.
    keys_before = _text_key_rows(stack, user)
    forgot = counted(f"transactions: POST /v1/agents/{{id}}/forget, {FORGET_ENTRIES} entries", 4,
                     lambda: check("POST", f"/v1/agents/{AGENT}/forget", user), transactions=True)
    assert forgot == (200, {"deleted": FORGET_ENTRIES}), forgot
    assert keys_before - _text_key_rows(stack, user) == FORGET_ENTRIES, "each forgotten text's key row is gone"
    operations = results[-1][3]["operations"]
    results.append(("  BatchWriteItem calls of that forget (its texts' keys, 25 a call)", operations.count("BatchWriteItem"), None, {}))
    results.append(("  dynamodb calls of that forget, all kinds", len(operations), None, {"operations": operations}))
    return results


def _text_key_rows(stack: Any, user: str) -> int:
    from chalicelib.storage import dynamo
    from chalicelib.storage.keys import TEXT_KEY_PREFIX

    rows = dynamo.query_partition(stack.stores.client, stack.stores.keyring.keys.table, "user_id", user)
    return sum(1 for row in rows if str(row["sk"]).startswith(TEXT_KEY_PREFIX))
