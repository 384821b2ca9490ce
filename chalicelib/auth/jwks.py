"""The issuer's public keys (a JWKS, RFC 7517): which keys may check a token, and fetching them from a URL.

Each key is built by PyJWT's own `PyJWK` (its `cryptography` key handling); `PyJWKClient` fetches a
remote set. What is ours is only the policy around them:

- Which keys count: signature public keys of the two accepted algorithms (RSA ≥ 2048 bits → RS256,
  P-256 → ES256), selected by `kid` and by the token's algorithm together, so a key only ever checks
  tokens of its own algorithm. Each key is built on its own: PyJWKSet lets one malformed key (a point
  off the curve, bad base64) raise ValueError for the whole set, which would lock every user out.
- When to fetch: PyJWKClient refetches on every unknown `kid` and forgets its keys when a fetch
  fails, so here a remote set is cached per container, refreshed when old and once when a token
  names an unknown `kid` (a key rotation), never more often than once a minute (a stream of forged
  `kid`s cannot hammer the issuer), and a failed refresh keeps the keys already held.

Loaded by `chalicelib.auth.tokens` on the first token it checks, never at import.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from jwt import PyJWK, PyJWKClient, PyJWTError

from chalicelib.logs import get_logger

__all__ = [
    "ALGORITHMS",
    "InlineJwks",
    "JwksError",
    "KeySet",
    "KeySource",
    "PublicKey",
    "RemoteJwks",
    "fetch_jwks",
    "parse_jwks",
]

ALGORITHMS = ("RS256", "ES256")
# NIST's and RFC 8017's floor for RSA today; Cognito and every mainstream issuer use 2048 bits or more.
MIN_RSA_BITS = 2048
FETCH_TIMEOUT_SECONDS = 3
LIFESPAN_SECONDS = 3600.0
MIN_REFRESH_SECONDS = 60.0  # at most one fetch a minute while keys are held
RETRY_SECONDS = 5.0  # after a failed fetch with no keys held: the issuer may be briefly down
# The key type each algorithm needs, checked before PyJWK sees the key (it would infer HS256 for "oct").
_KTY = {"RS256": "RSA", "ES256": "EC"}
_ALGORITHM_OF_KTY = {kty: algorithm for algorithm, kty in _KTY.items()}


class JwksError(ValueError):
    """The key set could not be fetched or is not a JWKS (never carries key material or token content)."""


@dataclass(frozen=True)
class PublicKey:
    """One usable verification key: the algorithm it checks and the `cryptography` public key object."""

    kid: str | None
    algorithm: str
    key: Any


def _algorithm_of(jwk: Mapping[str, Any]) -> str | None:
    """The algorithm a JWK may check if it is a public signature key of ours, else None (before any key is built)."""
    kty = jwk.get("kty")
    if not isinstance(kty, str):
        return None
    algorithm = jwk.get("alg", _ALGORITHM_OF_KTY.get(kty))
    if algorithm not in ALGORITHMS or _KTY[algorithm] != kty:
        return None
    if algorithm == "ES256" and jwk.get("crv") != "P-256":
        return None
    if jwk.get("use", "sig") != "sig":
        return None
    key_ops = jwk.get("key_ops")
    if key_ops is not None and (not isinstance(key_ops, list) or "verify" not in key_ops):
        return None
    if "d" in jwk or not isinstance(jwk.get("kid", ""), str):  # a private key has no place in a published set
        return None
    return algorithm


def _build(jwk: Any) -> PublicKey | None:
    """The JWK as a usable public key (PyJWK builds it), or None when it is not ours or its material is malformed."""
    if not isinstance(jwk, dict):
        return None
    algorithm = _algorithm_of(jwk)
    if algorithm is None:
        return None
    try:
        built = PyJWK(jwk, algorithm)
    except (PyJWTError, ValueError, TypeError, KeyError):  # bad base64, a point off the curve, an even exponent...
        return None
    if algorithm == "RS256" and built.key.key_size < MIN_RSA_BITS:
        return None
    return PublicKey(jwk.get("kid"), algorithm, built.key)


class KeySet:
    """The usable signature keys of one JWKS document."""

    def __init__(self, keys: list[PublicKey]) -> None:
        self._keys = tuple(keys)
        self.kids = frozenset(key.kid for key in self._keys)

    def find(self, kid: str | None, algorithm: str) -> PublicKey | None:
        """The key with this `kid` for this algorithm; without a `kid`, the set's only key for it, if one."""
        candidates = [key for key in self._keys if key.algorithm == algorithm]
        if kid is None:
            return candidates[0] if len(candidates) == 1 else None
        return next((key for key in candidates if key.kid == kid), None)


