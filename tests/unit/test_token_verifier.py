"""The token verifier's own pieces: RS256/ES256 checks, the compact-form checks, JWKS parsing, the cached JWKS URL, lazy imports.

Tokens are signed by local/dev_tokens.py or by hand with `cryptography`; the verifier checks them
with PyJWT. tests/routes/test_auth.py covers the same refusals through the API.
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
from cryptography.hazmat.primitives.asymmetric import ec, padding
from cryptography.hazmat.primitives.asymmetric import rsa as crypto_rsa

from chalicelib.auth import compact, jwks
from chalicelib.auth.jwks import ALGORITHMS
from chalicelib.auth.tokens import TokenVerifier
from chalicelib.config import JwtSettings
from chalicelib.errors import Unauthorized
from local.dev_tokens import LOCAL_AUDIENCE, LOCAL_ISSUER, DevTokenIssuer

ROOT = Path(__file__).resolve().parents[2]


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


# ---- signatures and algorithms ---------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_valid_tokens_of_both_algorithms_verify(issuer: DevTokenIssuer, algorithm: str) -> None:
    assert _inline(issuer).user_id("Bearer " + issuer.mint("alice", algorithm=algorithm)) == "alice"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_token_signed_by_another_key_under_a_trusted_kid_is_refused(
    issuer: DevTokenIssuer, other: DevTokenIssuer, algorithm: str
) -> None:
    assert _refused(_inline(issuer), other.mint("alice", algorithm=algorithm))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_tampered_payload_is_refused(issuer: DevTokenIssuer, algorithm: str) -> None:
    header, _, signature = issuer.mint("alice", algorithm=algorithm).split(".")
    forged = _b64(json.dumps(_claims(sub="mallory")).encode())
    assert _refused(_inline(issuer), f"{header}.{forged}.{signature}")


@pytest.mark.parametrize(("algorithm", "kid"), [("ES256", "local-rs"), ("RS256", "local-es")])
def test_a_token_naming_a_key_of_the_other_algorithm_is_refused(
    issuer: DevTokenIssuer, algorithm: str, kid: str
) -> None:
    assert _refused(_inline(issuer), _sign(issuer, algorithm, kid))


def test_the_set_holds_public_keys_of_the_right_type_only(issuer: DevTokenIssuer) -> None:
    keys = jwks.parse_jwks(issuer.jwks())
    rsa_key, ec_key = keys.find("local-rs", "RS256"), keys.find("local-es", "ES256")
    assert rsa_key is not None and isinstance(rsa_key.key, crypto_rsa.RSAPublicKey)
    assert ec_key is not None and isinstance(ec_key.key, ec.EllipticCurvePublicKey)
    assert isinstance(ec_key.key.curve, ec.SECP256R1)


def _other_algorithm(issuer: DevTokenIssuer, algorithm: str) -> str:
    """A token of another algorithm, signed with the trusted key of the same type, under its kid."""
    key, kid = (issuer.ec_key, "local-es") if algorithm.startswith("ES") else (issuer.rsa_key, "local-rs")
    return jwt.encode(_claims(), key, algorithm=algorithm, headers={"kid": kid})


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


# ---- the compact form, before any parser ----------------------------------------------------------


def _token(header: str, payload: str, signature: str = "c2ln") -> str:
    return f"{_b64(header.encode())}.{_b64(payload.encode())}.{signature}"


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("{}", 1),
        ('{"a": [1, {"b": []}]}', 4),
        ('{"a": "[[[[{{{{"}', 1),
        ('{"a": "\\"[[[", "b": [[]]}', 3),
        ('{"a": "\\\\", "b": [[]]}', 3),
        ("[" * 50 + "]" * 50, 50),
        ('"unterminated [[[', 3),
    ],
)
def test_json_depth_counts_brackets_outside_strings(text: str, depth: int) -> None:
    assert compact.json_depth(text) == depth


def test_the_depth_cap_is_exact() -> None:
    at_cap = "[" * (compact.MAX_JSON_DEPTH - 1) + "]" * (compact.MAX_JSON_DEPTH - 1)
    assert compact.header_of(_token('{"alg":"RS256","x":' + at_cap + "}", "{}"))["alg"] == "RS256"
    with pytest.raises(compact.MalformedToken):
        compact.header_of(_token('{"alg":"RS256","x":[' + at_cap + "]}", "{}"))
    with pytest.raises(compact.MalformedToken):
        compact.header_of(_token('{"alg":"RS256"}', '{"x":[' + at_cap + "]}"))


def test_the_size_caps_are_exact() -> None:
    def header(length: int) -> str:
        # 3 bytes → 4 characters: a header of 3k bytes is a segment of exactly 4k characters
        base = '{"alg":"RS256","p":""}'
        return base[:-2] + "p" * (length // 4 * 3 - len(base)) + '"}'

    assert len(_b64(header(compact.MAX_HEADER_CHARS).encode())) == compact.MAX_HEADER_CHARS
    compact.header_of(_token(header(compact.MAX_HEADER_CHARS), "{}"))
    with pytest.raises(compact.MalformedToken, match="header too large"):
        compact.header_of(_token(header(compact.MAX_HEADER_CHARS + 4), "{}"))
    prefix = _token('{"alg":"RS256"}', "{}")[: -len("c2ln")]
    room = compact.MAX_TOKEN_CHARS - len(prefix)
    assert room % 4 not in (0, 1)  # so both "A" * room and "A" * (room + 1) are canonical (zero bytes)
    assert len(prefix + "A" * room) == compact.MAX_TOKEN_CHARS
    compact.header_of(prefix + "A" * room)
    with pytest.raises(compact.MalformedToken, match="token too large"):
        compact.header_of(prefix + "A" * (room + 1))


@pytest.mark.parametrize("segment", ["YQ", "YWI", "YWJj", "-_-_", "AAAA" * 10])
def test_canonical_segments_decode(segment: str) -> None:
    assert _b64(compact.canonical_b64url(segment)) == segment


@pytest.mark.parametrize("segment", ["YQ==", "YQ=", "YR", "YWJ", "Y", "YW Jj", "+/+/", "YW\nJj", "", "YWJj."])
def test_other_spellings_are_refused(segment: str) -> None:
    with pytest.raises(compact.MalformedToken):
        compact.canonical_b64url(segment)


@pytest.mark.parametrize(
    "token",
    [
        pytest.param(_token('{"alg":"RS256"}', "{}") + ".", id="four-segments"),
        pytest.param("a.b.c.d.e", id="jwe"),
        pytest.param(_token('["alg"]', "{}"), id="header-not-an-object"),
        pytest.param(_token('{"alg":7}', "{}"), id="alg-not-a-string"),
        pytest.param(_token('{"alg":"RS256","kid":["k"]}', "{}"), id="kid-not-a-string"),
        pytest.param(_token('{"alg":"RS256","b64":false,"crit":["b64"]}', "{}"), id="b64-false"),
        pytest.param(_token('{"alg":"RS256"}', "[]"), id="payload-not-an-object"),
        pytest.param(_token('{"alg":"RS256"}', '{"n":' + "9" * 5000 + "}"), id="integer-too-long"),
        pytest.param(_b64(b'{"alg":"RS256","x":"\xff"}') + ".e30.c2ln", id="header-not-utf8"),
        pytest.param(_token('{"alg":"RS256"}', "{}", signature=""), id="empty-signature"),
    ],
)
def test_malformed_compact_tokens_are_refused(token: str) -> None:
    with pytest.raises(compact.MalformedToken):
        compact.header_of(token)


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
        pytest.param("local-rs", put("d", _b64(b"\x01" * 256)), id="rsa-private-member"),
        pytest.param("local-es", put("d", _b64(b"\x01" * 32)), id="ec-private-member"),
        pytest.param("local-rs", put("e", _b64(b"\x01\x00\x00")), id="rsa-even-exponent"),
        pytest.param("local-rs", lambda k: {**k, "kty": "OKP", "crv": "Ed25519"}, id="kty-okp"),
        pytest.param("local-rs", put("kty", ["RSA"]), id="kty-not-a-string"),
        pytest.param("local-es", put("alg", {"ES256": 1}), id="alg-not-a-string"),
        pytest.param("local-es", put("x", 12), id="ec-x-not-a-string"),
    ]


@pytest.mark.parametrize(("kid", "mutate"), _mutations())
def test_unusable_jwks_entries_are_left_out(issuer: DevTokenIssuer, kid: str, mutate: Any) -> None:
    algorithm = {"local-rs": "RS256", "local-es": "ES256"}[kid]
    mutated = jwks.parse_jwks({"keys": [mutate(_jwk(issuer, kid))]})
    assert mutated.find(kid, algorithm) is None and mutated.find(None, algorithm) is None
    assert jwks.parse_jwks({"keys": [_jwk(issuer, kid)]}).find(kid, algorithm) is not None  # unmutated: usable


@pytest.mark.parametrize(("kid", "mutate"), _mutations())
def test_one_unusable_entry_does_not_lose_the_others(issuer: DevTokenIssuer, kid: str, mutate: Any) -> None:
    """PyJWKSet would raise ValueError for the whole set on some of these; each key is built on its own here."""
    other_kid, other_algorithm = ("local-es", "ES256") if kid == "local-rs" else ("local-rs", "RS256")
    keys = jwks.parse_jwks({"keys": [mutate(_jwk(issuer, kid)), _jwk(issuer, other_kid)]})
    assert keys.find(other_kid, other_algorithm) is not None


def test_pyjwksets_own_parsing_loses_the_whole_set_to_one_bad_key(issuer: DevTokenIssuer) -> None:
    """Why the set is not parsed by PyJWKSet (the measured reason, kept honest if PyJWT changes)."""
    off_curve = {**_jwk(issuer, "local-es"), "y": _b64(b"\x01" * 32)}
    with pytest.raises(ValueError):
        jwt.PyJWKSet([_jwk(issuer, "local-rs"), off_curve])


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


def test_without_a_kid_only_a_sole_key_of_the_tokens_algorithm_is_used(
    issuer: DevTokenIssuer, other: DevTokenIssuer
) -> None:
    keys = jwks.parse_jwks({"keys": [_jwk(issuer, "local-rs"), _jwk(issuer, "local-es")]})
    assert keys.find(None, "RS256") == keys.find("local-rs", "RS256") is not None
    two_rsa = jwks.parse_jwks({"keys": [_jwk(issuer, "local-rs"), {**_jwk(other, "local-rs"), "kid": "second"}]})
    assert two_rsa.find(None, "RS256") is None


# ---- JWKS from a URL ----------------------------------------------------------------------------


class _JwksServer:
    """A JWKS endpoint on 127.0.0.1 that counts its fetches and can change its answer."""

    def __init__(self, document: Any) -> None:
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
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

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


@pytest.mark.parametrize(
    "token",
    [
        pytest.param(
            lambda i: _b64(b'{"alg":"none","kid":"local-rs"}') + "." + _b64(json.dumps(_claims()).encode()) + ".",
            id="alg-none",
        ),
        pytest.param(
            lambda i: jwt.encode(_claims(), "public-key-bytes", algorithm="HS256", headers={"kid": "local-rs"}),
            id="hs256",
        ),
        pytest.param(lambda i: _sign(i, "RS256", "local-rs").replace(".", "!", 1), id="unparseable"),
        *(
            pytest.param(lambda i, a=a: _other_algorithm(i, a), id=a)
            for a in ("RS384", "RS512", "PS256", "ES384", "ES512")
        ),
        pytest.param(
            lambda i: _b64(b'{"alg":"RS256","kid":"local-rs","x":' + b"[" * 5000 + b"]" * 5000 + b"}") + ".e30.c2ln",
            id="deep-header",
        ),
        pytest.param(lambda i: _sign(i, "RS256", "local-rs") + "==", id="padded-signature"),
    ],
)
def test_tokens_of_other_algorithms_are_refused_before_any_key_is_fetched(
    issuer: DevTokenIssuer, server: _JwksServer, token: Any
) -> None:
    assert _refused(_url_verifier(server.url), token(issuer))
    assert server.fetches == 0


def test_a_bare_pyjwkclient_would_fetch_once_per_forged_kid(issuer: DevTokenIssuer, server: _JwksServer) -> None:
    """Why RemoteJwks keeps its own refresh policy around PyJWKClient's fetch (the measured reason)."""
    client = jwt.PyJWKClient(server.url, lifespan=3600)
    assert client.get_signing_key("local-rs") is not None and server.fetches == 1
    for n in range(5):
        with pytest.raises(jwt.PyJWKClientError):
            client.get_signing_key(f"forged-{n}")
    assert server.fetches == 6


