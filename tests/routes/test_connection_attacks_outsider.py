"""More outsider attacks on connections through the real routes against moto (issue 38's red team): what an
erased account leaves behind, and what a suggestion's outcome tells an agent about notes it cannot read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.services import connections as connections_service
from chalicelib.storage import dynamo
from tests.support.iam import iam_call
from tests.support.raw_storage import every_item
from tests.support.stack import OPERATOR_ARN


@pytest.fixture(autouse=True)
def _no_cached_lookup() -> None:
    connections_service.forget_cache()


def _connect(api: Any, user: str, agent: str = "claude-code") -> dict[str, Any]:
    status, body = api.call("POST", "/v1/connections", user, {"agent": agent})
    assert status == 201, body
    return dict(body)


def _call(client: Any, method: str, path: str, token: str, body: Any = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"}
    response = getattr(client.http, method.lower())(
        path, headers=headers, **({"body": json.dumps(body)} if body is not None else {})
    )
    return response.status_code, json.loads(response.body) if response.body else None


def _naming(dynamodb: Any, user: str) -> list[dict[str, Any]]:
    """Every stored item that holds `user` in any attribute (the lookup row names its owner in `owner`)."""
    items = [dynamo.load(raw) for raws in every_item(dynamodb).values() for raw in raws]
    return [item for item in items if user in (v for v in item.values() if isinstance(v, str))]


def test_erasing_an_account_erases_its_connections_and_their_tokens_stop_everywhere(
    api: Any, client: Any, dynamodb: Any
) -> None:
    api.turn_on("alice")
    api.turn_on("bob")
    alices = [_connect(api, "alice"), _connect(api, "alice", "cursor")]
    bobs = _connect(api, "bob")
    assert (
        _call(client, "GET", "/v1/agent/memory", alices[0]["token"])[0] == 200
    )  # its lookup is cached in this container

    status, body = iam_call(client, "DELETE", "/v1/operator/account?user_id=alice", OPERATOR_ARN)

    assert status == 200, body
    assert _naming(dynamodb, "alice") == []  # the lookup rows (owner, agent, times) went with the account
    for made in alices:  # an erased account's token is a token never made: nothing answers it, not even MCP's handshake
        assert _call(client, "GET", "/v1/agent/memory", made["token"])[0] == 401
        assert (
            _call(
                client, "POST", "/mcp", made["token"], {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
            )[0]
            == 401
        )
    assert _call(client, "GET", "/v1/agent/memory", bobs["token"])[0] == 200  # bob's connection is untouched
    assert [c["id"] for c in api.call("GET", "/v1/connections", "bob")[1]["connections"]] == [bobs["id"]]


def _lookup_row(dynamodb: Any, table: str, owner: str) -> dict[str, Any]:
    (row,) = [dynamo.load(raw) for raw in every_item(dynamodb)[table] if str(dynamo.load(raw).get("owner")) == owner]
    return row


@pytest.mark.parametrize("altered", [{"trusted": True}, {"agent": "cursor"}])
def test_an_altered_lookup_row_is_not_believed_it_is_a_401_that_writes_nothing(
    api: Any, client: Any, stores: Any, dynamodb: Any, stream: Any, altered: dict[str, Any]
) -> None:
    """Someone with write access to the keys table flips the lookup row alone (trust, or the agent it acts as):
    the person's own row still says what they made, and every call that reads or writes memory conditions on it."""
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    assert api.call("PUT", "/v1/agents/claude-code", "alice", {"propose": True})[0] == 200
    assert api.call("PUT", "/v1/agents/cursor", "alice", {"propose": True})[0] == 200
    made = _connect(api, "alice")
    table = stores.connections.table
    row = _lookup_row(dynamodb, table, "alice")
    dynamodb.put_item(TableName=table, Item=dynamo.dump({**row, **altered}))
    before = every_item(dynamodb)

    for method, path, body in [
        ("GET", "/v1/agent/memory", None),
        ("POST", "/v1/agent/proposals", {"text": "Takes the 8:10 train"}),
    ]:
        assert _call(client, method, path, made["token"], body)[0] == 401, path
    stream.drain()
    assert every_item(dynamodb) == before  # no untainted or misattributed suggestion, no journal row, no last use
    assert api.call("GET", "/v1/memory", "alice")[1]["proposals"] == []


def test_a_suggestion_outcome_never_tells_a_connection_what_another_agent_suggested(
    api: Any, client: Any, stream: Any
) -> None:
    api.turn_on("alice")
    for agent in ("claude-code", "cursor"):
        assert api.call("PUT", f"/v1/agents/{agent}", "alice", {"propose": True})[0] == 200
    cursor, claude = _connect(api, "alice", "cursor"), _connect(api, "alice")
    assert (
        _call(client, "POST", "/v1/agent/proposals", cursor["token"], {"text": "Sees a cardiologist monthly"})[0] == 202
    )
    stream.drain()
    assert [p["agent"] for p in api.call("GET", "/v1/memory", "alice")[1]["proposals"]] == ["cursor"]
    assert (
        _call(client, "GET", "/v1/agent/memory", claude["token"])[1]["items"] == []
    )  # nothing claude-code may read shows it

    status, asked = _call(
        client, "POST", "/v1/agent/proposals", claude["token"], {"text": "sees a cardiologist monthly"}
    )
    stream.drain()

    assert status == 202
    status, outcome = _call(client, "GET", f"/v1/agent/proposals/{asked['event_id']}", claude["token"])
    assert (status, outcome["outcome"]["type"]) == (200, "memory.proposed")  # what a new text gets: it learns nothing


def test_a_connection_row_copied_into_another_persons_partition_revokes_nothing_of_the_owner(
    api: Any, client: Any, stores: Any, dynamodb: Any
) -> None:
    """Alice's row copied into bob's partition (a restore gone wrong, an altered item): bob's revoke of it must not
    delete alice's lookup row, which would stop her token while her page still lists the connection."""
    api.turn_on("alice")
    made = _connect(api, "alice")
    table = stores.connections.table
    (owned,) = [
        dynamo.load(raw)
        for raw in every_item(dynamodb)[table]
        if dynamo.load(raw).get("user_id") == "alice" and str(dynamo.load(raw).get("sk")).startswith("c#")
    ]
    dynamodb.put_item(TableName=table, Item=dynamo.dump({**owned, "user_id": "bob"}))
    alices_rows = [
        raw
        for raw in every_item(dynamodb)[table]
        if "alice" in (dynamo.load(raw).get("user_id"), dynamo.load(raw).get("owner"))
    ]

    status, _ = api.call("DELETE", f"/v1/connections/{made['id']}", "bob")

    assert status in (204, 404)
    assert [
        raw
        for raw in every_item(dynamodb)[table]
        if "alice" in (dynamo.load(raw).get("user_id"), dynamo.load(raw).get("owner"))
    ] == alices_rows
    connections_service.forget_cache()
    assert _call(client, "GET", "/v1/agent/memory", made["token"])[0] == 200  # alice's token still works
