"""An operator erases a whole account: nothing keyed by the user is left in any table, nothing of anyone else goes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.storage import dynamo
from tests.support.iam import iam_call
from tests.support.raw_storage import every_item
from tests.support.stack import HOST_ARN, OPERATOR_ARN, WORKER_ARN

ERASE = "/v1/operator/account?user_id={}"
TEXTS = {"alice": "Alice sees doctor Ferreira on Tuesdays", "bob": "Bob keeps his bike in the cellar"}


def _story(api: Any, agents: Any, user: str) -> None:
    """Everything a user leaves behind: entries, a waiting proposal, an agent row, journal rows, a session and its events."""
    api.turn_on(user)
    api.add(user, TEXTS[user])
    api.add(user, f"{user} prefers tea", kind="preference")
    assert api.call("PUT", "/v1/agents/helper", user, {"propose": True})[0] == 200
    assert agents.register(f"s-{user}", user)[0] == 200
    agents.items(f"s-{user}")  # the journal's context row names the session
    assert agents.propose(f"s-{user}", {"id": "e1", "text": f"{user} walks to work"})[0] == 202
    assert len(api.call("GET", "/v1/memory", user)[1]["proposals"]) == 1
    assert api.call("DELETE", "/v1/memory", user)[0] == 200  # forget-all: the journal, agents, sessions stay
    api.add(user, TEXTS[user] + " again")
    assert agents.register(f"s-{user}-quiet", user)[0] == 200  # only its waiting proposal names it
    assert agents.propose(f"s-{user}-quiet", {"id": "e1", "text": f"{user} plays chess"})[0] == 202
    assert len(api.call("GET", "/v1/memory", user)[1]["proposals"]) == 1


def _held_by(dynamodb: Any, user: str) -> list[tuple[str, dict[str, Any]]]:
    """Every raw item keyed by `user` or belonging to one of their sessions (by Scan: the test looking)."""
    tables = every_item(dynamodb)
    loaded = {name: [dynamo.load(raw) for raw in items] for name, items in tables.items()}
    sessions = {
        i["session_id"]
        for name, items in loaded.items()
        if "sessions" in name
        for i in items
        if i.get("user_id") == user
    }
    return [
        (name, item)
        for name, items in loaded.items()
        for item in items
        if item.get("user_id") == user or ("events" in name and item.get("session_id") in sessions)
    ]


def test_erasing_an_account_leaves_nothing_keyed_by_the_user_and_nothing_of_anyone_else_goes(
    client: Any, api: Any, agents: Any, dynamodb: Any
) -> None:
    _story(api, agents, "alice")
    _story(api, agents, "bob")
    held = {name for name, _ in _held_by(dynamodb, "alice")}
    assert {
        n for n in held if any(t in n for t in ("entries", "proposals", "journal", "sessions", "events", "keys"))
    } == held
    assert len(held) == 6  # before: alice has items in every table, forget-all notwithstanding
    bob_before = _held_by(dynamodb, "bob")

    status, body = iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)

    assert status == 200, body
    assert _held_by(dynamodb, "alice") == []
    assert sorted(map(repr, _held_by(dynamodb, "bob"))) == sorted(map(repr, bob_before))
    counts = body["erased"]
    assert (
        counts["sessions"] == 2
        and counts["events"] == 2
        and counts["entries"] >= 1
        and counts["journal"] >= 1
        and counts["keys"] >= 1
    )
    # The user's view: a fresh account (memory off, nothing kept, no journal); bob's is untouched.
    assert api.call("GET", "/v1/memory", "alice")[1]["items"] == []
    assert api.call("GET", "/v1/memory/journal", "alice")[1]["items"] == []
    assert [e["text"] for e in api.call("GET", "/v1/memory", "bob")[1]["items"]] == [TEXTS["bob"] + " again"]


def test_erasing_again_finds_nothing_and_answers_zeros(client: Any, api: Any, agents: Any, dynamodb: Any) -> None:
    _story(api, agents, "alice")
    assert iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)[0] == 200
    status, body = iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)
    assert (status, body) == (
        200,
        {"erased": dict.fromkeys(("keys", "sessions", "events", "entries", "proposals", "journal"), 0)},
    )
    assert _held_by(dynamodb, "alice") == []


@pytest.mark.parametrize("failing", ["events", "sessions", "entries", "proposals", "journal"])
def test_a_retry_after_a_failure_midway_finishes_the_job(
    client: Any, api: Any, agents: Any, dynamodb: Any, stores: Any, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """AWS stays busy at one step: 503, part erased; the operator runs it again and nothing of the user is left."""
    from chalicelib.errors import Unavailable

    _story(api, agents, "alice")
    _story(api, agents, "bob")
    bob_before = _held_by(dynamodb, "bob")
    repository = getattr(stores, failing)
    method = "erase_of" if failing in ("events", "sessions") else "erase"

    def busy(*args: Any, **kwargs: Any) -> Any:
        raise Unavailable()

    monkeypatch.setattr(repository, method, busy)
    status, body = iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)
    assert (status, body["code"]) == (503, "unavailable")
    assert _held_by(dynamodb, "alice") != []
    monkeypatch.undo()

    assert iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)[0] == 200
    assert _held_by(dynamodb, "alice") == []
    assert sorted(map(repr, _held_by(dynamodb, "bob"))) == sorted(map(repr, bob_before))


def test_a_stored_row_naming_another_users_session_erases_nothing_of_theirs(
    client: Any, api: Any, agents: Any, dynamodb: Any, stores: Any
) -> None:
    """Stored data is hostile: alice's journal row altered (or forged) to name bob's session."""
    _story(api, agents, "alice")
    _story(api, agents, "bob")
    bob_before = _held_by(dynamodb, "bob")
    stores.journal.append(
        "alice", "keep.memory.context", "2026-01-01T00:00:00.000Z", {"session_id": "s-bob", "count": 0}
    )
    stores.journal.append(
        "alice", "keep.memory.context", "2026-01-01T00:00:01.000Z", {"session_id": "x" * 3000, "count": 0}
    )

    assert iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)[0] == 200

    assert _held_by(dynamodb, "alice") == []
    assert sorted(map(repr, _held_by(dynamodb, "bob"))) == sorted(map(repr, bob_before))
    assert [e["id"] for e in agents.events("s-bob")] == ["e1"]


@pytest.mark.parametrize("arn", [HOST_ARN, WORKER_ARN, "arn:aws:iam::999999999999:role/stranger", None])
def test_only_operators_may_erase_an_account_and_a_refused_call_changes_nothing(
    client: Any, api: Any, dynamodb: Any, arn: Any
) -> None:
    api.turn_on("alice")
    api.add("alice", TEXTS["alice"])
    before = _held_by(dynamodb, "alice")
    assert iam_call(client, "DELETE", ERASE.format("alice"), arn)[0] == 403
    assert iam_call(client, "DELETE", ERASE.format("alice"), None, headers=api.headers("alice"))[0] == 403
    assert _held_by(dynamodb, "alice") == before
    assert (
        iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)[0] == 200
    )  # the operator's own call does erase
    assert _held_by(dynamodb, "alice") == []


def test_user_id_is_required(client: Any) -> None:
    for path in ("/v1/operator/account", "/v1/operator/account?user_id=", "/v1/operator/account?user_id=" + "a" * 129):
        status, body = iam_call(client, "DELETE", path, OPERATOR_ARN)
        assert (status, body["code"]) == (400, "invalid_request")


def test_the_erasure_is_journaled_to_the_operator_under_a_keyed_pseudonym_never_the_id_or_a_text(
    client: Any, api: Any, agents: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from chalicelib.logs import user_hash

    _story(api, agents, "alice")
    capsys.readouterr()
    assert iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)[0] == 200
    out = capsys.readouterr().out
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    erasure = [line for line in lines if line.get("outcome") == "erase_account"]
    assert [line["reason"] for line in erasure] == ["started", "done"]
    assert all(line["operator"] == OPERATOR_ARN and line["user"] == user_hash("alice") for line in erasure)
    assert erasure[1]["erased"]["sessions"] == 2
    assert "alice" not in out and "Ferreira" not in out and "tea" not in out


@pytest.mark.slow  # 120 sessions
def test_a_retry_after_a_run_cut_short_redoes_no_per_session_work(
    client: Any, api: Any, stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many sessions; a run cut short at the journal erased them all, and the retry's one index Query finds none of them."""
    from chalicelib.errors import Unavailable
    from chalicelib.models import Session

    api.turn_on("alice")
    for n in range(120):
        stores.sessions.create(
            Session(
                session_id=f"s-{n}",
                user_id="alice",
                thread_id=None,
                agent="helper",
                memory_requested=True,
                tainted=False,
                proposals=0,
                created_at="2026-12-01T00:00:00Z",
            ),
            1_800_000_000,
        )
        stores.journal.append(
            "alice",
            "keep.memory.context",
            f"2026-12-01T00:{n // 60:02d}:{n % 60:02d}.000Z",
            {"session_id": f"s-{n}", "count": 0},
        )

    def busy(*args: Any, **kwargs: Any) -> Any:
        raise Unavailable()

    monkeypatch.setattr(stores.journal, "erase", busy)
    assert iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)[0] == 503
    monkeypatch.undo()
    assert all(stores.sessions.get(f"s-{n}") is None for n in range(120))

    calls: list[str] = []
    stores.client.meta.events.register("before-call.dynamodb", lambda model, **_: calls.append(model.name))
    status, body = iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)
    assert (status, body["erased"]["sessions"], body["erased"]["journal"]) == (200, 0, 120 + 1)  # + the settings row
    assert calls.count("BatchGetItem") == calls.count("GetItem") == calls.count("DeleteItem") == 0


