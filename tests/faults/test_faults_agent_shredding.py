"""Forgetting an agent's writes when AWS refuses every deletion after the texts' keys went (issue 37 #12): the 503
says what happened, the journal records the texts made unreadable, and a retry deletes the rest with their
fingerprints."""

from __future__ import annotations

from typing import Any

from chalicelib.clock import instant
from chalicelib.models import Entry, Source, new_id
from chalicelib.storage import dynamo
from chalicelib.storage.dynamo import transact
from local.faults import FaultInjector
from tests.support.invariants import assert_counters_match
from tests.support.openapi_check import check


def _item(user: str, agent: str, text: str, now: str) -> Entry:
    return Entry(
        id=new_id(),
        user_id=user,
        text=text,
        kind="note",
        pinned=False,
        tainted=False,
        origin="agent",
        source=Source(session_id="s-1", thread_id="t-1"),
        created_at=now,
        updated_at=now,
        agent=agent,
    )


def _writes(stores: Any, user: str, agent: str, entries: int, proposals: int) -> None:
    """Entries and waiting proposals from `agent`, each with its fingerprint, as accept and the consumer store them."""
    now = instant(stores.clock)
    for n in range(entries):
        entry = _item(user, agent, f"entry {n} from {agent}", now.iso)
        transact(
            stores.client,
            stores.keyring.guard(
                [*stores.entries.put_unique(entry, now_epoch=now.epoch), stores.entries.take_entry_slots(user)]
            ),
        )
    for n in range(proposals):
        proposal = _item(user, agent, f"proposal {n} from {agent}", now.iso)
        actions = stores.proposals.put_unique(proposal, entries_check=None, now_epoch=now.epoch)
        transact(stores.client, stores.keyring.guard([*actions, stores.entries.take_waiting_slot(user)]))


def _fingerprints(stores: Any, user: str) -> int:
    return sum(
        1
        for table in (stores.entries.table, stores.proposals.table)
        for item in dynamo.query_partition(stores.client, table, "user_id", user, consistent=True)
        if str(item["sk"]).startswith("f#")
    )


def test_forget_agent_refused_after_its_keys_went_journals_what_was_done_and_a_retry_releases_everything(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    api.turn_on("alice")
    api.add("alice", "my own note")
    _writes(stores, "alice", "chatty", 30, 20)
    assert _fingerprints(stores, "alice") == 51
    # The agent's row is made (it stays listed and carries the cut-off for pending events), the keys go
    # (BatchWriteItem), the journal row lands, then every deletion is refused.
    faults.add(error="InternalServerError", operation="TransactWriteItems", after=2)
    status, body = api.call("POST", "/v1/agents/chatty/forget", "alice")
    check("POST", "/v1/agents/{id}/forget", status, body)
    assert status == 503 and body["code"] == "unavailable"
    # The texts are unreadable everywhere from now on: the answer and the journal say so, never "nothing happened".
    assert body["deleted"] == 50
    faults.clear()
    rows = [dict(r.details) for r in stores.journal.all("alice") if r.action == "keep.memory.forget_agent"]
    assert len(rows) == 1 and rows[0]["agent"] == "chatty" and rows[0]["unreadable"] == 50
    assert (rows[0]["entries"], rows[0]["proposals"]) == (0, 0) and "unrecoverable_by" in rows[0]
    assert [i["text"] for i in api.call("GET", "/v1/memory", "alice")[1]["items"]] == ["my own note"]
    assert api.call("POST", "/v1/agents/chatty/forget", "alice") == (200, {"deleted": 50})  # the items, counted
    assert_counters_match(stores, "alice")
    assert stores.entries.get_state("alice").active == 1 and stores.entries.get_state("alice").waiting == 0
    assert _fingerprints(stores, "alice") == 1  # only the person's own entry's: the 50 leftovers are released
    assert api.call("POST", "/v1/memory", "alice", {"text": "entry 3 from chatty"})[0] == 201
