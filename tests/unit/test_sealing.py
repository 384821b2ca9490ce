"""The sealing itself, with one key for everyone: the associated data alone binds table, user, key and provenance."""

from __future__ import annotations

import os
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.crypto.cache import KeyCache
from chalicelib.storage.text import TEXT_ATTRIBUTE, TextSeal, UnreadableText

KEY_ID, KEY = os.urandom(16), os.urandom(32)


class OneKeyForAll:
    """A keyring that gives every user the same key, so only the AAD can tell places apart."""

    def sealing_key(self, user_id: str) -> tuple[bytes, bytes]:
        return KEY_ID, KEY

    def opening_key(self, user_id: str, key_id: bytes) -> bytes | None:
        return KEY if key_id == KEY_ID else None

    def new_text_key(self, user_id: str) -> tuple[bytes, bytes]:  # every text shares one key here: only the AAD differs
        return KEY_ID, KEY

    def text_key(self, user_id: str, text_id: bytes) -> bytes | None:
        return KEY if text_id == KEY_ID else None


def _seal(table: str) -> TextSeal:
    return TextSeal(OneKeyForAll(), table)  # type: ignore[arg-type]


def _key(item_id: str) -> dict[str, str]:
    return {"user_id": "alice", "sk": "e#" + item_id}


CLAIMS = {
    "origin": "agent",
    "tainted": True,
    "kind": "note",
    "created_at": "2026-12-02T10:00:00.000000Z",
    "agent": "helper",
}


def test_sealed_text_opens_only_for_its_table_user_key_and_provenance() -> None:
    stored = _seal("entries").seal_text("alice", _key("id-1"), CLAIMS, "Alice keeps a blue notebook")
    assert b"blue" not in stored[TEXT_ATTRIBUTE]
    assert _seal("entries").open_text("alice", _key("id-1"), CLAIMS, stored) == "Alice keeps a blue notebook"
    elsewhere = [
        ("entries", "bob", _key("id-1"), CLAIMS),
        ("entries", "alice", _key("id-2"), CLAIMS),
        ("entries", "alice", {**_key("id-1"), "sk": "p#id-1"}, CLAIMS),
        ("proposals", "alice", _key("id-1"), CLAIMS),
        *(
            ("entries", "alice", _key("id-1"), {**CLAIMS, name: value})
            for name, value in (
                ("tainted", False),
                ("origin", "user"),
                ("kind", "fact"),
                ("agent", None),
                ("agent", "other"),
                ("created_at", "2026-12-02T10:00:00.000001Z"),
                ("src_session", "s-2"),
            )
        ),
        ("entries", "alice", _key("id-1"), {k: v for k, v in CLAIMS.items() if k != "tainted"}),
    ]
    for table, user, key, claims in elsewhere:
        with pytest.raises(UnreadableText):
            _seal(table).open_text(user, key, claims, stored)


def test_ids_cannot_be_shifted_between_parts_of_the_associated_data() -> None:
    stored = _seal("events").seal_text("alice", {"session_id": "s", "event_id": "1e"}, {}, "a note")
    for key, claims in (
        ({"session_id": "s1", "event_id": "e"}, {}),
        ({"session_id": "s", "event_id": "1e", "x": ""}, {}),
        ({"session_id": "s"}, {"event_id": "1e"}),
    ):
        with pytest.raises(UnreadableText):
            _seal("events").open_text("alice", key, claims, stored)


def test_altered_truncated_or_foreign_values_are_unreadable_not_errors() -> None:
    stored = _seal("entries").seal_text("alice", _key("id-1"), CLAIMS, "a note")
    blob = bytearray(stored[TEXT_ATTRIBUTE])
    blob[-1] ^= 1
    legacy = bytes([1]) + bytes(stored[TEXT_ATTRIBUTE])[1:]  # the format before issue 21: never opened
    for value in (bytes(blob), bytes(blob[:20]), b"", "plain text", None, 7, legacy):
        with pytest.raises(UnreadableText):
            _seal("entries").open_text("alice", _key("id-1"), CLAIMS, {TEXT_ATTRIBUTE: value})
    with pytest.raises(UnreadableText):
        _seal("entries").open_text("alice", _key("id-1"), CLAIMS, {"text": "a note"})  # plaintext is never accepted


