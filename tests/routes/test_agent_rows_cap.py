"""Issue 37 #10: a person's agent rows are bounded (docs/agents.md), counted under a condition, never evicted
to make room, and `GET /v1/agents` pages; the export leaves out agents never set."""

from __future__ import annotations

import json
import threading
from typing import Any

from chalicelib.storage import dynamo
from chalicelib.storage.agents import ROW_CAP, SEEN_ROW_CAP
from tests.support.iam import calling_as
from tests.support.stack import HOST_ARN


def _agent_rows(stores: Any, user: str) -> list[str]:
    items = dynamo.query_partition(stores.client, stores.entries.table, "user_id", user, consistent=True)
    return [str(i["sk"]) for i in items if str(i["sk"]).startswith("a#")]


def _counter(stores: Any, user: str) -> int:
    raw = stores.client.get_item(
        TableName=stores.entries.table, Key=dynamo.dump({"user_id": user, "sk": "#state"}), ConsistentRead=True
    )
    return int(dynamo.load(raw["Item"]).get("agent_rows", 0))


def _read_as(agents: Any, user: str, agent: str) -> list[dict[str, Any]]:
    agents.register(f"s-{agent}", user, agent=agent)
    return agents.items(f"s-{agent}")


def _all_pages(api: Any, user: str, limit: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = f"/v1/agents?limit={limit}"
    while True:
        status, body = api.call("GET", path, user)
        assert status == 200, body
        assert len(body["agents"]) <= limit
        rows += body["agents"]
        if body["next"] is None:
            return rows
        path = f"/v1/agents?limit={limit}&next={body['next']}"


def test_agents_reading_make_rows_only_up_to_the_cap_and_a_new_one_still_reads(
    api: Any, agents: Any, stores: Any
) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    api.call("PUT", "/v1/agents/blocked-one", "alice", {"read": False})
    for n in range(SEEN_ROW_CAP + 5):
        _read_as(agents, "alice", f"bot{n}x")
    rows = _agent_rows(stores, "alice")
    assert len(rows) == SEEN_ROW_CAP == _counter(stores, "alice")
    assert "a#blockedone" in rows  # the person's block was never evicted to make room
    # Beyond the cap an agent still reads under the seed's gates; the journal names it; no row is made.
    assert [i["text"] for i in _read_as(agents, "alice", "latecomer")] == ["likes green tea"]
    assert "a#latecomer" not in _agent_rows(stores, "alice")
    assert any(
        r.public().get("agent") == "latecomer" for r in stores.journal.all("alice") if r.action == "keep.memory.context"
    )
    assert _read_as(agents, "alice", "Blocked_One") == []  # and the block still holds


def test_the_person_can_still_set_agents_at_the_cap_up_to_the_person_cap(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    for n in range(SEEN_ROW_CAP):
        _read_as(agents, "alice", f"bot{n}x")
    for n in range(ROW_CAP - SEEN_ROW_CAP):
        status, row = api.call("PUT", f"/v1/agents/set{n}x", "alice", {"propose": False})
        assert status == 200 and row["propose"] is False, row
    status, body = api.call("PUT", "/v1/agents/one-too-many", "alice", {"read": False})
    assert status == 409 and body["code"] == "limit_reached", body
    assert len(_agent_rows(stores, "alice")) == ROW_CAP == _counter(stores, "alice")
    assert "a#onetoomany" not in _agent_rows(stores, "alice")
    assert not [
        r
        for r in stores.journal.all("alice")
        if r.action == "keep.memory.agent_settings" and r.public().get("agent") == "one-too-many"
    ]
    # A row that exists can still be changed at the cap.
    assert api.call("PUT", "/v1/agents/bot3x", "alice", {"read": False})[0] == 200


def test_proposals_from_new_names_make_no_rows(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    for n in range(6):
        agents.register(f"p{n}", "alice", agent=f"namer{n}x")
        agents.propose(f"p{n}", {"id": "e1", "text": f"Fact number {n}"})
        assert agents.outcomes(f"p{n}")["e1"]["type"] == "memory.proposed"
    assert _agent_rows(stores, "alice") == [] and _counter(stores, "alice") == 0
    listed = api.call("GET", "/v1/agents", "alice")[1]["agents"]
    assert len(listed) == 6 and all(r["waiting"] == 1 and r["last_proposal_at"] for r in listed)


def test_concurrent_reads_by_new_agents_never_pass_the_cap(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    for n in range(SEEN_ROW_CAP - 3):
        _read_as(agents, "alice", f"bot{n}x")
    names = [f"racer{n}x" for n in range(8)]
    for name in names:
        agents.register(f"s-{name}", "alice", agent=name)
    answers: list[int] = []

    def read(name: str) -> None:
        response = agents.client.http.get(f"/v1/sessions/s-{name}/memory")
        answers.append(
            len(json.loads(response.body)["items"]) if response.status_code == 200 else -response.status_code
        )

    threads = [threading.Thread(target=read, args=(name,)) for name in names]
    # One identity for all the threads: tests/support/iam.py's `calling_as` swaps a class attribute, which
    # threads entering and leaving it each on their own would leave swapped for the tests after this one.
    with calling_as(HOST_ARN):
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert answers == [1] * len(names)  # every one read
    assert len(_agent_rows(stores, "alice")) == SEEN_ROW_CAP == _counter(stores, "alice")


def test_get_agents_pages_with_limit_and_an_opaque_next(api: Any, agents: Any) -> None:
    from tests.support.openapi_check import user

    api.turn_on("alice")
    for n in range(7):
        _read_as(agents, "alice", f"bot{n}x")
    api.call("PUT", "/v1/agents/quiet", "alice", {"propose": False})
    status, first = user(api, "GET", "/v1/agents?limit=3", "alice", template="/v1/agents")
    assert status == 200 and len(first["agents"]) == 3 and isinstance(first["next"], str)
    assert "bot" not in first["next"]  # opaque: names no agent in clear
    rows = _all_pages(api, "alice", 3)
    assert [r["agent"] for r in rows] == [
        r["agent"] for r in api.call("GET", "/v1/agents?limit=200", "alice")[1]["agents"]
    ]
    assert len(rows) == 8 and len({r["agent"] for r in rows}) == 8
    assert rows[-1]["agent"] == "quiet"  # set, never used: after every agent that used memory
    for bad in ("not-a-cursor", "W10", "%00"):
        status, body = api.call("GET", f"/v1/agents?next={bad}", "alice")
        assert status == 400 and body["code"] == "invalid_request", body
    for bad_limit in ("0", "201", "x"):
        assert api.call("GET", f"/v1/agents?limit={bad_limit}", "alice")[0] == 400


def test_the_export_leaves_out_agents_never_set(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    for n in range(5):
        _read_as(agents, "alice", f"bot{n}x")
    api.call("PUT", "/v1/agents/quiet", "alice", {"propose": False})
    _, export = api.call("GET", "/v1/memory/export", "alice")
    assert [r["agent"] for r in export["agents"]] == ["quiet"]


def test_rows_stored_before_the_cap_are_folded_once_keeping_every_block(api: Any, agents: Any, stores: Any) -> None:
    """A partition from before this change: 130 rows of agents that only read, a block under an unfolded key, no
    counter and no fold mark. The first context fetch folds it: every block kept, the 100 most recent others."""
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    stores.client.update_item(
        TableName=stores.entries.table,
        Key=dynamo.dump({"user_id": "alice", "sk": "#state"}),
        UpdateExpression="REMOVE agent_keys, agent_rows",
    )
    with _Batch(stores) as put:
        for n in range(130):
            put(
                {
                    "user_id": "alice",
                    "sk": f"a#Bot-{n:03d}x",
                    "last_read_at": f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z",
                }
            )
        put(
            {
                "user_id": "alice",
                "sk": "a#Blocked_One",
                "read": False,
                "propose": False,
                "set_at": "2025-01-01T00:00:00Z",
            }
        )
    assert [i["text"] for i in _read_as(agents, "alice", "newcomer")] == ["likes green tea"]
    rows = _agent_rows(stores, "alice")
    assert "a#blockedone" in rows and "a#Blocked_One" not in rows
    assert len(rows) == SEEN_ROW_CAP + 1 == _counter(stores, "alice")  # 100 seen + the block; the newcomer got none
    assert "a#bot129x" in rows and "a#bot000x" not in rows  # the most recently used were kept
    assert _read_as(agents, "alice", "blocked-one") == []
    agents.propose("s-blocked-one", {"id": "e1", "text": "Sneaks in"})
    assert agents.outcomes("s-blocked-one")["e1"]["reason"] == "agent_blocked"


class _Batch:
    """BatchWriteItem, 25 items a call: rows written straight to the table, as the older code left them."""

    def __init__(self, stores: Any) -> None:
        self.stores = stores
        self.items: list[dict[str, Any]] = []

    def __enter__(self) -> Any:
        return self.items.append

    def __exit__(self, *_: Any) -> None:
        for first in range(0, len(self.items), 25):
            requests = [{"PutRequest": {"Item": dynamo.dump(i)}} for i in self.items[first : first + 25]]
            self.stores.client.batch_write_item(RequestItems={self.stores.entries.table: requests})


def test_a_limit_of_thousands_of_digits_or_a_deeply_nested_next_is_a_400_not_a_500(api: Any) -> None:
    """Python refuses int() of more than 4,300 digits (ValueError) and json of ~1,000 nested lists
    (RecursionError): both reached the listing unguarded and answered 500."""
    import base64

    api.turn_on("alice")
    assert api.call("PUT", "/v1/agents/helper", "alice", {"read": False})[0] == 200
    nested = base64.urlsafe_b64encode(b"[" * 1500).decode().rstrip("=")
    for query in ("limit=" + "9" * 5000, "limit=" + "0" * 5000 + "1", "next=" + nested):
        status, body = api.call("GET", f"/v1/agents?{query}", "alice")
        assert status == 400 and body["code"] == "invalid_request", (query[:20], status, body)
    status, journal = api.call("GET", "/v1/memory/journal?limit=" + "9" * 5000, "alice")
    assert status == 400 and journal["code"] == "invalid_request", (status, journal)
    # Nothing lost: the block is still listed and stored.
    [row] = api.call("GET", "/v1/agents", "alice")[1]["agents"]
    assert (row["agent"], row["read"]) == ("helper", False)


def test_the_one_time_fold_never_drops_a_row_saying_no_whatever_its_times(api: Any, agents: Any, stores: Any) -> None:
    """Rows beyond the 100 most recently used are dropped only when the person never set them. A block whose
    `set_at` is missing or not an instant (altered, half-written, restored) was counted as "only seen", sorted
    last, and deleted: the agent then read and proposed freely."""
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    stores.client.update_item(
        TableName=stores.entries.table,
        Key=dynamo.dump({"user_id": "alice", "sk": "#state"}),
        UpdateExpression="REMOVE agent_keys, agent_rows",
    )
    with _Batch(stores) as put:
        for n in range(120):
            put(
                {
                    "user_id": "alice",
                    "sk": f"a#Bot-{n:03d}x",
                    "last_read_at": f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z",
                }
            )
        put({"user_id": "alice", "sk": "a#helper", "read": False, "propose": False})  # no set_at
        put({"user_id": "alice", "sk": "a#Spy", "propose": False, "set_at": "yesterday"})  # set_at not an instant
    assert [i["text"] for i in _read_as(agents, "alice", "newcomer")] == ["likes green tea"]
    rows = _agent_rows(stores, "alice")
    assert "a#helper" in rows and "a#spy" in rows, sorted(rows)[-5:]
    assert _read_as(agents, "alice", "Helper") == []
    agents.propose("s-Helper", {"id": "e1", "text": "Sneaks in"})
    agents.register("s-spy", "alice", agent="spy")
    agents.propose("s-spy", {"id": "e2", "text": "Sneaks in too"})
    assert agents.outcomes("s-Helper")["e1"]["reason"] == "agent_blocked"
    assert agents.outcomes("s-spy")["e2"]["reason"] == "agent_blocked"
    assert stores.proposals.list("alice") == []
