"""An outsider's attack on repeats (issue 37 #8): the guess, then the person doing one thing with her page, then
fifty new texts from the same agent. `kept` keeps the guessed words, `other` does not; the agent compares what it
observes (every outcome and refusal reason). Also: a repeat's id in the agent's hands, hostile stored slots, leaks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.models import MAX_WAITING_PROPOSALS
from tests.support.oracle import GUESS, fill, person


def _rejects_suggestions_only(api: Any, user: str) -> None:
    for shown in api.call("GET", "/v1/memory", user)[1]["proposals"]:
        assert api.call("POST", f"/v1/memory/{shown['id']}/reject", user)[0] == 204


def _accepts_all(api: Any, user: str) -> None:
    for shown in api.call("GET", "/v1/memory", user)[1]["proposals"]:
        assert api.call("POST", f"/v1/memory/{shown['id']}/accept", user)[0] in (200, 201)


def _forgets_all(api: Any, user: str) -> None:
    assert api.call("DELETE", "/v1/memory", user)[0] == 200
    api.turn_on(user)


def _forgets_the_agent(api: Any, user: str) -> None:
    assert api.call("POST", "/v1/agents/spy/forget", user)[0] == 200


def _traces(
    api: Any, agents: Any, behaviour: Callable[[Any, str], None], first: tuple[str, ...] = (GUESS,)
) -> dict[str, list[Any]]:
    traces = {}
    for user, keeps in (("kept", True), ("other", False)):
        person(api, user, keeps)
        fill(agents, user, "a", list(first))
        behaviour(api, user)
        traces[user] = fill(agents, user, "b", [f"Probe {n}" for n in range(MAX_WAITING_PROPOSALS)])
    return traces


@pytest.mark.parametrize("behaviour", [_forgets_all, _forgets_the_agent], ids=["forget-all", "forget-agent"])
def test_after_forgetting_the_agent_cannot_tell_a_kept_guess(api: Any, agents: Any, behaviour: Any) -> None:
    traces = _traces(api, agents, behaviour)
    assert traces["kept"] == traces["other"]


@pytest.mark.parametrize(
    "behaviour", [_rejects_suggestions_only, _accepts_all], ids=["rejects-suggestions-only", "accepts-all"]
)
def test_a_person_who_decides_every_suggestion_of_the_agent_leaves_the_guess_unobservable(
    api: Any, agents: Any, behaviour: Any
) -> None:
    """The guess among the agent's other suggestions: deciding its last one dismisses its repeats (services/repeats.py)."""
    traces = _traces(api, agents, behaviour, (GUESS, "Likes green tea in the morning"))
    assert traces["kept"] == traces["other"]


@pytest.mark.xfail(
    strict=True,
    reason="residual (docs/agents.md, Repeats): the agent sent only the guess, so where she keeps it she has no "
    "suggestion of that agent to decide, and only dismissing the repeat line frees its place",
)
@pytest.mark.parametrize(
    "behaviour", [_rejects_suggestions_only, _accepts_all], ids=["rejects-suggestions-only", "accepts-all"]
)
def test_a_person_who_ignores_a_repeat_when_the_agent_sent_nothing_else_leaves_the_guess_observable(
    api: Any, agents: Any, behaviour: Any
) -> None:
    traces = _traces(api, agents, behaviour)
    assert traces["kept"] == traces["other"]


def test_the_agent_cannot_use_the_repeat_id_it_was_told(api: Any, agents: Any, client: Any) -> None:
    person(api, "kept", True)
    person(api, "other", False)
    told = {}
    for user in ("kept", "other"):
        agents.register(f"s-{user}", user, agent="spy")
        agents.propose(f"s-{user}", {"id": "g", "text": GUESS})
        told[user] = agents.outcomes(f"s-{user}")["g"]["proposal_id"]
    # the worker's events route answers the same shape for both
    shapes = {u: sorted(agents.outcomes(f"s-{u}")["g"]) for u in told}
    assert shapes["kept"] == shapes["other"]
    # neither the person's other user nor an accept can touch the slot
    assert api.call("POST", f"/v1/memory/{told['kept']}/accept", "kept")[0] == 404
    assert api.call("POST", f"/v1/memory/{told['kept']}/reject", "other")[0] == 404
    assert [r["id"] for r in api.call("GET", "/v1/memory", "kept")[1]["repeats"]] == [told["kept"]]
    assert api.call("GET", "/v1/memory", "other")[1]["repeats"] == []


def test_a_repeat_leaks_no_text_to_journal_export_or_view(
    api: Any, agents: Any, stores: Any, caplog: Any, capsys: Any
) -> None:
    person(api, "kept", True)
    agents.register("s", "kept", agent="spy")
    with caplog.at_level("DEBUG"):
        agents.propose("s", {"id": "g", "text": GUESS})
    seen = [
        json.dumps(api.call("GET", p, "kept")[1])
        for p in ("/v1/memory", "/v1/inbox", "/v1/memory/journal", "/v1/memory/export")
    ]
    assert all("HAS DIABETES" not in s for s in seen)
    logged = capsys.readouterr().out + caplog.text
    assert logged and "diabetes" not in logged.lower()  # the stream record and requests were logged, without the text
    journal = api.call("GET", "/v1/memory/journal", "kept")[1]
    assert "duplicate" in json.dumps(journal)  # the person's journal says a duplicate came, and nothing more
    raw = stores.client.scan(TableName=stores.proposals.table)["Items"]
    assert "diabetes" not in json.dumps(raw, default=repr).lower()  # a slot's seal is bytes: an empty text