def test_a_rotated_key_is_fetched_once_then_refreshes_wait_a_minute(
    issuer: DevTokenIssuer, server: _JwksServer
) -> None:
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


def test_a_failing_issuer_keeps_the_held_keys_and_is_retried_sparingly(
    issuer: DevTokenIssuer, server: _JwksServer
) -> None:
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


def test_an_unreachable_issuer_refuses_tokens_and_is_retried_after_a_pause(
    issuer: DevTokenIssuer, server: _JwksServer
) -> None:
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


_WATCHED = ("jwt", "cryptography", "rsa", "ecdsa", "pyasn1", "six")


def _modules_after(code: str, stdin: str = "") -> list[str]:
    probe = code + f"\nimport json, sys\nprint(json.dumps(sorted(m for m in {_WATCHED!r} if m in sys.modules)))"
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_importing_the_verifier_loads_no_jwt_or_crypto_library() -> None:
    assert _modules_after("import chalicelib.auth.tokens") == []


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_token_loads_pyjwt_and_cryptography_only(issuer: DevTokenIssuer, algorithm: str) -> None:
    """One crypto library: checking a token of either algorithm needs neither python-rsa nor python-ecdsa."""
    given = json.dumps({"jwks": issuer.jwks(), "token": issuer.mint("alice", algorithm=algorithm)})
    loaded = _modules_after(
        "import json, sys\n"
        "from chalicelib.auth.tokens import TokenVerifier\nfrom chalicelib.config import JwtSettings\n"
        "given = json.load(sys.stdin)\n"
        f"settings = JwtSettings({LOCAL_ISSUER!r}, {LOCAL_AUDIENCE!r}, None, given['jwks'])\n"
        "assert TokenVerifier(settings).user_id('Bearer ' + given['token']) == 'alice'",
        stdin=given,
    )
    assert loaded == ["cryptography", "jwt"]


