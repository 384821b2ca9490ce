"""openapi.yaml is the contract clients code against: real responses, happy and refused, must match it exactly.

Every response a test provokes is checked with `check()`: its status must be listed for that route,
and its body must validate (JSON Schema Draft 2020-12, the OpenAPI 3.1 dialect) against the listed schema.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from openapi_spec_validator import validate as validate_spec

from tests.support.iam import iam_call
from tests.support.openapi_check import check, iam, spec, user
from tests.support.proposals import add_proposal
from tests.support.stack import HOST_ARN, OPERATOR_ARN, WORKER_ARN

LOCAL_ONLY = {"/dev/token"}
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n"
    "-----END RSA PRIVATE KEY-----"
)


# ---- the document itself ------------------------------------------------------------------------


def test_spec_is_valid_openapi_3_1() -> None:
    assert spec()["openapi"].startswith("3.1")
    validate_spec(spec())


def test_spec_and_app_have_the_same_routes_and_methods() -> None:
    from app import app

    in_app = {path: {m.upper() for m in methods} for path, methods in app.routes.items()}
    in_spec = {
        path: {m.upper() for m in item if m in ("get", "put", "post", "patch", "delete")}
        for path, item in spec()["paths"].items()
        if path not in LOCAL_ONLY
    }
    assert in_spec == in_app
    assert all(spec()["paths"][p].get("x-local-only") is True for p in LOCAL_ONLY)


def test_every_object_schema_refuses_unknown_fields() -> None:
    """Each object schema closes itself, except the dev sign-in body (documented: the launcher ignores extras)
    and a JSON-RPC message on /mcp and a request's params (their fields are the MCP specification's, which
    grows them: `_meta`, each method's own)."""
    open_ones: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and node.get("additionalProperties") is not False:
                open_ones.append(where)
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}/{index}")

    walk(spec()["components"]["schemas"], "")
    assert open_ones == ["/JsonRpcRequest/properties/params", "/JsonRpcMessage", "/DevTokenRequest"]


def test_the_asset_names_are_the_pages_allow_list() -> None:
    from chalicelib.web import ASSET_NAMES

    (name,) = spec()["paths"]["/assets/{name}"]["get"]["parameters"]
    assert set(name["schema"]["enum"]) == set(ASSET_NAMES)


def test_error_codes_match_the_service() -> None:
    from chalicelib import errors

    codes = {
        cls.code for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, errors.ServiceError)
    }
    assert set(spec()["components"]["schemas"]["ErrorCode"]["enum"]) == codes


def test_the_checker_catches_a_wrong_body() -> None:
    with pytest.raises(AssertionError):
        check("GET", "/v1/inbox", 200, {"memory_proposals": [], "extra": 1})
    with pytest.raises(AssertionError):
        check("GET", "/v1/inbox", 418, {"memory_proposals": []})
    with pytest.raises(AssertionError):  # through a $ref: an entry missing its fields
        check("GET", "/v1/inbox", 200, {"memory_proposals": [{"id": "0" * 32}]})
    with pytest.raises(AssertionError):  # through a shared response: the wrong code for the status
        check("DELETE", "/v1/memory/{id}", 404, {"code": "forbidden", "message": "No."})
    check("DELETE", "/v1/memory/{id}", 404, {"code": "not_found", "message": "No."})


# ---- the user's memory -------------------------------------------------------------------------


def test_memory_view_switch_and_adds_match_the_spec(api: Any, stores: Any) -> None:
    user(api, "GET", "/v1/memory", "alice")
    assert user(api, "POST", "/v1/memory", "alice", {"text": "Likes tea"})[1]["code"] == "memory_off"
    user(api, "PUT", "/v1/memory/settings", "alice", {"enabled": True})
    user(api, "PUT", "/v1/memory/settings", "alice", {"enabled": "yes"})
    user(api, "PUT", "/v1/memory/settings", "alice", raw='{"enabled": ')
    assert (
        user(api, "POST", "/v1/memory", "alice", {"text": "Likes tea", "kind": "preference", "pinned": True})[0] == 201
    )
    status, entry = user(api, "POST", "/v1/memory", "alice", {"text": "Trip in May", "expires_in_days": 30})
    assert status == 201 and entry["expires_at"] is not None
    for bad in (
        {"text": "   "},
        {"text": "é" * 1001},
        {"text": "x", "colour": "red"},
        {"text": "x", "expires_in_days": 0},
    ):
        assert user(api, "POST", "/v1/memory", "alice", bad)[0] == 400
    assert user(api, "POST", "/v1/memory", "alice", {"text": "   "})[1]["field"] == "text"
    status, refused = user(api, "POST", "/v1/memory", "alice", {"text": PEM})
    assert status == 422 and refused["shape"] == "private_key"
    add_proposal(stores, "alice", "Maybe likes jazz", tainted=True)
    status, view = user(api, "GET", "/v1/memory", "alice")
    assert len(view["items"]) == 2 and len(view["proposals"]) == 1