def test_events_of_another_user_in_a_reused_session_id_are_not_erased(
    client: Any, api: Any, agents: Any, dynamodb: Any, stores: Any
) -> None:
    """A session id outlived by its events (TTL removed bob's session first, as docs/operators.md says it can) is
    registered again for alice: bob's events in that partition carry bob's user and are his, not hers."""
    _story(api, agents, "bob")
    api.turn_on("bob")
    assert agents.register("s-shared", "bob")[0] == 200
    assert agents.propose("s-shared", {"id": "e-bob", "text": "bob likes rowing"})[0] == 202
    stores.client.delete_item(
        TableName=stores.sessions.table, Key={"session_id": {"S": "s-shared"}}
    )  # TTL took the session
    api.turn_on("alice")
    assert agents.register("s-shared", "alice")[0] == 200
    assert agents.propose("s-shared", {"id": "e-alice", "text": "alice walks to work"})[0] == 202
    bob_events = [
        i
        for n, items in every_item(dynamodb).items()
        if "events" in n
        for i in items
        if dynamo.load(i).get("user_id") == "bob" and dynamo.load(i)["session_id"] == "s-shared"
    ]
    assert len(bob_events) == 1

    assert iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)[0] == 200

    assert _held_by(dynamodb, "alice") == []
    after = [
        i
        for n, items in every_item(dynamodb).items()
        if "events" in n
        for i in items
        if dynamo.load(i).get("user_id") == "bob" and dynamo.load(i)["session_id"] == "s-shared"
    ]
    assert sorted(map(repr, after)) == sorted(map(repr, bob_events))


