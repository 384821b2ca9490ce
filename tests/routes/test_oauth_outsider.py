"""An outsider's attack on OAuth for /mcp (issue 42), through the real routes against moto: what must hold."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from chalicelib.oauth import clients
from chalicelib.services import connections as connections_service
from tests.support.oauth_flow import RESOURCE, OAuthFlow, challenge


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    connections_service.forget_cache()
    clients.forget_documents()


@pytest.fixture
def flow(client: Any, issuer: Any) -> OAuthFlow:
    return OAuthFlow(client, issuer)


def _agents(api: Any) -> dict[str, Any]:
    return {row["agent"].lower(): row for row in api.call("GET", "/v1/agents", "alice")[1]["agents"]}


def test_a_code_presented_by_another_client_is_refused_and_spends_nothing(flow: OAuthFlow) -> None:
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    code = flow.code(client_id, verifier)
    other = flow.client_id()
    answer = flow.exchange(other, code, verifier)
    assert answer.status == 400 and answer.body["error"] == "invalid_grant"
    assert flow.exchange(client_id, code, verifier).status == 200


@pytest.mark.parametrize("verifier", ["a" * 42, "a" * 129, "a" * 42 + "!", "a" * 43 + " "])
def test_a_verifier_outside_rfc_7636_is_refused_even_when_it_matches(flow: OAuthFlow, verifier: str) -> None:
    client_id = flow.client_id()
    request_id = flow.request_id(flow.authorize(client_id, "x" * 43, code_challenge=challenge(verifier)))
    assert flow.get(f"/v1/oauth/requests/{request_id}", "alice").status == 200
    from urllib.parse import parse_qs, urlsplit

    code = parse_qs(urlsplit(flow.decide(request_id, "alice").body["redirect"]).query)["code"][0]
    answer = flow.exchange(client_id, code, verifier)
    assert answer.status == 400 and answer.body["error"] in ("invalid_grant", "invalid_request"), answer.body


@pytest.mark.parametrize("resource", [RESOURCE.upper(), RESOURCE.replace("http:", "https:"), RESOURCE + "?x=1"])
def test_a_resource_spelled_otherwise_is_refused(flow: OAuthFlow, resource: str) -> None:
    answer = flow.authorize(flow.client_id(), secrets.token_urlsafe(40), resource=resource)
    assert answer.status == 302 and "error=invalid_target" in answer.headers["location"]


def test_the_access_token_is_refused_on_every_route_but_mcp(flow: OAuthFlow, api: Any) -> None:
    _, tokens = flow.tokens()
    request_id = flow.request_id(flow.authorize(flow.client_id(), secrets.token_urlsafe(40)))
    bearer = {
        "Host": "api.example.org",
        "Authorization": f"Bearer {tokens['access_token']}",
        "Content-Type": "application/json",
    }
    routes = [
        ("GET", "/v1/memory"),
        ("PUT", "/v1/memory/settings"),
        ("POST", "/v1/memory"),
        ("PATCH", "/v1/memory/x"),
        ("DELETE", "/v1/memory/x"),
        ("DELETE", "/v1/memory"),
        ("POST", "/v1/memory/x/accept"),
        ("POST", "/v1/memory/x/reject"),
        ("GET", "/v1/memory/journal"),
        ("GET", "/v1/memory/export"),
        ("GET", "/v1/inbox"),
        ("GET", "/v1/agents"),
        ("PUT", "/v1/agents/claude"),
        ("POST", "/v1/agents/claude/forget"),
        ("POST", "/v1/connections"),
        ("GET", "/v1/connections"),
        ("DELETE", "/v1/connections/x"),
        ("GET", "/v1/agent/memory"),
        ("POST", "/v1/agent/proposals"),
        ("GET", "/v1/agent/proposals/x"),
        ("GET", f"/v1/oauth/requests/{request_id}"),
        ("POST", f"/v1/oauth/requests/{request_id}"),
    ]
    for method, path in routes:
        response = flow.client.http.request(method, path, headers=bearer, body=b"{}")
        assert response.status_code in (401, 403), (method, path, response.status_code)
    assert flow.get(f"/v1/oauth/requests/{request_id}", "alice").status == 200  # nothing was bound by the token


def test_erasing_the_account_ends_access_and_refresh(flow: OAuthFlow, stores: Any) -> None:
    from chalicelib.services import operators

    client_id, tokens = flow.tokens()
    operators.erase_account(stores, "op", "alice", "req-1")
    assert flow.mcp(tokens["access_token"]).status == 401
    answer = flow.refresh(client_id, tokens["refresh_token"])
    assert answer.status == 400 and answer.body["error"] == "invalid_grant"


def test_forgetting_everything_keeps_the_connection_as_the_design_says(flow: OAuthFlow, api: Any) -> None:
    client_id, tokens = flow.tokens()
    assert api.call("DELETE", "/v1/memory", "alice")[0] == 200
    assert flow.refresh(client_id, tokens["refresh_token"]).status == 200


def test_consent_does_not_quietly_lift_a_block_on_an_agent_of_the_same_folded_name(flow: OAuthFlow, api: Any) -> None:
    assert api.call("PUT", "/v1/agents/helper", "alice", {"read": False, "propose": False})[0] == 200
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    flow.code(client_id, verifier, agent="Helper")  # the screen's defaults: read and propose ticked
    row = _agents(api)["helper"]
    assert row["read"] is False and row["propose"] is False
