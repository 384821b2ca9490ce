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


def _hs256(header: dict[str, Any], claims: dict[str, Any], key: bytes) -> str:
    """Signed by hand: PyJWT refuses an asymmetric key as an HMAC secret, an attacker's tool does not."""
    import base64
    import hashlib
    import hmac
    import json as json_

    def part(value: bytes) -> str:
        return base64.urlsafe_b64encode(value).rstrip(b"=").decode()

    signed = f"{part(json_.dumps(header).encode())}.{part(json_.dumps(claims).encode())}"
    return f"{signed}.{part(hmac.new(key, signed.encode(), hashlib.sha256).digest())}"


def test_forged_access_tokens_are_refused(flow: OAuthFlow, issuer: Any) -> None:
    import jwt
    from cryptography.hazmat.primitives import serialization

    _, tokens = flow.tokens()
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    person = jwt.decode(issuer.mint("alice"), options={"verify_signature": False})
    public_pem = issuer.rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    unsigned = _hs256({"alg": "none", "typ": "at+jwt"}, claims, b"").rsplit(".", 1)[0] + "."
    forged = [
        unsigned,
        tokens["access_token"].rsplit(".", 1)[0] + ".",
        _hs256({"alg": "HS256", "typ": "at+jwt"}, claims, public_pem),
        issuer.mint("alice", aud=RESOURCE, cnx=claims["cnx"]),
    ]
    for token in forged:
        assert flow.mcp(token).status == 401, token[:40]
    # the person's routes: no HS256 token signed with the issuer's public key, nor with the access-token shape
    for header in ({"alg": "HS256", "kid": "local-rs"}, {"alg": "HS256", "typ": "at+jwt"}):
        assert flow.get("/v1/memory", token=_hs256(header, person, public_pem)).status == 401
    assert flow.mcp(tokens["access_token"]).status == 200


def test_refused_tokens_and_codes_never_reach_the_logs(flow: OAuthFlow, capsys: Any, caplog: Any) -> None:
    caplog.set_level("DEBUG")
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    code = flow.code(client_id, verifier)
    first = flow.exchange(client_id, code, verifier).body
    flow.exchange(client_id, code, verifier)  # replayed
    flow.refresh(flow.client_id(), first["refresh_token"])  # another client's
    flow.get("/v1/memory", token=first["access_token"])
    flow.refresh(client_id, "pmr_" + "x" * 43)
    seen = capsys.readouterr().out + capsys.readouterr().err + caplog.text
    for secret in (code, first["access_token"], first["refresh_token"], verifier):
        assert secret not in seen and secret[-16:] not in seen


@pytest.mark.parametrize("mark", ["\u202e", "\u2066", "\u2067", "\u2068", "\u200f", "\u061c", "\u200b", "\U000e0041"])
def test_a_client_name_with_bidi_or_invisible_controls_is_refused(flow: OAuthFlow, mark: str) -> None:
    answer = flow.register(client_name=f"Claude{mark}lai.live")
    assert answer.status == 400 and answer.body["error"] == "invalid_client_metadata"


def test_many_redirect_uris_or_an_oversized_registration_is_refused(flow: OAuthFlow) -> None:
    many = [f"https://claude.ai/cb{i}" for i in range(11)]
    assert (
        flow.post_json("/oauth/register", {"redirect_uris": many, "token_endpoint_auth_method": "none"}).status == 400
    )
    big = {"redirect_uris": ["https://claude.ai/cb"], "token_endpoint_auth_method": "none", "x": "a" * 20_000}
    answer = flow.post_json("/oauth/register", big)
    assert answer.status in (400, 413) and "client_id" not in (answer.body or {})


