"""OAuth access tokens: short JWTs (HS256) that name a connection and the one resource they were issued for.

Signed with a key derived from the service's connections key (made by KMS, kept wrapped in the keys table:
crypto/connection_key.py), so checking one costs no call beyond the connection's own lookup, which a
connection token's check makes too (services/connections.py `by_mac`, cached a minute, and every memory
call's `used` condition: a revoke wins at once). The claims hold no user id: `cnx` is the connection's token
MAC (a keyed hash of a token nobody holds), `aud` the resource (RFC 8707). `typ` is `at+jwt` (RFC 9068), and
only HS256 under this key is accepted: a person's sign-in token (RS256) never passes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

import jwt

TYPE = "at+jwt"
_DERIVATION = b"personal-memory oauth access token v1"


def signing_key(connections_key: bytes) -> bytes:
    return hmac.new(connections_key, _DERIVATION, hashlib.sha256).digest()


def issue(key: bytes, *, connection_mac: str, resource: str, now: int, lifetime: int) -> str:
    claims = {
        "aud": resource,
        "iat": now,
        "exp": now + lifetime,
        "cnx": connection_mac,
        "jti": secrets.token_urlsafe(12),
    }
    return jwt.encode(claims, signing_key(key), algorithm="HS256", headers={"typ": TYPE})


def connection_of(key: bytes, token: str, *, resource: str, now: int) -> str | None:
    """The connection MAC a valid, unexpired token for `resource` names; None for anything else."""
    try:
        if jwt.get_unverified_header(token).get("typ") != TYPE:
            return None
        claims = jwt.decode(
            token,
            signing_key(key),
            algorithms=["HS256"],
            audience=resource,
            options={"require": ["exp", "iat", "aud", "cnx"], "verify_exp": False, "verify_iat": False},
        )
    except jwt.PyJWTError:
        return None
    expires, mac = claims.get("exp"), claims.get("cnx")
    if not isinstance(expires, int) or expires <= now or not isinstance(mac, str) or len(mac) != 64:
        return None
    return mac
