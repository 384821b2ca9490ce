"""Keyed fingerprints of texts: what makes duplicates refusable in a transaction without storing a plain hash.

A fingerprint is HMAC-SHA256 over the text's comparison form (chalicelib/comparison.py) under a key
derived by HKDF-SHA256 from the user's data key, for one table and one user. A plain hash of a text
would let anyone holding the tables test guesses ("is 'Has diabetes' stored?") and see equal texts
across users; a MAC under a per-user secret shows neither: equal texts of two users, or of one user's
entry and proposal, look unrelated. Forget-all destroys the data key, and with it every old fingerprint's
meaning. `cryptography` is imported on first use, not at cold start.
"""

from __future__ import annotations

import hashlib
import hmac

from chalicelib.comparison import comparison_form

__all__ = ["fingerprint", "fingerprint_key"]

INFO = "personal-memory/fingerprint/v1"


def fingerprint_key(data_key: bytes, user_id: str, table: str) -> bytes:
    """The MAC key for one user's fingerprints in one table, derived (HKDF-SHA256) from their data key."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    info = "\x00".join((INFO, table, user_id)).encode("utf-8")
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(data_key)


def fingerprint(data_key: bytes, user_id: str, table: str, text: str) -> str:
    """The text's fingerprint (hex) for this user and table: equal comparison forms, equal fingerprints."""
    key = fingerprint_key(data_key, user_id, table)
    return hmac.new(key, comparison_form(text).encode("utf-8"), hashlib.sha256).hexdigest()