@pytest.mark.parametrize(
    "field,value",
    [
        ("agent", {"S": "sp\u202ey\u2066x"}),
        ("src_session", {"S": "s" * 100_000}),
        ("created_at", {"N": "1"}),
        ("created_at", {"L": []}),
        ("agent", {"N": "7"}),
        ("id", {"S": "../x"}),
        ("src_session", {"NULL": True}),
    ],
)
def test_a_hostile_slot_never_fails_the_views(api: Any, agents: Any, stores: Any, field: str, value: Any) -> None:
    person(api, "kept", True)
    agents.register("s", "kept", agent="spy")
    agents.propose("s", {"id": "g", "text": GUESS})
    slot = agents.outcomes("s")["g"]["proposal_id"]
    key = {"user_id": {"S": "kept"}, "sk": {"S": "p#" + slot}}
    stores.client.update_item(
        TableName=stores.proposals.table,
        Key=key,
        UpdateExpression="SET #f = :v",
        ExpressionAttributeNames={"#f": field},
        ExpressionAttributeValues={":v": value},
    )
    for path in ("/v1/memory", "/v1/inbox", "/v1/memory/export", "/v1/memory/journal", "/v1/agents"):
        status, body = api.call("GET", path, "kept")
        assert status == 200, (path, body)
    assert api.call("POST", f"/v1/memory/{slot}/reject", "kept")[0] in (204, 404)
    assert api.call("POST", f"/v1/memory/{slot}/accept", "kept")[0] == 404
    assert api.call("DELETE", "/v1/memory", "kept")[0] == 200


def test_the_etag_moves_when_a_repeat_appears_and_when_it_is_dismissed(api: Any, agents: Any) -> None:
    person(api, "kept", True)
    _, _, first = api.tagged_get("/v1/memory", "kept")
    agents.register("s", "kept", agent="spy")
    agents.propose("s", {"id": "g", "text": GUESS})
    status, view, second = api.tagged_get("/v1/memory", "kept", first)
    assert status == 200 and second != first and len(view["repeats"]) == 1
    assert api.call("POST", f"/v1/memory/{view['repeats'][0]['id']}/reject", "kept")[0] == 204
    status, view, third = api.tagged_get("/v1/memory", "kept", second)
    assert status == 200 and third != second and view["repeats"] == []


def test_a_connected_agent_reads_the_same_outcome_before_and_after_the_person_acts_and_cannot_open_the_slot(
    api: Any, client: Any, stream: Any
) -> None:
    from tests.routes.test_agent_connection import _as, _connect

    seen: dict[str, list[Any]] = {}
    for user, keeps in (("kept", True), ("other", False)):
        person(api, user, keeps)
        token = _connect(api, user)["token"]
        status, body, _ = _as(client, token, "POST", "/v1/agent/proposals", {"text": GUESS})
        assert status == 202
        stream.drain()
        event = body["event_id"]
        first = _as(client, token, "GET", f"/v1/agent/proposals/{event}")[1]
        proposal_id = first["outcome"]["proposal_id"]
        view = api.call("GET", "/v1/memory", user)[1]
        assert [s["id"] for s in view["proposals"] + view["repeats"]] == [proposal_id]
        assert api.call("POST", f"/v1/memory/{proposal_id}/reject", user)[0] == 204
        later = _as(client, token, "GET", f"/v1/agent/proposals/{event}")[1]
        hour = event.partition("-")[0]
        by_id = [
            _as(client, token, "GET", f"/v1/agent/proposals/{p}")[:2] for p in (proposal_id, f"{hour}-{proposal_id}")
        ]
        missing = _as(client, token, "GET", f"/v1/agent/proposals/{hour}-{'0' * 32}")[:2]
        assert by_id == [missing, missing] and missing[0] == 404
        seen[user] = [sorted(first), first["status"], first["outcome"]["type"], later == first]
    assert seen["kept"] == seen["other"]


def _stored_waiting(stores: Any, user: str) -> int:
    item = stores.client.get_item(
        TableName=stores.entries.table, Key={"user_id": {"S": user}, "sk": {"S": "#state"}}, ConsistentRead=True
    )["Item"]
    return int(item["waiting"]["N"])


def test_a_copied_or_renamed_slot_is_not_believed(api: Any, agents: Any, stores: Any) -> None:
    person(api, "kept", True)
    agents.register("s", "kept", agent="spy")
    agents.propose("s", {"id": "g", "text": GUESS})
    slot = agents.outcomes("s")["g"]["proposal_id"]
    item = stores.client.get_item(
        TableName=stores.proposals.table, Key={"user_id": {"S": "kept"}, "sk": {"S": "p#" + slot}}
    )["Item"]
    copy = "f" * 32
    stores.client.put_item(
        TableName=stores.proposals.table,
        Item={**item, "sk": {"S": "p#" + copy}, "id": {"S": copy}, "agent": {"S": "trusted-helper"}},
    )
    repeats = api.call("GET", "/v1/memory", "kept")[1]["repeats"]
    seen_agents = [r["agent"] for r in repeats]  # the copy, renamed, is not shown as another agent's repeat
    for repeat in repeats:
        assert api.call("POST", f"/v1/memory/{repeat['id']}/reject", "kept")[0] == 204
    api.call("POST", f"/v1/memory/{copy}/reject", "kept")
    assert _stored_waiting(stores, "kept") == 0  # never below the slots really counted
    assert seen_agents == ["spy"]
