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
        entry = Entry(
            id=new_id(),
            user_id=user,
            text=f"from {agent} {n}",
            kind="note",
            pinned=False,
            tainted=False,
            origin="agent",
            source=Source(session_id="s-1", thread_id="t-1"),
            created_at=now,
            updated_at=now,
            agent=agent,
        )
        transact(
            stores.client, stores.keyring.guard([stores.entries.put_new(entry), stores.entries.take_entry_slots(user)])
        )


def test_forget_agent_interrupted_midway_says_so_and_a_retry_finishes_it(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    from chalicelib.services.forget_all import _ITEMS_PER_TRANSACTION as CHUNK

    api.turn_on("alice")
    own = api.add("alice", "my own note")["id"]
    _from_agent(stores, "alice", "chatty", 150)
    # The agent's row (kept listed, carrying the cut-off for its pending events), the journal row of the keys
    # deleted first (issue 37 #12) and the first chunk land, no later one.
    faults.add(error="InternalServerError", operation="TransactWriteItems", after=3)
    status, body = api.call("POST", "/v1/agents/chatty/forget", "alice")
    check("POST", "/v1/agents/{id}/forget", status, body)
    assert status == 503 and body["code"] == "unavailable" and body["deleted"] == 150  # every text: none opens any more
    counts = assert_counters_match(stores, "alice")
    assert counts["entries"] == 151 - CHUNK
    rows = [dict(r.details) for r in stores.journal.all("alice") if r.action == "keep.memory.forget_agent"]
    assert [{k: v for k, v in r.items() if k != "unrecoverable_by"} for r in rows] == [
        {"agent": "chatty", "entries": CHUNK, "proposals": 0, "unreadable": 150}  # exactly what went
    ]
    # Their keys went first (issue 26): the entries still stored open nowhere, absent from every read, never a 500.
    assert [e["id"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]] == [own]
    # Nothing of it is readable to count; it stays listed (its row was made first), to be blocked next.
    assert [(a["agent"], a["entries"], a["waiting"]) for a in api.call("GET", "/v1/agents", "alice")[1]["agents"]] == [
        ("chatty", 0, 0)
    ]
    assert all(r["unrecoverable_by"] > stores.journal.all("alice")[0].at for r in rows)  # the receipt
    faults.clear()
    status, body = api.call("POST", "/v1/agents/chatty/forget", "alice")
    check("POST", "/v1/agents/{id}/forget", status, body)
    assert (status, body) == (200, {"deleted": 150 - CHUNK})
    assert assert_counters_match(stores, "alice")["entries"] == 1
    assert [e["id"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]] == [own]
    rows = [dict(r.details) for r in stores.journal.all("alice") if r.action == "keep.memory.forget_agent"]
    assert sum(r["entries"] for r in rows) == 150


def _text_keys(stores: Any, user: str) -> int:
    from chalicelib.storage import dynamo
    from chalicelib.storage.keys import TEXT_KEY_PREFIX

    rows = dynamo.query_partition(stores.client, stores.keyring.keys.table, "user_id", user, consistent=True)
    return sum(1 for row in rows if str(row["sk"]).startswith(TEXT_KEY_PREFIX))


def test_forget_agent_whose_key_deletion_is_refused_deletes_nothing_else_and_a_retry_finishes_it(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    """The texts' keys go first (BatchWriteItem): refused after its retries, no item, counter or journal row moved."""
    api.turn_on("alice")
    own = api.add("alice", "my own note")["id"]
    _from_agent(stores, "alice", "chatty", 60)
    assert _text_keys(stores, "alice") == 61
    faults.add(error="ThrottlingException", operation="BatchWriteItem", after=1)  # the first 25 keys go, no more
    writes = len(list(faults.seen("TransactWriteItems")))
    status, body = api.call("POST", "/v1/agents/chatty/forget", "alice")
    check("POST", "/v1/agents/{id}/forget", status, body)
    assert status == 503 and body["code"] == "unavailable" and body["deleted"] == 0
    # No item was touched: the one transaction is the agent's own row, made first so that it stays listed (to
    # block next) and carries the cut-off for its pending events (services/agent_grants.py).
    assert len(list(faults.seen("TransactWriteItems"))) == writes + 1
    assert assert_counters_match(stores, "alice")["entries"] == 61
    assert not [r for r in stores.journal.all("alice") if r.action == "keep.memory.forget_agent"]
    assert _text_keys(stores, "alice") == 61 - 25
    shown = [e["id"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]]
    assert own in shown and len(shown) == 1 + 60 - 25  # the 25 whose key went open nowhere: absent
    faults.clear()
    assert api.call("POST", "/v1/agents/chatty/forget", "alice") == (200, {"deleted": 60})
    assert assert_counters_match(stores, "alice")["entries"] == 1 and _text_keys(stores, "alice") == 1
    assert [e["id"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]] == [own]


def test_key_rows_dynamodb_leaves_unprocessed_are_sent_again_then_refused() -> None:
    """BatchWriteItem may answer with UnprocessedItems (throttled rows): they are sent again, a bounded number of times."""
    import pytest

    from chalicelib.errors import Unavailable
    from chalicelib.storage import retries
    from chalicelib.storage.keys import KeysRepository

    class Client:
        def __init__(self, left_over: int) -> None:
            self.left_over, self.sent = left_over, []

        def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803 (boto3's name)
            (requests,) = RequestItems.values()
            self.sent.append(len(requests))
            if self.left_over:
                self.left_over -= 1
                return {"UnprocessedItems": {"keys": requests[:1]}}
            return {"UnprocessedItems": {}}

    waits: list[float] = []
    original, retries.sleep = retries.sleep, waits.append
    try:
        client = Client(left_over=2)
        assert KeysRepository(client, "keys").delete_text_keys("u", [bytes([n]) * 16 for n in range(30)]) == 4
        assert client.sent == [25, 1, 1, 5] and len(waits) == 2
        client = Client(left_over=retries.MAX_ATTEMPTS)
        with pytest.raises(Unavailable):
            KeysRepository(client, "keys").delete_text_keys("u", [b"k" * 16])
        assert client.sent == [1] * retries.MAX_ATTEMPTS
    finally:
        retries.sleep = original
