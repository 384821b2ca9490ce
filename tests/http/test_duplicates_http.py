"""Issue 24 over the real HTTP server (`make run`'s launcher), judged by its raw tables and stream.

Uniqueness holds under concurrent requests (30 identical POSTs store one entry; 10 identical proposals
from 10 sessions make one proposal), three rounds each; a forgotten, expired-and-swept or edited-away text
can be stored again; replace at 200 entries; and no table or stream record holds a plain hash of any text.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chalicelib.comparison import comparison_form
from tests.support.burst import burst as _burst
from tests.support.live import STREAM_DEADLINE_S, LiveStack, start_live_stack
from tests.support.raw_storage import every_item, every_stream_record, strings_in
from tests.support.signing import signed_request
from tests.support.stored import StoredState

ROUNDS = 3


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveStack]:
    started = start_live_stack(tmp_path_factory.mktemp("duplicates"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def stored(stack: LiveStack) -> StoredState:
    return StoredState(Path(stack.credentials_file).parent / "stack.json")


class User:
    def __init__(self, stack: LiveStack, prefix: str) -> None:
        self.stack, self.id = stack, f"{prefix}-{uuid.uuid4().hex[:8]}"
        self.token = stack.token(self.id)
        assert self.call("PUT", "/v1/memory/settings", {"enabled": True})[0] == 200

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, payload, _ = self.stack.request(method, path, token=self.token, body=body)
        return status, payload

    def add(self, text: str, **fields: Any) -> str:
        status, entry = self.call("POST", "/v1/memory", {"text": text, **fields})
        assert status == 201, entry
        return str(entry["id"])


def _session(stack: LiveStack, user: User) -> str:
    path = "/v1/sessions/" + uuid.uuid4().hex
    body = {"user_id": user.id, "thread_id": "t-1", "agent": "dup-agent", "manifest": {"memory": True}}
    assert signed_request(stack.url, "PUT", path, stack.credentials()["host"], body)[0] == 200
    return path


def _outcomes(stack: LiveStack, sessions: list[str], count: int) -> list[dict[str, Any]]:
    """Each session's one event outcome, once the stream consumer has handled all of them."""
    deadline = time.monotonic() + STREAM_DEADLINE_S
    outcomes: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        outcomes = []
        for path in sessions:
            status, body = signed_request(stack.url, "GET", path + "/events", stack.credentials()["worker"])
            assert status == 200, body
            outcomes += [e["outcome"] for e in body["events"] if e.get("outcome")]
        if len(outcomes) == count:
            return outcomes
        time.sleep(0.2)
    raise AssertionError(f"only {len(outcomes)} of {count} events were handled")


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_30_concurrent_identical_posts_store_exactly_one_entry(
    stack: LiveStack, stored: StoredState, round_: int
) -> None:
    user = User(stack, "burst")
    variants = ["Prefers tea", "prefers tea", " PREFERS  TEA ", "Prefers\u200b tea", "Ｐrefers tea"]
    results = _burst([lambda n=n: user.call("POST", "/v1/memory", {"text": variants[n % 5]}) for n in range(30)])
    statuses = sorted(status for status, _ in results)
    assert statuses == [201] + [409] * 29, statuses
    (created,) = [body["id"] for status, body in results if status == 201]
    assert all(
        body == {"code": "duplicate", "message": body["message"], "existing_id": created}
        for s, body in results
        if s == 409
    )
    state = stored.user(user.id)
    assert state.entry_ids == {created} and state.counters_match and state.active_counter == 1
    assert [holder for _, holder in state.entry_fingerprints] == [created]


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_10_identical_proposals_from_10_sessions_make_exactly_one_proposal(
    stack: LiveStack, stored: StoredState, round_: int
) -> None:
    """Every agent is told what a new text gets (issue 37 #8); one proposal is stored, the nine duplicates each
    hold a waiting slot (a `p#` item with no text, counted: storage/proposals.py), and the journal says why."""
    user = User(stack, "agents")
    sessions = [_session(stack, user) for _ in range(10)]
    worker = stack.credentials()["worker"]
    events = [{"id": "e1", "type": "memory.propose", "text": "Has a cat called Miso", "kind": "fact"}]
    posted = _burst(
        [lambda p=p: signed_request(stack.url, "POST", p + "/events", worker, {"events": events}) for p in sessions]
    )
    assert [status for status, _ in posted] == [202] * 10
    outcomes = _outcomes(stack, sessions, 10)
    assert [o["type"] for o in outcomes] == ["memory.proposed"] * 10
    assert len({o["proposal_id"] for o in outcomes}) == 10
    state = stored.user(user.id)
    assert state.counters_match and state.waiting_counter == 10
    (proposal,) = [p["id"] for p in user.call("GET", "/v1/inbox")[1]["memory_proposals"]]
    assert proposal in state.proposal_ids and [holder for _, holder in state.proposal_fingerprints] == [proposal]
    assert state.journal_actions.count("keep.memory.proposal_refused") == 9