def test_a_fresh_rsa_key_of_our_own_checks_too() -> None:
    """Not only the session's issuer key: a key generated here, published as a JWK by hand."""
    private = crypto_rsa.generate_private_key(public_exponent=65537, key_size=3072)
    numbers = private.public_key().public_numbers()
    jwk = {
        "kty": "RSA",
        "kid": "k3072",
        "n": _b64(numbers.n.to_bytes(384, "big")),
        "e": _b64(numbers.e.to_bytes(3, "big")),
    }
    verifier = TokenVerifier(JwtSettings(LOCAL_ISSUER, LOCAL_AUDIENCE, jwks_url=None, jwks_inline={"keys": [jwk]}))
    token = jwt.encode(_claims(), private, algorithm="RS256", headers={"kid": "k3072"})
    assert verifier.user_id("Bearer " + token) == "alice"


@pytest.mark.parametrize("document", [["keys"], {"keys": "none"}, {"keys": [{"kty": ["RSA"]}, "junk", 7]}])
def test_a_url_serving_no_usable_jwks_refuses_tokens_and_is_not_refetched_per_token(
    issuer: DevTokenIssuer, document: Any
) -> None:
    with _JwksServer(document) as server:
        verifier = _url_verifier(server.url)
        for _ in range(5):
            assert _refused(verifier, issuer.mint("alice"))
        assert server.fetches == 1


@pytest.mark.parametrize("claim", ["exp", "nbf", "iat"])
@pytest.mark.parametrize("infinity", ["1e999", "-1e999"])
def test_a_time_claim_of_json_infinity_is_refused_not_a_crash(
    issuer: DevTokenIssuer, claim: str, infinity: str
) -> None:
    """Red team, issue 21 #11: `exp: 1e999` parses as infinity and PyJWT's date conversion overflowed."""
    header = _b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "local-rs"}).encode())
    claims = (
        json.dumps(_claims()).replace(f'"{claim}": ', f'"{claim}": {infinity}, "was_{claim}": ')
        if claim != "nbf"
        else (json.dumps(_claims())[:-1] + f', "nbf": {infinity}}}')
    )
    payload = _b64(claims.encode())
    signer = jwt.algorithms.RSAAlgorithm(jwt.algorithms.RSAAlgorithm.SHA256)
    signature = _b64(signer.sign(f"{header}.{payload}".encode(), issuer.rsa_key))
    assert infinity in claims and json.loads(claims)[claim] in (float("inf"), float("-inf"))
    assert _refused(_inline(issuer), f"{header}.{payload}.{signature}")
