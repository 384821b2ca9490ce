"""An outsider's attacks on connection tokens, through the real routes against moto: guessing, replays, racing a
revoke, another person's ids, smuggled headers — each is a 401 or a 404 that changes nothing and names nothing."""

from __future__ import annotations

import dataclasses
import json
import secrets
import threading
import zlib
from typing import Any

import pytest

from chalicelib.services import connections as connections_service
from tests.support.calls import dynamodb_calls
from tests.support.raw_storage import every_item


@pytest.fixture(autouse=True)
def _no_cached_lookup() -> None:
    connections_service.forget_cache()


def _connect(api: Any, user: str, agent: str = "claude-code") -> dict[str, Any]:
    status, body = api.call("POST", "/v1/connections", user, {"agent": agent})
    assert status == 201, body
    return dict(body)


def _get(client: Any, path: str, authorization: str) -> tuple[int, Any]:
    response = client.http.get(path, headers={"Authorization": authorization})
    return response.status_code, json.loads(response.body) if response.body else None


def _guess() -> str:
    body = secrets.token_urlsafe(32)
    return f"pmc_{body}{zlib.crc32(body.encode()):08x}"


def test_a_guess_costs_one_get_item_at_most_and_a_malformed_one_none(api: Any, client: Any, stores: Any) -> None:
    _connect(api, "alice")  # the service's key exists
    with dynamodb_calls(stores.client.unguarded) as calls:
        for _ in range(20):
            assert _get(client, "/v1/agent/memory", f"Bearer {_guess()}")[0] == 401
    assert dict(calls) == {"GetItem": 20}
    with dynamodb_calls(stores.client.unguarded) as calls:
        for bad in ("pmc_" + "A" * 51, "pmc_short", "Bearer x" * 100, "pmc_" + "é" * 51):
            assert _get(client, "/v1/agent/memory", f"Bearer {bad}")[0] == 401
    assert dict(calls) == {}


def test_a_replayed_suggestion_is_one_more_suggestion_within_the_cap_and_a_replayed_revoked_token_nothing(
    api: Any, client: Any, stream: Any, dynamodb: Any, table_names: Any
) -> None:
    api.turn_on("alice")
    made = _connect(api, "alice")
    request = {"headers": {"Authorization": f"Bearer {made['token']}"}, "body": json.dumps({"text": "Likes tea"})}
    answers = [client.http.post("/v1/agent/proposals", **request) for _ in range(7)]
    assert [a.status_code for a in answers] == [202] * 7
    stream.drain()
    assert (
        len(api.call("GET", "/v1/memory", "alice")[1]["proposals"]) == 1
    )  # the same words: one waits, the rest duplicates
    assert api.call("DELETE", f"/v1/connections/{made['id']}", "alice")[0] == 204
    own = [getattr(table_names, f.name) for f in dataclasses.fields(table_names)]  # not the worker's stacks' tables
    before = every_item(dynamodb, own)
    assert client.http.post("/v1/agent/proposals", **request).status_code == 401
    assert every_item(dynamodb, own) == before


def test_a_revoke_racing_calls_leaves_no_write_after_it(api: Any, client: Any, stores: Any, dynamodb: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    made = _connect(api, "alice")
    assert _get(client, "/v1/agent/memory", f"Bearer {made['token']}")[0] == 200  # cached from here on
    statuses: list[int] = []
    start = threading.Barrier(3)

    def read() -> None:
        start.wait()
        for _ in range(5):
            statuses.append(_get(client, "/v1/agent/memory", f"Bearer {made['token']}")[0])

    def revoke() -> None:
        start.wait()
        statuses.append(api.call("DELETE", f"/v1/connections/{made['id']}", "alice")[0])

    threads = [threading.Thread(target=read), threading.Thread(target=read), threading.Thread(target=revoke)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(statuses) <= {200, 204, 401} and 204 in statuses
    reads = [r for r in stores.journal.all("alice") if r.action == "keep.memory.context"]
    assert statuses.count(200) == len(reads) - 1  # every read answered was journaled, and only those
    # Once the revoke has answered, every call is 401 and writes nothing (the journal rows' `at` is when each
    # request began, not when it landed, so the order is read from what happens after the revoke, not from it).
    for _ in range(5):
        assert _get(client, "/v1/agent/memory", f"Bearer {made['token']}")[0] == 401
    assert [r for r in stores.journal.all("alice") if r.action == "keep.memory.context"] == reads


def test_another_persons_connection_cannot_be_seen_revoked_or_used_for_ones_own_memory(api: Any, client: Any) -> None:
    api.turn_on("alice")
    api.turn_on("bob")
    api.add("bob", "bob's own note")
    alices = _connect(api, "alice")
    assert api.call("DELETE", f"/v1/connections/{alices['id']}", "bob")[0] == 404
    status, body = _get(client, "/v1/agent/memory?user_id=bob", f"Bearer {alices['token']}")
    assert status == 200 and body["items"] == []  # alice's memory, never bob's, whatever the query says
    assert api.call("GET", "/v1/connections", "bob") == (200, {"connections": []})


@pytest.mark.parametrize(
    "header",
    [
        "Bearer {token}, Bearer {other}",  # two tokens folded into one header
        "Bearer {token}\tx",
        "Bearer {token}%00",
        "Basic {token}",
        "Bearer\t{token}",
    ],
)
def test_smuggled_authorization_headers_are_401(api: Any, client: Any, header: str) -> None:
    api.turn_on("alice")
    token, other = _connect(api, "alice")["token"], _connect(api, "bob")["token"]
    assert _get(client, "/v1/agent/memory", header.format(token=token, other=other))[0] == 401


def test_no_token_reaches_the_logs_the_journal_the_export_or_an_error(
    api: Any, client: Any, stream: Any, capsys: Any
) -> None:
    api.turn_on("alice")
    made = _connect(api, "alice")
    bearer = {"Authorization": f"Bearer {made['token']}"}
    client.http.get("/v1/agent/memory", headers=bearer)
    client.http.post("/v1/agent/proposals", headers=bearer, body=json.dumps({"text": f"my token {made['token']}"}))
    errors = client.http.post("/v1/agent/proposals", headers=bearer, body=json.dumps({"text": 1})).body.decode()
    client.http.post("/mcp", headers=bearer, body="{not json")
    stream.drain()
    api.call("DELETE", f"/v1/connections/{made['id']}", "alice")
    client.http.get("/v1/agent/memory", headers=bearer)
    journal = json.dumps(api.call("GET", "/v1/memory/journal", "alice")[1]["items"])
    export = json.dumps(api.call("GET", "/v1/memory/export", "alice")[1])
    logs = capsys.readouterr()
    for seen in (journal, export, errors, logs.out, logs.err):
        assert made["token"] not in seen and made["token"][4:24] not in seen
    assert "credential:memory_connection_token" in json.dumps(api.call("GET", "/v1/memory/journal", "alice")[1])
