"""Concurrency over the real HTTP server, judged by what is stored: no phantom, resurrected or vanished write.

Each concurrent scenario runs three times on its own users (each burst interleaves differently), against a
stack of its own. The two that need a user near the cap seed it once and run their three bursts on it, deleting
what each burst added before the next (seeding took most of their time); the sequential TTL scenario runs once
(it moves that stack's clock). After every burst the test reads the raw tables (tests/support/stored.py)
and compares them with what the API answered.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.burst import burst as _burst
from tests.support.live import STREAM_DEADLINE_S, LiveStack, start_live_stack
from tests.support.signing import signed_request
from tests.support.stored import StoredState

ROUNDS = 3


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveStack]:
    started = start_live_stack(tmp_path_factory.mktemp("stored-state"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def stored(stack: LiveStack) -> StoredState:
    return StoredState(Path(stack.credentials_file).parent / "stack.json")


def _user(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class User:
    def __init__(self, stack: LiveStack, prefix: str) -> None:
        self.stack = stack
        self.id = _user(prefix)
        self.token = stack.token(self.id)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, payload, _ = self.stack.request(method, path, token=self.token, body=body)
        return status, payload

    def switch(self, enabled: bool) -> None:
        assert self.call("PUT", "/v1/memory/settings", {"enabled": enabled})[0] == 200

    def add(self, text: str, **fields: Any) -> str:
        status, entry = self.call("POST", "/v1/memory", {"text": text, **fields})
        assert status == 201, entry
        return str(entry["id"])

    def listed(self) -> set[str]:
        status, body = self.call("GET", "/v1/memory")
        assert status == 200, body
        return {item["id"] for item in body["items"]}


def _no_5xx(results: list[tuple[int, Any]]) -> None:
    assert all(status < 500 for status, _ in results), [r for r in results if r[0] >= 500]


def test_a_fresh_stack_answers_a_burst_of_first_requests(tmp_path: Path) -> None:
    """The threaded local server's first requests at once: app.py's lazy modules must already be loaded."""
    fresh = start_live_stack(tmp_path)
    try:
        tokens = [fresh.token(_user("first")) for _ in range(12)]
        calls: list[Callable[[], Any]] = [
            lambda t=t: fresh.request("PUT", "/v1/memory/settings", token=t, body={"enabled": True})[:2] for t in tokens
        ]
        calls += [lambda t=t: fresh.request("GET", "/v1/memory", token=t)[:2] for t in tokens]
        results = _burst(calls)
        assert [status for status, _ in results] == [200] * 24
    finally:
        fresh.stop()


def test_concurrent_posts_at_the_cap_store_exactly_what_was_confirmed(stack: LiveStack, stored: StoredState) -> None:
    user = User(stack, "cap")
    user.switch(True)
    before = {user.add(f"note {n}") for n in range(190)}
    for round_ in range(ROUNDS):
        posts = [lambda t=f"race {round_}.{n}": user.call("POST", "/v1/memory", {"text": t}) for n in range(30)]
        results = _burst(posts)
        _no_5xx(results)
        confirmed = {body["id"] for status, body in results if status == 201}
        assert sorted(status for status, _ in results) == [201] * 10 + [409] * 20
        assert all(body["code"] == "limit_reached" for status, body in results if status == 409)
        state = stored.user(user.id)
        assert state.entry_ids == before | confirmed  # no phantom (refused but stored), none vanished
        assert state.counters_match and state.active_counter == 200
        assert user.listed() == before | confirmed
        _delete_back_to(user, stored, before, confirmed)


def _delete_back_to(user: User, stored: StoredState, before: set[str], added: set[str]) -> None:
    """The next round starts where this one did: what the burst added is deleted, and the counter follows."""
    assert all(user.call("DELETE", f"/v1/memory/{entry_id}")[0] == 204 for entry_id in added)
    state = stored.user(user.id)
    assert state.entry_ids == before and state.counters_match and state.active_counter == len(before)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_refused_posts_while_memory_is_off_store_nothing(stack: LiveStack, stored: StoredState, round_: int) -> None:
    user = User(stack, "off")
    user.switch(True)
    kept = user.add("kept while on")
    user.switch(False)
    results = _burst([lambda n=n: user.call("POST", "/v1/memory", {"text": f"off {n}"}) for n in range(60)])
    _no_5xx(results)
    assert [status for status, _ in results] == [409] * 60
    assert all(body["code"] == "memory_off" for _, body in results)
    state = stored.user(user.id)
    assert state.entry_ids == {kept} and state.counters_match and not state.enabled


def test_404_delete_spam_beside_posts_never_moves_a_counter(stack: LiveStack, stored: StoredState) -> None:
    user, other = User(stack, "spam"), User(stack, "bystander")
    user.switch(True)
    other.switch(True)
    before = {user.add(f"note {n}") for n in range(180)}
    other_ids = {other.add(f"other {n}") for n in range(5)}
    other_before = stored.user(other.id)
    for round_ in range(ROUNDS):
        missing = [uuid.uuid4().hex for _ in range(60)]
        calls: list[Callable[[], Any]] = [lambda i=i: user.call("DELETE", f"/v1/memory/{i}") for i in missing]
        calls += [lambda t=f"new {round_}.{n}": user.call("POST", "/v1/memory", {"text": t}) for n in range(20)]
        calls += [lambda i=i: other.call("DELETE", f"/v1/memory/{i}") for i in missing[:20]]
        results = _burst(calls)
        _no_5xx(results)
        deletes, posts, other_deletes = results[:60], results[60:80], results[80:]
        assert all(status == 404 for status, _ in deletes + other_deletes)
        assert all(status == 201 for status, _ in posts)
        added = {body["id"] for _, body in posts}
        state = stored.user(user.id)
        assert state.entry_ids == before | added
        assert state.counters_match and state.active_counter == 200
        # The cap still holds afterwards: the counter was never pushed below what is stored.
        assert user.call("POST", "/v1/memory", {"text": "one too many"})[0] == 409
        assert stored.user(other.id) == other_before and stored.user(other.id).entry_ids == other_ids
        _delete_back_to(user, stored, before, added)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_delete_patch_post_and_forget_all_at_once_keep_counters_equal_to_items(
    stack: LiveStack, stored: StoredState, round_: int
) -> None:
    user = User(stack, "mixed")
    user.switch(True)
    ids = [user.add(f"note {n}") for n in range(60)]
    calls: list[Callable[[], Any]] = [lambda i=i: user.call("DELETE", f"/v1/memory/{i}") for i in ids[:20]]
    calls += [lambda i=i: user.call("PATCH", f"/v1/memory/{i}", {"pinned": True}) for i in ids[20:40]]
    calls += [lambda n=n: user.call("POST", "/v1/memory", {"text": f"new {n}"}) for n in range(20)]
    calls += [lambda: user.call("DELETE", "/v1/memory") for _ in range(3)]
    results = _burst(calls)
    _no_5xx(results)
    deletes, patches, posts, forgets = results[:20], results[20:40], results[40:60], results[60:]
    state = stored.user(user.id)
    assert state.counters_match
    posted = {body["id"] for status, body in posts if status == 201}
    assert all(status == 201 for status, _ in posts)
    deleted_one = {ids[i] for i, (status, _) in enumerate(deletes) if status == 204}
    assert all(status in (204, 404) for status, _ in deletes)
    assert all(status in (200, 404) for status, _ in patches)
    assert not (deleted_one & state.entry_ids)  # a 204 never comes back
    # Every entry that ever existed is either stored now or was removed by exactly one confirmed delete.
    forgotten = sum(body["deleted"] for status, body in forgets if status == 200)
    assert all(status == 200 for status, _ in forgets)
    assert len(state.entry_ids) + len(deleted_one) + forgotten == len(ids) + len(posted)
    assert state.entry_ids <= set(ids) | posted
    assert user.listed() == state.entry_ids


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_concurrent_forget_alls_report_exactly_what_each_deleted(
    stack: LiveStack, stored: StoredState, round_: int
) -> None:
    user = User(stack, "forget")
    user.switch(True)
    for n in range(120):
        user.add(f"note {n}")
    results = _burst([lambda: user.call("DELETE", "/v1/memory") for _ in range(4)])
    _no_5xx(results)
    assert sum(body["deleted"] for _, body in results) == 120
    state = stored.user(user.id)
    assert not state.entry_ids and state.counters_match and state.enabled
    assert state.journal_actions.count("keep.memory.forget_all") == 4


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_two_users_hammering_at_once_never_touch_each_other(stack: LiveStack, stored: StoredState, round_: int) -> None:
    alice, bob = User(stack, "alice"), User(stack, "bob")
    for user in (alice, bob):
        user.switch(True)
    alice_ids = [alice.add(f"a {n}") for n in range(30)]
    bob_ids = [bob.add(f"b {n}") for n in range(30)]
    calls: list[Callable[[], Any]] = []
    for mine, theirs, user in ((alice_ids, bob_ids, alice), (bob_ids, alice_ids, bob)):
        calls += [lambda i=i, u=user: u.call("DELETE", f"/v1/memory/{i}") for i in mine[:10]]
        calls += [lambda i=i, u=user: u.call("DELETE", f"/v1/memory/{i}") for i in theirs[10:20]]  # 404s
        calls += [lambda i=i, u=user: u.call("PATCH", f"/v1/memory/{i}", {"text": "hijack"}) for i in theirs[20:25]]
        calls += [lambda n=n, u=user: u.call("POST", "/v1/memory", {"text": f"more {n}"}) for n in range(10)]
    results = _burst(calls)
    _no_5xx(results)
    for user, mine, offset in ((alice, alice_ids, 0), (bob, bob_ids, 35)):
        block = results[offset : offset + 35]
        assert all(status == 204 for status, _ in block[:10])
        assert all(status == 404 for status, _ in block[10:25])
        posted = {body["id"] for status, body in block[25:] if status == 201}
        state = stored.user(user.id)
        assert state.entry_ids == set(mine[10:]) | posted and state.counters_match
        assert not any("text" in item for item in state.raw_entries)  # sealed at rest: no plaintext attribute
        _, view = user.call("GET", "/v1/memory")  # so the other user's PATCHes are judged by what opens
        assert len(view["items"]) == len(state.entry_ids) and not any(i["text"] == "hijack" for i in view["items"])


def test_200_entries_expired_and_removed_by_ttl_leave_room_for_200_new_ones(
    stack: LiveStack, stored: StoredState
) -> None:
    """Sequential, no race to catch: one round (the rounds above repeat bursts whose interleaving varies)."""
    user = User(stack, "ttl")
    user.switch(True)
    for n in range(200):
        user.add(f"short-lived {n}", expires_in_days=1)
    assert user.call("POST", "/v1/memory", {"text": "full"})[0] == 409
    status, clock, _ = stack.request("POST", "/dev/clock", body={"advance_seconds": 2 * 86_400})
    assert status == 200 and clock["now"]
    status, swept, _ = stack.request("POST", "/dev/ttl-sweep", body={})
    assert status == 200 and swept["deleted"] >= 200
    assert not stored.user(user.id).entry_ids  # TTL removed them, behind the app's back
    assert user.listed() == set()
    fresh = {user.add(f"fresh {n}") for n in range(200)}
    state = stored.user(user.id)
    assert state.entry_ids == fresh and state.counters_match
    # Forget-all and the switch afterwards leave a usable, exact counter too.
    assert user.call("DELETE", "/v1/memory") == (200, {"deleted": 200})
    assert stored.user(user.id).counters_match and stored.user(user.id).active_counter == 0


def _proposals(stack: LiveStack, user: User, count: int) -> list[str]:
    """`count` waiting proposals for `user`, made by a real host and worker through the stream."""
    creds = stack.credentials()
    ids: list[str] = []
    for start in range(0, count, 5):  # at most 5 proposals per session
        session = "/v1/sessions/" + uuid.uuid4().hex
        body = {"user_id": user.id, "thread_id": "t-1", "agent": "race-agent", "manifest": {"memory": True}}
        assert signed_request(stack.url, "PUT", session, creds["host"], body)[0] == 200
        events = [
            {"id": f"e{n}", "type": "memory.propose", "text": f"proposal {n}", "kind": "note"}
            for n in range(start, min(count, start + 5))
        ]
        assert signed_request(stack.url, "POST", session + "/events", creds["worker"], {"events": events})[0] == 202
    deadline = time.monotonic() + STREAM_DEADLINE_S
    while time.monotonic() < deadline:
        status, inbox = user.call("GET", "/v1/inbox")
        ids = [p["id"] for p in inbox["memory_proposals"]]
        if len(ids) >= count:
            return ids
        time.sleep(0.2)
    raise AssertionError(f"only {len(ids)} of {count} proposals arrived")


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_accept_and_reject_races_leave_exactly_one_outcome(stack: LiveStack, stored: StoredState, round_: int) -> None:
    user = User(stack, "decide")
    user.switch(True)
    proposals = _proposals(stack, user, 10)
    calls: list[Callable[[], Any]] = []
    for pid in proposals:
        calls += [
            lambda p=pid: user.call("POST", f"/v1/memory/{p}/accept"),
            lambda p=pid: user.call("POST", f"/v1/memory/{p}/reject"),
        ]
        calls += [lambda p=pid: user.call("POST", f"/v1/memory/{p}/accept")]
    results = _burst(calls)
    _no_5xx(results)
    state = stored.user(user.id)
    accepted = 0
    for index in range(len(proposals)):
        first, reject, second = results[3 * index : 3 * index + 3]
        outcomes = [s for s, _ in (first, reject, second) if s in (201, 204)]
        assert len(outcomes) == 1, (first, reject, second)
        accepted += outcomes[0] == 201
    assert not state.proposal_ids and len(state.entry_ids) == accepted and state.counters_match
