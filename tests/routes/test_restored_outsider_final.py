"""An outsider's rerun of issue 37 #11 against the merged product: a duplicate's waiting slot (or a proposal) copied
before a forget and put back after it. Such an item was never counted, yet forgetting it again was: the person's
waiting counter went below zero, and the waiting cap above 50 (docs/agents.md, Words of a forgotten item put back)."""

from __future__ import annotations

from typing import Any

from chalicelib.storage import dynamo

TEA, CAT = "Prefers tea in the morning", "Has a cat called Miso"


def _items(stores: Any, table: str, user: str = "alice") -> list[dict[str, Any]]:
    return [dynamo.dump(i) for i in dynamo.query_partition(stores.client, table, "user_id", user, consistent=True)]


def _restore(
    stores: Any, table: str, backup: list[dict[str, Any]], keep: Any = lambda item: item["sk"]["S"] != "#state"
) -> None:
    for item in backup:
        if keep(item):
            stores.client.put_item(TableName=table, Item=item)
    stores.keyring.cache.drop_prefix("")  # a cold container


def _slot_restored(api: Any, agents: Any, stores: Any) -> None:
    """A duplicate's waiting slot, copied, freed by forgetting its agent, and put back (the counter as it is now)."""
    api.turn_on("alice")
    api.add("alice", TEA)
    agents.register("s-1", "alice", agent="spy")
    agents.propose("s-1", {"id": "e1", "text": TEA.upper()}, {"id": "e2", "text": CAT})
    assert stores.entries.get_state("alice").waiting == 2
    backup = _items(stores, stores.proposals.table)
    assert api.call("POST", "/v1/agents/spy/forget", "alice", {})[0] == 200
    assert stores.entries.get_state("alice").waiting == 0
    _restore(stores, stores.proposals.table, backup)


def test_a_restored_waiting_slot_then_forget_all_never_500s_nor_leaves_the_count_wrong(
    api: Any, agents: Any, stores: Any
) -> None:
    _slot_restored(api, agents, stores)
    status, body = api.call("DELETE", "/v1/memory", "alice")
    assert status == 200, body
    assert stores.entries.get_state("alice").waiting == 0
    assert [i for i in _items(stores, stores.proposals.table) if i["sk"]["S"].startswith("p#")] == []
    api.turn_on("alice")
    agents.register("s-2", "alice", agent="other")
    agents.propose("s-2", *({"id": f"e{n}", "text": f"New text {n}"} for n in range(5)))
    assert stores.entries.get_state("alice").waiting == 5 == len(stores.proposals.list("alice"))


def test_a_restored_waiting_slot_then_forgetting_its_agent_again_never_500s_nor_leaves_the_count_wrong(
    api: Any, agents: Any, stores: Any
) -> None:
    _slot_restored(api, agents, stores)
    status, body = api.call("POST", "/v1/agents/spy/forget", "alice", {})
    assert status == 200, body
    assert stores.entries.get_state("alice").waiting == 0
    agents.register("s-2", "alice", agent="other")
    agents.propose("s-2", {"id": "e1", "text": CAT})
    assert stores.entries.get_state("alice").waiting == 1 == len(stores.proposals.list("alice"))


def test_a_restored_waiting_slot_then_forgetting_its_agent_while_another_waits_leaves_the_count_true(
    api: Any, agents: Any, stores: Any
) -> None:
    _slot_restored(api, agents, stores)
    agents.register("s-2", "alice", agent="other")
    agents.propose("s-2", *({"id": f"e{n}", "text": f"Other text {n}"} for n in range(3)))
    assert api.call("POST", "/v1/agents/spy/forget", "alice", {})[0] == 200
    assert stores.entries.get_state("alice").waiting == 3 == len(stores.proposals.list("alice"))


def test_a_restored_slot_freed_again_by_the_waiting_caps_recount_never_lets_a_51st_suggestion_wait(
    api: Any, agents: Any, stores: Any, clock: Any
) -> None:
    from chalicelib.models import MAX_WAITING_PROPOSALS

    api.turn_on("alice")
    api.add("alice", TEA)
    agents.register("s-0", "alice", agent="spy")
    agents.propose("s-0", {"id": "dup", "text": TEA.upper()})  # a slot
    backup = [i for i in _items(stores, stores.proposals.table) if i.get("slot")]
    for n in range(1, 11):
        agents.register(f"s-{n}", "alice", agent="spy")
        agents.propose(f"s-{n}", *({"id": f"e{i}", "text": f"Fill {n}-{i}"} for i in range(5)))
    clock.advance(days=31)
    agents.register("s-late", "alice", agent="spy")
    agents.propose("s-late", {"id": "e1", "text": "A later new text"})  # the recount frees the slot, counted
    assert len(stores.proposals.list("alice")) == MAX_WAITING_PROPOSALS
    _restore(stores, stores.proposals.table, backup)  # the slot put back, uncounted
    agents.register("s-later", "alice", agent="spy")
    agents.propose("s-later", {"id": "e1", "text": "One more new text"})
    assert len(stores.proposals.list("alice")) == MAX_WAITING_PROPOSALS  # never a 51st
    assert stores.entries.get_state("alice").waiting == MAX_WAITING_PROPOSALS


def test_a_waiting_slot_put_back_after_its_agents_forget_is_shown_nowhere_and_its_reject_moves_no_counter(
    api: Any, agents: Any, stores: Any
) -> None:
    _slot_restored(api, agents, stores)
    (slot,) = [i["sk"]["S"][2:] for i in _items(stores, stores.proposals.table) if i.get("slot")]
    assert api.call("GET", "/v1/memory", "alice")[1]["repeats"] == []  # its key went with the forget: not believed
    assert api.call("POST", f"/v1/memory/{slot}/reject", "alice")[0] == 404
    assert stores.entries.get_state("alice").waiting == 0
