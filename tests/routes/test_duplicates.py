"""No duplicates, and replacing instead of piling up (issue 24): the routes against moto, stored state read back."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.models import new_id
from chalicelib.storage import dynamo
from tests.support.iam import iam_call
from tests.support.proposals import add_proposal
from tests.support.stack import OPERATOR_ARN

TEA = "Prefers tea in the morning"


def _partition(stores: Any, table: str, user: str) -> list[dict[str, Any]]:
    return list(dynamo.query_partition(stores.client, table, "user_id", user, consistent=True))


def _fingerprints(stores: Any, user: str, table: str = "entries") -> dict[str, str]:
    """Fingerprint item sort key → the id holding it, in the user's partition of `table`."""
    name = stores.entries.table if table == "entries" else stores.proposals.table
    return {str(i["sk"]): str(i["held_by"]) for i in _partition(stores, name, user) if str(i["sk"]).startswith("f#")}


def _entry_ids(stores: Any, user: str) -> set[str]:
    return {str(i["sk"])[2:] for i in _partition(stores, stores.entries.table, user) if str(i["sk"]).startswith("e#")}


def _refusal(body: Any, existing: str) -> None:
    assert body["code"] == "duplicate" and body["existing_id"] == existing
    assert TEA.lower() not in str(body).lower() and "tea" not in body["message"].lower()  # never the text


@pytest.mark.parametrize(
    "variant",
    [
        TEA,
        "  prefers TEA in the morning  ",
        "Prefers\ttea\n in   the morning",
        "Ｐｒｅｆｅｒｓ tea in the morning",  # full-width letters (NFKC)
        "Pre\u200bfers tea in the mor\u00adning",  # zero-width space, soft hyphen
        "PREFERS TEA IN THE MORNING",
        "Prefers tea in the morning.",  # a closing full stop is not part of the words
        "Prefers tea in the morning…",  # nor an ellipsis
        "Prefers\u2800tea in the morning",  # the braille blank reads as a space
        "Prefers\u3164tea in the morning",  # so does a Hangul filler between words (issue 37 #12)
        "Prefers tea\uffa0in the morning",  # and its half-width form
        "Prefers tea in the morning,",  # a closing comma is not part of the words (issue 37 #12)
        "Prefers tea in the morning ;",  # nor a semicolon
        "Prefers tea in the morning\uff0c",  # nor a full-width comma (NFKC: ",")
    ],
)
def test_post_of_the_same_words_as_a_person_reads_them_is_a_409_naming_the_entry(
    api: Any, stores: Any, variant: str
) -> None:
    api.turn_on("alice")
    first = api.add("alice", TEA)
    status, body = api.call("POST", "/v1/memory", "alice", {"text": variant})
    assert status == 409
    _refusal(body, first["id"])
    assert _entry_ids(stores, "alice") == {first["id"]}
    assert stores.entries.get_state("alice").active == 1  # fingerprint items are never counted
    assert list(_fingerprints(stores, "alice").values()) == [first["id"]]


def test_different_words_are_not_duplicates(api: Any) -> None:
    api.turn_on("alice")
    api.add("alice", TEA)
    for other in ("Prefers tea in the evening", "Prefers tea in the morning?", "Prefers coffee in the morning"):
        assert api.call("POST", "/v1/memory", "alice", {"text": other})[0] == 201


def test_a_dotted_capital_i_is_the_letter_i_and_a_dotless_one_is_another_letter(api: Any) -> None:
    api.turn_on("alice")
    first = api.add("alice", "Lives in İstanbul")
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "LIVES IN ISTANBUL"})
    assert (status, body["code"], body.get("existing_id")) == (409, "duplicate", first["id"])
    assert api.call("POST", "/v1/memory", "alice", {"text": "Lives in ıstanbul"})[0] == 201  # Turkish ı: its own letter


def test_two_users_may_keep_the_same_words_and_their_fingerprints_look_unrelated(api: Any, stores: Any) -> None:
    for user in ("alice", "bob"):
        api.turn_on(user)
        api.add(user, TEA)
    (alice_print,), (bob_print,) = _fingerprints(stores, "alice"), _fingerprints(stores, "bob")
    assert alice_print != bob_print