def test_forgotten_expired_and_swept_or_edited_away_texts_can_be_stored_again(
    stack: LiveStack, stored: StoredState
) -> None:
    user = User(stack, "again")
    forgotten = user.add("Forgotten words")
    assert user.call("DELETE", f"/v1/memory/{forgotten}")[0] == 204
    again = user.add("Forgotten words")
    edited = user.add("Edited-away words")
    assert user.call("PATCH", f"/v1/memory/{edited}", {"text": "Better words"})[0] == 200
    retyped = user.add("edited-away WORDS")
    expiring = user.add("Short-lived words", expires_in_days=1)
    assert user.call("POST", "/v1/memory", {"text": "short-lived words"})[0] == 409
    assert stack.request("POST", "/dev/clock", body={"advance_seconds": 2 * 86_400})[0] == 200
    swept = stack.request("POST", "/dev/ttl-sweep", body={})[1]
    assert swept["deleted"] >= 2  # the entry and its fingerprint, both under the entries table's TTL
    renewed = user.add("Short-lived words")
    state = stored.user(user.id)
    assert state.entry_ids == {again, edited, retyped, renewed} and expiring not in state.entry_ids
    assert sorted(holder for _, holder in state.entry_fingerprints) == sorted(state.entry_ids)
    assert user.call("POST", "/v1/memory", {"text": "better words"})[1]["existing_id"] == edited


def test_replace_at_200_entries_keeps_200_with_the_new_one_in_and_the_old_one_gone(
    stack: LiveStack, stored: StoredState
) -> None:
    user = User(stack, "replace")
    old = user.add("Prefers coffee")
    for n in range(199):
        user.add(f"note {n}")
    path = _session(stack, user)
    events = [{"id": "e1", "type": "memory.propose", "text": "Now prefers tea", "kind": "preference"}]
    assert (
        signed_request(stack.url, "POST", path + "/events", stack.credentials()["worker"], {"events": events})[0] == 202
    )
    assert _outcomes(stack, [path], 1)[0]["type"] == "memory.proposed"
    (proposal,) = stored.user(user.id).proposal_ids
    assert user.call("POST", f"/v1/memory/{proposal}/accept")[1]["code"] == "limit_reached"
    status, entry = user.call("POST", f"/v1/memory/{proposal}/accept", {"replaces": old})
    assert status == 201, entry
    state = stored.user(user.id)
    assert len(state.entry_ids) == 200 and entry["id"] in state.entry_ids and old not in state.entry_ids
    assert state.counters_match and not state.proposal_ids and not state.proposal_fingerprints
    assert sorted(holder for _, holder in state.entry_fingerprints) == sorted(state.entry_ids)


def _hashes(text: str) -> set[str]:
    """Hex and raw digests (SHA-256, SHA-1, MD5) of a text and of its comparison form, as anyone could compute them."""
    found: set[str] = set()
    for form in {text, text.strip(), comparison_form(text)}:
        for name in ("sha256", "sha1", "md5"):
            digest = hashlib.new(name, form.encode("utf-8")).digest()
            found |= {digest.hex(), digest.hex().upper(), repr(digest)[2:-1]}
    return found


def test_no_table_or_stream_record_holds_a_plain_hash_of_any_text(stack: LiveStack) -> None:
    user, other = User(stack, "hashes"), User(stack, "hashes2")
    texts = ["Has diabetes", "Prefers tea", "Lives in Lyon"]
    for text in texts:
        user.add(text)
        other.add(text)
    path = _session(stack, user)
    events = [{"id": "p1", "type": "memory.propose", "text": "Speaks Basque", "kind": "fact"}]
    assert (
        signed_request(stack.url, "POST", path + "/events", stack.credentials()["worker"], {"events": events})[0] == 202
    )
    assert _outcomes(stack, [path], 1)[0]["type"] == "memory.proposed"
    import boto3
    from botocore.config import Config

    description = json.loads((Path(stack.credentials_file).parent / "stack.json").read_text())
    keys = {"aws_access_key_id": "local", "aws_secret_access_key": "local", "region_name": "us-east-1"}
    dynamodb = boto3.client("dynamodb", endpoint_url=description["dynamodb_endpoint"], **keys)
    streams = boto3.client(
        "dynamodbstreams",
        endpoint_url=description["dynamodbstreams_endpoint"],
        config=Config(account_id_endpoint_mode="disabled"),
        **keys,
    )
    stored = [
        every_item(dynamodb, description["tables"].values()),
        every_stream_record(streams, description["events_stream_arn"]),
    ]
    strings = list(strings_in(stored))
    binaries = repr(stored)
    for text in [*texts, "Speaks Basque"]:
        for digest in _hashes(text):
            assert not any(digest in s for s in strings) and digest not in binaries, text
    # Equal texts of two users: their fingerprint items share no sort key.
    prints = [
        {k for k, _ in StoredState(Path(stack.credentials_file).parent / "stack.json").user(u.id).entry_fingerprints}
        for u in (user, other)
    ]
    assert len(prints[0]) == 3 and not prints[0] & prints[1]
