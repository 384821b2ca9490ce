"""AES-256-GCM sealing of one text under its own key, bound by its associated data to where it is stored.

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
from json.encoder import encode_basestring_ascii as _ascii_json
from typing import Any

# First byte of every sealed value: the layout below and which associated data it was sealed with.
# Format 1 (before issue 21) bound only the item's `id` attribute; format 2 (before issue 26) was sealed
# under the user's data key itself, not a key of its own. Neither is ever opened again (absent).
FORMAT = 3
LEGACY_FORMATS = frozenset({1, 2})
KEY_ID_BYTES = 16  # format 3: the id of the text's own key (its row in the keys table)
TEXT_ATTRIBUTE = "sealed_text"  # the one attribute that holds sealed text, in every table
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
    try:  # the same bytes json.dumps gives, built directly: every item of a GET needs one (tests/unit/test_sealing.py)
        return (
            f'{{"key":{_flat(key)},"provenance":{_flat(provenance)},"table":{_string(table)},'
            f'"user":{_string(user_id)},"v":{_string(AAD_VERSION)}}}'
        ).encode()
    except TypeError:  # a value of another type: the general encoder says what it makes of it
        document = {"v": AAD_VERSION, "table": table, "user": user_id, "key": dict(key), "provenance": dict(provenance)}
        return json.dumps(document, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _string(value: object) -> str:
    if type(value) is not str:
        raise TypeError("not a string")
    return _ascii_json(value)


def _flat(mapping: Mapping[str, Any]) -> str:
    """Canonical JSON of a mapping of names to strings, booleans or None (what json.dumps(sort_keys=True) gives)."""
    parts = []
    for name in sorted(mapping):
        value = mapping[name]
        if value is None:
            shown = "null"
        elif value is True or value is False:
            shown = "true" if value else "false"
        else:
            shown = _string(value)
        parts.append(f"{_string(name)}:{shown}")
    return "{" + ",".join(parts) + "}"


def seal(key_id: bytes, key: bytes, text: str, aad: bytes) -> bytes:
    """FORMAT | key id | nonce | ciphertext+tag."""
    nonce = os.urandom(NONCE_BYTES)
    return bytes([FORMAT]) + key_id + nonce + _cipher(key).encrypt(nonce, text.encode("utf-8"), aad)


def key_id_of(blob: bytes) -> bytes:
    """Which text key sealed `blob` (a deleted key's id is never issued again: 128 random bits)."""
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


TEXT_KEY_AAD = "personal-memory/text-key/v1"


def _text_key_aad(user_id: str, text_id: bytes, data_key_id: bytes) -> bytes:
    """json.dumps({"v", "user", "text", "data_key"}, sort_keys=True), built directly (a cold GET unwraps 250)."""
    return f'{{"data_key": "{data_key_id.hex()}", "text": "{text_id.hex()}", "user": {_string(user_id)}, "v": "{TEXT_KEY_AAD}"}}'.encode()


def data_key_cipher(data_key: bytes) -> Any:
    """The AES-GCM object of a data key, for `unwrap_text_key` over a list (held only while that list is read)."""
    return _cipher(data_key)


def wrap_text_key(data_key: bytes, user_id: str, text_id: bytes, data_key_id: bytes, text_key: bytes) -> bytes:
    """One text's key wrapped (AES-256-GCM) under the user's data key, bound to that user, text id and data key."""
    nonce = os.urandom(NONCE_BYTES)
    return nonce + _cipher(data_key).encrypt(nonce, text_key, _text_key_aad(user_id, text_id, data_key_id))


def unwrap_text_key(data_key: bytes | Any, user_id: str, text_id: bytes, data_key_id: bytes, wrapped: bytes) -> bytes:
    """The text key in `wrapped`; Unsealable if it was not wrapped here, for this user and text, under this data key.

    `data_key`: the key, or `data_key_cipher(key)` when unwrapping many at once (built once, not per text)."""
    from cryptography.exceptions import InvalidTag

    cipher = _cipher(data_key) if isinstance(data_key, bytes) else data_key
    try:
        key = bytes(
            cipher.decrypt(wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:], _text_key_aad(user_id, text_id, data_key_id))
        )
    except (InvalidTag, ValueError) as exc:
        raise Unsealable("the text key does not unwrap for this user and text") from exc
    if len(key) != 32:
        raise Unsealable("not a 256-bit key")
    return key
