"""OAuth for /mcp: every refusal, through the real routes against moto, in the error shape RFC 6749 gives it."""

from __future__ import annotations

import json
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from chalicelib.oauth import clients
from chalicelib.services import connections as connections_service
from tests.support.oauth_flow import REDIRECT, Answer, OAuthFlow
from tests.support.raw_storage import every_item


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    connections_service.forget_cache()
    clients.forget_documents()


@pytest.fixture
def flow(client: Any, issuer: Any) -> OAuthFlow:
    return OAuthFlow(client, issuer)


def _refused(answer: Answer, error: str, status: int = 400) -> None:
    assert answer.status == status, answer.body
    assert {"error", "error_description"} <= set(answer.body) <= {"error", "error_description", "state"}
    assert answer.body["error"] == error
    assert answer.headers["cache-control"] == "no-store"


def _redirected_error(answer: Answer, error: str) -> None:
    assert answer.status == 302
    location = urlsplit(answer.headers["location"])
    assert location._replace(query="").geturl() == REDIRECT
    query = parse_qs(location.query)
    assert query["error"] == [error] and query["state"] == ["st-1"] and "code" not in query


def _oauth_rows(dynamodb: Any, prefix: str) -> list[Any]:
    return [i for i in every_item(dynamodb)["memory-keys"] if i["user_id"]["S"].startswith(prefix)]


def _connections(api: Any, user: str = "alice") -> list[Any]:
    return list(api.call("GET", "/v1/connections", user)[1]["connections"])


def test_a_redirect_uri_not_registered_is_refused_without_a_redirect(flow: OAuthFlow, dynamodb: Any) -> None:
    client_id = flow.client_id()
    for other in ("https://claude.ai/api/mcp/auth_callback/", "https://evil.example/cb", 'https://x"y'):
        answer = flow.authorize(client_id, secrets.token_urlsafe(40), redirect_uri=other)
        _refused(answer, "invalid_request")
        assert "location" not in answer.headers
    _refused(flow.authorize("made-up-client", secrets.token_urlsafe(40)), "invalid_client")
    assert _oauth_rows(dynamodb, "oreq#") == []


def test_a_code_is_refused_at_another_redirect_uri(flow: OAuthFlow) -> None:
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    code = flow.code(client_id, verifier)
    _refused(flow.exchange(client_id, code, verifier, redirect_uri="https://claude.ai/other"), "invalid_grant")


def test_a_replayed_code_is_refused_and_ends_what_it_made(flow: OAuthFlow, api: Any) -> None:
    api.turn_on("alice")
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    code = flow.code(client_id, verifier)
    first = flow.exchange(client_id, code, verifier)
    assert first.status == 200
    _refused(flow.exchange(client_id, code, verifier), "invalid_grant")
    memory = flow.mcp(first.body["access_token"], "tools/call", {"name": "memory_context", "arguments": {}})
    assert memory.status == 401
    _refused(flow.refresh(client_id, first.body["refresh_token"]), "invalid_grant")
    assert _connections(api) == []


def test_pkce_is_required_s256_only_and_checked(flow: OAuthFlow, api: Any) -> None:
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    _redirected_error(
        flow.authorize(client_id, verifier, code_challenge=None, code_challenge_method=None), "invalid_request"
    )
    _redirected_error(flow.authorize(client_id, verifier, code_challenge_method="plain"), "invalid_request")
    _redirected_error(flow.authorize(client_id, verifier, code_challenge_method=None), "invalid_request")
    code = flow.code(client_id, verifier)
    _refused(flow.exchange(client_id, code, secrets.token_urlsafe(40)), "invalid_grant")
    _refused(flow.exchange(client_id, flow.code(client_id, verifier), None), "invalid_request")