def _anything_of(dynamodb: Any, user: str) -> list[tuple[str, dict[str, Any]]]:
    """`_held_by`, and any other item naming the user in any attribute (a connection's lookup row names its `owner`)."""
    loaded = [(name, dynamo.load(raw)) for name, items in every_item(dynamodb).items() for raw in items]
    return _held_by(dynamodb, user) + [(name, item) for name, item in loaded if item.get("owner") == user]


@pytest.mark.parametrize("then", ["reject", "forget_all", "accept_and_forget"])
def test_a_session_that_proposed_is_erased_after_its_proposal_is_gone(
    client: Any, api: Any, agents: Any, dynamodb: Any, then: str
) -> None:
    """Nothing names the session any more (neither a rejection nor a forget journals the source session): erasure
    finds it all the same, through the sessions table's index by user."""
    api.turn_on("alice")
    assert agents.register("s-proposed", "alice")[0] == 200
    assert agents.propose("s-proposed", {"id": "e1", "text": "alice plays chess"})[0] == 202
    (proposal,) = api.call("GET", "/v1/memory", "alice")[1]["proposals"]
    if then == "reject":
        assert api.call("POST", f"/v1/memory/{proposal['id']}/reject", "alice")[0] == 204
    elif then == "forget_all":
        assert api.call("DELETE", "/v1/memory", "alice")[0] == 200
    else:
        assert api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")[0] == 201
        (entry,) = api.call("GET", "/v1/memory", "alice")[1]["items"]
        assert api.call("DELETE", f"/v1/memory/{entry['id']}", "alice")[0] == 204
    assert {name for name, _ in _held_by(dynamodb, "alice")} >= {
        n for n in every_item(dynamodb) if "sessions" in n or "events" in n
    }

    status, body = iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)

    assert status == 200, body
    assert (body["erased"]["sessions"], body["erased"]["events"]) == (1, 1)
    assert _held_by(dynamodb, "alice") == []


