"""Polling as the server advises, on a fake clock: 60 s while nothing can change soon, 5 s just after a suggestion; times stay current."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.browser_support import Agent, new_user, next_poll, sign_in, switch_on

PROPOSALS = "[data-testid=proposal]"


class Polls:
    """GET /v1/memory requests the page made, and whether one is still on its way."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.count = 0
        self.open = 0
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)

    def _ours(self, request: Any) -> bool:
        return request.method == "GET" and request.url.endswith("/v1/memory")

    def _started(self, request: Any) -> None:
        if self._ours(request):
            self.count += 1
            self.open += 1

    def _ended(self, request: Any) -> None:
        if self._ours(request):
            self.open -= 1

    def settle(self) -> None:
        for _ in range(200):
            self.page.wait_for_timeout(15)  # real time: lets the answer land and the next timer be set
            if self.open == 0:
                return
        raise AssertionError("a poll never finished")

    def over(self, seconds: int, step: int = 5) -> int:
        """Move the page's (paused) clock `seconds` forward in steps shorter than any poll interval; GETs made."""
        before = self.count
        for _ in range(seconds // step):
            self.page.clock.run_for(step * 1000)
            self.settle()
        return self.count - before


def _pause(page: Page) -> None:
    now = page.evaluate("() => Date.now()")
    page.clock.pause_at(now + 1000)


def test_an_idle_tab_asks_once_a_minute_and_fast_only_while_something_can_change(clocked: Page, live: Any, agent: Agent) -> None:
    page = clocked
    polls = Polls(page)
    user = new_user("poll")
    token = sign_in(page, user)
    _pause(page)
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
    agent.propose(user, token, "Reads before sleeping", agent="memory-agent")
    next_poll(page)
    expect(page.locator(PROPOSALS)).to_have_count(1)
    source = page.locator(PROPOSALS).first.get_by_test_id("source")
    expect(source).to_have_text("From memory-agent, in a conversation, just now")
    page.clock.fast_forward("03:00")  # three minutes later, nothing new: the poll is a 304
    expect(source).to_have_text("From memory-agent, in a conversation, 3 minutes ago")


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
    _pause(page)
    polls.settle()
    asked = polls.over(60)
    assert asked <= most, asked
