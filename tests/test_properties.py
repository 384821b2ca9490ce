"""Any sequence of user operations keeps the caps, the order and the wall between users.

A hypothesis state machine drives two users through the real routes (Chalice test client over moto)
and keeps a model of what each should see. After every step both users' `GET /v1/memory` must show
exactly the model: active, unexpired entries (≤ 200) pinned first and newest next, waiting proposals
(≤ 50), and nothing of the other user's. Time is a deterministic clock the machine moves by days.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from chalicelib.config import TableNames, load_settings, reset_settings
from chalicelib.models import MAX_ACTIVE_ENTRIES, MAX_WAITING_PROPOSALS, Entry, Source, new_id
from local.dev_tokens import DevTokenIssuer
from tests.support.stack import settings_env

ROOT = Path(__file__).resolve().parent.parent
USERS = ("ann", "ben")
NAMES = TableNames(entries="p-entries", proposals="p-proposals", journal="p-journal", sessions="p-sessions", events="p-events")
DAY = 86_400


class SteppedClock:
    """Deterministic time: a microsecond per reading (every write is strictly newer), days on demand.

    It starts half a second into a second and moves by whole seconds, so the service's epoch
    (seconds, rounded down) is the same whichever reading of a step it takes.
    """

    def __init__(self) -> None:
        self.start = datetime(2030, 1, 1, 0, 0, 0, 500_000, tzinfo=UTC)
        self.offset = timedelta()
        self.readings = 0

    def __call__(self) -> datetime:
        self.readings += 1
        return self.start + self.offset + timedelta(microseconds=self.readings)

    def epoch(self) -> int:
        return int((self.start + self.offset).timestamp())


@dataclass(frozen=True)
class Known:
    """What the model remembers of an entry or proposal."""

    id: str
    text: str
    pinned: bool
    created_at: str
    expires_at: int | None = None


def _epoch(iso: str | None) -> int | None:
    return None if iso is None else int(datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp())


words = st.text(alphabet="abcdefghij klmno", min_size=1, max_size=24).map(str.strip).filter(bool)
expiry_days = st.one_of(st.none(), st.integers(min_value=1, max_value=40), st.just(3650))
bad_text = st.sampled_from(["   ", "é" * 1001])


class UserMemory(RuleBasedStateMachine):
    """The stack, the model, the rules that move the caps, and the invariant; the machines below add rules."""

    def __init__(self, issuer: DevTokenIssuer) -> None:
        super().__init__()
        import boto3
        from chalice.test import Client
        from moto import mock_aws

        from app import app
        from chalicelib.bootstrap import build_stores, reset_stores
        from local.tables import create_tables

        self._mock = mock_aws()
        self._mock.start()
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_tables(client, NAMES)
        self.clock = SteppedClock()
        self.stores = build_stores(load_settings(dict(os.environ)), client, clock=self.clock)
        reset_stores(self.stores)
        self._client_cm = Client(app, stage_name="local", project_dir=str(ROOT))
        self.client = self._client_cm.__enter__()
        self.tokens = {user: issuer.mint(user) for user in USERS}
        self.enabled = {user: False for user in USERS}
        self.entries: dict[str, dict[str, Known]] = {user: {} for user in USERS}
        self.proposals: dict[str, dict[str, Known]] = {user: {} for user in USERS}
        self.bulk = 0

    def teardown(self) -> None:
        from chalicelib.bootstrap import reset_stores

        self._client_cm.__exit__(None, None, None)
        reset_stores(None)
        self._mock.stop()

    # ---- helpers -------------------------------------------------------------------------------

    def call(self, method: str, path: str, user: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.tokens[user]}"}
        payload = json.dumps(body) if body is not None else None
        response = getattr(self.client.http, method.lower())(path, headers=headers, body=payload)
        text = response.body.decode() if isinstance(response.body, bytes) else response.body
        return response.status_code, (json.loads(text) if text else None)

    def live(self, user: str) -> dict[str, Known]:
        now = self.clock.epoch()
        return {i: e for i, e in self.entries[user].items() if e.expires_at is None or e.expires_at > now}

    def pick(self, pool: dict[str, Known], index: int) -> str:
        """One of `pool`'s ids (in the order they came, so a replayed example picks the same), or an unknown id."""
        ids = list(pool)
        return ids[index % len(ids)] if ids else new_id()

    def remember(self, user: str, body: dict[str, Any]) -> None:
        self.entries[user][body["id"]] = Known(body["id"], body["text"], body["pinned"], body["created_at"], _epoch(body["expires_at"]))

    def fill(self, user: str, count: int) -> None:
        """Fill towards the cap quickly, the way the service counts: slots taken in the same transaction.

        Every third entry expires within weeks, so time can free slots that the counter still holds.
        """
        from chalicelib.clock import instant
        from chalicelib.storage.dynamo import transact

        state = self.stores.entries.get_state(user)
        room = min(count, MAX_ACTIVE_ENTRIES - state.active) if state.enabled else 0
        while room > 0:
            chunk = min(room, 99)
            made = []
            for _ in range(chunk):
                now = instant(self.clock)
                self.bulk += 1
                expires = now.epoch + (self.bulk % 5 + 1) * 7 * DAY if self.bulk % 3 == 0 else None
                made.append(Entry(new_id(), user, f"{user}: bulk {self.bulk}", "note", self.bulk % 7 == 0, False, "user", Source(), now.iso, now.iso, expires))
            transact(self.stores.client, [*(self.stores.entries.put_new(e) for e in made), self.stores.entries.take_entry_slots(user, chunk)])
            for e in made:
                self.entries[user][e.id] = Known(e.id, e.text, e.pinned, e.created_at, e.expires_at)
            room -= chunk

    # ---- rules ---------------------------------------------------------------------------------

    @initialize()
    def both_turn_memory_on(self) -> None:
        """Start on, so most sequences do real work; the switch rule still turns it off and on."""
        for user in USERS:
            self.switch(user, True)

    @rule(user=st.sampled_from(USERS), on=st.booleans())
    def switch(self, user: str, on: bool) -> None:
        assert self.call("PUT", "/v1/memory/settings", user, {"enabled": on}) == (200, {"enabled": on})
        self.enabled[user] = on

    @rule(user=st.sampled_from(USERS), text=words, pinned=st.booleans(), days=expiry_days)
    def add(self, user: str, text: str, pinned: bool, days: int | None) -> None:
        status, body = self.call("POST", "/v1/memory", user, {"text": f" {user}: {text} ", "pinned": pinned, "expires_in_days": days})
        if not self.enabled[user]:
            assert (status, body["code"]) == (409, "memory_off")
        elif len(self.live(user)) >= MAX_ACTIVE_ENTRIES:
            assert (status, body["code"]) == (409, "limit_reached")
        else:
            assert status == 201 and body["text"] == f"{user}: {text}", body
            assert _epoch(body["expires_at"]) == (None if days is None else self.clock.epoch() + days * DAY)
            self.remember(user, body)

    @rule(user=st.sampled_from(USERS), index=st.integers(0, 10_000))
    def delete_one(self, user: str, index: int) -> None:
        entry_id = self.pick(self.entries[user], index)
        status, _ = self.call("DELETE", f"/v1/memory/{entry_id}", user)
        if entry_id in self.live(user):
            assert status == 204
            del self.entries[user][entry_id]
        else:
            assert status == 404

    @rule(user=st.sampled_from(USERS), text=words, count=st.sampled_from([1, 1, 1, 10]))
    def propose(self, user: str, text: str, count: int) -> None:
        """Waiting proposals written as the stream consumer writes them (refused while off or at 50)."""
        from chalicelib.storage.dynamo import TransactionCancelled
        from tests.support.proposals import add_proposal

        for n in range(count):
            allowed = self.enabled[user] and len(self.proposals[user]) < MAX_WAITING_PROPOSALS
            try:
                made = add_proposal(self.stores, user, f"{user}: {text} {n}")
            except TransactionCancelled:
                assert not allowed
                return
            assert allowed
            self.proposals[user][made.id] = Known(made.id, made.text, False, made.created_at)

    @rule(user=st.sampled_from(USERS), index=st.integers(0, 10_000))
    def accept(self, user: str, index: int) -> None:
        proposal_id = self.pick(self.proposals[user], index)
        status, body = self.call("POST", f"/v1/memory/{proposal_id}/accept", user)
        if proposal_id not in self.proposals[user]:
            assert status == 404
        elif not self.enabled[user]:
            assert (status, body["code"]) == (409, "memory_off")
        elif len(self.live(user)) >= MAX_ACTIVE_ENTRIES:
            assert (status, body["code"]) == (409, "limit_reached")
        else:
            assert status == 201 and body["id"] == proposal_id and body["origin"] == "agent", body
            del self.proposals[user][proposal_id]
            self.remember(user, body)

    @rule(user=st.sampled_from(USERS), index=st.integers(0, 10_000))
    def reject(self, user: str, index: int) -> None:
        proposal_id = self.pick(self.proposals[user], index)
        status, _ = self.call("POST", f"/v1/memory/{proposal_id}/reject", user)
        assert status == (204 if self.proposals[user].pop(proposal_id, None) else 404)

    @rule(owner=st.sampled_from(USERS), index=st.integers(0, 10_000), action=st.sampled_from(["patch", "delete", "accept", "reject"]))
    def reach_for_the_other_users(self, owner: str, index: int, action: str) -> None:
        """Another user's id answers exactly like a missing one, and changes nothing."""
        intruder = USERS[1 - USERS.index(owner)]
        pool = self.entries[owner] if action in ("patch", "delete") else self.proposals[owner]
        target = self.pick(pool, index)
        method, path, body = {
            "patch": ("PATCH", f"/v1/memory/{target}", {"text": f"{intruder}: was here"}),
            "delete": ("DELETE", f"/v1/memory/{target}", None),
            "accept": ("POST", f"/v1/memory/{target}/accept", None),
            "reject": ("POST", f"/v1/memory/{target}/reject", None),
        }[action]
        status, got = self.call(method, path, intruder, body)
        assert status == 404 and got["code"] == "not_found", got

    @rule(days=st.sampled_from([1, 2, 7, 30, 400]))
    def time_passes(self, days: int) -> None:
        self.clock.offset += timedelta(days=days)

    # ---- what must hold after every step ---------------------------------------------------------

    @invariant()
    def each_user_sees_exactly_their_own_memory_in_order(self) -> None:
        for user in USERS:
            other = USERS[1 - USERS.index(user)]
            status, view = self.call("GET", "/v1/memory", user)
            assert status == 200 and view["enabled"] == self.enabled[user]
            items, proposals = view["items"], view["proposals"]
            assert len(items) <= MAX_ACTIVE_ENTRIES and len(proposals) <= MAX_WAITING_PROPOSALS
            assert {i["id"] for i in items} == set(self.live(user)), "active entries differ from the model"
            assert {p["id"] for p in proposals} == set(self.proposals[user]), "waiting proposals differ from the model"
            for shown in items + proposals:
                assert shown["text"].startswith(f"{user}: ") and not shown["text"].startswith(f"{other}: ")
                assert shown["id"] not in self.entries[other] and shown["id"] not in self.proposals[other]
            for listed in (items, proposals):
                keys = [(e["pinned"], e["created_at"], e["id"]) for e in listed]
                assert keys == sorted(keys, reverse=True), "not pinned first, newest next"
            for item in items:
                known = self.entries[user][item["id"]]
                assert (item["text"], item["pinned"], _epoch(item["expires_at"])) == (known.text, known.pinned, known.expires_at)


