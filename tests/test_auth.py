"""User tokens: only RS256/ES256 JWTs from the configured issuer, for the configured audience, unexpired."""
from __future__ import annotations

import base64
import json
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization


def _get(client: Any, token: str | None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    response = client.http.get("/v1/memory", headers=headers)
    return response.status_code, json.loads(response.body) if response.body else None


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def test_valid_rs256_and_es256_tokens_pass(client: Any, issuer: Any) -> None:
    assert _get(client, issuer.mint("alice"))[0] == 200
    assert _get(client, issuer.mint("alice", algorithm="ES256"))[0] == 200


def test_no_token_is_401(client: Any) -> None:
    status, body = _get(client, None)
    assert status == 401


@pytest.mark.parametrize(
    "make_token",
    [
        pytest.param(lambda i: i.mint("alice", lifetime=-120), id="expired"),
        pytest.param(lambda i: i.mint("alice", iss="https://evil.example/"), id="wrong-issuer"),
        pytest.param(lambda i: i.mint("alice", aud="someone-else"), id="wrong-audience"),
        pytest.param(lambda i: i.mint("alice")[:-4] + "AAAA", id="bad-signature"),
        pytest.param(lambda i: _b64({"alg": "none", "typ": "JWT"}) + "." + _b64({"sub": "alice", "iss": i.issuer, "aud": i.audience, "exp": int(time.time()) + 600}) + ".", id="alg-none"),
        pytest.param(lambda i: _hs256_with_public_key(i), id="hs256-signed-with-public-key"),
        pytest.param(lambda i: DevTokenIssuerOther().mint("alice"), id="unknown-key"),
        pytest.param(lambda i: i.mint("alice", sub=""), id="empty-subject"),
        pytest.param(lambda i: "garbage", id="not-a-jwt"),
    ],
)
def test_invalid_tokens_are_401(client: Any, issuer: Any, make_token: Any) -> None:
    status, body = _get(client, make_token(issuer))
    assert status == 401 and body["code"] == "unauthorized"


def _hs256_with_public_key(issuer: Any) -> str:
    """The classic key-confusion attack: HMAC "signed" with the server's public key bytes."""
    import hashlib
    import hmac

    public = issuer.rsa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    header = _b64({"alg": "HS256", "typ": "JWT", "kid": "local-rs"})
    payload = _b64({"sub": "alice", "iss": issuer.issuer, "aud": issuer.audience, "exp": int(time.time()) + 600})
    signature = hmac.new(public, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


class DevTokenIssuerOther:
    """Same issuer and audience, but a key the service has never seen."""

    def __init__(self) -> None:
        from local.dev_tokens import LOCAL_AUDIENCE, LOCAL_ISSUER, DevTokenIssuer

        self._inner = DevTokenIssuer(LOCAL_ISSUER, LOCAL_AUDIENCE)

    def mint(self, user: str) -> str:
        return self._inner.mint(user)


def test_cognito_access_token_passes_by_client_id_instead_of_aud(client: Any, issuer: Any) -> None:
    now = int(time.time())
    token = jwt.encode(
        {"sub": "alice", "iss": issuer.issuer, "exp": now + 600, "token_use": "access", "client_id": issuer.audience},
        issuer.rsa_key, algorithm="RS256", headers={"kid": "local-rs"},
    )
    assert _get(client, token)[0] == 200
    wrong = jwt.encode(
        {"sub": "alice", "iss": issuer.issuer, "exp": now + 600, "token_use": "access", "client_id": "other"},
        issuer.rsa_key, algorithm="RS256", headers={"kid": "local-rs"},
    )
    assert _get(client, wrong)[0] == 401
