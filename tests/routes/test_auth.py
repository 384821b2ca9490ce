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
        pytest.param(
            lambda i: _b64({"alg": "none", "typ": "JWT"})
            + "."
            + _b64({"sub": "alice", "iss": i.issuer, "aud": i.audience, "exp": int(time.time()) + 600})
            + ".",
            id="alg-none",
        ),
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

    public = issuer.rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
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
        issuer.rsa_key,
        algorithm="RS256",
        headers={"kid": "local-rs"},
    )
    assert _get(client, token)[0] == 200
    wrong = jwt.encode(
        {"sub": "alice", "iss": issuer.issuer, "exp": now + 600, "token_use": "access", "client_id": "other"},
        issuer.rsa_key,
        algorithm="RS256",
        headers={"kid": "local-rs"},
    )
    assert _get(client, wrong)[0] == 401


# ---- hostile token shapes (issue 13): refused as 401 before any parser recurses ----------------


def _segment(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _signed(issuer: Any, header: str, payload: str) -> str:
    """A token whose header and payload are exactly these JSON texts, RS256-signed by the trusted key."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    signing_input = f"{_segment(header.encode())}.{_segment(payload.encode())}"
    signature = issuer.rsa_key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{_segment(signature)}"


def _claims_json(issuer: Any, user: str, **extra: Any) -> str:
    now = int(time.time())
    return json.dumps({"sub": user, "iss": issuer.issuer, "aud": issuer.audience, "exp": now + 600, **extra})


def _with_signature(token: str, change: Any) -> str:
    head, payload, signature = token.split(".")
    return f"{head}.{payload}.{change(signature)}"


def _noncanonical_tail(signature: str) -> str:
    """The same signature bytes spelled differently: an RS256 signature (256 bytes) leaves 4 bits of
    its last base64url character unused, and lenient decoders ignore them."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(signature[-1])
    assert last & 0b1111 == 0  # canonical: unused bits are zero
    return signature[:-1] + alphabet[last | 0b0001]


def _standard_alphabet(signature: str) -> str:
    return signature.replace("-", "+").replace("_", "/")


@pytest.mark.parametrize(
    "make_token",
    [
        pytest.param(
            lambda i, u: _segment(('{"alg":"RS256","kid":"local-rs","x":' + _nested(100_000) + "}").encode())
            + "."
            + i.mint(u).split(".", 1)[1],
            id="header-nested-100000-deep",
        ),
        pytest.param(
            lambda i, u: _segment(('{"alg":"RS256","kid":"local-rs","x":' + _nested(300) + "}").encode())
            + "."
            + i.mint(u).split(".", 1)[1],
            id="header-nested-300-deep-within-size",
        ),
        pytest.param(
            lambda i, u: _signed(i, '{"alg":"RS256","kid":"local-rs","x":' + _nested(9) + "}", _claims_json(i, u)),
            id="signed-header-nested-9-deep",
        ),
        pytest.param(
            lambda i, u: _signed(
                i, '{"alg":"RS256","kid":"local-rs"}', _claims_json(i, u)[:-1] + ',"x":' + _nested(2000) + "}"
            ),
            id="signed-payload-nested-2000-deep",
        ),
        pytest.param(
            lambda i, u: _signed(i, '{"alg":"RS256","kid":"local-rs"}', _claims_json(i, u, pad="p" * 9000)),
            id="signed-oversized-payload",
        ),
        pytest.param(
            lambda i, u: _signed(i, '{"alg":"RS256","kid":"local-rs","crit":["exp"],"exp":1}', _claims_json(i, u)),
            id="signed-crit-header",
        ),
        pytest.param(lambda i, u: i.mint(u) + "==", id="signature-padded"),
        pytest.param(lambda i, u: i.mint(u) + "=", id="signature-one-pad"),
        pytest.param(lambda i, u: _with_signature(i.mint(u), _noncanonical_tail), id="signature-unused-bits-set"),
        pytest.param(
            lambda i, u: _with_signature(i.mint(u), lambda s: s[:100] + "!" + s[100:]), id="signature-stray-character"
        ),
        pytest.param(lambda i, u: i.mint(u).replace(".", "=.", 1), id="header-padded"),
        pytest.param(lambda i, u: i.mint(u) + ".", id="four-segments"),
    ],
)
def test_hostile_token_shapes_are_401_and_store_nothing(client: Any, issuer: Any, make_token: Any) -> None:
    """Each probe of issue 13 through the real route: a 401 in the contract's shape, never a crash,
    and a write carrying it leaves the user's memory as it was."""
    user = "hostile-shape"
    good = issuer.mint(user)
    client.http.put(
        "/v1/memory/settings", headers={"Authorization": f"Bearer {good}"}, body=json.dumps({"enabled": True})
    )
    token = make_token(issuer, user)
    status, body = _get(client, token)
    assert status == 401 and body == {"code": "unauthorized", "message": body["message"]}
    response = client.http.post(
        "/v1/memory", headers={"Authorization": f"Bearer {token}"}, body=json.dumps({"text": "Prefers tea"})
    )
    assert response.status_code == 401
    status, view = _get(client, good)
    assert status == 200 and view["enabled"] is True and view["items"] == []


def test_the_same_signature_in_the_standard_base64_alphabet_is_401(client: Any, issuer: Any) -> None:
    token = next(t for t in (issuer.mint("alice") for _ in range(20)) if set(t.split(".")[2]) & {"-", "_"})
    assert _get(client, token)[0] == 200
    assert _get(client, _with_signature(token, _standard_alphabet))[0] == 401


def test_a_shallow_signed_header_and_payload_still_pass(client: Any, issuer: Any) -> None:
    """The depth cap is above real tokens: a header with a nested member and claims nested a few levels pass."""
    header = '{"alg":"RS256","kid":"local-rs","typ":"JWT","x":' + _nested(7) + "}"
    payload = _claims_json(issuer, "alice", address={"street": {"lines": [["a", "b"]]}}, groups=["g1", "g2"])
    assert _get(client, _signed(issuer, header, payload))[0] == 200
    unsigned_bits = _with_signature(_signed(issuer, header, payload), _noncanonical_tail)
    assert _get(client, unsigned_bits)[0] == 401


def test_a_deeply_nested_header_is_a_401_over_http(live: Any) -> None:
    """The probe as deployed callers send it: the real local server answers 401 in the contract's
    shape (before, the authorizer died with RecursionError and no response came back)."""
    token = live.token("deep-header")
    head = _segment(('{"alg":"RS256","kid":"local-rs","x":' + _nested(3000) + "}").encode())
    for hostile in (head + "." + token.split(".", 1)[1], token + "=="):
        status, body, _ = live.request("GET", "/v1/memory", token=hostile)
        assert status == 401 and body["code"] == "unauthorized"
    assert live.request("GET", "/v1/memory", token=token)[0] == 200