class MemoryMachine(UserMemory):
    """Every user operation, from an empty start."""

    @rule(user=st.sampled_from(USERS), text=bad_text)
    def add_bad_text(self, user: str, text: str) -> None:
        assert self.call("POST", "/v1/memory", user, {"text": text})[0] == 400

    @rule(user=st.sampled_from(USERS), count=st.sampled_from([10, 40]))
    def bulk_add(self, user: str, count: int) -> None:
        self.fill(user, count)

    @rule(user=st.sampled_from(USERS), index=st.integers(0, 10_000), text=st.one_of(st.none(), words), pinned=st.one_of(st.none(), st.booleans()), days=st.one_of(st.just("keep"), expiry_days))
    def patch(self, user: str, index: int, text: str | None, pinned: bool | None, days: Any) -> None:
        entry_id = self.pick(self.entries[user], index)
        body: dict[str, Any] = {}
        if text is not None:
            body["text"] = f"{user}: {text}"
        if pinned is not None:
            body["pinned"] = pinned
        if days != "keep":
            body["expires_in_days"] = days
        status, got = self.call("PATCH", f"/v1/memory/{entry_id}", user, body)
        if entry_id not in self.live(user):
            assert status == 404, got
            return
        assert status == 200, got
        before = self.entries[user][entry_id]
        assert (got["text"], got["pinned"], got["created_at"]) == (body.get("text", before.text), body.get("pinned", before.pinned), before.created_at)
        expected_expiry = before.expires_at if days == "keep" else None if days is None else self.clock.epoch() + days * DAY
        assert _epoch(got["expires_at"]) == expected_expiry
        self.remember(user, got)

    @rule(user=st.sampled_from(USERS))
    def delete_all(self, user: str) -> None:
        expected = len(self.live(user)) + len(self.proposals[user])
        assert self.call("DELETE", "/v1/memory", user) == (200, {"deleted": expected})
        self.entries[user].clear()
        self.proposals[user].clear()


