"""AES-256-GCM sealing of one text under one user's data key, bound by its associated data to where it is stored.

The associated data names the table, the user, the item's whole primary key and its provenance
(`associated_data`, the one place it is built), so a ciphertext copied to another user, item or table,
or an item whose origin, source, agent, taint, kind or creation time was altered in storage, does not
open: GCM's tag fails and `Unsealable` is raised. Nothing here touches AWS; `cryptography` is imported
on first use, not at cold start.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

# First byte of every sealed value: the layout below and which associated data it was sealed with.
# Format 1 (before issue 21) bound only the item's `id` attribute: such values are never opened (absent).
FORMAT = 2
LEGACY_FORMATS = frozenset({1})
KEY_ID_BYTES = 16
NONCE_BYTES = 12  # GCM's standard nonce; random per seal (2^-32 collision bound far beyond 2^32 seals per key)
HEADER_BYTES = 1 + KEY_ID_BYTES + NONCE_BYTES
AAD_VERSION = "personal-memory/text/v2"

Provenance = Mapping[str, str | bool | None]

_aesgcm: Any = None


class Unsealable(Exception):
    """A sealed value that does not open here: moved, altered, or sealed under a key that no longer exists."""


def _cipher(key: bytes) -> Any:
    global _aesgcm
    if _aesgcm is None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        _aesgcm = AESGCM
    return _aesgcm(key)


def associated_data(table: str, user_id: str, key: Mapping[str, str], provenance: Provenance) -> bytes:
    """The AAD of one stored text: its table, its user, the item's whole primary key and its provenance.

    Canonical JSON (sorted names, no spaces, ASCII escapes): one encoding per value, and no choice of ids
    or provenance can make two different items encode alike. Only strings, booleans and None go in, as
    the item's reader parsed them, so a value altered in storage changes the AAD and the tag fails.
    """
    document = {"v": AAD_VERSION, "table": table, "user": user_id, "key": dict(key), "provenance": dict(provenance)}
    return json.dumps(document, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def seal(key_id: bytes, key: bytes, text: str, aad: bytes) -> bytes:
    """FORMAT | key id | nonce | ciphertext+tag."""
    nonce = os.urandom(NONCE_BYTES)
    return bytes([FORMAT]) + key_id + nonce + _cipher(key).encrypt(nonce, text.encode("utf-8"), aad)


def key_id_of(blob: bytes) -> bytes:
    """Which data key sealed `blob` (a destroyed key's id is never issued again: 128 random bits)."""
    if len(blob) < HEADER_BYTES + 16 or blob[0] != FORMAT:
        raise Unsealable("not a sealed value of the current format")
    return blob[1 : 1 + KEY_ID_BYTES]


def is_legacy(blob: bytes) -> bool:
    """A value sealed in an earlier format: it never opens again (its AAD bound too little)."""
    return len(blob) >= 1 and blob[0] in LEGACY_FORMATS


def open_sealed(key: bytes, blob: bytes, aad: bytes) -> str:
    from cryptography.exceptions import InvalidTag

    key_id_of(blob)
    nonce = blob[1 + KEY_ID_BYTES : HEADER_BYTES]
    try:
        return _cipher(key).decrypt(nonce, blob[HEADER_BYTES:], aad).decode("utf-8")
    except (InvalidTag, UnicodeDecodeError) as exc:
        raise Unsealable("the sealed value does not open for this table, user, item and provenance") from exc
