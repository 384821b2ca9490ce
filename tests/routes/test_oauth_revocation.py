"""RFC 7009 token revocation and RFC 9207's `iss` on authorization responses, through the real routes against moto."""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from chalicelib.oauth import clients
from chalicelib.services import connections as connections_service
from tests.support.oauth_flow import BASE, OAuthFlow


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    connections_service.forget_cache()
    clients.forget_documents()


@pytest.fixture
def flow(client: Any, issuer: Any) -> OAuthFlow:
    return OAuthFlow(client, issuer)


def _revoke(flow: OAuthFlow, client_id: str, token: str, **extra: str) -> Any:
    return flow.post_form("/oauth/revoke", {"token": token, "client_id": client_id, **extra})


def _connections(api: Any) -> list[Any]:
    return list(api.call("GET", "/v1/connections", "alice")[1]["connections"])


@pytest.mark.parametrize("kind", ["refresh_token", "access_token"])
def test_revoking_either_token_ends_the_connection(flow: OAuthFlow, api: Any, kind: str) -> None:
    client_id, tokens = flow.tokens()
    assert len(_connections(api)) == 1
    answer = _revoke(flow, client_id, tokens[kind], token_type_hint=kind)
    # RFC 7009 §2.2: 200 once the token is revoked; the body is not used.
    assert answer.status == 200, answer.body
    assert _connections(api) == []  # as the Agents tab's revoke: the connection's rows are gone
    connections_service.forget_cache()
    assert flow.mcp(tokens["access_token"]).status == 401
    refused = flow.refresh(client_id, tokens["refresh_token"])
    assert refused.status == 400 and refused.body["error"] == "invalid_grant"
    events = api.call("GET", "/v1/memory/journal", "alice")[1]
    assert "revoke" in str(events)  # journaled as the page's revoke is


def test_a_wrong_hint_is_no_obstacle(flow: OAuthFlow, api: Any) -> None:
    # RFC 7009 §2.1: a server that cannot find the token under the hint extends its search.
    client_id, tokens = flow.tokens()
    assert _revoke(flow, client_id, tokens["refresh_token"], token_type_hint="access_token").status == 200
    assert _connections(api) == []


@pytest.mark.parametrize("token", ["pmr_" + "x" * 43, "not-a-token", "eyJhbGciOiJIUzI1NiJ9.e30.x", "é"])
def test_an_unknown_token_is_a_200_that_changes_nothing(flow: OAuthFlow, api: Any, token: str) -> None:
    # RFC 7009 §2.2: "invalid tokens do not cause an error response".
    client_id, tokens = flow.tokens()
    answer = _revoke(flow, client_id, token)
    assert answer.status == 200 and answer.headers["cache-control"] == "no-store"
    assert len(_connections(api)) == 1 and flow.mcp(tokens["access_token"]).status == 200


def test_another_clients_token_is_refused_and_kept(flow: OAuthFlow, api: Any) -> None:
    # RFC 7009 §2.1: the server verifies the token was issued to the client asking; if not, the request is refused.
    client_id, tokens = flow.tokens()
    for kind in ("refresh_token", "access_token"):
        answer = _revoke(flow, flow.client_id(), tokens[kind])
        assert answer.status == 400 and answer.body["error"] == "invalid_grant"
    assert len(_connections(api)) == 1
    assert flow.refresh(client_id, tokens["refresh_token"]).status == 200  # nothing was spent


def test_revocation_refuses_what_rfc_7009_refuses(flow: OAuthFlow) -> None:
    client_id, tokens = flow.tokens()
    missing = flow.post_form("/oauth/revoke", {"client_id": client_id})
    assert missing.status == 400 and missing.body["error"] == "invalid_request"  # §2.1: token is REQUIRED
    hint = _revoke(flow, client_id, tokens["refresh_token"], token_type_hint="id_token")
    assert hint.status == 400 and hint.body["error"] == "unsupported_token_type"  # §2.2.1
    unknown = _revoke(flow, "no-such-client", tokens["refresh_token"])
    assert unknown.status in (400, 401) and unknown.body["error"] == "invalid_client"


def test_the_metadata_names_the_revocation_endpoint_and_iss_support(flow: OAuthFlow) -> None:
    metadata = flow.get("/.well-known/oauth-authorization-server").body
    assert metadata["revocation_endpoint"] == f"{BASE}/oauth/revoke"
    assert metadata["authorization_response_iss_parameter_supported"] is True  # RFC 9207 §3


def test_every_authorization_response_names_the_issuer(flow: OAuthFlow) -> None:
    # RFC 9207 §2: "in authorization responses to the client, including error responses ... the iss parameter".
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    request_id = flow.request_id(flow.authorize(client_id, verifier))
    assert flow.get(f"/v1/oauth/requests/{request_id}", "alice").status == 200
    approved = parse_qs(urlsplit(flow.decide(request_id, "alice").body["redirect"]).query)
    assert approved["iss"] == [BASE] and approved["code"]
    request_id = flow.request_id(flow.authorize(client_id, verifier))
    assert flow.get(f"/v1/oauth/requests/{request_id}", "alice").status == 200
    denied = parse_qs(urlsplit(flow.decide(request_id, "alice", approve=False).body["redirect"]).query)
    assert denied["iss"] == [BASE] and denied["error"] == ["access_denied"]
    refused = flow.authorize(client_id, verifier, resource="https://elsewhere.example/mcp")
    assert refused.status == 302
    query = parse_qs(urlsplit(refused.headers["location"]).query)
    assert query["error"] == ["invalid_target"] and query["iss"] == [BASE]
    code = approved["code"][0]
    assert flow.exchange(client_id, code, verifier).status == 200  # a code with iss beside it still trades
