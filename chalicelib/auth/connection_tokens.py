"""Connection tokens: 256 random bits behind a `pmc_` prefix (secret scanners find leaks) and a checksum.

The checksum (CRC-32 of the random part) lets a mistyped or guessed token be refused without a
DynamoDB call, and lets the credential detector tell a real token from look-alike text. It protects
nothing: the token's 256 bits do. The service keeps only `mac(token)`, an HMAC-SHA256 under its own key.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import zlib

__all__ = ["PREFIX", "TOKEN_PATTERN", "is_well_formed", "mac", "new_token"]

PREFIX = "pmc_"
_BODY_LENGTH = 43  # 32 random bytes in URL-safe base64, unpadded
TOKEN_PATTERN = rf"{PREFIX}[A-Za-z0-9_\-]{{{_BODY_LENGTH}}}[0-9a-f]{{8}}"
_SHAPE = re.compile(TOKEN_PATTERN, re.ASCII)


def _checksum(body: str) -> str:
    return f"{zlib.crc32(body.encode('ascii')):08x}"


def new_token() -> str:
    body = secrets.token_urlsafe(32)
    return PREFIX + body + _checksum(body)


def is_well_formed(token: str) -> bool:
    """The shape and the checksum hold (never enough to be accepted: the MAC must name a live connection)."""
    if not isinstance(token, str) or _SHAPE.fullmatch(token) is None:
        return False
    body = token[len(PREFIX) : len(PREFIX) + _BODY_LENGTH]
    return hmac.compare_digest(_checksum(body), token[len(PREFIX) + _BODY_LENGTH :])


def mac(key: bytes, token: str) -> str:
    """The keyed hash stored for a token (hex): without the service's key, no table row leads back to a token."""
    return hmac.new(key, token.encode("ascii"), hashlib.sha256).hexdigest()
