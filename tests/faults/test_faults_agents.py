"""Forgetting an agent's writes while AWS keeps refusing: the answer, the counters and the journal say exactly what went."""
from __future__ import annotations

from typing import Any

from chalicelib.clock import instant
from chalicelib.models import Entry, Source, new_id
from chalicelib.storage.dynamo import transact
from local.faults import FaultInjector
from tests.support.invariants import assert_counters_match
from tests.support.openapi_check import check


def _from_agent(stores: Any, user: str, agent: str, count: int) -> None:
    """`count` entries accepted from `agent`, each stored with its counter as an accept stores it."""
    now = instant(stores.clock).iso
    for n in range(count):
        entry = Entry(id=new_id(), user_id=user, text=f"from {agent} {n}", kind="note", pinned=False, tainted=False,
                      origin="agent", source=Source(session_id="s-1", thread_id="t-1"), created_at=now, updated_at=now,
                      agent=agent)
        transact(stores.client, stores.keyring.guard([stores.entries.put_new(entry), stores.entries.take_entry_slots(user)]))


def test_forget_agent_interrupted_midway_says_so_and_a_retry_finishes_it(api: Any, stores: Any, faults: FaultInjector) -> None:
    from chalicelib.services.forget_all import _ITEMS_PER_TRANSACTION as CHUNK

    api.turn_on("alice")
    own = api.add("alice", "my own note")["id"]
    _from_agent(stores, "alice", "chatty", 150)
    faults.add(error="InternalServerError", operation="TransactWriteItems", after=1)  # the first chunk lands, no later one
    status, body = api.call("POST", "/v1/agents/chatty/forget", "alice")
    check("POST", "/v1/agents/{id}/forget", status, body)
    assert status == 503 and body["code"] == "unavailable" and body["deleted"] == CHUNK
    counts = assert_counters_match(stores, "alice")
    assert counts["entries"] == 151 - CHUNK
    rows = [dict(r.details) for r in stores.journal.all("alice") if r.action == "keep.memory.forget_agent"]
    assert [{k: v for k, v in r.items() if k != "unrecoverable_by"} for r in rows] == [{"agent": "chatty", "entries": CHUNK, "proposals": 0}]  # exactly what went
    assert all(r["unrecoverable_by"] > stores.journal.all("alice")[0].at for r in rows)  # the receipt
    faults.clear()
    status, body = api.call("POST", "/v1/agents/chatty/forget", "alice")
    check("POST", "/v1/agents/{id}/forget", status, body)
    assert (status, body) == (200, {"deleted": 150 - CHUNK})
    assert assert_counters_match(stores, "alice")["entries"] == 1
    assert [e["id"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]] == [own]
    rows = [dict(r.details) for r in stores.journal.all("alice") if r.action == "keep.memory.forget_agent"]
    assert sum(r["entries"] for r in rows) == 150
