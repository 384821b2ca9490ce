"""The agent routes by connection token, against moto and its real stream: context, suggestions, outcomes, revocation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.auth import connection_tokens
from chalicelib.services import connections as connections_service
from chalicelib.storage.dynamo import transact
from tests.support.raw_storage import every_item


@pytest.fixture(autouse=True)
def _no_cached_lookup() -> None:
    connections_service.forget_cache()


def _connect(api: Any, user: str, agent: str = "claude-code", **fields: Any) -> dict[str, Any]:
    status, body = api.call("POST", "/v1/connections", user, {"agent": agent, **fields})
    assert status == 201, body
    return body


def _as(
    client: Any, token: str | None, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, dict[str, str]]:
    sent = {
        "Content-Type": "application/json",
        **({"Authorization": f"Bearer {token}"} if token else {}),
        **(headers or {}),
    }
    response = getattr(client.http, method.lower())(
        path, headers=sent, body=json.dumps(body) if body is not None else None
    )
    text = response.body.decode() if isinstance(response.body, bytes) else response.body
    return (
        response.status_code,
        (json.loads(text) if text else None),
        {k.lower(): v for k, v in response.headers.items()},
    )


def _journal(stores: Any, user: str, action: str = "keep.memory.context") -> list[dict[str, Any]]:
    return [r.public() for r in stores.journal.all(user) if r.action == action]


def _suggest(client: Any, stream: Any, token: str, text: str, kind: str = "note") -> dict[str, Any]:
    status, body, _ = _as(client, token, "POST", "/v1/agent/proposals", {"text": text, "kind": kind})
    assert status == 202, body
    stream.drain()
    status, answer, _ = _as(client, token, "GET", f"/v1/agent/proposals/{body['event_id']}")
    assert status == 200, answer
    return answer


def test_the_context_is_what_a_session_of_that_agent_gets_and_is_journaled_with_it(
    api: Any, agents: Any, client: Any, stores: Any
) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea", pinned=True)
    api.add("alice", "walks at six")
    token = _connect(api, "alice")["token"]
    agents.register("s-1", "alice", agent="claude-code")
    status, body, _ = _as(client, token, "GET", "/v1/agent/memory")
    sessions = agents.items("s-1")
    unref = [{k: v for k, v in i.items() if k != "ref"} for i in body["items"]]
    assert status == 200 and {**body, "items": unref} == {
        "items": [{k: v for k, v in i.items() if k != "ref"} for i in sessions],
        "agent": "claude-code",
        "tainted": True,
    }
    assert {i["ref"] for i in body["items"]}.isdisjoint(i["ref"] for i in sessions)  # refs of another conversation
    assert [i["text"] for i in body["items"]] == ["likes green tea", "walks at six"]
    rows = _journal(stores, "alice")
    mine = [r for r in rows if r.get("connection_id")]
    assert len(mine) == 1 and mine[0]["agent"] == "claude-code" and mine[0]["count"] == 2
    assert "likes green tea" not in json.dumps(rows)
    listed = api.call("GET", "/v1/connections", "alice")[1]["connections"][0]
    assert listed["last_used_at"] == mine[0]["at"]
    assert [r["agent"] for r in api.call("GET", "/v1/agents", "alice")[1]["agents"]] == ["claude-code"]


def test_memory_off_and_a_blocked_agent_read_nothing(api: Any, client: Any, stores: Any) -> None:
    token = _connect(api, "alice")["token"]
    assert _as(client, token, "GET", "/v1/agent/memory")[:2] == (
        200,
        {"items": [], "agent": "claude-code", "tainted": True},
    )  # memory off
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    assert api.call("PUT", "/v1/agents/claude-code", "alice", {"read": False})[0] == 200
    assert _as(client, token, "GET", "/v1/agent/memory")[1]["items"] == []
    assert [(r["count"], r.get("reason")) for r in _journal(stores, "alice")] == [(0, "agent_blocked")]


@pytest.mark.parametrize(
    "header",
    [None, "Bearer", "Bearer ", "Basic abc", "Bearer pmc_short", "Bearer  pmc_x", "bearer {token}x", "Bearer {token} "],
)
def test_a_missing_or_malformed_token_is_401_with_a_challenge(api: Any, client: Any, header: str | None) -> None:
    token = _connect(api, "alice")["token"]
    headers = {"Authorization": header.format(token=token)} if header else {}
    for method, path in (
        ("GET", "/v1/agent/memory"),
        ("POST", "/v1/agent/proposals"),
        ("GET", f"/v1/agent/proposals/1-{'0' * 32}"),
    ):
        status, body, seen = _as(client, None, method, path, {"text": "x"}, headers)
        assert status == 401 and body["code"] == "unauthorized", (header, path)
        assert seen["www-authenticate"].startswith("Bearer")


def test_a_persons_sign_in_token_is_refused_on_the_agent_routes(api: Any, client: Any, issuer: Any) -> None:
    api.turn_on("alice")
    jwt = issuer.mint("alice")
    assert _as(client, jwt, "GET", "/v1/agent/memory")[0] == 401
    assert _as(client, jwt, "POST", "/v1/agent/proposals", {"text": "hello"})[0] == 401


def test_an_altered_token_is_401_even_with_a_good_checksum(api: Any, client: Any) -> None:
    token = _connect(api, "alice")["token"]
    body = token[4:47]
    altered_body = ("A" if body[0] != "A" else "B") + body[1:]
    import zlib

    altered = "pmc_" + altered_body + f"{zlib.crc32(altered_body.encode()):08x}"
    assert connection_tokens.is_well_formed(altered)
    assert _as(client, altered, "GET", "/v1/agent/memory")[0] == 401
    assert _as(client, token, "GET", "/v1/agent/memory")[0] == 200


def test_a_suggestion_waits_for_the_person_named_after_the_agent_and_tainted(
    api: Any, client: Any, stream: Any
) -> None:
    api.turn_on("alice")
    token = _connect(api, "alice")["token"]
    answer = _suggest(client, stream, token, "Prefers tea to coffee", "preference")
    assert answer["status"] == "handled" and answer["outcome"]["type"] == "memory.proposed"
    (proposal,) = api.call("GET", "/v1/memory", "alice")[1]["proposals"]
    assert proposal["agent"] == "claude-code" and proposal["tainted"] is True and proposal["kind"] == "preference"
    assert proposal["source"]["session_id"].startswith("conn:")
    trusted = _connect(api, "alice", agent="my-script", trusted=True)["token"]
    assert _suggest(client, stream, trusted, "Lives in Lyon")["outcome"]["type"] == "memory.proposed"
    mine = [p for p in api.call("GET", "/v1/memory", "alice")[1]["proposals"] if p["agent"] == "my-script"]
    assert [p["tainted"] for p in mine] == [False]


def test_the_same_refusals_as_a_workers_event(api: Any, client: Any, stream: Any) -> None:
    token = _connect(api, "alice")["token"]
    assert _suggest(client, stream, token, "likes tea")["outcome"] == {
        "type": "memory.proposal_refused",
        "reason": "memory_off",
    }
    api.turn_on("alice")
    refused = _suggest(client, stream, token, "AKIAQW3RTY5UIO7PASDF wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    assert refused["outcome"]["reason"].startswith("credential:") or refused["outcome"]["reason"] == "credential"
    assert _suggest(client, stream, token, "   ")["outcome"]["reason"] == "empty"
    assert _suggest(client, stream, token, "x", "recipe")["outcome"]["reason"] == "invalid_kind"
    assert api.call("PUT", "/v1/agents/claude-code", "alice", {"propose": False})[0] == 200
    assert _suggest(client, stream, token, "likes tea")["outcome"]["reason"] == "agent_blocked"
    for body in ({}, {"text": 5}, {"text": "x", "extra": 1}, {"text": "x" * 8001}, [1], "text"):
        assert _as(client, token, "POST", "/v1/agent/proposals", body)[0] == 400, body


def test_five_suggestions_per_conversation_and_a_new_one_each_hour(
    api: Any, client: Any, stream: Any, clock: Any
) -> None:
    api.turn_on("alice")
    token = _connect(api, "alice")["token"]
    clock.advance(seconds=3600 - clock().timestamp() % 3600 + 1)  # the start of an hour: six calls stay in it
    outcomes = [_suggest(client, stream, token, f"fact number {n}")["outcome"] for n in range(6)]
    assert [o["type"] for o in outcomes[:5]] == ["memory.proposed"] * 5
    assert outcomes[5] == {"type": "memory.proposal_refused", "reason": "session_cap"}
    clock.advance(hours=1)
    assert _suggest(client, stream, token, "fact number 7")["outcome"]["type"] == "memory.proposed"
    assert len(api.call("GET", "/v1/memory", "alice")[1]["proposals"]) == 6


def test_another_connections_or_persons_event_id_is_the_same_404(api: Any, client: Any, stream: Any) -> None:
    api.turn_on("alice")
    api.turn_on("bob")
    alice, alice_other, bob = (_connect(api, u)["token"] for u in ("alice", "alice", "bob"))
    status, body, _ = _as(client, alice, "POST", "/v1/agent/proposals", {"text": "likes tea"})
    event = body["event_id"]
    answers = [_as(client, t, "GET", f"/v1/agent/proposals/{event}")[:2] for t in (alice_other, bob)]
    missing = _as(client, alice, "GET", f"/v1/agent/proposals/1-{'0' * 32}")[:2]
    odd = _as(client, alice, "GET", "/v1/agent/proposals/..%2F..")[:2]
    assert answers[0] == answers[1] == missing == odd and missing[0] == 404
    assert _as(client, alice, "GET", f"/v1/agent/proposals/{event}")[1]["status"] == "pending"


def test_a_revoked_or_expired_connection_is_401_and_changes_nothing(
    api: Any, client: Any, stream: Any, stores: Any, dynamodb: Any, clock: Any
) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    made = _connect(api, "alice")
    assert _as(client, made["token"], "GET", "/v1/agent/memory")[0] == 200
    assert api.call("DELETE", f"/v1/connections/{made['id']}", "alice")[0] == 204
    before = every_item(dynamodb)
    for method, path in (("GET", "/v1/agent/memory"), ("POST", "/v1/agent/proposals")):
        assert _as(client, made["token"], method, path, {"text": "x"})[0] == 401
    assert every_item(dynamodb) == before
    short = _connect(api, "alice", expires_in_days=1)["token"]
    clock.advance(days=1)
    before = every_item(dynamodb)
    assert _as(client, short, "GET", "/v1/agent/memory")[0] == 401
    assert every_item(dynamodb) == before


def test_a_revoke_in_another_container_wins_over_this_ones_cached_lookup(
    api: Any, client: Any, stores: Any, dynamodb: Any
) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    made = _connect(api, "alice")
    assert _as(client, made["token"], "GET", "/v1/agent/memory")[0] == 200  # the lookup is now cached here
    connection = stores.connections.get_owned("alice", made["id"])
    transact(stores.client, stores.connections.revoke(connection))  # as another container would: this cache keeps it
    before = every_item(dynamodb)
    assert _as(client, made["token"], "GET", "/v1/agent/memory")[:2][0] == 401
    assert _as(client, made["token"], "POST", "/v1/agent/proposals", {"text": "likes tea"})[0] == 401
    assert every_item(dynamodb) == before


def test_the_agent_routes_answer_as_openapi_says(api: Any, client: Any, stream: Any) -> None:
    from tests.support.openapi_check import check

    api.turn_on("alice")
    api.add("alice", "likes green tea")
    token = _connect(api, "alice")["token"]
    check("GET", "/v1/agent/memory", *_as(client, token, "GET", "/v1/agent/memory")[:2])
    check("GET", "/v1/agent/memory", *_as(client, None, "GET", "/v1/agent/memory")[:2])
    status, made, _ = _as(client, token, "POST", "/v1/agent/proposals", {"text": "likes tea"})
    check("POST", "/v1/agent/proposals", status, made)
    check("POST", "/v1/agent/proposals", *_as(client, token, "POST", "/v1/agent/proposals", {"text": 1})[:2])
    path = "/v1/agent/proposals/{event_id}"
    check("GET", path, *_as(client, token, "GET", f"/v1/agent/proposals/{made['event_id']}")[:2])
    stream.drain()
    check("GET", path, *_as(client, token, "GET", f"/v1/agent/proposals/{made['event_id']}")[:2])
    check("GET", path, *_as(client, token, "GET", "/v1/agent/proposals/nothing")[:2])