@pytest.mark.parametrize("name", ["Claude", "claude", "\u0421laude", "CLAUDE", "C l a u d e", "CIaude", "Claude 2"])
def test_a_client_may_not_call_itself_claude_off_claudes_hosts(flow: OAuthFlow, dynamodb: Any, name: str) -> None:
    # RFC 7591 §3.2.2: metadata the server refuses is `invalid_client_metadata`, and nothing is registered.
    answer = flow.register("http://127.0.0.1:33418/callback", client_name=name)
    assert answer.status == 400 and answer.body["error"] == "invalid_client_metadata", (name, answer.body)
    assert "client_id" not in answer.body
    rows = dynamodb.scan(TableName="memory-keys")["Items"]
    assert not [r for r in rows if r["user_id"]["S"].startswith("oclient#")]


@pytest.mark.parametrize(
    "uri",
    [
        "https://claude.ai@evil.example/cb",
        "https://claude.ai%2F@evil.example/cb",
        "https://claude.ai:443@evil.example/cb",
        "https://evil.example#@claude.ai/cb",
        "https://evil.example\\@claude.ai/cb",
        "https://claude.ai.evil.example/cb",
        "https://claude.ai./cb",
        "https://xn--clude-jua.ai/cb",
        "https://cl\u0430ude.ai/cb",
        "javascript:alert(1)//claude.ai",
        "data:text/html,claude.ai",
        "//claude.ai/cb",
        "https:///claude.ai/cb",
        "http://127.0.0.2/cb",
        "http://0x7f000001/cb",
        "http://[::ffff:127.0.0.1]/cb",
    ],
)
def test_registration_refuses_redirect_uris_that_lead_elsewhere(flow: OAuthFlow, uri: str) -> None:
    answer = flow.register(uri)
    assert answer.status == 400 and "client_id" not in answer.body, answer.body


@pytest.mark.parametrize(
    "variant",
    [
        "https://CLAUDE.AI/api/mcp/auth_callback",
        "https://claude.ai/api/mcp/auth_callback?x=1",
        "https://claude.ai/api/mcp/auth_callback#x",
        "https://claude.ai/api/mcp/auth_callback%2F",
        "https://claude.ai/api/mcp/AUTH_CALLBACK",
        "https://claude.ai:443/api/mcp/auth_callback",
        "https://claude.ai/api/mcp/auth_callback/../auth_callback",
    ],
)
def test_authorize_compares_the_redirect_uri_exactly_and_never_redirects_an_error_there(
    flow: OAuthFlow, variant: str
) -> None:
    answer = flow.authorize(flow.client_id(), secrets.token_urlsafe(40), redirect_uri=variant)
    assert answer.status == 400 and "location" not in answer.headers


@pytest.mark.parametrize(
    "change",
    [
        {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback", "https://evil.example/cb"]},
        {"redirect_uris": "https://evil.example/cb"},
        {"client_name": "Claude\u202e"},
        {"client_name": ["Claude"]},
        {"client_uri": "javascript:alert(1)"},
        {"token_endpoint_auth_method": "client_secret_jwt"},
    ],
)
def test_an_altered_client_row_is_not_believed(flow: OAuthFlow, dynamodb: Any, change: dict[str, Any]) -> None:
    import json as json_

    client_id = flow.client_id()
    key = {"user_id": {"S": f"oclient#{client_id}"}, "sk": {"S": "#oclient"}}
    stored = json_.loads(dynamodb.get_item(TableName="memory-keys", Key=key)["Item"]["metadata"]["S"])
    altered = json_.dumps({**stored, **change})
    dynamodb.update_item(
        TableName="memory-keys",
        Key=key,
        UpdateExpression="SET metadata = :m",
        ExpressionAttributeValues={":m": {"S": altered}},
    )
    clients.forget_documents()
    uri = "https://evil.example/cb" if "redirect_uris" in change else None
    answer = flow.authorize(client_id, secrets.token_urlsafe(40), **({"redirect_uri": uri} if uri else {}))
    assert answer.status == 400 and answer.body["error"] == "invalid_client", answer.body
    assert "location" not in answer.headers