def test_a_session_that_never_read_nor_proposed_is_erased_and_a_session_of_nobody_stays(
    client: Any, api: Any, agents: Any, dynamodb: Any, stores: Any
) -> None:
    from chalicelib.models import Session

    _story(api, agents, "bob")
    bob_before = _held_by(dynamodb, "bob")
    assert agents.register("s-silent", "alice")[0] == 200  # memory off, never read, never proposed: nothing names it
    stores.sessions.create(
        Session(
            session_id="s-nobody",
            user_id=None,
            thread_id=None,
            agent="helper",
            memory_requested=False,
            tainted=False,
            proposals=0,
            created_at="2026-12-01T00:00:00Z",
        ),
        1_800_000_000,
    )

    status, body = iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)

    assert (status, body["erased"]["sessions"]) == (200, 1)
    assert _held_by(dynamodb, "alice") == [] and stores.sessions.get("s-silent") is None
    assert stores.sessions.get("s-nobody") is not None  # no user: not in the index, not anyone's to erase
    assert sorted(map(repr, _held_by(dynamodb, "bob"))) == sorted(map(repr, bob_before))


def test_a_connection_its_lookup_row_and_its_conversation_are_erased_and_its_token_is_dead(
    client: Any, api: Any, dynamodb: Any, stream: Any, stores: Any
) -> None:
    from tests.routes.test_agent_connection import _as, _connect, _suggest

    api.turn_on("alice")
    made = _connect(api, "alice")
    outcome = _suggest(client, stream, made["token"], "alice likes rowing")  # the hour's conversation: conn:<id>:<hour>
    bob = _connect(api, "bob")
    bob_before = _anything_of(dynamodb, "bob")
    conversations = [s for n, items in every_item(dynamodb).items() if "sessions" in n for s in map(dynamo.load, items)]
    assert [s["session_id"].startswith(f"conn:{made['id']}:") for s in conversations] == [True]
    assert any(name.endswith("keys") or "keys" in name for name, _ in _anything_of(dynamodb, "alice"))

    status, body = iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)

    assert status == 200, body
    assert body["erased"]["sessions"] == 1 and body["erased"]["events"] == 1
    assert _anything_of(dynamodb, "alice") == []
    # The token opens nothing any more, not even what touches no memory (an earlier suggestion's outcome).
    assert _as(client, made["token"], "GET", f"/v1/agent/proposals/{outcome['event_id']}")[0] == 401
    assert _as(client, made["token"], "GET", "/v1/agent/memory")[0] == 401
    assert sorted(map(repr, _anything_of(dynamodb, "bob"))) == sorted(map(repr, bob_before))
    assert _as(client, bob["token"], "GET", "/v1/agent/memory")[0] == 200


def test_a_connection_row_altered_to_name_another_persons_token_erases_nothing_of_theirs(
    client: Any, api: Any, dynamodb: Any, stores: Any
) -> None:
    """Stored data is hostile: alice's connection row copied over with bob's MAC must not kill bob's token."""
    from tests.routes.test_agent_connection import _as, _connect

    api.turn_on("bob")
    mine, theirs = _connect(api, "alice"), _connect(api, "bob")
    bob_mac = stores.connections.get_owned("bob", theirs["id"]).mac
    stores.client.update_item(
        TableName=stores.connections.table,
        Key=dynamo.dump({"user_id": "alice", "sk": f"c#{mine['id']}"}),
        UpdateExpression="SET mac = :m",
        ExpressionAttributeValues=dynamo.values(m=bob_mac),
    )
    bob_before = _anything_of(dynamodb, "bob")

    assert iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)[0] == 200

    assert sorted(map(repr, _anything_of(dynamodb, "bob"))) == sorted(map(repr, bob_before))
    assert _as(client, theirs["token"], "GET", "/v1/agent/memory")[0] == 200