def test_patch_to_another_entrys_words_is_a_409_and_changes_nothing(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    tea, coffee = api.add("alice", TEA), api.add("alice", "Prefers coffee")
    before = _partition(stores, stores.entries.table, "alice")
    status, body = api.call("PATCH", f"/v1/memory/{coffee['id']}", "alice", {"text": "prefers tea in the MORNING"})
    assert status == 409
    _refusal(body, tea["id"])
    after = _partition(stores, stores.entries.table, "alice")
    assert [i for i in after if i["sk"] != "#state"] == [i for i in before if i["sk"] != "#state"]


def test_patch_keeping_its_own_words_in_another_case_is_allowed_and_keeps_one_fingerprint(
    api: Any, stores: Any
) -> None:
    api.turn_on("alice")
    tea = api.add("alice", TEA)
    status, body = api.call("PATCH", f"/v1/memory/{tea['id']}", "alice", {"text": TEA.upper()})
    assert status == 200 and body["text"] == TEA.upper()
    assert list(_fingerprints(stores, "alice").values()) == [tea["id"]]


def test_words_edited_away_can_be_added_again_and_the_new_words_are_taken(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    tea = api.add("alice", TEA)
    assert api.call("PATCH", f"/v1/memory/{tea['id']}", "alice", {"text": "Prefers green tea"})[0] == 200
    assert list(_fingerprints(stores, "alice").values()) == [tea["id"]]  # moved, not added: the old words are free
    again = api.add("alice", TEA)
    assert set(_fingerprints(stores, "alice").values()) == {tea["id"], again["id"]}
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "prefers green tea"})
    assert status == 409 and body["existing_id"] == tea["id"]