def test_edit_and_forget_match_the_spec(api: Any, clock: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "Walks at noon", expires_in_days=5)
    path, template = f"/v1/memory/{entry['id']}", "/v1/memory/{id}"
    assert user(api, "PATCH", path, "alice", {"text": "Walks at one", "pinned": True}, template=template)[0] == 200
    assert user(api, "PATCH", path, "alice", {"expires_in_days": None}, template=template)[1]["expires_at"] is None
    assert user(api, "PATCH", path, "alice", {}, template=template)[0] == 200
    assert user(api, "PATCH", path, "alice", {"pinned": "no"}, template=template)[0] == 400
    assert user(api, "PATCH", path, "alice", {"text": PEM}, template=template)[0] == 422
    assert user(api, "PATCH", path, "bob", {"pinned": True}, template=template)[0] == 404
    assert user(api, "DELETE", path, "bob", template=template)[0] == 404
    assert user(api, "DELETE", path, "alice", template=template)[0] == 204
    assert user(api, "DELETE", path, "alice", template=template)[0] == 404
    api.add("alice", "One more")
    assert user(api, "DELETE", "/v1/memory", "alice")[1] == {"deleted": 1}


def test_proposal_decisions_match_the_spec(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    first, second, third = (add_proposal(stores, "alice", f"idea {n}") for n in range(3))
    user(api, "GET", "/v1/inbox", "alice")
    accept, reject = "/v1/memory/{id}/accept", "/v1/memory/{id}/reject"
    assert user(api, "POST", f"/v1/memory/{first.id}/accept", "alice", template=accept)[0] == 201
    assert user(api, "POST", f"/v1/memory/{first.id}/accept", "alice", template=accept)[0] == 404
    assert user(api, "POST", f"/v1/memory/{second.id}/reject", "alice", template=reject)[0] == 204
    assert user(api, "POST", f"/v1/memory/{second.id}/reject", "alice", template=reject)[0] == 404
    assert user(api, "POST", f"/v1/memory/{third.id}/accept", "bob", template=accept)[0] == 404
    api.call("PUT", "/v1/memory/settings", "alice", {"enabled": False})
    assert user(api, "POST", f"/v1/memory/{third.id}/accept", "alice", template=accept)[1]["code"] == "memory_off"


def test_etags_corrections_and_kind_changes_match_the_spec(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "Walks at noon")
    assert user(api, "PATCH", f"/v1/memory/{entry['id']}", "alice", {"kind": "fact"}, template="/v1/memory/{id}")[1][
        "edited"
    ]
    proposal = add_proposal(stores, "alice", "Likes jaz")
    accept = "/v1/memory/{id}/accept"
    path = f"/v1/memory/{proposal.id}/accept"
    assert user(api, "POST", path, "alice", {"text": " "}, template=accept)[0] == 400
    assert user(api, "POST", path, "alice", {"text": PEM}, template=accept)[0] == 422
    assert user(api, "POST", path, "alice", {"text": "Likes jazz", "kind": "preference"}, template=accept)[1]["edited"]
    for route in ("/v1/memory", "/v1/inbox"):
        first = api.client.http.get(route, headers=api.headers("alice"))
        etag = {k.lower(): v for k, v in first.headers.items()}["etag"]
        again = api.client.http.get(route, headers={**api.headers("alice"), "If-None-Match": etag})
        check("GET", route, again.status_code, again.body)
        assert again.status_code == 304


@pytest.mark.slow
def test_the_caps_answer_in_the_spec(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    waiting = add_proposal(stores, "alice", "one more idea")
    for n in range(200):
        api.add("alice", f"note {n}")
    status, body = user(api, "POST", "/v1/memory", "alice", {"text": "the 201st"})
    assert (status, body["code"]) == (409, "limit_reached")
    status, body = user(api, "POST", f"/v1/memory/{waiting.id}/accept", "alice", template="/v1/memory/{id}/accept")
    assert (status, body["code"]) == (409, "limit_reached")
    assert len(user(api, "GET", "/v1/memory", "alice")[1]["items"]) == 200


def test_bad_tokens_are_401_in_the_spec(client: Any) -> None:
    response = client.http.get("/v1/memory", headers={"Authorization": "Bearer not-a-jwt"})
    check("GET", "/v1/memory", response.status_code, json.loads(response.body))
    assert response.status_code == 401


def test_journal_and_export_match_the_spec(api: Any, agents: Any, client: Any, clock: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "Reads before bed", pinned=True)
    expiring = api.add("alice", "Short-lived", expires_in_days=1)
    agents.register("s-1", "alice")
    agents.items("s-1")
    agents.propose("s-1", {"id": "e1", "text": " "}, {"id": "e2", "text": "Likes maps", "message_id": "m-9"})
    iam_call(client, "GET", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)
    iam_call(client, "DELETE", f"/v1/operator/memory/{expiring['id']}?user_id=alice", OPERATOR_ARN)
    iam_call(client, "DELETE", "/v1/operator/memory/nope?user_id=alice", OPERATOR_ARN)
    api.add("alice", "Expires soon", expires_in_days=1)
    clock.advance(days=2)
    status, doc = user(api, "GET", "/v1/memory/export", "alice")
    assert status == 200 and doc["entries"] == [json.loads(json.dumps(entry))]
    assert len(doc["expired_entries_awaiting_deletion"]) == 1 and len(doc["proposals"]) == 1
    api.call("DELETE", "/v1/memory", "alice")
    status, page = user(api, "GET", "/v1/memory/journal?limit=3", "alice")
    assert status == 200 and len(page["items"]) == 3 and page["next_cursor"]
    user(api, "GET", f"/v1/memory/journal?cursor={page['next_cursor']}", "alice")
    actions = {row["action"] for row in user(api, "GET", "/v1/memory/journal?limit=100", "alice")[1]["items"]}
    assert actions == {
        "keep.memory.settings",
        "keep.memory.context",
        "keep.memory.proposal_refused",
        "keep.memory.operator_access",
        "keep.memory.forget_all",
        "keep.memory.key_created",
        "keep.memory.key_destroyed",
        "keep.memory.forget",  # the receipt of the operator forget of one entry (issue 26)
    }
    for query in ("limit=0", "limit=101", "limit=ten"):
        assert user(api, "GET", f"/v1/memory/journal?{query}", "alice")[0] == 400


# ---- hosts, workers, operators -----------------------------------------------------------------


def test_host_routes_match_the_spec(api: Any, client: Any) -> None:
    session, untrusted, memory = (
        "/v1/sessions/{session_id}",
        "/v1/sessions/{session_id}/untrusted",
        "/v1/sessions/{session_id}/memory",
    )
    body = {"user_id": "alice", "thread_id": "t-1", "agent": "helper", "manifest": {"memory": True}}
    assert iam(client, "PUT", "/v1/sessions/s-1", HOST_ARN, session, body)[0] == 200
    assert iam(client, "PUT", "/v1/sessions/s-1", HOST_ARN, session, body)[0] == 200
    assert iam(client, "PUT", "/v1/sessions/s-1", HOST_ARN, session, {**body, "user_id": "bob"})[0] == 409
    assert iam(client, "PUT", "/v1/sessions/s-2", HOST_ARN, session, {"agent": ""})[0] == 400
    assert (
        iam(client, "PUT", "/v1/sessions/s-2", HOST_ARN, session, {"user_id": None, "agent": "a"})[1]["user_id"] is None
    )
    assert iam(client, "PUT", "/v1/sessions/s-3", WORKER_ARN, session, body)[0] == 403
    assert iam(client, "POST", "/v1/sessions/s-1/untrusted", HOST_ARN, untrusted)[1]["tainted"] is True
    assert iam(client, "POST", "/v1/sessions/nope/untrusted", HOST_ARN, untrusted)[0] == 404
    assert iam(client, "POST", "/v1/sessions/s-1/untrusted", None, untrusted)[0] == 403
    api.turn_on("alice")
    api.add("alice", "Prefers short answers", pinned=True)
    assert len(iam(client, "GET", "/v1/sessions/s-1/memory", HOST_ARN, memory)[1]["items"]) == 1
    assert iam(client, "GET", "/v1/sessions/nope/memory", HOST_ARN, memory)[0] == 404
    assert iam(client, "GET", "/v1/sessions/s-1/memory", OPERATOR_ARN, memory)[0] == 403


def test_worker_routes_match_the_spec(agents: Any, client: Any) -> None:
    events = "/v1/sessions/{session_id}/events"
    agents.register("s-1", "alice")
    posted = {
        "events": [
            {"id": "e-1", "type": "memory.propose", "text": "Likes rain", "kind": "fact"},
            {"id": "e-2", "type": "memory.propose", "text": "x", "kind": "mood", "message_id": "m-2"},
        ]
    }
    assert iam(client, "POST", "/v1/sessions/s-1/events", WORKER_ARN, events, posted)[1] == {
        "accepted": 2,
        "received": 2,
    }
    assert iam(client, "POST", "/v1/sessions/s-1/events", WORKER_ARN, events, posted)[1] == {
        "accepted": 0,
        "received": 2,
    }
    assert iam(client, "GET", "/v1/sessions/s-1/events", WORKER_ARN, events)[1]["events"][0]["status"] == "pending"
    agents.stream.drain()  # memory is off, and "mood" is no kind: both refused with a reason
    handled = iam(client, "GET", "/v1/sessions/s-1/events", WORKER_ARN, events)[1]["events"]
    assert [e["outcome"]["reason"] for e in handled] == ["memory_off", "invalid_kind"]
    assert iam(client, "POST", "/v1/sessions/s-1/events", WORKER_ARN, events, {"events": []})[0] == 400
    assert iam(client, "POST", "/v1/sessions/s-1/events", HOST_ARN, events, posted)[0] == 403
    assert iam(client, "GET", "/v1/sessions/s-1/events", HOST_ARN, events)[0] == 403


def test_a_proposed_outcome_matches_the_spec(api: Any, agents: Any, client: Any) -> None:
    api.turn_on("alice")
    agents.register("s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Likes maps", "message_id": "m-1"})
    status, body = iam(client, "GET", "/v1/sessions/s-1/events", WORKER_ARN, "/v1/sessions/{session_id}/events")
    assert body["events"][0]["outcome"]["type"] == "memory.proposed"


def test_operator_routes_match_the_spec(api: Any, client: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "Operator-visible note")
    view, one = "/v1/operator/memory", "/v1/operator/memory/{id}"
    assert iam(client, "GET", "/v1/operator/memory?user_id=alice", OPERATOR_ARN, view)[0] == 200
    assert iam(client, "GET", "/v1/operator/memory", OPERATOR_ARN, view)[0] == 400
    assert iam(client, "GET", "/v1/operator/memory?user_id=alice", HOST_ARN, view)[0] == 403
    assert iam(client, "DELETE", f"/v1/operator/memory/{entry['id']}", OPERATOR_ARN, one)[0] == 400
    assert iam(client, "DELETE", f"/v1/operator/memory/{entry['id']}?user_id=alice", WORKER_ARN, one)[0] == 403
    assert iam(client, "DELETE", f"/v1/operator/memory/{entry['id']}?user_id=alice", OPERATOR_ARN, one)[0] == 204
    assert iam(client, "DELETE", f"/v1/operator/memory/{entry['id']}?user_id=alice", OPERATOR_ARN, one)[0] == 404
    assert iam(client, "DELETE", "/v1/operator/memory?user_id=alice", OPERATOR_ARN, view)[1] == {"deleted": 0}
    assert iam(client, "DELETE", "/v1/operator/memory", OPERATOR_ARN, view)[0] == 400
    assert iam(client, "DELETE", "/v1/operator/memory?user_id=alice", None, view)[0] == 403


# ---- the page, and what only the real HTTP gateway answers --------------------------------------


def test_page_routes_match_the_spec(client: Any) -> None:
    for path, template, media in (
        ("/", "/", "text/html"),
        ("/assets/app.js", "/assets/{name}", "text/javascript"),
        ("/assets/app.css", "/assets/{name}", "text/css"),
    ):
        response = client.http.get(path)
        check(
            "GET",
            template,
            response.status_code,
            response.body.decode(),
            media=response.headers["Content-Type"].split(";")[0],
        )
        assert response.status_code == 200 and media in response.headers["Content-Type"]
    response = client.http.get("/assets/secrets.txt")
    check("GET", "/assets/{name}", response.status_code, json.loads(response.body))
    response = client.http.get("/page-config")
    check("GET", "/page-config", response.status_code, json.loads(response.body))


def test_missing_token_and_dev_sign_in_match_the_spec(live: Any) -> None:
    status, body, _ = live.request("GET", "/v1/memory/export")
    check("GET", "/v1/memory/export", status, body)
    assert status == 401
    for payload, expected in (({"user_id": "spec-check"}, 200), ({"user_id": "no spaces"}, 400), ({}, 400)):
        status, body, _ = live.request("POST", "/dev/token", body=payload)
        check("POST", "/dev/token", status, body)
        assert status == expected


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/.well-known/oauth-protected-resource/mcp",
    ],
)
def test_the_oauth_discovery_documents_match_the_spec(client: Any, path: str) -> None:
    """The metadata schemas refuse unknown fields: a field the server adds must be in openapi.yaml too."""
    response = client.http.get(path)
    assert response.status_code == 200
    check("GET", path, response.status_code, json.loads(response.body))
