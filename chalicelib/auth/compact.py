"""A JWT's compact form checked before any JSON parser or key sees it: size, shape, canonical base64url, depth.

PyJWT decodes base64url leniently (padding and stray characters are accepted, unused trailing bits
ignored), so one signature has many spellings; and `json.loads` recurses once per nesting level, so
a header of a few thousand brackets raises RecursionError instead of a refusal. Here every segment
must be the one canonical unpadded base64url spelling of its bytes (RFC 7515 §2), the token and its
header are capped in size, and the header and payload are refused when their JSON nests deeper than
a few levels — all counted with regular expressions, never by recursion. Pure standard library:
loading this module costs nothing.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

__all__ = ["MAX_HEADER_CHARS", "MAX_JSON_DEPTH", "MAX_TOKEN_CHARS", "MalformedToken", "canonical_b64url", "header_of"]

# A Cognito ID token with a few dozen groups is ~4 KB; API Gateway caps all headers at 10 KB together.
MAX_TOKEN_CHARS = 8192
# A JOSE header is `alg`, `kid`, `typ` (~100 characters); 1024 leaves room for an `x5t` or a `jku`.
MAX_HEADER_CHARS = 1024
# OIDC claims nest two levels (`address`, group lists); a header one. Deeper is not a real token.
MAX_JSON_DEPTH = 8

_SEGMENT = re.compile(r"[A-Za-z0-9_-]+")
# A JSON string literal (escapes included) and the brackets left once strings are taken out.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_OPENING = frozenset("[{")


class MalformedToken(ValueError):
    """The token is not a well-formed compact JWS (never carries any of the token's content)."""


def canonical_b64url(segment: str) -> bytes:
    """The bytes of `segment` if it is their one canonical unpadded base64url spelling, else MalformedToken."""
    if not _SEGMENT.fullmatch(segment) or len(segment) % 4 == 1:
        raise MalformedToken("segment is not unpadded base64url")
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except binascii.Error as exc:
        raise MalformedToken("segment is not unpadded base64url") from exc
    # Unused low bits in the last character give other spellings of the same bytes: only one is accepted.
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != segment:
        raise MalformedToken("segment is not canonical base64url")
    return raw


def json_depth(text: str) -> int:
    """How deeply `text`'s arrays and objects nest, counted without parsing (brackets inside strings do not count)."""
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        depth += 1 if bracket in _OPENING else -1
        deepest = max(deepest, depth)
    return deepest


def _shallow_json(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedToken("segment is not UTF-8") from exc
    if json_depth(text) > MAX_JSON_DEPTH:
        raise MalformedToken("JSON nests too deeply")
    try:
        return json.loads(text)
    except ValueError as exc:  # also Python's cap on the digits of an integer
        raise MalformedToken("segment is not JSON") from exc


def header_of(token: str) -> dict[str, Any]:
    """The JOSE header of a compact JWS that passes every check here; MalformedToken for anything else.

    The payload is checked too (canonical, shallow JSON object) so that PyJWT, which parses it again
    once the signature holds, never meets a payload it cannot parse safely.
    """
    if len(token) > MAX_TOKEN_CHARS:
        raise MalformedToken("token too large")
    segments = token.split(".")
    if len(segments) != 3:  # a JWE (5 segments) or anything else is not a signed token
        raise MalformedToken("not a compact JWS")
    header_segment, payload_segment, signature_segment = segments
    if len(header_segment) > MAX_HEADER_CHARS:
        raise MalformedToken("header too large")
    header = _shallow_json(canonical_b64url(header_segment))
    if not isinstance(header, dict) or not isinstance(header.get("alg"), str):
        raise MalformedToken("header is not a JOSE header")
    if "kid" in header and not isinstance(header["kid"], str):
        raise MalformedToken("kid is not a string")
    # RFC 7515 §4.1.11: extensions listed in `crit` must be understood, and we understand none
    # (`b64: false`, RFC 7797, needs `crit` and a detached payload).
    if "crit" in header or "b64" in header:
        raise MalformedToken("header extensions are not accepted")
    if not isinstance(_shallow_json(canonical_b64url(payload_segment)), dict):
        raise MalformedToken("payload is not a JSON object")
    canonical_b64url(signature_segment)
    return header
