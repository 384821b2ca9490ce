"""Issue 37 #9: a block holds for the agent as a person reads its name (chalicelib/agent_names.py), through the
real routes and moto's stream, and a block stored before names were folded still holds."""

from __future__ import annotations

import re
from typing import Any

import pytest

from chalicelib.agent_names import fold_agent_name
from chalicelib.storage import dynamo

# One spelling more than a DynamoDB IN list can hold (100 values).
PAST_ONE_IN = 101
SPELLINGS = ["Helper", "HELPER", "helper.", "helper_", "helper2", ".helper", "helper-v3", "he--lper", "Helper_2"]


def _agent_rows(stores: Any, user: str) -> dict[str, dict[str, Any]]:
    items = dynamo.query_partition(stores.client, stores.entries.table, "user_id", user, consistent=True)
    return {str(i["sk"]): i for i in items if str(i["sk"]).startswith("a#")}


@pytest.mark.parametrize(
    ("name", "folded"),
    [
        ("helper", "helper"),
        *((s, "helper") for s in SPELLINGS),
        ("claude--code", "claudecode"),
        ("Claude Code 2", "claudecode"),
        ("claude_code", "claudecode"),
        ("\u0441laude-code", "claudecode"),
        ("cursor/1.2", "cursor"),
        ("ｈｅｌｐｅｒ", "helper"),
        ("he\u200blper", "helper"),
        ("gpt-4o", "gpt4o"),
        ("2024", "2024"),
        ("HELPER\u2122", "helper"),
        ("helper\u2120", "helper"),
        ("\u0131gnite", "ignite"),
        ("\u0130GNITE", "ignite"),
    ],
)
def test_the_fold_of_agent_names(name: str, folded: str) -> None:
    assert fold_agent_name(name) == folded


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_block_on_helper_holds_for_every_spelling(api: Any, agents: Any, stores: Any, spelling: str) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    assert api.call("PUT", "/v1/agents/helper", "alice", {"read": False, "propose": False})[0] == 200
    agents.register("s1", "alice", agent=spelling)
    assert agents.items("s1") == []
    agents.propose("s1", {"id": "e1", "text": "Walks the dog at six"})
    assert agents.outcomes("s1")["e1"] == {"type": "memory.proposal_refused", "reason": "agent_blocked"}
    assert stores.proposals.list("alice") == []
    # Stored: one row, keyed by the folded name, still naming the agent as the person set it.
    rows = _agent_rows(stores, "alice")
    assert list(rows) == ["a#helper"] and rows["a#helper"]["name"] == "helper"
    assert rows["a#helper"]["read"] is False and rows["a#helper"]["propose"] is False


