"""Context items' `ref`: an opaque handle for one entry, valid in one session of one user only (docs/review.md).

A ref is AES-256-SIV (RFC 5297) of the entry's id under a key derived (HKDF-SHA256) from the user's data
key, with the user and the session as associated data. It names no entry id (the id is encrypted), links
no two sessions (another session is other associated data: an unrelated value), and cannot be forged or
moved (SIV's tag fails for any other user, session or altered byte). SIV is deterministic, so one session
gets the same ref for an entry at every fetch, and no nonce has to be stored or trusted. The data key is
the one that opened the context's texts (cached: no extra call), and forget-all destroys it, so every ref
given before a forget-all names nothing afterwards. `cryptography` is imported on first use.
"""

from __future__ import annotations

import base64
import binascii

__all__ = ["MAX_REF_CHARACTERS", "entry_of", "make_ref", "ref_key", "shaped"]

INFO = "personal-memory/ref/v1"
VERSION = 1
_ID_BYTES = 16  # an entry id is 32 hex digits (models.new_id): sealed as its 16 bytes
_REF_BYTES = 1 + 16 + _ID_BYTES  # version | SIV tag | encrypted id
MAX_REF_CHARACTERS = 256  # what the routes take at the door (a ref is 44); longer is a 400


def ref_key(data_key: bytes, user_id: str) -> bytes:
    """The user's key for refs: 512 bits (AES-256-SIV), derived from their data key for this use only."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    info = "\x00".join((INFO, user_id)).encode("utf-8")
    return HKDF(algorithm=hashes.SHA256(), length=64, salt=None, info=info).derive(data_key)


def _siv(key: bytes) -> object:
    from cryptography.hazmat.primitives.ciphers.aead import AESSIV

    return AESSIV(key)


def _bound(user_id: str, session_id: str) -> list[bytes]:
    return [INFO.encode(), user_id.encode("utf-8"), session_id.encode("utf-8")]


def make_ref(key: bytes, user_id: str, session_id: str, entry_id: str) -> str:
    """The ref of `entry_id` for this user's session (base64url, 44 characters)."""
    sealed = _siv(key).encrypt(bytes.fromhex(entry_id), _bound(user_id, session_id))  # type: ignore[attr-defined]
    return _text(bytes([VERSION]) + sealed)


def _text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _raw(ref: object) -> bytes | None:
    """The bytes of a string of a ref's shape (this version, its length, its one spelling); None for any other."""
    if not isinstance(ref, str) or not ref.isascii() or len(ref) > MAX_REF_CHARACTERS:
        return None
    try:
        raw = base64.urlsafe_b64decode(ref + "=" * (-len(ref) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == _REF_BYTES and raw[0] == VERSION and _text(raw) == ref else None


def shaped(ref: object) -> bool:
    """Whether `ref` could be a ref at all. Anything else names nothing and is never kept: an agent that sends a
    note's text as `replaces` must not leave it unsealed in the events table (services/agents.py, connected.py)."""
    return _raw(ref) is not None


def entry_of(key: bytes, user_id: str, session_id: str, ref: str) -> str | None:
    """The entry id `ref` names if it was made for this user's session; None for anything else (never raises)."""
    from cryptography.exceptions import InvalidTag

    raw = _raw(ref)
    if raw is None:
        return None
    try:
        entry_id = _siv(key).decrypt(raw[1:], _bound(user_id, session_id))  # type: ignore[attr-defined]
    except (InvalidTag, ValueError):
        return None
    return bytes(entry_id).hex()