def test_a_forgotten_text_can_be_added_again_at_once(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    tea = api.add("alice", TEA)
    assert api.call("DELETE", f"/v1/memory/{tea['id']}", "alice")[0] == 204
    assert _fingerprints(stores, "alice") == {}
    assert api.call("POST", "/v1/memory", "alice", {"text": TEA})[0] == 201


def test_an_operators_forget_releases_the_words(client: Any, api: Any, stores: Any) -> None:
    api.turn_on("alice")
    tea = api.add("alice", TEA)
    assert iam_call(client, "DELETE", f"/v1/operator/memory/{tea['id']}?user_id=alice", OPERATOR_ARN)[0] == 204
    assert _fingerprints(stores, "alice") == {}
    assert api.call("POST", "/v1/memory", "alice", {"text": TEA})[0] == 201


def test_forget_all_deletes_every_fingerprint(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", TEA)
    add_proposal(stores, "alice", "Has a cat")
    assert api.call("DELETE", "/v1/memory", "alice")[1] == {"deleted": 2}
    assert _fingerprints(stores, "alice") == {} and _fingerprints(stores, "alice", "proposals") == {}
    assert api.call("POST", "/v1/memory", "alice", {"text": TEA})[0] == 201


def test_an_expired_text_can_be_added_again_before_ttl_deletes_it(api: Any, stores: Any, clock: Any) -> None:
    api.turn_on("alice")
    old = api.add("alice", TEA, expires_in_days=1)
    assert api.call("POST", "/v1/memory", "alice", {"text": TEA})[0] == 409
    clock.advance(days=1, seconds=1)
    status, new = api.call("POST", "/v1/memory", "alice", {"text": TEA})
    assert status == 201
    assert old["id"] in _entry_ids(stores, "alice")  # TTL has not run: the expired item is still stored
    assert list(_fingerprints(stores, "alice").values()) == [new["id"]]


def test_a_new_expiry_moves_with_the_fingerprint(api: Any, stores: Any, clock: Any) -> None:
    """PATCH that removes an expiry must keep the words taken after the old expiry has passed."""
    api.turn_on("alice")
    tea = api.add("alice", TEA, expires_in_days=1)
    assert api.call("PATCH", f"/v1/memory/{tea['id']}", "alice", {"expires_in_days": None})[0] == 200
    clock.advance(days=2)
    status, body = api.call("POST", "/v1/memory", "alice", {"text": TEA})
    assert status == 409 and body["existing_id"] == tea["id"]


def test_the_recount_at_the_cap_purges_expired_entries_with_their_fingerprints(
    api: Any, stores: Any, clock: Any
) -> None:
    api.turn_on("alice")
    for n in range(199):
        api.add("alice", f"note {n}")
    expiring = api.add("alice", TEA, expires_in_days=1)
    clock.advance(days=1, seconds=1)
    status, entry = api.call("POST", "/v1/memory", "alice", {"text": "something new"})
    assert status == 201
    assert expiring["id"] not in _entry_ids(stores, "alice")
    assert expiring["id"] not in _fingerprints(stores, "alice").values()
    assert len(_fingerprints(stores, "alice")) == 200


def test_accepting_a_proposal_that_repeats_an_entry_is_a_409_and_it_keeps_waiting(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    tea = api.add("alice", TEA)
    proposal = add_proposal(stores, "alice", "prefers tea  in the morning")
    corrected = add_proposal(stores, "alice", "Prefers coffee")
    status, body = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")
    assert status == 409
    _refusal(body, tea["id"])
    status, body = api.call("POST", f"/v1/memory/{corrected.id}/accept", "alice", {"text": TEA.upper()})
    assert status == 409 and body["existing_id"] == tea["id"]
    waiting = {p["id"] for p in api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]}
    assert waiting == {proposal.id, corrected.id} and _entry_ids(stores, "alice") == {tea["id"]}
    assert stores.entries.get_state("alice").waiting == 2


def test_accept_moves_the_fingerprint_from_the_proposal_to_the_entry(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    agents.register("s-1", "alice")
    agents.propose("s-1", {"id": "e1", "text": TEA})
    (waiting,) = api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]
    assert list(_fingerprints(stores, "alice", "proposals").values()) == [waiting["id"]]
    status, entry = api.call("POST", f"/v1/memory/{waiting['id']}/accept", "alice")
    assert status == 201
    assert _fingerprints(stores, "alice", "proposals") == {}
    assert list(_fingerprints(stores, "alice").values()) == [entry["id"]]


def test_a_proposal_repeating_an_entry_or_a_waiting_proposal_is_refused_duplicate_in_the_journal_only(
    api: Any, agents: Any, stores: Any
) -> None:
    """The agent is told `memory.proposed`, as for a new text (issue 37 #8): tests/stream/test_membership_oracle.py."""
    api.turn_on("alice")
    api.add("alice", TEA)
    agents.register("s-1", "alice")
    agents.register("s-2", "alice")
    agents.propose("s-1", {"id": "e1", "text": "PREFERS tea in the morning"}, {"id": "e2", "text": "Has a cat"})
    agents.propose("s-2", {"id": "e1", "text": "has  a cat"})
    outcomes = {
        **{f"s1/{k}": v for k, v in agents.outcomes("s-1").items()},
        **{f"s2/{k}": v for k, v in agents.outcomes("s-2").items()},
    }
    assert {outcome["type"] for outcome in outcomes.values()} == {"memory.proposed"}
    assert [p["text"] for p in api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]] == ["Has a cat"]
    assert stores.entries.get_state("alice").waiting == 3  # each duplicate holds a slot, as a new text would
    refused = [r.public() for r in stores.journal.all("alice") if r.action == "keep.memory.proposal_refused"]
    assert sorted(r["session_id"] for r in refused if r["reason"] == "duplicate") == ["s-1", "s-2"]


def test_an_agent_that_may_not_read_cannot_learn_from_duplicate_what_the_user_keeps(
    api: Any, agents: Any, stores: Any
) -> None:
    """`duplicate` would tell a read-blocked agent "she keeps 'Has diabetes'": it gets what a new text gets."""
    api.turn_on("alice")
    api.add("alice", "Has diabetes")
    assert api.call("PUT", "/v1/agents/helper", "alice", {"read": False})[0] == 200
    agents.register("s-1", "alice")
    agents.propose("s-1", {"id": "kept", "text": "has DIABETES"}, {"id": "new", "text": "Has asthma"})
    outcomes = agents.outcomes("s-1")
    assert outcomes["kept"]["type"] == outcomes["new"]["type"] == "memory.proposed"
    assert (
        set(outcomes["kept"]) == set(outcomes["new"])
        and outcomes["kept"]["proposal_id"] != outcomes["new"]["proposal_id"]
    )
    assert [p["text"] for p in api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]] == [
        "Has asthma"
    ]  # no pile-up
    assert [i["text"] for i in api.call("GET", "/v1/memory", "alice")[1]["items"]] == ["Has diabetes"]
    assert stores.entries.get_state("alice").waiting == 2  # the duplicate holds a slot as a new text does
    refused = [r.public() for r in stores.journal.all("alice") if r.action == "keep.memory.proposal_refused"]
    assert [(r["reason"], r["agent"]) for r in refused] == [("duplicate", "helper")]  # the user still sees it, and who