def test_a_block_set_on_a_spelling_holds_for_the_plain_name_and_lists_once(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    status, row = api.call("PUT", "/v1/agents/Helper_2", "alice", {"read": False})
    assert status == 200 and row["agent"] == "Helper_2" and row["read"] is False
    for session, agent in (("s1", "helper"), ("s2", "HELPER")):
        agents.register(session, "alice", agent=agent)
        assert agents.items(session) == []
    listed = api.call("GET", "/v1/agents", "alice")[1]["agents"]
    assert [(r["agent"], r["read"]) for r in listed] == [("Helper_2", False)]


def test_a_block_stored_before_names_were_folded_still_blocks(api: Any, agents: Any, stores: Any) -> None:
    """A row `a#Helper` written by the code before this change (no `name`, no counter, no fold mark)."""
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    state_key = dynamo.dump({"user_id": "alice", "sk": "#state"})
    stores.client.update_item(
        TableName=stores.entries.table, Key=state_key, UpdateExpression="REMOVE agent_keys, agent_rows"
    )
    for sk, switches in (
        ("a#Helper", {"read": False, "propose": False}),
        ("a#helper_", {"set_at": "2026-01-01T00:00:00Z"}),
    ):
        stores.client.put_item(
            TableName=stores.entries.table, Item=dynamo.dump({"user_id": "alice", "sk": sk, **switches})
        )
    agents.register("s1", "alice", agent="helper")
    agents.propose("s1", {"id": "e1", "text": "Walks the dog at six"})  # before any read: the proposal's own path
    assert agents.outcomes("s1")["e1"] == {"type": "memory.proposal_refused", "reason": "agent_blocked"}
    assert agents.items("s1") == []
    assert stores.proposals.list("alice") == []
    rows = _agent_rows(stores, "alice")
    assert list(rows) == ["a#helper"] and rows["a#helper"]["read"] is False and rows["a#helper"]["propose"] is False
    [listed] = api.call("GET", "/v1/agents", "alice")[1]["agents"]
    assert (listed["read"], listed["propose"]) == (False, False)
    # The person's own choice then wins over the older row's, for the switch given only.
    assert api.call("PUT", "/v1/agents/helper", "alice", {"read": True})[0] == 200
    assert [i["text"] for i in agents.items("s1")] == ["likes green tea"]
    agents.propose("s1", {"id": "e2", "text": "Walks the dog at seven"})
    assert agents.outcomes("s1")["e2"]["reason"] == "agent_blocked"


def test_an_older_row_read_before_folding_still_empties_the_context(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    stores.client.put_item(
        TableName=stores.entries.table, Item=dynamo.dump({"user_id": "alice", "sk": "a#HELPER", "read": False})
    )
    agents.register("s1", "alice", agent="helper")
    assert agents.items("s1") == []


def test_other_agents_are_not_caught_by_a_block(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    api.call("PUT", "/v1/agents/helper", "alice", {"read": False})
    for session, agent in (("s1", "helpers-friend"), ("s2", "claude-code"), ("s3", "help")):
        agents.register(session, "alice", agent=agent)
        assert [i["text"] for i in agents.items(session)] == ["likes green tea"], agent


def test_forgetting_an_agent_takes_what_came_from_every_spelling_of_its_name(
    api: Any, agents: Any, stores: Any
) -> None:
    api.turn_on("alice")
    own = api.add("alice", "my own note")["id"]
    for session, agent, text in (
        ("s1", "Helper", "from Helper"),
        ("s2", "helper_", "from helper_"),
        ("s3", "calm", "from calm"),
    ):
        agents.register(session, "alice", agent=agent)
        agents.propose(session, {"id": "e1", "text": text})
    listed = {r["agent"]: r["waiting"] for r in api.call("GET", "/v1/agents", "alice")[1]["agents"]}
    assert sorted(listed.values()) == [1, 2] and listed["calm"] == 1  # Helper and helper_ are one row
    assert api.call("POST", "/v1/agents/helper/forget", "alice")[1] == {"deleted": 2}
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [e["id"] for e in view["items"]] == [own] and [p["agent"] for p in view["proposals"]] == ["calm"]
    assert [p.agent for p in stores.proposals.list("alice")] == ["calm"]


def test_an_altered_fold_mark_is_folded_again_never_a_refusal(api: Any, agents: Any, stores: Any) -> None:
    """Stored data is hostile: a state item whose fold mark was altered must not refuse every proposal."""
    api.turn_on("alice")
    stores.client.update_item(
        TableName=stores.entries.table,
        Key=dynamo.dump({"user_id": "alice", "sk": "#state"}),
        UpdateExpression="SET agent_keys = :x",
        ExpressionAttributeValues=dynamo.values(x="x"),
    )
    agents.register("s1", "alice", agent="helper")
    agents.propose("s1", {"id": "e1", "text": "Walks the dog at six"})
    assert agents.outcomes("s1")["e1"]["type"] == "memory.proposed"
    assert [p.agent for p in stores.proposals.list("alice")] == ["helper"]


def test_forgetting_an_agent_takes_what_came_from_more_than_99_spellings_of_its_name(
    api: Any, agents: Any, stores: Any
) -> None:
    """Each delete's condition lists the spellings (IN takes 100 values), and only the first 98 were listed:
    an agent that wrote under `helper1` … `helper110` kept its entries from the others after "forget helper".
    101 spellings: one past what a single IN can hold."""
    from tests.routes.test_agent_grants import _accepted_from, _journal

    api.turn_on("alice")
    for n in range(PAST_ONE_IN):
        _accepted_from(api, agents, "alice", f"s{n}", [f"Note number {n} about tea"], f"helper{n + 1}")
    assert len(api.call("GET", "/v1/memory", "alice")[1]["items"]) == PAST_ONE_IN
    # moto takes an IN list of any length; DynamoDB does not ("Condition and filter expressions, operators,
    # and functions in DynamoDB", Comparators: "The list can contain up to 100 values"). So count what is sent.
    sizes: list[int] = []

    def count(params: dict[str, Any], **_: Any) -> None:
        sizes.extend(_in_lists(params))

    events = stores.client.meta.events  # the client is lent to later tests: the counter leaves with this one
    events.register("provide-client-params.dynamodb", count)
    try:
        status, body = api.call("POST", "/v1/agents/helper/forget", "alice")
    finally:
        events.unregister("provide-client-params.dynamodb", count)
    assert status == 200, body
    assert sizes and max(sizes) <= 100, sorted(set(sizes))
    left = [e for e in api.call("GET", "/v1/memory", "alice")[1]["items"] if e.get("origin") == "agent"]
    assert (body["deleted"], len(left)) == (PAST_ONE_IN, 0), (body, len(left))
    _, stored = stores.entries.stored("alice")
    assert [e.agent for e in stored] == []
    [row] = _journal(stores, "alice", "keep.memory.forget_agent")  # one request, one journal row
    assert (row["agent"], row["entries"], row["proposals"]) == ("helper", PAST_ONE_IN, 0)


_IN_LIST = re.compile(r"\bIN \(([^)]*)\)")


def _in_lists(params: dict[str, Any]) -> list[int]:
    """How many values each IN list in a DynamoDB call's condition expressions holds (transactions included)."""
    requests = [next(iter(action.values())) for action in params.get("TransactItems", [])] or [params]
    return [
        len(found.split(","))
        for request in requests
        for found in _IN_LIST.findall(str(request.get("ConditionExpression", "")))
    ]
