"""The token verifier's own pieces: pure-Python RS256/ES256 checks, JWKS parsing, the cached JWKS URL, lazy imports.

Tokens are signed by `cryptography` (local/dev_tokens.py), so the pure-Python verification is checked
against an independent implementation. tests/test_auth.py covers the same refusals through the API.
"""
from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.asymmetric import rsa as crypto_rsa

from chalicelib.auth import jwks, signatures
from chalicelib.auth.tokens import ALGORITHMS, TokenVerifier
from chalicelib.config import JwtSettings
from chalicelib.errors import Unauthorized
from local.dev_tokens import LOCAL_AUDIENCE, LOCAL_ISSUER, DevTokenIssuer

ROOT = Path(__file__).resolve().parent.parent


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _claims(**extra: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"sub": "alice", "iss": LOCAL_ISSUER, "aud": LOCAL_AUDIENCE, "iat": now, "exp": now + 600, **extra}


def _sign(issuer: DevTokenIssuer, algorithm: str, kid: str, **extra: Any) -> str:
    """A token signed by cryptography with the issuer's key for `algorithm`, under any `kid`."""
    key = issuer.rsa_key if algorithm == "RS256" else issuer.ec_key
    return jwt.encode(_claims(**extra), key, algorithm=algorithm, headers={"kid": kid})


def _inline(issuer: DevTokenIssuer) -> TokenVerifier:
    return TokenVerifier(JwtSettings(LOCAL_ISSUER, LOCAL_AUDIENCE, jwks_url=None, jwks_inline=issuer.jwks()))


def _refused(verifier: TokenVerifier, token: str) -> bool:
    try:
        verifier.user_id(f"Bearer {token}")
    except Unauthorized:
        return True
    return False


def _jwk(issuer: DevTokenIssuer, kid: str) -> dict[str, Any]:
    return copy.deepcopy(next(k for k in issuer.jwks()["keys"] if k["kid"] == kid))


@pytest.fixture(scope="module")
def other() -> DevTokenIssuer:
    """Same issuer, audience and kids as the trusted one, but keys the service has never seen."""
    return DevTokenIssuer()


# ---- signatures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_tokens_signed_by_cryptography_verify_in_pure_python(issuer: DevTokenIssuer, algorithm: str) -> None:
    assert _inline(issuer).user_id("Bearer " + issuer.mint("alice", algorithm=algorithm)) == "alice"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_token_signed_by_another_key_under_a_trusted_kid_is_refused(issuer: DevTokenIssuer, other: DevTokenIssuer, algorithm: str) -> None:
    assert _refused(_inline(issuer), other.mint("alice", algorithm=algorithm))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_tampered_payload_is_refused(issuer: DevTokenIssuer, algorithm: str) -> None:
    header, _, signature = issuer.mint("alice", algorithm=algorithm).split(".")
    forged = _b64(json.dumps(_claims(sub="mallory")).encode())
    assert _refused(_inline(issuer), f"{header}.{forged}.{signature}")


@pytest.mark.parametrize(("algorithm", "kid"), [("ES256", "local-rs"), ("RS256", "local-es")])
def test_a_token_naming_a_key_of_the_other_algorithm_is_refused(issuer: DevTokenIssuer, algorithm: str, kid: str) -> None:
    assert _refused(_inline(issuer), _sign(issuer, algorithm, kid))


def test_an_rsa_key_never_checks_an_es256_token_nor_the_reverse(issuer: DevTokenIssuer) -> None:
    rsa_key = signatures.RS256.from_jwk(_jwk(issuer, "local-rs"))
    ec_key = signatures.ES256.from_jwk(_jwk(issuer, "local-es"))
    with pytest.raises(jwt.InvalidKeyError):
        signatures.verify(_sign(issuer, "ES256", "local-es"), rsa_key, "ES256")
    with pytest.raises(jwt.InvalidKeyError):
        signatures.verify(_sign(issuer, "RS256", "local-rs"), ec_key, "RS256")
    with pytest.raises(jwt.InvalidAlgorithmError):  # the key's algorithm, not the header's, decides
        signatures.verify(_sign(issuer, "ES256", "local-es"), rsa_key, "RS256")


def test_our_jws_knows_only_rs256_and_es256() -> None:
    assert sorted(signatures.jws().get_algorithms()) == ["ES256", "RS256"]
    for name in ("none", "HS256", "RS512", "ES384", "PS256", "EdDSA"):
        with pytest.raises(NotImplementedError):
            signatures.jws().get_algorithm_by_name(name)


