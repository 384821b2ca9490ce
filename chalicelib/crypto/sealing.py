"""AES-256-GCM sealing of one text under one user's data key, bound by its associated data to where it is stored.

The associated data names the table, the user and the item, so a ciphertext copied to another user,
another item or another table does not open: GCM's tag fails and `Unsealable` is raised. Nothing here
touches AWS; `cryptography` is imported on first use, not at cold start.
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

FORMAT = 1  # first byte of every sealed value: the layout below
KEY_ID_BYTES = 16
NONCE_BYTES = 12  # GCM's standard nonce; random per seal (2^-32 collision bound far beyond 2^32 seals per key)
HEADER_BYTES = 1 + KEY_ID_BYTES + NONCE_BYTES
AAD_VERSION = "personal-memory/text/v1"

_aesgcm: Any = None


class Unsealable(Exception):
    """A sealed value that does not open here: moved, altered, or sealed under a key that no longer exists."""


def _cipher(key: bytes) -> Any:
    global _aesgcm
    if _aesgcm is None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        _aesgcm = AESGCM
    return _aesgcm(key)


def associated_data(table: str, user_id: str, item: Sequence[str]) -> bytes:
    """Unambiguous AAD: a JSON array, so no choice of ids can make two different places encode alike."""
    return json.dumps([AAD_VERSION, table, user_id, *item], separators=(",", ":")).encode()


def seal(key_id: bytes, key: bytes, text: str, aad: bytes) -> bytes:
    """FORMAT | key id | nonce | ciphertext+tag."""
    nonce = os.urandom(NONCE_BYTES)
    return bytes([FORMAT]) + key_id + nonce + _cipher(key).encrypt(nonce, text.encode("utf-8"), aad)


def key_id_of(blob: bytes) -> bytes:
    """Which data key sealed `blob` (a destroyed key's id is never issued again: 128 random bits)."""
    if len(blob) < HEADER_BYTES + 16 or blob[0] != FORMAT:
        raise Unsealable("not a sealed value")
    return blob[1 : 1 + KEY_ID_BYTES]


def open_sealed(key: bytes, blob: bytes, aad: bytes) -> str:
    from cryptography.exceptions import InvalidTag

    key_id_of(blob)
    nonce = blob[1 + KEY_ID_BYTES : HEADER_BYTES]
    try:
        return _cipher(key).decrypt(nonce, blob[HEADER_BYTES:], aad).decode("utf-8")
    except (InvalidTag, UnicodeDecodeError) as exc:
        raise Unsealable("the sealed value does not open for this table, user and item") from exc