def test_a_rejected_proposal_can_be_proposed_again(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    agents.register("s-1", "alice")
    agents.propose("s-1", {"id": "e1", "text": "Has a cat"})
    (waiting,) = api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]
    assert api.call("POST", f"/v1/memory/{waiting['id']}/reject", "alice")[0] == 204
    assert _fingerprints(stores, "alice", "proposals") == {}
    agents.propose("s-1", {"id": "e2", "text": "Has a cat"})
    assert agents.outcomes("s-1")["e2"]["type"] == "memory.proposed"


def test_a_stale_fingerprint_left_by_damaged_storage_is_cleared_at_the_refusal(api: Any, stores: Any) -> None:
    """A fingerprint whose entry is gone (a restored or half-deleted table) must not refuse its words for ever."""
    api.turn_on("alice")
    tea = api.add("alice", TEA)
    stores.client.delete_item(
        TableName=stores.entries.table, Key=dynamo.dump({"user_id": "alice", "sk": "e#" + tea["id"]})
    )
    status, entry = api.call("POST", "/v1/memory", "alice", {"text": TEA})
    assert status == 201, entry
    assert list(_fingerprints(stores, "alice").values()) == [entry["id"]]


# ---- replace ----------------------------------------------------------------------------------------


def test_accept_with_replaces_at_the_cap_forgets_the_old_entry_in_the_same_transaction(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    old = api.add("alice", "Prefers coffee")
    for n in range(199):
        api.add("alice", f"note {n}")
    proposal = add_proposal(stores, "alice", "Now prefers tea")
    assert api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice")[1]["code"] == "limit_reached"
    status, entry = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice", {"replaces": old["id"]})
    assert status == 201 and entry["text"] == "Now prefers tea"
    ids = _entry_ids(stores, "alice")
    assert len(ids) == 200 and entry["id"] in ids and old["id"] not in ids
    state = stores.entries.get_state("alice")
    assert (state.active, state.waiting) == (200, 0)
    assert old["id"] not in _fingerprints(stores, "alice").values() and len(_fingerprints(stores, "alice")) == 200
    assert (
        api.call("POST", "/v1/memory", "alice", {"text": "Prefers coffee"})[1]["code"] == "limit_reached"
    )  # not a duplicate


def test_accept_with_replaces_journals_the_replaced_entrys_forget_with_its_receipt(
    api: Any, stores: Any, clock: Any
) -> None:
    """The replaced entry is forgotten as finally as by DELETE, so it gets the same receipt (issue 37 #12)."""
    api.turn_on("alice")
    old = api.add("alice", "Prefers coffee")
    proposal = add_proposal(stores, "alice", "Now prefers tea")
    assert api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice", {"replaces": old["id"]})[0] == 201
    forgets = [r.public() for r in stores.journal.all("alice") if r.action == "keep.memory.forget"]
    assert len(forgets) == 1
    (row,) = forgets
    assert row["unrecoverable_by"] > row["at"]
    assert "coffee" not in repr(row) and "tea" not in repr(row)  # never the text
    stored = stores.entries.raw_entry("alice", old["id"])
    assert stored is None and api.call("DELETE", f"/v1/memory/{old['id']}", "alice")[0] == 404


def test_replacing_an_entry_with_the_same_words_keeps_one_fingerprint(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    old = api.add("alice", TEA)
    proposal = add_proposal(stores, "alice", TEA.upper())
    status, entry = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice", {"replaces": old["id"]})
    assert status == 201
    assert _entry_ids(stores, "alice") == {entry["id"]}
    assert list(_fingerprints(stores, "alice").values()) == [entry["id"]]


@pytest.mark.parametrize("whose", ["missing", "bob", "expired", "not_an_id"])
def test_replaces_naming_no_live_entry_of_the_user_is_404_and_changes_nothing(
    api: Any, stores: Any, clock: Any, whose: str
) -> None:
    api.turn_on("alice")
    api.turn_on("bob")
    bobs = api.add("bob", "Bob's note")
    expiring = api.add("alice", "soon gone", expires_in_days=1)
    target = {"missing": new_id(), "bob": bobs["id"], "expired": expiring["id"], "not_an_id": "x"}[whose]
    clock.advance(days=2)
    proposal = add_proposal(stores, "alice", "Now prefers tea")
    before = (_partition(stores, stores.entries.table, "alice"), _partition(stores, stores.proposals.table, "alice"))
    status, body = api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice", {"replaces": target})
    assert status == 404 and body == {"code": "not_found", "message": "No such entry."}
    assert (
        _partition(stores, stores.entries.table, "alice"),
        _partition(stores, stores.proposals.table, "alice"),
    ) == before
    assert api.call("GET", "/v1/memory", "bob")[1]["items"][0]["id"] == bobs["id"]


def test_replaces_must_be_a_string(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    proposal = add_proposal(stores, "alice", "x")
    assert (
        api.call("POST", f"/v1/memory/{proposal.id}/accept", "alice", {"replaces": 7})[1]["code"] == "invalid_request"
    )


def test_accept_whose_fingerprint_another_proposal_holds_still_works_and_leaves_that_one(
    api: Any, agents: Any, stores: Any
) -> None:
    """Damaged storage: the proposal's fingerprint item names someone else. Accepting must not fail or take it."""
    api.turn_on("alice")
    agents.register("s-1", "alice")
    agents.propose("s-1", {"id": "e1", "text": "Has a cat"})
    (waiting,) = api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]
    (print_key,) = _fingerprints(stores, "alice", "proposals")
    other = new_id()
    stores.client.put_item(
        TableName=stores.proposals.table, Item=dynamo.dump({"user_id": "alice", "sk": print_key, "held_by": other})
    )
    status, entry = api.call("POST", f"/v1/memory/{waiting['id']}/accept", "alice")
    assert status == 201, entry
    assert _fingerprints(stores, "alice", "proposals") == {print_key: other}  # not released: it is not the proposal's
    assert list(_fingerprints(stores, "alice").values()) == [entry["id"]]


def test_forget_whose_fingerprint_another_entry_holds_still_works_and_leaves_that_one(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    tea = api.add("alice", TEA)
    (print_key,) = _fingerprints(stores, "alice")
    other = api.add("alice", "Prefers coffee")
    stores.client.put_item(
        TableName=stores.entries.table, Item=dynamo.dump({"user_id": "alice", "sk": print_key, "held_by": other["id"]})
    )
    assert api.call("DELETE", f"/v1/memory/{tea['id']}", "alice")[0] == 204
    assert _fingerprints(stores, "alice")[print_key] == other["id"]
    assert _entry_ids(stores, "alice") == {other["id"]}


def test_forgetting_an_agent_releases_the_fingerprints_of_what_it_deleted(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    mine = api.add("alice", TEA)
    agents.register("s-1", "alice", agent="chatty")
    agents.propose("s-1", {"id": "e1", "text": "Has a cat"}, {"id": "e2", "text": "Lives in Lyon"})
    first, _ = api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]
    assert api.call("POST", f"/v1/memory/{first['id']}/accept", "alice")[0] == 201
    assert api.call("POST", "/v1/agents/chatty/forget", "alice")[1] == {"deleted": 2}
    assert list(_fingerprints(stores, "alice").values()) == [mine["id"]]  # the user's own entry keeps its words
    assert _fingerprints(stores, "alice", "proposals") == {}
    agents.register("s-2", "alice", agent="chatty")
    agents.propose("s-2", {"id": "e1", "text": "Has a cat"}, {"id": "e2", "text": "Lives in Lyon"})
    assert {o["type"] for o in agents.outcomes("s-2").values()} == {"memory.proposed"}


def test_without_the_cancellations_item_the_holder_is_read_and_still_named(
    api: Any, agents: Any, stores: Any, monkeypatch: Any
) -> None:
    """AWS returns the refusing item (ReturnValuesOnConditionCheckFailure=ALL_OLD); a client that drops it
    must cost one GetItem on the refusal, never a wrong answer."""
    api.turn_on("alice")
    tea = api.add("alice", TEA)
    monkeypatch.setattr(dynamo.TransactionCancelled, "item", lambda self, index: None)
    status, body = api.call("POST", "/v1/memory", "alice", {"text": TEA.upper()})
    assert status == 409 and body["existing_id"] == tea["id"]
    agents.register("s-1", "alice")
    agents.propose(
        "s-1", {"id": "e1", "text": TEA}, {"id": "e2", "text": "Has a cat"}, {"id": "e3", "text": "has a CAT"}
    )
    reasons = {k: v.get("reason") for k, v in agents.outcomes("s-1").items()}
    assert reasons == {"e1": None, "e2": None, "e3": None}  # every agent is told "proposed" (issue 37 #8) ...
    refused = [r.public() for r in stores.journal.all("alice") if r.action == "keep.memory.proposal_refused"]
    assert [r["reason"] for r in refused] == ["duplicate", "duplicate"]  # ... the person's journal says why
    assert [p["text"] for p in api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]] == ["Has a cat"]


def test_an_agents_forget_releases_a_fingerprint_whose_entry_went_in_a_chunk_before_a_cancelled_one(
    api: Any, stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """60 of an agent's entries, one missing its fingerprint (half-written storage): the other pairs straddle the
    98-delete transactions, so one entry goes in the first and its fingerprint would go in the second. The user
    forgets one entry meanwhile, which cancels the second; the next round must still release the first's fingerprint."""
    from types import SimpleNamespace

    from bench.agents_bench import AGENT, _seed_agent_entries
    from chalicelib.services import forget_all

    api.turn_on("alice")
    _seed_agent_entries(SimpleNamespace(stores=stores), "alice", 60)
    _, entries, prints = stores.entries.stored_all("alice")
    first = next(f for f in prints if f.owner == entries[0].id)
    stores.client.delete_item(
        TableName=stores.entries.table, Key=stores.entries.fingerprints.key("alice", first.fingerprint)
    )
    real, sent = forget_all.transact, []

    def concurrently(client: Any, actions: list[dict[str, Any]]) -> Any:
        sent.append(len(actions))
        if (
            len(sent) == 2
        ):  # the second chunk: the user's forget of its last entry (and that entry's fingerprint) lands first
            last = entries[-1]
            last_print = next(f for f in prints if f.owner == last.id)
            stores.client.delete_item(
                TableName=stores.entries.table, Key=dynamo.dump({"user_id": "alice", "sk": "e#" + last.id})
            )
            stores.client.delete_item(
                TableName=stores.entries.table, Key=stores.entries.fingerprints.key("alice", last_print.fingerprint)
            )
        return real(client, actions)

    monkeypatch.setattr(forget_all, "transact", concurrently)
    status, body = api.call("POST", f"/v1/agents/{AGENT}/forget", "alice")

    assert status == 200 and len(sent) >= 3, (status, body, sent)
    assert _entry_ids(stores, "alice") == set()
    assert _fingerprints(stores, "alice") == {}  # none left naming an entry that is gone
