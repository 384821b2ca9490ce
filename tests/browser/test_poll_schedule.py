"""Polling as the server advises, on a fake clock: 60 s while nothing can change soon, 5 s just after a suggestion; times stay current."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.browser_support import (
    POLL_TIMEOUT_MS,
    Agent,
    Polls,
    new_user,
    next_poll,
    pause_clock,
    sign_in,
    switch_on,
)

PROPOSALS = "[data-testid=proposal]"


def test_an_idle_tab_asks_once_a_minute_and_fast_only_while_something_can_change(
    clocked: Page, live: Any, agent: Agent
) -> None:
    page = clocked
    polls = Polls(page)
    user = new_user("poll")
    token = sign_in(page, user)
    pause_clock(page)
    polls.settle()
    # Memory off: no agent can change anything, so ten minutes of an open tab are about ten questions.
    idle = polls.over(600)
    assert 9 <= idle <= 11, idle
    # Turned on: an agent may start soon, so every 5 s for the next five minutes, then once a minute again.
    switch_on(page)
    polls.settle()
    fast = polls.over(300)
    assert 50 <= fast <= 61, fast
    slow = polls.over(600)
    assert 9 <= slow <= 11, slow
    # A suggestion arrives while the tab is slow: the next question finds it, and the pace is fast again.
    agent.propose(user, token, "Prefers the window seat", agent="memory-agent")
    polls.over(60)
    expect(page.locator(PROPOSALS)).to_have_count(1)
    again = polls.over(60)
    assert again >= 10, again


def test_just_now_becomes_minutes_ago_without_a_reload(clocked: Page, live: Any, agent: Agent) -> None:
    page = clocked
    user = new_user("ago")
    token = sign_in(page, user)
    switch_on(page)
    proposal = agent.propose(user, token, "Reads before sleeping", agent="memory-agent")
    # The page's "now" is pinned to the suggestion's own time (its timers keep running), so the words do not
    # depend on how long a loaded machine took to show it: 3 minutes on from a real clock that already ran
    # 30 s since the suggestion would read "4 minutes ago".
    created = datetime.fromisoformat(proposal["created_at"].replace("Z", "+00:00"))
    page.clock.set_fixed_time(created + timedelta(seconds=5))
    next_poll(page)
    expect(page.locator(PROPOSALS)).to_have_count(1, timeout=POLL_TIMEOUT_MS)
    source = page.locator(PROPOSALS).first.get_by_test_id("source")
    expect(source).to_have_text("From memory-agent, in a conversation, just now")
    page.clock.set_fixed_time(
        created + timedelta(minutes=3, seconds=5)
    )  # three minutes later, nothing new: the next poll is a 304
    next_poll(page)  # asked now on the fake clock, not 5 s of real time from now
    expect(source).to_have_text("From memory-agent, in a conversation, 3 minutes ago", timeout=POLL_TIMEOUT_MS)


@pytest.mark.parametrize(
    ("advice", "most"),
    [
        ({"every_seconds": 0, "for_seconds": 10**9, "then_every_seconds": 0}, 12),  # never faster than every 5 s
        ({"every_seconds": "soon", "for_seconds": None, "then_every_seconds": -1}, 1),  # nonsense: once a minute
        (None, 1),  # an older server without advice: once a minute
    ],
    ids=["zero", "nonsense", "absent"],
)
def test_advice_that_makes_no_sense_never_makes_the_page_ask_more_often(
    clocked: Page, live: Any, advice: Any, most: int
) -> None:
    page = clocked

    def altered(route: Any) -> None:
        response = route.fetch()
        if response.status != 200:
            return route.fulfill(response=response)
        body = response.json()
        if advice is None:
            body.pop("poll", None)
        else:
            body["poll"] = advice
        route.fulfill(response=response, json=body)

    page.route("**/v1/memory", altered)
    polls = Polls(page)
    sign_in(page, new_user("poll-odd"))
    pause_clock(page)
    polls.settle()
    asked = polls.over(60)
    assert asked <= most, asked