def test_an_rs256_header_over_a_sha512_pkcs1_signature_is_refused(issuer: DevTokenIssuer) -> None:
    header = _b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "local-rs"}).encode())
    payload = _b64(json.dumps(_claims()).encode())
    signature = issuer.rsa_key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA512())
    assert _refused(_inline(issuer), f"{header}.{payload}.{_b64(signature)}")
    good = issuer.rsa_key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
    assert not _refused(_inline(issuer), f"{header}.{payload}.{_b64(good)}")


def test_an_es256_signature_in_der_form_is_refused(issuer: DevTokenIssuer) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    header = _b64(json.dumps({"alg": "ES256", "typ": "JWT", "kid": "local-es"}).encode())
    payload = _b64(json.dumps(_claims()).encode())
    der = issuer.ec_key.sign(f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
    assert _refused(_inline(issuer), f"{header}.{payload}.{_b64(der)}")


def test_the_verifier_never_signs() -> None:
    with pytest.raises(NotImplementedError):
        signatures.RS256().sign(b"message", None)


# ---- JWKS parsing -------------------------------------------------------------------------------


def test_a_trusted_jwks_yields_one_key_per_algorithm_found_by_kid(issuer: DevTokenIssuer) -> None:
    keys = jwks.parse_jwks(issuer.jwks())
    assert keys.find("local-rs", "RS256") is not None and keys.find("local-es", "ES256") is not None
    assert keys.find("local-rs", "ES256") is None and keys.find("local-es", "RS256") is None
    assert keys.find("unknown", "RS256") is None


def _mutations() -> list[Any]:
    def drop(name: str) -> Any:
        return lambda k: {n: v for n, v in k.items() if n != name}

    def put(name: str, value: Any) -> Any:
        return lambda k: {**k, name: value}

    return [
        pytest.param("local-rs", put("kty", "oct"), id="kty-oct"),
        pytest.param("local-rs", lambda k: {"kty": "oct", "k": _b64(b"secret"), "kid": "local-rs"}, id="symmetric-key"),
        pytest.param("local-rs", put("use", "enc"), id="rsa-use-enc"),
        pytest.param("local-es", put("use", "enc"), id="ec-use-enc"),
        pytest.param("local-rs", put("alg", "RS512"), id="rsa-other-alg"),
        pytest.param("local-rs", put("alg", "ES256"), id="rsa-claims-es256"),
        pytest.param("local-es", put("alg", "RS256"), id="ec-claims-rs256"),
        pytest.param("local-rs", put("key_ops", ["encrypt"]), id="key-ops-without-verify"),
        pytest.param("local-rs", drop("n"), id="rsa-missing-n"),
        pytest.param("local-rs", drop("e"), id="rsa-missing-e"),
        pytest.param("local-rs", put("n", "not base64!"), id="rsa-n-not-base64url"),
        pytest.param("local-rs", put("n", _b64((2**1023 + 1).to_bytes(128, "big"))), id="rsa-1024-bits"),
        pytest.param("local-es", drop("x"), id="ec-missing-x"),
        pytest.param("local-es", drop("crv"), id="ec-missing-crv"),
        pytest.param("local-es", put("crv", "P-384"), id="ec-other-curve"),
        pytest.param("local-es", put("y", _b64(b"\x01" * 32)), id="ec-point-off-curve"),
        pytest.param("local-es", put("x", _b64(b"\x01" * 31)), id="ec-short-coordinate"),
        pytest.param("local-es", put("kid", 7), id="kid-not-a-string"),
    ]


@pytest.mark.parametrize(("kid", "mutate"), _mutations())
def test_unusable_jwks_entries_are_left_out(issuer: DevTokenIssuer, kid: str, mutate: Any) -> None:
    algorithm = {"local-rs": "RS256", "local-es": "ES256"}[kid]
    mutated = jwks.parse_jwks({"keys": [mutate(_jwk(issuer, kid))]})
    assert mutated.find(kid, algorithm) is None and mutated.find(None, algorithm) is None
    assert jwks.parse_jwks({"keys": [_jwk(issuer, kid)]}).find(kid, algorithm) is not None  # unmutated: usable


def test_a_token_is_refused_when_its_key_is_marked_for_encryption(issuer: DevTokenIssuer) -> None:
    document = issuer.jwks()
    document["keys"] = [{**k, "use": "enc"} if k["kid"] == "local-rs" else k for k in document["keys"]]
    verifier = TokenVerifier(JwtSettings(LOCAL_ISSUER, LOCAL_AUDIENCE, jwks_url=None, jwks_inline=document))
    assert _refused(verifier, issuer.mint("alice", algorithm="RS256"))
    assert not _refused(verifier, issuer.mint("alice", algorithm="ES256"))


@pytest.mark.parametrize("document", [[], {"keys": {}}, {"key": []}, "keys"])
def test_a_document_that_is_not_a_jwks_is_an_error(document: Any) -> None:
    with pytest.raises(jwks.JwksError):
        jwks.parse_jwks(document)


def test_without_a_kid_only_a_sole_key_of_the_tokens_algorithm_is_used(issuer: DevTokenIssuer, other: DevTokenIssuer) -> None:
    keys = jwks.parse_jwks({"keys": [_jwk(issuer, "local-rs"), _jwk(issuer, "local-es")]})
    assert keys.find(None, "RS256") == keys.find("local-rs", "RS256") is not None
    two_rsa = jwks.parse_jwks({"keys": [_jwk(issuer, "local-rs"), {**_jwk(other, "local-rs"), "kid": "second"}]})
    assert two_rsa.find(None, "RS256") is None


# ---- JWKS from a URL ----------------------------------------------------------------------------


class _JwksServer:
    """A JWKS endpoint on 127.0.0.1 that counts its fetches and can change its answer."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document, self.status, self.fetches = document, 200, 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                server.fetches += 1
                body = json.dumps(server.document).encode()
                self.send_response(server.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/.well-known/jwks.json"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> _JwksServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(issuer: DevTokenIssuer) -> Iterator[_JwksServer]:
    with _JwksServer(issuer.jwks()) as running:
        yield running


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _url_verifier(url: str) -> TokenVerifier:
    return TokenVerifier(JwtSettings(LOCAL_ISSUER, LOCAL_AUDIENCE, jwks_url=url, jwks_inline=None))


def test_keys_from_the_url_are_fetched_once_and_cached(issuer: DevTokenIssuer, server: _JwksServer) -> None:
    verifier = _url_verifier(server.url)
    for algorithm in ALGORITHMS * 3:
        assert verifier.user_id("Bearer " + issuer.mint("alice", algorithm=algorithm)) == "alice"
    assert server.fetches == 1


def test_unknown_kids_do_not_hammer_the_issuer(issuer: DevTokenIssuer, server: _JwksServer) -> None:
    verifier = _url_verifier(server.url)
    assert not _refused(verifier, issuer.mint("alice"))
    for n in range(20):
        assert _refused(verifier, _sign(issuer, "RS256", f"forged-{n}"))
    assert server.fetches == 1


@pytest.mark.parametrize("token", [
    pytest.param(lambda i: _b64(b'{"alg":"none","kid":"local-rs"}') + "." + _b64(json.dumps(_claims()).encode()) + ".", id="alg-none"),
    pytest.param(lambda i: jwt.encode(_claims(), "public-key-bytes", algorithm="HS256", headers={"kid": "local-rs"}), id="hs256"),
    pytest.param(lambda i: _sign(i, "RS256", "local-rs").replace(".", "!", 1), id="unparseable"),
])
def test_tokens_of_other_algorithms_are_refused_before_any_key_is_fetched(issuer: DevTokenIssuer, server: _JwksServer, token: Any) -> None:
    assert _refused(_url_verifier(server.url), token(issuer))
    assert server.fetches == 0


def test_a_rotated_key_is_fetched_once_then_refreshes_wait_a_minute(issuer: DevTokenIssuer, server: _JwksServer) -> None:
    clock = _Clock()
    remote = jwks.RemoteJwks(server.url, clock=clock)
    assert remote.key("local-rs", "RS256") is not None and server.fetches == 1
    server.document = {"keys": [{**_jwk(issuer, "local-rs"), "kid": "rotated"}]}
    clock.now += 1
    assert remote.key("rotated", "RS256") is None and server.fetches == 1  # fetched a second ago: wait
    clock.now += jwks.MIN_REFRESH_SECONDS
    assert remote.key("rotated", "RS256") is not None and server.fetches == 2  # unknown kid: one refresh
    for n in range(10):
        assert remote.key(f"forged-{n}", "RS256") is None
    assert remote.key("rotated", "RS256") is not None and server.fetches == 2
    assert remote.key("local-rs", "RS256") is None  # the retired key is gone with the refresh


def test_the_cache_expires_after_its_lifespan(issuer: DevTokenIssuer, server: _JwksServer) -> None:
    clock = _Clock()
    remote = jwks.RemoteJwks(server.url, clock=clock)
    remote.key("local-rs", "RS256")
    clock.now += jwks.LIFESPAN_SECONDS - 1
    remote.key("local-rs", "RS256")
    assert server.fetches == 1
    clock.now += 1
    assert remote.key("local-rs", "RS256") is not None and server.fetches == 2


def test_a_failing_issuer_keeps_the_held_keys_and_is_retried_sparingly(issuer: DevTokenIssuer, server: _JwksServer) -> None:
    clock = _Clock()
    remote = jwks.RemoteJwks(server.url, clock=clock)
    remote.key("local-rs", "RS256")
    server.status = 500
    clock.now += jwks.LIFESPAN_SECONDS
    assert remote.key("local-rs", "RS256") is not None and server.fetches == 2  # stale keys serve on
    assert remote.key("local-rs", "RS256") is not None and server.fetches == 2
    clock.now += jwks.MIN_REFRESH_SECONDS
    remote.key("local-rs", "RS256")
    assert server.fetches == 3


def test_an_unreachable_issuer_refuses_tokens_and_is_retried_after_a_pause(issuer: DevTokenIssuer, server: _JwksServer) -> None:
    clock = _Clock()
    server.status = 503
    remote = jwks.RemoteJwks(server.url, clock=clock)
    assert remote.key("local-rs", "RS256") is None and remote.key("local-rs", "RS256") is None
    assert server.fetches == 1
    server.status = 200
    clock.now += jwks.RETRY_SECONDS
    assert remote.key("local-rs", "RS256") is not None and server.fetches == 2


def test_a_failing_issuer_means_401_not_an_error(issuer: DevTokenIssuer, server: _JwksServer) -> None:
    server.status = 500
    assert _refused(_url_verifier(server.url), issuer.mint("alice"))
    assert _refused(_url_verifier("file:///etc/passwd"), issuer.mint("alice"))


# ---- import cost --------------------------------------------------------------------------------


def _modules_after(code: str, stdin: str = "") -> list[str]:
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(m for m in ('jwt', 'rsa', 'ecdsa', 'cryptography') if m in sys.modules)))"
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_importing_the_verifier_loads_no_jwt_or_crypto_library() -> None:
    assert _modules_after("import chalicelib.auth.tokens") == []


def test_an_rs256_token_never_loads_ecdsa_even_when_the_set_lists_ec_keys(issuer: DevTokenIssuer) -> None:
    given = json.dumps({"jwks": issuer.jwks(), "token": issuer.mint("alice")})
    loaded = _modules_after(
        "import json, sys\n"
        "from chalicelib.auth.tokens import TokenVerifier\nfrom chalicelib.config import JwtSettings\n"
        "given = json.load(sys.stdin)\n"
        f"settings = JwtSettings({LOCAL_ISSUER!r}, {LOCAL_AUDIENCE!r}, None, given['jwks'])\n"
        "assert TokenVerifier(settings).user_id('Bearer ' + given['token']) == 'alice'",
        stdin=given,
    )
    assert "rsa" in loaded and "jwt" in loaded and "ecdsa" not in loaded


def test_a_fresh_rsa_key_of_our_own_checks_too() -> None:
    """Not only the session's issuer key: a key generated here, published as a JWK by hand."""
    private = crypto_rsa.generate_private_key(public_exponent=65537, key_size=3072)
    numbers = private.public_key().public_numbers()
    jwk = {"kty": "RSA", "kid": "k3072", "n": _b64(numbers.n.to_bytes(384, "big")), "e": _b64(numbers.e.to_bytes(3, "big"))}
    verifier = TokenVerifier(JwtSettings(LOCAL_ISSUER, LOCAL_AUDIENCE, jwks_url=None, jwks_inline={"keys": [jwk]}))
    token = jwt.encode(_claims(), private, algorithm="RS256", headers={"kid": "k3072"})
    assert verifier.user_id("Bearer " + token) == "alice"