def test_a_token_for_another_resource_is_refused(flow: OAuthFlow, client: Any) -> None:
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    _redirected_error(flow.authorize(client_id, verifier, resource="https://other.example/mcp"), "invalid_target")
    code = flow.code(client_id, verifier)
    _refused(flow.exchange(client_id, code, verifier, resource="https://other.example/mcp"), "invalid_target")
    _, tokens = flow.tokens()
    headers = {
        "Host": "other.example.org",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {tokens['access_token']}",
    }
    response = client.http.post("/mcp", headers=headers, body='{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
    assert response.status_code == 401  # the token's audience is api.example.org/mcp, not this resource


def test_a_denied_consent_sends_access_denied_and_makes_nothing(flow: OAuthFlow, api: Any, dynamodb: Any) -> None:
    client_id = flow.client_id()
    request_id = flow.request_id(flow.authorize(client_id, secrets.token_urlsafe(40)))
    answer = flow.post_json(f"/v1/oauth/requests/{request_id}", {"approve": False}, "alice")
    assert answer.status == 200
    query = parse_qs(urlsplit(answer.body["redirect"]).query)
    assert query["error"] == ["access_denied"] and query["state"] == ["st-1"] and "code" not in query
    assert _connections(api) == [] and _oauth_rows(dynamodb, "ocode#") == []
    assert flow.decide(request_id, "alice").status == 404  # decided once


def test_an_expired_refresh_token_is_refused(flow: OAuthFlow, clock: Any) -> None:
    client_id, tokens = flow.tokens()
    clock.advance(days=31)
    _refused(flow.refresh(client_id, tokens["refresh_token"]), "invalid_grant")


def test_an_expired_access_token_is_refused_on_mcp(flow: OAuthFlow, clock: Any) -> None:
    _, tokens = flow.tokens()
    assert flow.mcp(tokens["access_token"]).status == 200
    clock.advance(seconds=3601)
    assert flow.mcp(tokens["access_token"]).status == 401


def test_reusing_a_rotated_refresh_token_ends_the_whole_family(flow: OAuthFlow, api: Any) -> None:
    client_id, tokens = flow.tokens()
    newer = flow.refresh(client_id, tokens["refresh_token"])
    assert newer.status == 200
    _refused(flow.refresh(client_id, tokens["refresh_token"]), "invalid_grant")
    _refused(flow.refresh(client_id, newer.body["refresh_token"]), "invalid_grant")
    assert flow.mcp(newer.body["access_token"]).status == 401
    assert _connections(api) == []


def test_a_refresh_token_is_bound_to_its_client(flow: OAuthFlow) -> None:
    client_id, tokens = flow.tokens()
    other = flow.client_id()
    _refused(flow.refresh(other, tokens["refresh_token"]), "invalid_grant")
    assert flow.refresh(client_id, tokens["refresh_token"]).status == 200  # the other client's try spent nothing


def test_the_sign_in_token_is_refused_on_mcp_and_the_access_token_on_every_other_route(
    flow: OAuthFlow, issuer: Any
) -> None:
    _, tokens = flow.tokens()
    assert flow.mcp(issuer.mint("alice")).status == 401
    for path in ("/v1/memory", "/v1/connections", "/v1/agent/memory", "/v1/agents"):
        assert flow.get(path, token=tokens["access_token"]).status == 401, path
    assert flow.mcp(tokens["access_token"]).status == 200


def test_revoking_on_the_agents_tab_ends_access_and_refresh(flow: OAuthFlow, api: Any) -> None:
    client_id, tokens = flow.tokens()
    (connection,) = _connections(api)
    assert api.call("DELETE", f"/v1/connections/{connection['id']}", "alice")[0] == 204
    assert flow.mcp(tokens["access_token"]).status == 401
    _refused(flow.refresh(client_id, tokens["refresh_token"]), "invalid_grant")


def test_a_request_is_bound_to_the_first_person_who_opens_it(flow: OAuthFlow, api: Any) -> None:
    request_id = flow.request_id(flow.authorize(flow.client_id(), secrets.token_urlsafe(40)))
    assert flow.get(f"/v1/oauth/requests/{request_id}", "alice").status == 200
    assert flow.get(f"/v1/oauth/requests/{request_id}", "bob").body["code"] == "not_found"
    assert flow.decide(request_id, "bob").status == 404
    assert flow.decide("0" * 32, "alice").status == 404
    assert flow.decide(request_id, "alice").status == 200
    assert _connections(api, "bob") == [] and len(_connections(api)) == 1


def test_registration_refuses_redirects_off_the_allowed_hosts(flow: OAuthFlow) -> None:
    for uri in ("http://claude.ai/cb", "https://evil.example/cb", "https://10.0.0.1/cb"):
        _refused(flow.register(uri), "invalid_redirect_uri")
    for uri in ("https://claude.ai/cb#x", "https://u@claude.ai/cb"):  # refused by Authlib's RFC 7591 claims first
        _refused(flow.register(uri), "invalid_client_metadata")
    _refused(flow.register(REDIRECT, token_endpoint_auth_method="private_key_jwt"), "invalid_client_metadata")
    assert flow.register("http://127.0.0.1:33418/callback", client_name="Claude Code").status == 201


def test_a_confidential_client_must_send_its_secret(flow: OAuthFlow) -> None:
    registered = flow.register(token_endpoint_auth_method="client_secret_post").body
    assert registered["client_secret"]
    verifier = secrets.token_urlsafe(40)
    code = flow.code(registered["client_id"], verifier)
    _refused(flow.exchange(registered["client_id"], code, verifier, client_secret="wrong"), "invalid_client", 401)


def test_no_token_reaches_the_logs_or_the_journal(flow: OAuthFlow, api: Any, capsys: Any, caplog: Any) -> None:
    caplog.set_level("DEBUG")
    client_id, tokens = flow.tokens()
    again = flow.refresh(client_id, tokens["refresh_token"]).body
    flow.mcp(again["access_token"])
    journal = repr(api.call("GET", "/v1/memory/journal", "alice")[1])
    seen = capsys.readouterr().out + capsys.readouterr().err + caplog.text + journal
    for secret in (tokens["access_token"], tokens["refresh_token"], again["access_token"], again["refresh_token"]):
        assert secret not in seen and secret[-20:] not in seen
    assert "keep.memory.connection" in journal


def test_a_refused_access_token_is_told_where_the_metadata_is(flow: OAuthFlow, clock: Any) -> None:
    _, tokens = flow.tokens()
    clock.advance(seconds=3601)
    answer = flow.mcp(tokens["access_token"])
    assert answer.status == 401 and answer.body["code"] == "unauthorized"
    assert answer.headers["www-authenticate"] == (
        'Bearer resource_metadata="http://api.example.org/.well-known/oauth-protected-resource/mcp"'
    )
    assert tokens["access_token"] not in json.dumps(answer.body)


def test_the_consent_routes_need_the_persons_own_sign_in(flow: OAuthFlow, api: Any) -> None:
    _, tokens = flow.tokens()
    request_id = flow.request_id(flow.authorize(flow.client_id(), secrets.token_urlsafe(40)))
    for token in (None, tokens["access_token"]):
        headers = {"Host": "api.example.org", "Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        response = flow.client.http.post(f"/v1/oauth/requests/{request_id}", headers=headers, body='{"approve": false}')
        assert response.status_code == 401
    assert flow.get(f"/v1/oauth/requests/{request_id}", "alice").status == 200  # still waiting, unopened by them