def parse_jwks(document: Any) -> KeySet:
    """The usable signature keys of a `{"keys": [...]}` document; keys of other types, `use: enc`, another
    `alg`, refused `key_ops`, private members or malformed material are left out."""
    if not isinstance(document, Mapping) or not isinstance(document.get("keys"), list):
        raise JwksError("not a JWKS document")
    return KeySet([key for key in map(_build, document["keys"]) if key is not None])


def fetch_jwks(url: str, timeout: float = FETCH_TIMEOUT_SECONDS) -> KeySet:
    """GET the JWKS at `url` (https, or http for a local issuer) with PyJWKClient and parse it; JwksError on any failure."""
    if not url.startswith(("https://", "http://")):  # urllib would also open file:// and ftp://
        raise JwksError("JWKS URL must be http(s)")
    client = PyJWKClient(url, cache_jwk_set=False, timeout=int(timeout), headers={"Accept": "application/json"})
    try:
        document = client.fetch_data()
    except (PyJWTError, OSError, ValueError, RecursionError) as exc:  # unreachable, HTTP error, not JSON
        raise JwksError(f"JWKS fetch failed: {type(exc).__name__}") from exc
    return parse_jwks(document)


class KeySource(Protocol):
    def key(self, kid: str | None, algorithm: str) -> PublicKey | None: ...


class InlineJwks:
    """A JWKS given in the configuration (JWT_JWKS): parsed once, never refreshed."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._keys = parse_jwks(document)

    def key(self, kid: str | None, algorithm: str) -> PublicKey | None:
        return self._keys.find(kid, algorithm)


class RemoteJwks:
    """A JWKS at a URL (JWT_JWKS_URL), cached per container.

    Fetches when nothing is held, when the set is older than `lifespan`, and when a token names a
    `kid` the set lacks — each time only if the last fetch was at least `min_refresh` ago (`retry`
    after a failure while nothing is held). A failed refresh keeps the keys already held.
    """

    def __init__(
        self,
        url: str,
        *,
        lifespan: float = LIFESPAN_SECONDS,
        min_refresh: float = MIN_REFRESH_SECONDS,
        retry: float = RETRY_SECONDS,
        fetch: Callable[[str], KeySet] = fetch_jwks,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url, self._fetch, self._clock = url, fetch, clock
        self._lifespan, self._min_refresh, self._retry = lifespan, min_refresh, retry
        self._lock = threading.Lock()  # one fetch at a time; others wait and then read its result
        self._keys: KeySet | None = None
        self._fetched_at = 0.0
        self._next_fetch_at = 0.0

    def key(self, kid: str | None, algorithm: str) -> PublicKey | None:
        with self._lock:
            now = self._clock()
            if self._keys is None or now - self._fetched_at >= self._lifespan:
                self._refresh(now)
            elif kid not in self._keys.kids:
                self._refresh(now)  # perhaps the issuer rotated its keys since we fetched
            return self._keys.find(kid, algorithm) if self._keys is not None else None

    def _refresh(self, now: float) -> None:
        if now < self._next_fetch_at:
            return
        try:
            keys = self._fetch(self._url)
        except JwksError as exc:
            get_logger().warning(
                "jwks fetch failed",
                extra={"outcome": "jwks_unavailable", "error_type": type(exc.__cause__ or exc).__name__},
            )
            self._next_fetch_at = now + (self._retry if self._keys is None else self._min_refresh)
            return
        self._keys, self._fetched_at, self._next_fetch_at = keys, now, now + self._min_refresh