def test_two_seals_of_one_text_differ() -> None:
    first = _seal("entries").seal_text("alice", _key("id-1"), CLAIMS, "same")[TEXT_ATTRIBUTE]
    assert first != _seal("entries").seal_text("alice", _key("id-1"), CLAIMS, "same")[TEXT_ATTRIBUTE]


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


_NAMES = st.text(st.characters(codec="utf-8") | st.sampled_from('"\\\n\x00\u202e\U0001f600'), max_size=12)
_VALUES = st.none() | st.booleans() | _NAMES


@settings(max_examples=400, deadline=None)
@given(
    table=_NAMES,
    user=_NAMES,
    key=st.dictionaries(_NAMES, _NAMES, max_size=3),
    provenance=st.dictionaries(_NAMES, _VALUES, max_size=9),
)
def test_the_associated_data_is_byte_for_byte_the_canonical_json_it_always_was(
    table: str, user: str, key: dict[str, str], provenance: dict[str, object]
) -> None:
    """Built directly for speed (a GET opens 250 texts): any other byte would stop every stored text opening."""
    import json

    from chalicelib.crypto.sealing import AAD_VERSION, associated_data

    document = {"v": AAD_VERSION, "table": table, "user": user, "key": key, "provenance": provenance}
    expected = json.dumps(document, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()
    assert associated_data(table, user, key, provenance) == expected  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        _NAMES,
        st.none() | st.booleans() | _NAMES | st.integers(-(10**12), 10**12) | st.binary(max_size=40),
        max_size=12,
    )
)
def test_items_decode_as_boto3_decodes_them_numbers_as_integers(item: dict[str, object]) -> None:
    """The decoder reads strings and booleans itself (a GET decodes 250 items): the same result as boto3's own."""
    from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

    from chalicelib.storage import dynamo

    raw = {name: TypeSerializer().serialize(value) for name, value in item.items()}
    expected = {name: TypeDeserializer().deserialize(value) for name, value in raw.items()}
    expected = {name: int(value) if isinstance(value, Decimal) else value for name, value in expected.items()}
    assert dynamo.load(raw) == expected
    assert [type(v) for v in dynamo.load(raw).values()] == [type(v) for v in expected.values()]


@pytest.mark.parametrize(
    "text, number",
    [
        ("10000000000000000000000000000000000000000", 10**40),  # DynamoDB Local's answer for a stored 1e40
        ("1e40", 10**40),  # moto's: the text as written
        ("-99999999999999999999999999999999999999900", -99999999999999999999999999999999999999900),
        ("12", 12),
    ],
)
def test_a_number_dynamodb_writes_out_in_full_is_read_exactly(text: str, number: int) -> None:
    """boto3's decoder raises `Rounded` past 38 digits, even for trailing zeros; DynamoDB hands numbers back so
    (docs/local-stack.md, "DynamoDB Local vs AWS vs moto"), and one damaged item must not fail its partition."""
    from chalicelib.storage import dynamo

    assert dynamo.load({"n": {"N": text}}) == {"n": number}


@settings(max_examples=200, deadline=None)
@given(user=_NAMES, text_id=st.binary(min_size=16, max_size=16), data_key_id=st.binary(min_size=16, max_size=16))
def test_a_text_keys_associated_data_is_the_json_it_always_was(user: str, text_id: bytes, data_key_id: bytes) -> None:
    import json

    from chalicelib.crypto.sealing import TEXT_KEY_AAD, _text_key_aad

    document = {"v": TEXT_KEY_AAD, "user": user, "text": text_id.hex(), "data_key": data_key_id.hex()}
    assert _text_key_aad(user, text_id, data_key_id) == json.dumps(document, sort_keys=True).encode()
