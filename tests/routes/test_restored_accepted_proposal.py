"""A proposal the person accepted, put back from a backup (issue 37's rule: stored data is hostile).

The accepted entry keeps its proposal's text key (its text's life goes on under it, storage/text.py), so the
restored copy opened: it was shown as waiting, and rejecting it deleted that key, so the person's entry no longer
opened. A restored proposal whose text key an entry now uses is not believed (docs/agents.md)."""

from __future__ import annotations

from typing import Any

from chalicelib.storage import dynamo

TEA, CAT = "Prefers tea in the morning", "Has a cat called Miso"


def _items(stores: Any, table: str, user: str = "alice") -> list[dict[str, Any]]:
    return [dynamo.dump(i) for i in dynamo.query_partition(stores.client, table, "user_id", user, consistent=True)]


def _accepted_and_restored(api: Any, agents: Any, stores: Any, *others: str) -> tuple[str, str]:
    """The person accepts the agent's suggestion; the waiting item, copied before, is put back; (entry id, proposal id)."""
    api.turn_on("alice")
    agents.register("s-1", "alice", agent="helper")
    agents.propose("s-1", {"id": "e0", "text": TEA}, *({"id": f"e{n + 1}", "text": t} for n, t in enumerate(others)))
    backup = [i for i in _items(stores, stores.proposals.table) if i["sk"]["S"].startswith("p#")]
    (proposal,) = [p for p in stores.proposals.list("alice") if p.text == TEA]
    status, entry = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")
    assert status == 201, entry
    for item in backup:
        if item["sk"]["S"] == "p#" + proposal.id:
            stores.client.put_item(TableName=stores.proposals.table, Item=item)
    stores.keyring.cache.drop_prefix("")  # a cold container
    return entry["id"], proposal.id


def _entry_key(stores: Any) -> bytes:
    (entry,) = stores.entries.load("alice")[1]
    return bytes(entry.text_id)


def _entry_readable(api: Any, entry_id: str) -> None:
    status, view = api.call("GET", "/v1/memory", "alice")
    assert status == 200, view
    assert [(e["id"], e["text"]) for e in view["items"]] == [(entry_id, TEA)]
    status, exported = api.call("GET", "/v1/memory/export", "alice")
    assert status == 200, exported
    assert [e["text"] for e in exported["entries"]] == [TEA]


def test_a_restored_accepted_proposal_is_not_shown_as_waiting(api: Any, agents: Any, stores: Any) -> None:
    _accepted_and_restored(api, agents, stores, CAT)
    assert [p["text"] for p in api.call("GET", "/v1/memory", "alice")[1]["proposals"]] == [CAT]
    assert [p["text"] for p in api.call("GET", "/v1/memory/export", "alice")[1]["proposals"]] == [CAT]
    assert [p["text"] for p in api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]] == [CAT]
    assert stores.entries.get_state("alice").waiting == 1


def test_rejecting_a_restored_accepted_proposal_keeps_the_persons_entry(api: Any, agents: Any, stores: Any) -> None:
    entry_id, proposal_id = _accepted_and_restored(api, agents, stores)
    status, body = api.call("POST", f"/v1/memory/{proposal_id}/reject", "alice")
    assert status == 404, body  # not believed: its id was decided (services/decided.py)
    assert body["code"] == "not_found"
    _entry_readable(api, entry_id)
    assert stores.keyring.keys.held_in("alice", _entry_key(stores)) == stores.entries.table  # its key row stays
    assert stores.entries.get_state("alice").waiting == 0
    assert stores.entries.get_state("alice").active == 1


def test_a_restored_accepted_proposal_cannot_be_accepted_again_even_once_its_entry_changed_words(
    api: Any, agents: Any, stores: Any
) -> None:
    entry_id, proposal_id = _accepted_and_restored(api, agents, stores)
    assert api.call("PATCH", f"/v1/memory/{entry_id}", "alice", {"text": CAT})[0] == 200  # its fingerprint moved
    status, body = api.call("POST", f"/v1/memory/{proposal_id}/accept", "alice")
    assert status == 404, body
    assert body["code"] == "not_found"
    view = api.call("GET", "/v1/memory", "alice")[1]
    assert [(e["id"], e["text"]) for e in view["items"]] == [(entry_id, CAT)]  # one entry, still readable
    assert stores.entries.get_state("alice").active == 1
    assert stores.entries.get_state("alice").waiting == 0


def test_forgetting_another_agent_never_counts_a_restored_accepted_proposal_as_waiting(
    api: Any, agents: Any, stores: Any
) -> None:
    entry_id, _ = _accepted_and_restored(api, agents, stores)
    agents.register("s-2", "alice", agent="other")
    agents.propose("s-2", {"id": "e1", "text": CAT})
    assert api.call("POST", "/v1/agents/other/forget", "alice", {})[0] == 200  # sets waiting to what is stored
    assert stores.entries.get_state("alice").waiting == 0  # the restored copy is no waiting place
    _entry_readable(api, entry_id)
