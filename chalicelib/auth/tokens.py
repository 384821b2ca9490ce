"""Verifies users' OIDC tokens with PyJWT against the configured issuer, audience and JWKS.

Only RS256 and ES256 are accepted, so `alg: none` and HS256 tokens "signed" with the public key are
refused before any key is used. The JWKS client is built once per container and caches its keys.
"""
from __future__ import annotations

import threading
from typing import Any

import jwt

from chalicelib.config import JwtSettings
from chalicelib.errors import Unauthorized

ALGORITHMS = ("RS256", "ES256")
LEEWAY_SECONDS = 30


class TokenVerifier:
    def __init__(self, settings: JwtSettings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._inline: jwt.PyJWKSet | None = None
        self._remote: jwt.PyJWKClient | None = None

    def _signing_key(self, token: str, kid: str | None) -> Any:
        if self._settings.jwks_inline is not None:
            if self._inline is None:
                self._inline = jwt.PyJWKSet.from_dict(dict(self._settings.jwks_inline))
            keys = [k for k in self._inline.keys if kid is None or k.key_id == kid]
            if not keys:
                raise Unauthorized()
            return keys[0].key
        with self._lock:
            if self._remote is None:
                self._remote = jwt.PyJWKClient(str(self._settings.jwks_url), cache_keys=True, lifespan=3600)
        return self._remote.get_signing_key_from_jwt(token).key

    def user_id(self, authorization: str | None) -> str:
        """The `sub` of a valid `Bearer <JWT>` header; Unauthorized for anything else."""
        if not authorization:
            raise Unauthorized()
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized()
        token = token.strip()
        try:
            header = jwt.get_unverified_header(token)
            if header.get("alg") not in ALGORITHMS:
                raise Unauthorized()
            key = self._signing_key(token, header.get("kid"))
            claims = jwt.decode(
                token,
                key,
                algorithms=list(ALGORITHMS),
                issuer=self._settings.issuer,
                options={"require": ["exp", "iss", "sub"], "verify_aud": False},
                leeway=LEEWAY_SECONDS,
            )
        except (jwt.PyJWTError, ValueError, KeyError, TypeError) as exc:
            raise Unauthorized() from exc
        if not self._audience_matches(claims):
            raise Unauthorized()
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject or len(subject) > 128:
            raise Unauthorized()
        return subject

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
