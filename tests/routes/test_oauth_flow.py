"""OAuth for /mcp through the real routes against moto: the happy path, and what is stored for it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.oauth import clients
from chalicelib.services import connections as connections_service
from tests.support.oauth_flow import BASE, RESOURCE, OAuthFlow
from tests.support.raw_storage import every_item


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    connections_service.forget_cache()
    clients.forget_documents()


@pytest.fixture
def flow(client: Any, issuer: Any) -> OAuthFlow:
    return OAuthFlow(client, issuer)


def test_metadata_names_every_endpoint_and_the_mcp_resource_names_this_server(flow: OAuthFlow) -> None:
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        body = flow.get(path).body
        assert body["issuer"] == BASE and body["token_endpoint"] == f"{BASE}/oauth/token"
        assert body["code_challenge_methods_supported"] == ["S256"]
        assert body["client_id_metadata_document_supported"] is True
    resource = flow.get("/.well-known/oauth-protected-resource/mcp").body
    assert resource["resource"] == RESOURCE and resource["authorization_servers"] == [BASE]


def test_a_client_signs_in_reads_and_refreshes(flow: OAuthFlow, api: Any, dynamodb: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "Prefers tea")
    client_id, tokens = flow.tokens(read=True, propose=True)
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3600
    assert tokens["access_token"].startswith("ey") and tokens["refresh_token"].startswith("pmr_")
    answer = flow.mcp(tokens["access_token"], "tools/call", {"name": "memory_context", "arguments": {}})
    assert answer.status == 200 and "Prefers tea" in answer.body["result"]["content"][0]["text"]
    listed = api.call("GET", "/v1/connections", "alice")[1]["connections"]
    assert [(c["agent"], c["client"]["id"], c["client"]["name"]) for c in listed] == [("claude", client_id, "Claude")]
    again = flow.refresh(client_id, tokens["refresh_token"])
    assert again.status == 200 and again.body["refresh_token"] != tokens["refresh_token"]
    assert flow.mcp(again.body["access_token"]).status == 200
    stored = repr(every_item(dynamodb))
    for secret in (tokens["access_token"], tokens["refresh_token"], again.body["refresh_token"]):
        assert secret not in stored
    oauth_rows = [
        i for i in every_item(dynamodb)["memory-keys"] if i["user_id"]["S"].startswith(("ocode#", "orefresh#", "oreq#"))
    ]
    assert len(oauth_rows) == 3 and "alice" not in repr(oauth_rows)  # a code, two refresh tokens; they name nobody


def test_an_access_token_costs_what_a_connection_token_costs(flow: OAuthFlow, dynamodb: Any) -> None:
    """One consistent GetItem of the connection's lookup row, none while it is cached (docs/oauth.md's figures)."""
    from tests.support.calls import dynamodb_calls

    _, tokens = flow.tokens()
    connections_service.forget_cache()
    with dynamodb_calls(dynamodb) as uncached:
        assert flow.mcp(tokens["access_token"]).status == 200
    with dynamodb_calls(dynamodb) as cached:
        assert flow.mcp(tokens["access_token"]).status == 200
    assert dict(uncached) == {"GetItem": 1} and dict(cached) == {}
    assert len(tokens["access_token"]) < 400 and len(tokens["refresh_token"]) == 47


def test_the_consent_sets_the_agents_switches_and_its_trust(flow: OAuthFlow, api: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "Prefers tea")
    _, tokens = flow.tokens(agent="helper", read=False, propose=True)
    agents = {a["agent"]: a for a in api.call("GET", "/v1/agents", "alice")[1]["agents"]}
    assert (agents["helper"]["read"], agents["helper"]["propose"]) == (False, True)
    (connection,) = api.call("GET", "/v1/connections", "alice")[1]["connections"]
    assert connection["trusted"] is False and connection["agent"] == "helper"
    answer = flow.mcp(tokens["access_token"], "tools/call", {"name": "memory_context", "arguments": {}})
    assert answer.status == 200 and "Prefers tea" not in json.dumps(answer.body)


def test_a_pending_request_expires_and_an_altered_one_is_never_believed(
    flow: OAuthFlow, clock: Any, dynamodb: Any
) -> None:
    import secrets

    client_id = flow.client_id()
    late = flow.request_id(flow.authorize(client_id, secrets.token_urlsafe(40)))
    clock.advance(seconds=601)
    assert flow.get(f"/v1/oauth/requests/{late}", "alice").status == 404
    altered = flow.request_id(flow.authorize(client_id, secrets.token_urlsafe(40)))
    key = {"user_id": {"S": f"oreq#{altered}"}, "sk": {"S": "#oreq"}}
    dynamodb.update_item(
        TableName="memory-keys",
        Key=key,
        UpdateExpression="SET #q = :q",
        ExpressionAttributeNames={"#q": "query"},
        ExpressionAttributeValues={":q": {"N": "1"}},
    )
    assert flow.get(f"/v1/oauth/requests/{altered}", "alice").status == 404
    assert flow.decide(altered, "alice").status == 404
