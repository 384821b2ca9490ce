"""The users' pseudonyms in the logs are keyed by a stage secret: without it, nobody can test a guessed id against them."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import pytest

from chalicelib.config import ConfigError, load_settings
from tests.support.stack import TEST_PSEUDONYM_KEY


def _public_salt_hash(user_id: str) -> str:
    """What anyone who read the code could compute from an id (the pseudonym before issue 37)."""
    return hashlib.sha256(b"personal-memory-log:" + user_id.encode()).hexdigest()[:16]


def test_a_requests_log_line_names_the_user_by_an_hmac_under_the_stage_secret(
    api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    api.turn_on("alice")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    [request] = [line for line in lines if line.get("msg") == "request"]
    keyed = hmac.new(TEST_PSEUDONYM_KEY.encode(), b"personal-memory-log:alice", hashlib.sha256).hexdigest()[:16]
    assert request["user"] == keyed
    assert request["user"] != _public_salt_hash("alice")


def test_another_key_gives_other_pseudonyms_and_the_key_is_a_required_stage_secret(env: dict[str, str]) -> None:
    from chalicelib.logs import user_hash

    assert user_hash("alice", b"k" * 32) != user_hash("alice", b"j" * 32)
    assert user_hash("alice", b"k" * 32) == user_hash("alice", b"k" * 32) != user_hash("bob", b"k" * 32)
    for wrong in ({}, {"LOG_PSEUDONYM_KEY": ""}, {"LOG_PSEUDONYM_KEY": "short"}):
        settings = {k: v for k, v in env.items() if k != "LOG_PSEUDONYM_KEY"}
        with pytest.raises(ConfigError, match="LOG_PSEUDONYM_KEY"):
            load_settings({**settings, **wrong})
