"""A person's connections through the real routes against moto: made, listed, revoked; only a keyed hash stored."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from chalicelib.auth import connection_tokens
from tests.support.raw_storage import every_item


def _connect(api: Any, user: str, agent: str = "claude-code", **fields: Any) -> dict[str, Any]:
    status, body = api.call("POST", "/v1/connections", user, {"agent": agent, **fields})
    assert status == 201, body
    return body


def _journal(stores: Any, user: str) -> list[dict[str, Any]]:
    return [r.public() for r in stores.journal.all(user) if r.action == "keep.memory.connection"]


def test_a_connection_is_made_with_a_token_shown_once_and_listed_without_it(
    api: Any, stores: Any, dynamodb: Any
) -> None:
    made = _connect(api, "alice")
    assert set(made) == {"id", "agent", "token", "trusted", "created_at", "expires_at", "last_used_at"}
    assert made["agent"] == "claude-code" and made["trusted"] is False and made["last_used_at"] is None
    assert made["token"].startswith("pmc_") and connection_tokens.is_well_formed(made["token"])
    status, listed = api.call("GET", "/v1/connections", "alice")
    assert status == 200
    assert listed == {"connections": [{k: v for k, v in made.items() if k != "token"}]}
    # What is stored: neither the token nor a plain hash of it, anywhere; the MAC is keyed.
    raw = json.dumps(every_item(dynamodb), default=str)
    assert made["token"] not in raw and made["token"][4:20] not in raw
    assert hashlib.sha256(made["token"].encode()).hexdigest() not in raw
    assert stores.connections.get_owned("alice", made["id"]).mac in raw


def test_expiry_defaults_to_ninety_days_and_takes_one_to_365(api: Any, clock: Any) -> None:
    from datetime import datetime

    made = _connect(api, "alice")
    created = datetime.fromisoformat(made["created_at"].replace("Z", "+00:00"))
    expires = datetime.fromisoformat(made["expires_at"].replace("Z", "+00:00"))
    assert round((expires - created).total_seconds() / 86400) == 90
    assert _connect(api, "alice", expires_in_days=1)["expires_at"] < made["expires_at"]
    assert _connect(api, "alice", expires_in_days=365, trusted=True)["trusted"] is True
    for bad in (0, 366, 1.5, "7", None, True):
        status, body = api.call("POST", "/v1/connections", "alice", {"agent": "x", "expires_in_days": bad})
        assert status == 400 and body["code"] == "invalid_request", bad
    for body in (
        {"agent": "a b"},
        {},
        {"agent": "x", "token": "pmc_mine"},
        {"agent": "x", "trusted": "yes"},
        {"agent": ".."},
    ):
        status, answer = api.call("POST", "/v1/connections", "alice", body)
        assert status == 400 and answer["code"] == "invalid_request", body
    assert len(api.call("GET", "/v1/connections", "alice")[1]["connections"]) == 3


def test_an_expired_connection_is_no_longer_listed(api: Any, clock: Any) -> None:
    _connect(api, "alice", expires_in_days=1)
    clock.advance(days=1, seconds=1)
    assert api.call("GET", "/v1/connections", "alice") == (200, {"connections": []})


def test_revoking_deletes_both_rows_and_journals_it_without_the_token(api: Any, stores: Any, dynamodb: Any) -> None:
    made = _connect(api, "alice")
    status, _ = api.call("DELETE", f"/v1/connections/{made['id']}", "alice")
    assert status == 204
    assert api.call("GET", "/v1/connections", "alice") == (200, {"connections": []})
    keys_rows = every_item(dynamodb)["memory-keys"]
    assert not [r for r in keys_rows if r["sk"]["S"] in ("#conn", "c#" + made["id"])]
    rows = _journal(stores, "alice")
    assert [r["operation"] for r in rows] == ["revoke", "create"]
    assert all(r["connection_id"] == made["id"] and r["agent"] == "claude-code" for r in rows)
    assert made["token"] not in json.dumps(rows)
    assert api.call("DELETE", f"/v1/connections/{made['id']}", "alice")[0] == 404  # a second revoke: gone


def test_another_persons_connection_is_a_404_identical_to_a_missing_one(api: Any) -> None:
    made = _connect(api, "alice")
    theirs = api.call("DELETE", f"/v1/connections/{made['id']}", "bob")
    missing = api.call("DELETE", f"/v1/connections/{'0' * 32}", "bob")
    odd = api.call("DELETE", "/v1/connections/not-an-id", "bob")
    assert theirs == missing == odd and theirs[0] == 404
    assert api.call("GET", "/v1/connections", "bob") == (200, {"connections": []})
    assert len(api.call("GET", "/v1/connections", "alice")[1]["connections"]) == 1


def test_forget_all_keeps_the_connections_and_the_services_mac_key(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "likes green tea")
    made = _connect(api, "alice")
    key_before = stores.connections.mac_key_row()
    assert api.call("DELETE", "/v1/memory", "alice")[0] == 200
    assert [c["id"] for c in api.call("GET", "/v1/connections", "alice")[1]["connections"]] == [made["id"]]
    assert stores.connections.mac_key_row() == key_before is not None


def test_the_connection_routes_need_a_sign_in_token(api: Any, client: Any) -> None:
    made = _connect(api, "alice")
    for method, path in (
        ("GET", "/v1/connections"),
        ("POST", "/v1/connections"),
        ("DELETE", f"/v1/connections/{made['id']}"),
    ):
        response = getattr(client.http, method.lower())(
            path, headers={"Authorization": f"Bearer {made['token']}"}, body='{"agent": "x"}'
        )
        assert response.status_code == 401, (method, path)
    assert len(api.call("GET", "/v1/connections", "alice")[1]["connections"]) == 1


@pytest.mark.parametrize("path", ["/v1/memory", "/v1/inbox", "/v1/agents", "/v1/memory/export", "/v1/memory/journal"])
def test_a_connection_token_is_401_on_the_persons_own_routes(api: Any, client: Any, path: str) -> None:
    api.turn_on("alice")
    made = _connect(api, "alice")
    response = client.http.get(path, headers={"Authorization": f"Bearer {made['token']}"})
    assert response.status_code == 401


def test_a_connection_token_pasted_into_a_note_is_refused_as_a_credential(api: Any) -> None:
    api.turn_on("alice")
    token = _connect(api, "alice")["token"]
    status, body = api.call("POST", "/v1/memory", "alice", {"text": f"my claude token is {token}"})
    assert status == 422 and body["shape"] == "memory_connection_token" and token not in json.dumps(body)
    # A look-alike without its checksum is ordinary text.
    assert api.call("POST", "/v1/memory", "alice", {"text": "prefix pmc_ is ours"})[0] == 201


def test_the_connection_routes_answer_as_openapi_says(api: Any) -> None:
    from tests.support.openapi_check import check

    status, made = api.call("POST", "/v1/connections", "alice", {"agent": "claude-code"})
    check("POST", "/v1/connections", status, made)
    check("POST", "/v1/connections", *api.call("POST", "/v1/connections", "alice", {"agent": 7}))
    check("GET", "/v1/connections", *api.call("GET", "/v1/connections", "alice"))
    check("DELETE", "/v1/connections/{id}", *api.call("DELETE", f"/v1/connections/{'0' * 32}", "alice"))
    assert api.call("DELETE", f"/v1/connections/{made['id']}", "alice")[0] == 204
