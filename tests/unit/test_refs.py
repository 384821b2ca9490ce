"""chalicelib/crypto/refs.py: a ref opens only for the user, session and key it was made for (issue 39)."""

from __future__ import annotations

import os

import pytest

from chalicelib.crypto.refs import entry_of, make_ref, ref_key
from chalicelib.models import new_id


def test_a_ref_opens_for_its_own_user_and_session_only() -> None:
    data_key, entry = os.urandom(32), new_id()
    key = ref_key(data_key, "alice")
    ref = make_ref(key, "alice", "s-1", entry)
    assert len(ref) == 44 and entry not in ref
    assert make_ref(key, "alice", "s-1", entry) == ref  # one session, one handle
    assert entry_of(key, "alice", "s-1", ref) == entry
    assert entry_of(key, "alice", "s-2", ref) is None
    assert entry_of(ref_key(data_key, "bob"), "bob", "s-1", ref) is None
    assert entry_of(key, "bob", "s-1", ref) is None
    assert entry_of(ref_key(os.urandom(32), "alice"), "alice", "s-1", ref) is None  # after forget-all: a new key
    assert make_ref(key, "alice", "s-2", entry) != ref


@pytest.mark.parametrize(
    "bad",
    ["", "=", "not a ref", "A" * 44, "A" * 300, "é" * 44, "AQ==", None, 5],
)
def test_anything_else_opens_to_nothing_and_never_raises(bad: object) -> None:
    key = ref_key(os.urandom(32), "alice")
    assert entry_of(key, "alice", "s-1", bad) is None  # type: ignore[arg-type]


def test_every_changed_character_or_other_spelling_opens_to_nothing() -> None:
    key = ref_key(os.urandom(32), "alice")
    ref = make_ref(key, "alice", "s-1", new_id())
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for index, char in enumerate(ref):
        changed = ref[:index] + alphabet[(alphabet.index(char) + 1) % 64] + ref[index + 1 :]
        assert entry_of(key, "alice", "s-1", changed) is None
    for other in (ref + "=", ref + "\n", " " + ref, ref.replace("-", "+").replace("_", "/")):
        if other != ref:
            assert entry_of(key, "alice", "s-1", other) is None
