"""Verifies users' OIDC tokens against the configured issuer, audience and JWKS.

Only RS256 and ES256 are accepted. Before PyJWT or any key sees a token, `chalicelib.auth.compact`
refuses oversized, deeply nested or non-canonical ones; then the header's `alg` is checked before any
key is looked up, so `alg: none` and HS256 tokens "signed" with the public key are refused before a
key is used, and the key is chosen by `kid` *and* algorithm, so an RSA key never checks an ES256
token nor the reverse. PyJWT (with `cryptography`) checks the signature and the claims in one pass.
PyJWT and cryptography are loaded on the first token, not at import: importing this module stays
cheap for the functions that never see a token.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from chalicelib.auth.compact import header_of
from chalicelib.config import JwtSettings
from chalicelib.errors import Unauthorized

if TYPE_CHECKING:
    from chalicelib.auth.jwks import KeySource

LEEWAY_SECONDS = 30
MAX_SUBJECT_LENGTH = 128
# What PyJWT checks once the signature holds; the audience is ours (Cognito access tokens have none).
_OPTIONS = {
    "verify_signature": True,
    "verify_exp": True,
    "verify_nbf": True,
    "verify_iat": True,
    "verify_iss": True,
    "verify_sub": True,
    "verify_jti": True,
    "verify_aud": False,
    "require": ["exp", "iss", "sub"],
}


class TokenVerifier:
    def __init__(self, settings: JwtSettings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._keys: KeySource | None = None

    def _key_source(self) -> KeySource:
        """The inline JWKS or the URL's cached one, built on first use (once per container)."""
        from chalicelib.auth import jwks

        with self._lock:
            if self._keys is None:
                if self._settings.jwks_inline is not None:
                    self._keys = jwks.InlineJwks(self._settings.jwks_inline)
                else:
                    self._keys = jwks.RemoteJwks(str(self._settings.jwks_url))
            return self._keys

    def user_id(self, authorization: str | None) -> str:
        """The `sub` of a valid `Bearer <JWT>` header; Unauthorized for anything else."""
        return self.user_and_expiry(authorization)[0]

    def user_and_expiry(self, authorization: str | None) -> tuple[str, int]:
        """The `sub` and `exp` (seconds since the epoch) of a valid `Bearer <JWT>` header; Unauthorized for anything else."""
        if not authorization:
            raise Unauthorized()
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized()
        claims = self._claims(token.strip())
        if not self._audience_matches(claims):
            raise Unauthorized()
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject or len(subject) > MAX_SUBJECT_LENGTH:
            raise Unauthorized()
        expires = claims.get("exp")
        if isinstance(expires, bool) or not isinstance(expires, int | float):
            raise Unauthorized()
        return subject, int(expires)

    def _claims(self, token: str) -> dict[str, Any]:
        import jwt

        from chalicelib.auth import jwks

        try:
            header = header_of(token)  # size, depth and canonical base64url, before any parser recurses
            algorithm = header["alg"]
            # Before any key is touched: `none`, HS256 and everything else stop here.
            if algorithm not in jwks.ALGORITHMS:
                raise Unauthorized()
            key = self._key_source().key(header.get("kid"), algorithm)
            if key is None or key.algorithm != algorithm:
                raise Unauthorized()
            # `algorithms` is the key's own: PyJWT refuses a header naming any other, and a key object
            # of the wrong type for it (an RSA key for ES256) is refused by PyJWT's prepare_key.
            claims: dict[str, Any] = jwt.PyJWT().decode(
                token,
                key.key,
                algorithms=[key.algorithm],
                options=_OPTIONS,
                issuer=self._settings.issuer,
                leeway=LEEWAY_SECONDS,
            )
        except (jwt.PyJWTError, jwks.JwksError, ValueError, KeyError, TypeError, OverflowError) as exc:
            # OverflowError: a time claim of JSON `1e999` (infinity) that PyJWT turns into a date.
            raise Unauthorized() from exc
        return claims

    def _audience_matches(self, claims: dict[str, Any]) -> bool:
        """ID tokens carry `aud`; Cognito access tokens carry `client_id` and `token_use: access` instead."""
        expected = self._settings.audience
        audience = claims.get("aud")
        if audience is not None:
            return expected in audience if isinstance(audience, list) else audience == expected
        return claims.get("token_use") == "access" and claims.get("client_id") == expected


_verifier: TokenVerifier | None = None
_verifier_lock = threading.Lock()


def get_verifier(settings: JwtSettings) -> TokenVerifier:
    """One verifier (and so one JWKS cache) per container."""
    global _verifier
    with _verifier_lock:
        if _verifier is None or _verifier._settings != settings:
            _verifier = TokenVerifier(settings)
        return _verifier
