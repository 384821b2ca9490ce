"""The sealing itself, with one key for everyone: the associated data alone binds table, user and item."""
from __future__ import annotations

import os

import pytest

from chalicelib.crypto.cache import KeyCache
from chalicelib.storage.text import TEXT_ATTRIBUTE, TextSeal, UnreadableText

KEY_ID, KEY = os.urandom(16), os.urandom(32)


class OneKeyForAll:
    """A keyring that gives every user the same key, so only the AAD can tell places apart."""

    def sealing_key(self, user_id: str) -> tuple[bytes, bytes]:
        return KEY_ID, KEY

    def opening_key(self, user_id: str, key_id: bytes) -> bytes | None:
        return KEY if key_id == KEY_ID else None


def _seal(table: str) -> TextSeal:
    return TextSeal(OneKeyForAll(), table)  # type: ignore[arg-type]


def test_sealed_text_opens_only_for_its_table_user_and_item() -> None:
    stored = _seal("entries").seal_text("alice", ["id-1"], "Alice keeps a blue notebook")
    assert b"blue" not in stored[TEXT_ATTRIBUTE]
    assert _seal("entries").open_text("alice", ["id-1"], stored) == "Alice keeps a blue notebook"
    for table, user, item in (("entries", "bob", ["id-1"]), ("entries", "alice", ["id-2"]), ("proposals", "alice", ["id-1"])):
        with pytest.raises(UnreadableText):
            _seal(table).open_text(user, item, stored)


def test_ids_cannot_be_shifted_between_parts_of_the_associated_data() -> None:
    stored = _seal("events").seal_text("alice", ["s", "1e"], "a note")
    with pytest.raises(UnreadableText):
        _seal("events").open_text("alice", ["s1", "e"], stored)


def test_altered_truncated_or_foreign_values_are_unreadable_not_errors() -> None:
    stored = _seal("entries").seal_text("alice", ["id-1"], "a note")
    blob = bytearray(stored[TEXT_ATTRIBUTE])
    blob[-1] ^= 1
    for value in (bytes(blob), bytes(blob[:20]), b"", "plain text", None):
        with pytest.raises(UnreadableText):
            _seal("entries").open_text("alice", ["id-1"], {TEXT_ATTRIBUTE: value})
    with pytest.raises(UnreadableText):
        _seal("entries").open_text("alice", ["id-1"], {"text": "a note"})  # plaintext is never accepted


def test_two_seals_of_one_text_differ() -> None:
    first = _seal("entries").seal_text("alice", ["id-1"], "same")[TEXT_ATTRIBUTE]
    assert first != _seal("entries").seal_text("alice", ["id-1"], "same")[TEXT_ATTRIBUTE]


def test_the_key_cache_is_bounded_in_users_and_age() -> None:
    now = [0.0]
    cache = KeyCache(max_users=3, max_age=300, now=lambda: now[0])
    for n in range(5):
        cache.put(f"u{n}", b"k" * 16, bytes([n]) * 32)
    assert len(cache) == 3 and cache.get("u0", b"k" * 16) is None and cache.get("u4", b"k" * 16) == bytes([4]) * 32
    cache.get("u2", b"k" * 16)  # recently used: u3 is now the oldest
    cache.put("u5", b"k" * 16, b"5" * 32)
    assert cache.get("u3", b"k" * 16) is None and cache.get("u2", b"k" * 16) is not None
    assert cache.get("u2", b"other-key-id....") is None  # a different key id is never served
    now[0] = 301
    assert cache.get("u2", b"k" * 16) is None and cache.get("u5", b"k" * 16) is None
