"""RS256 and ES256 signature checks in pure Python, so the Lambda package needs no `cryptography` wheel.

PyJWT keeps doing what it is good at (parsing a JWS, then the claims); the signature arithmetic is
done by python-rsa (PKCS#1 v1.5) and python-ecdsa (P-256), both plugged into a PyJWS of our own that
knows these two algorithms and nothing else — no `none`, no HMAC, so a token cannot pick a weaker
check. The algorithms only verify: this service never signs a token.

This module imports PyJWT at load; `chalicelib.auth.tokens` loads it on the first token it checks,
never at import. python-rsa and python-ecdsa are imported on first use of their own algorithm, so
RS256 tokens (Cognito's) never load python-ecdsa.
"""
from __future__ import annotations

import binascii
import hashlib
import re
from typing import Any, NoReturn

from jwt.algorithms import Algorithm
from jwt.api_jws import PyJWS
from jwt.exceptions import InvalidKeyError

__all__ = ["ALGORITHMS", "ES256", "RS256", "b64url_bytes", "jws", "verify"]

# NIST's and RFC 8017's floor for RSA today; Cognito and every mainstream issuer use 2048 bits or more.
MIN_RSA_BITS = 2048
P256_COORDINATE_BYTES = 32
_B64URL = re.compile(r"^[A-Za-z0-9_-]+$")


def b64url_bytes(value: Any, name: str) -> bytes:
    """A JWK member as bytes: strict unpadded base64url (RFC 7515 §2), or InvalidKeyError naming the member."""
    if not isinstance(value, str) or not _B64URL.match(value) or len(value) % 4 == 1:
        raise InvalidKeyError(f"JWK member {name} is not base64url")
    try:
        return binascii.a2b_base64(value.replace("-", "+").replace("_", "/") + "=" * (-len(value) % 4))
    except binascii.Error as exc:
        raise InvalidKeyError(f"JWK member {name} is not base64url") from exc


class _VerifyOnly(Algorithm):
    """Shared by both algorithms: the service holds public keys only, so signing and exporting are refused."""

    def sign(self, msg: bytes, key: Any) -> NoReturn:
        raise NotImplementedError("this service only verifies tokens")

    @staticmethod
    def to_jwk(key_obj: Any, as_dict: bool = False) -> NoReturn:  # type: ignore[override]
        raise NotImplementedError("this service only verifies tokens")


class RS256(_VerifyOnly):
    """RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3), checked by python-rsa."""

    kty = "RSA"

    def prepare_key(self, key: Any) -> Any:
        import rsa

        # Only a public RSA key object: never PEM text or bytes, which HMAC-style confusion relies on.
        if not isinstance(key, rsa.PublicKey):
            raise InvalidKeyError("RS256 needs an RSA public key")
        return key

    def verify(self, msg: bytes, key: Any, sig: bytes) -> bool:
        import rsa

        if len(sig) != (key.n.bit_length() + 7) // 8:
            return False
        try:
            # rsa.verify rebuilds the whole padded block and compares it, and reports which digest the
            # signer used: a signature made over SHA-1 or SHA-512 is not an RS256 signature.
            return rsa.verify(msg, sig, key) == "SHA-256"
        except (rsa.VerificationError, ValueError, OverflowError):
            return False

    @staticmethod
    def from_jwk(jwk: Any) -> Any:
        import rsa

        if not isinstance(jwk, dict) or jwk.get("kty") != "RSA":
            raise InvalidKeyError("not an RSA JWK")
        n = int.from_bytes(b64url_bytes(jwk.get("n"), "n"), "big")
        e = int.from_bytes(b64url_bytes(jwk.get("e"), "e"), "big")
        if n.bit_length() < MIN_RSA_BITS or n % 2 == 0:
            raise InvalidKeyError("RSA modulus too small or malformed")
        if e < 3 or e % 2 == 0 or e >= n:
            raise InvalidKeyError("RSA exponent malformed")
        return rsa.PublicKey(n, e)


class ES256(_VerifyOnly):
    """ECDSA on P-256 with SHA-256 (RFC 7518 §3.4), checked by python-ecdsa."""

    kty = "EC"

    def prepare_key(self, key: Any) -> Any:
        import ecdsa

        if not isinstance(key, ecdsa.VerifyingKey) or key.curve != ecdsa.NIST256p:
            raise InvalidKeyError("ES256 needs a P-256 public key")
        return key

    def verify(self, msg: bytes, key: Any, sig: bytes) -> bool:
        import ecdsa
        from ecdsa.util import sigdecode_string

        # A JWS carries r || s, each exactly 32 bytes (RFC 7518 §3.4) — not DER.
        if len(sig) != 2 * P256_COORDINATE_BYTES:
            return False
        try:
            return bool(key.verify(sig, msg, hashfunc=hashlib.sha256, sigdecode=sigdecode_string))
        except (ecdsa.BadSignatureError, ecdsa.util.MalformedSignature, ValueError):
            return False

    @staticmethod
    def from_jwk(jwk: Any) -> Any:
        import ecdsa

        if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
            raise InvalidKeyError("not a P-256 EC JWK")
        x, y = b64url_bytes(jwk.get("x"), "x"), b64url_bytes(jwk.get("y"), "y")
        if len(x) != P256_COORDINATE_BYTES or len(y) != P256_COORDINATE_BYTES:
            raise InvalidKeyError("EC coordinates must be 32 bytes each")
        try:
            # from_string checks that (x, y) is a point on the curve (validate_point defaults to True).
            return ecdsa.VerifyingKey.from_string(x + y, curve=ecdsa.NIST256p, hashfunc=hashlib.sha256)
        except (ecdsa.MalformedPointError, ValueError) as exc:
            raise InvalidKeyError("EC point not on P-256") from exc


ALGORITHMS: dict[str, type[_VerifyOnly]] = {"RS256": RS256, "ES256": ES256}


def _build_jws() -> PyJWS:
    # algorithms=[] drops every default PyJWT knows (none, HS*, and the cryptography-backed ones
    # when that package happens to be installed); then only ours are registered.
    instance = PyJWS(algorithms=[])
    for name, algorithm in ALGORITHMS.items():
        instance.register_algorithm(name, algorithm())
    return instance


_JWS = _build_jws()


def jws() -> PyJWS:
    """The PyJWS that knows RS256 and ES256 only (one per process: it holds no state of a token)."""
    return _JWS


def verify(token: str, key: Any, algorithm: str) -> dict[str, Any]:
    """The token's header and raw payload if its signature verifies with `key` under `algorithm` exactly.

    Raises a PyJWT error otherwise: a header naming another algorithm, a key of the wrong type for
    `algorithm` (an RSA key never checks an ES256 token, nor the reverse), a bad signature.
    """
    if algorithm not in ALGORITHMS:
        raise InvalidKeyError("algorithm not allowed")
    return _JWS.decode_complete(token, key=key, algorithms=[algorithm])
