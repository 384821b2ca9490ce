"""Repeats on the page (issue 37 #8): an agent suggesting notes the person already keeps holds a waiting place
each; the page shows one line per agent instead of a card each, and its "Dismiss" frees those places."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.browser_support import Agent, add_entry, new_user, reload, settled, sign_in, switch_on
from tests.support.stored import StoredState

REPEATS, PROPOSALS = "[data-testid=repeats]", "[data-testid=proposal]"


def test_two_repeats_show_as_one_line_and_dismiss_frees_their_places(page: Page, live: Any, agent: Agent) -> None:
    user = new_user("repeats")
    token = sign_in(page, user)
    switch_on(page)
    add_entry(page, "Drinks green tea")
    agent.propose_all(user, token, ["Drinks green tea", "drinks GREEN tea.", "Walks at noon"], agent="you")
    stored = StoredState(Path(live.credentials_file).parent / "stack.json")
    assert stored.user(user).waiting_counter == 3
    reload(page)
    expect(page.locator(PROPOSALS)).to_have_count(1)
    line = page.locator(REPEATS)
    expect(line).to_have_count(1)
    # An agent named like the page's own words is marked as an agent's, isolated from the sentence around it.
    expect(line).to_contain_text("agent “you” repeated 2 notes you already keep")
    expect(line.locator("bdi")).to_have_text("agent “you”")
    with page.expect_response(lambda r: r.url.endswith("/reject") and r.request.method == "POST") as answered:
        line.get_by_role("button", name="Dismiss").click()
    assert answered.value.status == 204
    settled(page)
    expect(page.locator(REPEATS)).to_have_count(0)
    expect(page.locator("#status")).to_have_attribute("data-kind", "ok")
    expect(page.locator(PROPOSALS)).to_have_count(1)  # the new suggestion still waits for her decision
    state = stored.user(user)
    assert state.waiting_counter == 1 and len(state.proposal_ids) == 1
    reload(page)
    expect(page.locator(REPEATS)).to_have_count(0)


def test_reject_all_from_an_agent_rejects_its_repeats_too(page: Page, live: Any, agent: Agent) -> None:
    user = new_user("repeats-all")
    token = sign_in(page, user)
    switch_on(page)
    add_entry(page, "Drinks green tea")
    agent.propose_all(user, token, ["DRINKS GREEN TEA", "Walks at noon"], agent="helper")
    stored = StoredState(Path(live.credentials_file).parent / "stack.json")
    reload(page)
    expect(page.locator(REPEATS)).to_contain_text("helper repeated 1 note you already keep")
    page.get_by_role("button", name="Reject all from helper (1)").click()
    settled(page)
    expect(page.locator("#status")).to_have_attribute("data-kind", "ok")
    expect(page.locator(REPEATS)).to_have_count(0)
    expect(page.locator(PROPOSALS)).to_have_count(0)
    state = stored.user(user)
    assert state.waiting_counter == 0 and state.proposal_ids == frozenset()
