"""GET /v1/memory advises how soon to poll: fast right after a suggestion arrived or memory was turned on, 60 s otherwise."""

from __future__ import annotations

from typing import Any

from chalicelib.services.freshness import FAST, FAST_WINDOW, SLOW
from tests.support.calls import dynamodb_calls

IDLE = {"every_seconds": SLOW, "for_seconds": 0, "then_every_seconds": SLOW}


def fast_for(seconds: int) -> Any:
    """The fast advice with `for_seconds` a few seconds under `seconds` at most (the test's clock is real time plus an offset)."""

    class Within:
        def __eq__(self, other: object) -> bool:
            return (
                isinstance(other, dict)
                and other.get("every_seconds") == FAST
                and other.get("then_every_seconds") == SLOW
                and seconds - 3 <= int(other.get("for_seconds", -99)) <= seconds
            )

        def __repr__(self) -> str:
            return f"fast for ~{seconds} s"

    return Within()


def advice(api: Any, user: str) -> dict[str, int]:
    status, body, _ = api.tagged_get("/v1/memory", user, None)
    assert status == 200, body
    return dict(body["poll"])


def test_memory_off_is_slow_even_with_a_suggestion_waiting(api: Any, agents: Any) -> None:
    assert advice(api, "never-on") == IDLE
    api.turn_on("paula")
    agents.register("s-1", "paula", agent="memory-agent")
    agents.propose("s-1", {"id": "e1", "text": "Likes maps"})
    api.call("PUT", "/v1/memory/settings", "paula", {"enabled": False})
    assert advice(api, "paula") == IDLE  # no agent can add anything while it is off


def test_turning_memory_on_polls_fast_for_five_minutes_then_slow(api: Any, clock: Any) -> None:
    api.turn_on("olga")
    assert advice(api, "olga") == fast_for(FAST_WINDOW)
    clock.advance(seconds=120)
    assert advice(api, "olga") == fast_for(FAST_WINDOW - 120)
    clock.advance(seconds=FAST_WINDOW - 120)
    assert advice(api, "olga") == IDLE


def test_a_new_suggestion_makes_it_fast_again_and_an_accepted_one_no_longer_counts(
    api: Any, agents: Any, clock: Any
) -> None:
    api.turn_on("nina")
    clock.advance(seconds=FAST_WINDOW + 1)
    assert advice(api, "nina") == IDLE
    agents.register("s-2", "nina", agent="memory-agent")
    agents.propose("s-2", {"id": "e1", "text": "Likes rain"})
    clock.advance(seconds=30)
    assert advice(api, "nina") == fast_for(FAST_WINDOW - 30)
    proposal = api.call("GET", "/v1/inbox", "nina")[1]["memory_proposals"][0]
    api.call("POST", f"/v1/memory/{proposal['id']}/reject", "nina")
    assert advice(api, "nina") == IDLE  # only waiting suggestions count: the person already saw this one


def test_the_advice_costs_no_dynamodb_call_of_its_own(api: Any, stores: Any, agents: Any) -> None:
    api.turn_on("mona")
    agents.register("s-3", "mona", agent="memory-agent")
    agents.propose("s-3", {"id": "e1", "text": "Likes snow"})
    with dynamodb_calls(stores.client) as calls:
        assert advice(api, "mona")["every_seconds"] == FAST
    assert dict(calls) == {"Query": 2}  # the entries partition (with the state item) and the proposals


def test_a_stored_instant_in_the_future_or_garbled_never_polls_fast_for_longer_than_a_window(
    api: Any, stores: Any, clock: Any
) -> None:
    api.turn_on("zoe")
    clock.advance(seconds=FAST_WINDOW + 1)
    table = stores.entries.table
    for altered in ("2999-01-01T00:00:00Z", "yesterday", ""):
        stores.client.update_item(
            TableName=table,
            Key={"user_id": {"S": "zoe"}, "sk": {"S": "#state"}},
            UpdateExpression="SET updated_at = :t",
            ExpressionAttributeValues={":t": {"S": altered}},
        )
        # From the future: one window at most (as if just now); garbled or empty: as if never.
        assert advice(api, "zoe") == (fast_for(FAST_WINDOW) if altered.startswith("2999") else IDLE), altered