class AtTheCapsMachine(UserMemory):
    """The rules that move the caps, from a start where ann has 200 entries and 50 waiting proposals.

    Separate from the general machine because moto slows down with hundreds of items: here the
    sequences are few and short, and every one of them starts at the caps.
    """

    @initialize()
    def fill_to_the_caps(self) -> None:
        for user in USERS:
            self.switch(user, True)
        self.propose("ann", "idea", MAX_WAITING_PROPOSALS)
        self.fill("ann", MAX_ACTIVE_ENTRIES)
        assert len(self.live("ann")) == MAX_ACTIVE_ENTRIES and len(self.proposals["ann"]) == MAX_WAITING_PROPOSALS


@pytest.fixture
def machine_env(monkeypatch: pytest.MonkeyPatch, issuer: DevTokenIssuer) -> Any:
    """Fake AWS credentials (no endpoint override: it would win over mock_aws) and the stage's settings."""
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
        **settings_env(NAMES, issuer),
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    reset_settings()
    yield
    reset_settings()


def _bounded(examples: int, steps: int) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


def test_any_sequence_keeps_caps_order_and_isolation(machine_env: None, issuer: DevTokenIssuer) -> None:
    run_state_machine_as_test(lambda: MemoryMachine(issuer), settings=_bounded(examples=15, steps=20))


def test_sequences_across_the_caps_keep_them(machine_env: None, issuer: DevTokenIssuer) -> None:
    run_state_machine_as_test(lambda: AtTheCapsMachine(issuer), settings=_bounded(examples=8, steps=10))


def test_the_invariant_catches_another_users_entry(machine_env: None, issuer: DevTokenIssuer) -> None:
    """The check can fail: an entry of ann's that storage hands to ben breaks it."""
    from chalicelib.clock import instant
    from chalicelib.storage.dynamo import transact

    machine = MemoryMachine(issuer)
    try:
        machine.switch("ann", True)
        machine.add("ann", "tea", False, None)
        machine.each_user_sees_exactly_their_own_memory_in_order()
        now = instant(machine.clock)
        leaked = Entry(new_id(), "ben", "ann: tea", "note", False, False, "user", Source(), now.iso, now.iso)
        transact(machine.stores.client, [machine.stores.entries.put_new(leaked)])
        with pytest.raises(AssertionError):
            machine.each_user_sees_exactly_their_own_memory_in_order()
    finally:
        machine.teardown()
