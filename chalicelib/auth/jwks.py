"""The issuer's public keys (a JWKS, RFC 7517): which keys may check a token, and fetching them from a URL.

Replaces PyJWT's PyJWKSet/PyJWKClient, which need `cryptography`. Only signature keys of the two
accepted algorithms are kept (RSA → RS256, P-256 EC → ES256), selected by `kid` and by the token's
algorithm together, so a key can only ever check tokens of its own algorithm. A remote set is cached
per container, refreshed when it is old and once when a token names an unknown `kid` (a key rotation),
never more often than once a minute, so a stream of forged `kid`s cannot hammer the issuer.

Loaded by `chalicelib.auth.tokens` on the first token it checks, never at import.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from jwt.exceptions import InvalidKeyError

from chalicelib.auth.signatures import ALGORITHMS
from chalicelib.logs import get_logger

__all__ = ["InlineJwks", "JwksError", "KeySet", "KeySource", "PublicKey", "RemoteJwks", "fetch_jwks", "parse_jwks"]

# The algorithm a key of each type checks; a key whose `alg` says otherwise is left out.
_ALGORITHM_OF_KTY = {algorithm.kty: name for name, algorithm in ALGORITHMS.items()}
FETCH_TIMEOUT_SECONDS = 3.0
MAX_JWKS_BYTES = 512 * 1024  # an issuer's key set is a few KB; anything huge is not one
LIFESPAN_SECONDS = 3600.0
MIN_REFRESH_SECONDS = 60.0  # at most one fetch a minute while keys are held
RETRY_SECONDS = 5.0  # after a failed fetch with no keys held: the issuer may be briefly down


class JwksError(ValueError):
    """The key set could not be fetched or is not a JWKS (never carries key material or token content)."""


@dataclass(frozen=True)
class PublicKey:
    """One usable verification key: the algorithm it checks and the library's public key object."""

    kid: str | None
    algorithm: str
    key: Any


@dataclass(frozen=True)
class _Entry:
    """A JWK that passed the cheap checks; its key object is built when a token first asks for it."""

    kid: str | None
    algorithm: str
    jwk: Mapping[str, Any]


class KeySet:
    """The signature keys of one JWKS document.

    Key objects are built on first use, so the library of an algorithm no token uses is never
    loaded (an RS256 token never loads python-ecdsa, even when the set also lists EC keys). A key
    whose material is malformed (missing members, too-small RSA, a point off the curve) is unusable.
    """

    def __init__(self, entries: list[_Entry]) -> None:
        self._entries = tuple(entries)
        self._built: dict[int, PublicKey | None] = {}
        self.kids = frozenset(entry.kid for entry in self._entries)

    def find(self, kid: str | None, algorithm: str) -> PublicKey | None:
        """The key with this `kid` for this algorithm; without a `kid`, the set's only key for it, if one."""
        candidates = [i for i, entry in enumerate(self._entries) if entry.algorithm == algorithm]
        if kid is None:
            return self._build(candidates[0]) if len(candidates) == 1 else None
        return next((self._build(i) for i in candidates if self._entries[i].kid == kid), None)

    def _build(self, index: int) -> PublicKey | None:
        if index not in self._built:
            entry = self._entries[index]
            try:
                key = ALGORITHMS[entry.algorithm].from_jwk(dict(entry.jwk))
                self._built[index] = PublicKey(entry.kid, entry.algorithm, key)
            except InvalidKeyError:
                self._built[index] = None
        return self._built[index]


def _entry(jwk: Any) -> _Entry | None:
    """The JWK if it is a signature key of one of our algorithms, else None."""
    if not isinstance(jwk, dict):
        return None
    algorithm = _ALGORITHM_OF_KTY.get(jwk.get("kty"))  # kty "oct" (a shared secret) and others: never
    if algorithm is None:
        return None
    if jwk.get("use", "sig") != "sig" or jwk.get("alg", algorithm) != algorithm:
        return None
    key_ops = jwk.get("key_ops")
    if key_ops is not None and (not isinstance(key_ops, list) or "verify" not in key_ops):
        return None
    kid = jwk.get("kid")
    if kid is not None and not isinstance(kid, str):
        return None
    return _Entry(kid=kid, algorithm=algorithm, jwk=jwk)


def parse_jwks(document: Any) -> KeySet:
    """The signature keys of a `{"keys": [...]}` document; keys of other types, `use: enc`, another
    `alg` or refused `key_ops` are left out, and malformed key material is never used."""
    if not isinstance(document, Mapping) or not isinstance(document.get("keys"), list):
        raise JwksError("not a JWKS document")
    return KeySet([entry for entry in map(_entry, document["keys"]) if entry is not None])


def fetch_jwks(url: str, timeout: float = FETCH_TIMEOUT_SECONDS) -> KeySet:
    """GET the JWKS at `url` (https, or http for a local issuer) and parse it; JwksError on any failure."""
    import urllib.error
    import urllib.request

    if not url.startswith(("https://", "http://")):
        raise JwksError("JWKS URL must be http(s)")
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - scheme checked above
            if response.status != 200:
                raise JwksError(f"JWKS answered {response.status}")
            body = response.read(MAX_JWKS_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise JwksError(f"JWKS fetch failed: {type(exc).__name__}") from exc
    if len(body) > MAX_JWKS_BYTES:
        raise JwksError("JWKS too large")
    try:
        return parse_jwks(json.loads(body))
    except ValueError as exc:
        raise JwksError("JWKS is not JSON") from exc


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
            get_logger().warning("jwks fetch failed", extra={"outcome": "jwks_unavailable", "error_type": type(exc.__cause__ or exc).__name__})
            self._next_fetch_at = now + (self._retry if self._keys is None else self._min_refresh)
            return
        self._keys, self._fetched_at, self._next_fetch_at = keys, now, now + self._min_refresh
