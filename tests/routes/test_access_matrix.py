"""Every route × every kind of caller (BOLA/BFLA): the expected status, and nothing changed after a refusal."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.iam import calling_as
from tests.support.proposals import add_proposal
from tests.support.stack import HOST_ARN, OPERATOR_ARN, WORKER_ARN

STRANGER_ARN = "arn:aws:iam::999999999999:role/not-on-any-list"
CALLERS = ["alice", "bob", "no_token", "host", "worker", "operator", "stranger"]
ARNS = {"host": HOST_ARN, "worker": WORKER_ARN, "operator": OPERATOR_ARN, "stranger": STRANGER_ARN}

SESSION = {"user_id": "alice", "thread_id": "t", "agent": "a", "manifest": {"memory": True}}
EVENTS = {"events": [{"id": "m1", "type": "memory.propose", "text": "matrix idea", "kind": "note"}]}

# (method, path template, body, who may call it, status for the allowed caller)
ROUTES: list[tuple[str, str, Any, str, int]] = [
    ("GET", "/v1/memory", None, "user", 200),
    ("PUT", "/v1/memory/settings", {"enabled": True}, "user", 200),
    ("POST", "/v1/memory", {"text": "matrix note"}, "user", 201),
    ("PATCH", "/v1/memory/{entry}", {"pinned": True}, "user", 200),
    ("DELETE", "/v1/memory/{entry}", None, "user", 204),
    ("DELETE", "/v1/memory", None, "user", 200),
    ("POST", "/v1/memory/{proposal}/accept", None, "user", 201),
    ("POST", "/v1/memory/{proposal}/reject", None, "user", 204),
    ("GET", "/v1/inbox", None, "user", 200),
    ("GET", "/v1/memory/journal", None, "user", 200),
    ("GET", "/v1/memory/export", None, "user", 200),
    ("PUT", "/v1/sessions/s-matrix", SESSION, "host", 200),
    ("POST", "/v1/sessions/{session}/untrusted", None, "host", 200),
    ("GET", "/v1/sessions/{session}/memory", None, "host", 200),
    ("POST", "/v1/sessions/{session}/events", EVENTS, "worker", 202),
    ("GET", "/v1/sessions/{session}/events", None, "worker", 200),
    ("GET", "/v1/operator/memory?user_id=alice", None, "operator", 200),
    ("DELETE", "/v1/operator/memory/{entry}?user_id=alice", None, "operator", 204),
    ("DELETE", "/v1/operator/memory?user_id=alice", None, "operator", 200),
]

# Bob's id-bearing requests on Alice's ids are 404 (as if missing); the rest are about Bob's own
# memory (off, empty) and never touch Alice's.


def expected(caller: str, method: str, path: str, owner: str, allowed_status: int) -> int:
    if owner == "user":
        if caller == "alice":
            return allowed_status
        if caller == "bob":
            if "{entry}" in path or "{proposal}" in path:
                return 404
            if (method, path) == ("POST", "/v1/memory"):
                return 409  # his own memory is off
            return allowed_status
        return 401  # no bearer token: IAM principals and anonymous callers alike
    if caller == owner:
        return allowed_status
    return 403


@pytest.fixture
def world(api: Any, stores: Any, agents: Any) -> dict[str, str]:
    api.turn_on("alice")
    entry = api.add("alice", "alice matrix entry")
    proposal = add_proposal(stores, "alice", "alice matrix proposal")
    agents.register("s-alice", "alice")
    return {"entry": entry["id"], "proposal": proposal.id, "session": "s-alice"}


def snapshot(stores: Any) -> str:
    from chalicelib.services import memory

    view = memory.view(stores, "alice")
    session = stores.sessions.get("s-alice")
    events = stores.events.list("s-alice")
    journal = [r.public() for r in stores.journal.all("alice")]
    return json.dumps(
        [view, session and session.public(), [e.public() for e in events], journal], sort_keys=True, default=str
    )


def call(client: Any, issuer: Any, caller: str, method: str, path: str, body: Any) -> int:
    headers = {"Content-Type": "application/json"}
    if caller in ("alice", "bob"):
        headers["Authorization"] = f"Bearer {issuer.mint(caller)}"
    with calling_as(ARNS.get(caller)):
        response = getattr(client.http, method.lower())(
            path, headers=headers, body=json.dumps(body) if body is not None else None
        )
    return response.status_code


@pytest.mark.parametrize(("method", "template", "body", "owner", "ok"), ROUTES, ids=[f"{r[0]} {r[1]}" for r in ROUTES])
def test_route_against_every_caller(
    client: Any,
    issuer: Any,
    stores: Any,
    world: dict[str, str],
    method: str,
    template: str,
    body: Any,
    owner: str,
    ok: int,
) -> None:
    path = template.format(**world)
    for caller in CALLERS:
        if caller == owner or (owner == "user" and caller == "alice"):
            continue  # the allowed caller goes last: it may change the data
        before = snapshot(stores)
        status = call(client, issuer, caller, method, path, body)
        assert status == expected(caller, method, template, owner, ok), caller
        assert snapshot(stores) == before, f"{caller} changed Alice's data through {method} {template}"
    allowed = "alice" if owner == "user" else owner
    assert call(client, issuer, allowed, method, path, body) == ok


def test_a_bad_signature_on_the_local_server_is_403_everywhere_iam(live: Any) -> None:
    from tests.support.signing import signed_request

    creds = live.credentials()
    token = live.token("matrix-owner")
    live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})

    def held() -> dict[str, Any]:  # what the user holds; `poll` counts down with the clock, so it is left out
        return {k: v for k, v in live.request("GET", "/v1/memory", token=token)[1].items() if k != "poll"}

    before = held()
    forged = {role: {**c, "secret_access_key": "A" * 40} for role, c in creds.items()}
    for method, template, body, owner, _ in ROUTES:
        path = template.format(entry="x" * 32, proposal="x" * 32, session="s-matrix").replace(
            "user_id=alice", "user_id=matrix-owner"
        )
        role = owner if owner != "user" else "host"
        status, _ = signed_request(live.url, method, path, forged[role], body)
        assert status == (401 if owner == "user" else 403), (method, template)
    assert held() == before
