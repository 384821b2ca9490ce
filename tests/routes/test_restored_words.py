"""A forgotten text's items put back from a backup never lock its words out (issue 37 #11).

The restored item stays hidden (tests/routes/test_forgetting_is_final.py), and so does its fingerprint's claim:
a fingerprint whose holder's text key is gone is stale, and the next write with those words takes it over in
its own transaction (the claim's condition also holds while the fingerprint names that dead holder). A live
holder still wins: its words stay a `duplicate`.
"""

from __future__ import annotations

from typing import Any

from chalicelib.storage import dynamo
from tests.support.proposals import add_proposal

TEA, CAT = "Prefers tea in the morning", "Has a cat called Miso"


def _partition(stores: Any, table: str, user: str) -> list[dict[str, Any]]:
    return [dynamo.dump(i) for i in dynamo.query_partition(stores.client, table, "user_id", user, consistent=True)]


def _forgotten_and_restored(api: Any, stores: Any, *texts: str) -> list[str]:
    """Entries with `texts`, forgotten one by one (204), then every item of the entries table put back."""
    api.turn_on("alice")
    ids = [api.add("alice", text)["id"] for text in texts]
    backup = _partition(stores, stores.entries.table, "alice")
    for entry_id in ids:
        assert api.call("DELETE", f"/v1/memory/{entry_id}", "alice")[0] == 204
    for item in backup:
        if item["sk"]["S"] != "#state":  # the counters are restored as they are now: only the forgotten items come back
            stores.client.put_item(TableName=stores.entries.table, Item=item)
    stores.keyring.cache.drop_prefix("")  # a cold container
    return ids


def _fingerprint_owners(stores: Any, table: str) -> list[str]:
    return sorted(i["held_by"]["S"] for i in _partition(stores, table, "alice") if i["sk"]["S"].startswith("f#"))


def test_the_person_can_add_the_words_of_a_restored_forgotten_entry_again(api: Any, stores: Any) -> None:
    (forgotten,) = _forgotten_and_restored(api, stores, TEA)
    assert api.call("DELETE", f"/v1/memory/{forgotten}", "alice")[0] == 404  # still hidden
    status, entry = api.call("POST", "/v1/memory", "alice", {"text": TEA.upper()})
    assert status == 201, entry
    assert _fingerprint_owners(stores, stores.entries.table) == [entry["id"]]  # taken over, in the write itself
    assert [i["text"] for i in api.call("GET", "/v1/memory", "alice")[1]["items"]] == [TEA.upper()]
    status, body = api.call("POST", "/v1/memory", "alice", {"text": TEA})
    assert (status, body["code"], body["existing_id"]) == (409, "duplicate", entry["id"])  # a live holder wins


def test_an_edit_and_an_accept_may_take_the_words_of_restored_forgotten_entries(api: Any, stores: Any) -> None:
    _forgotten_and_restored(api, stores, TEA, CAT)
    other = api.add("alice", "Something else")
    status, edited = api.call("PATCH", f"/v1/memory/{other['id']}", "alice", {"text": TEA})
    assert status == 200 and edited["text"] == TEA
    proposal = add_proposal(stores, "alice", CAT)
    status, accepted = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")
    assert status == 201, accepted
    assert _fingerprint_owners(stores, stores.entries.table) == sorted([other["id"], accepted["id"]])


def test_an_agent_suggesting_the_words_of_a_restored_forgotten_entry_is_not_told_duplicate(
    api: Any, agents: Any, stores: Any
) -> None:
    _forgotten_and_restored(api, stores, TEA)
    agents.register("s-1", "alice")
    agents.propose("s-1", {"id": "e1", "text": TEA})
    assert agents.outcomes("s-1")["e1"]["type"] == "memory.proposed"
    assert [p.text for p in stores.proposals.list("alice")] == [TEA]  # a real suggestion the person can accept
    assert not [r for r in stores.journal.all("alice") if r.action == "keep.memory.proposal_refused"]
    (proposal,) = stores.proposals.list("alice")
    assert api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")[0] == 201


def test_the_words_of_a_restored_rejected_proposal_can_be_suggested_again(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    agents.register("s-1", "alice")
    agents.propose("s-1", {"id": "e1", "text": CAT})
    (first,) = stores.proposals.list("alice")
    backup = _partition(stores, stores.proposals.table, "alice")
    assert api.call("POST", f"/v1/memory/{first.id}/reject", "alice")[0] == 204
    for item in backup:
        stores.client.put_item(TableName=stores.proposals.table, Item=item)
    stores.keyring.cache.drop_prefix("")
    agents.register("s-2", "alice")
    agents.propose("s-2", {"id": "e1", "text": CAT.upper()})
    assert [p.text for p in stores.proposals.list("alice")] == [CAT.upper()]
    (second,) = stores.proposals.list("alice")
    assert _fingerprint_owners(stores, stores.proposals.table) == [second.id]
    assert not [r for r in stores.journal.all("alice") if r.action == "keep.memory.proposal_refused"]
