"""Suggestions arrive live and name their agent; they can be corrected before accepting; memory off says why."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.browser_support import (
    POLL_TIMEOUT_MS,
    Agent,
    Polls,
    add_entry,
    memory,
    new_user,
    next_poll,
    pause_clock,
    set_hidden,
    settled,
    sign_in,
    switch_on,
)
from tests.browser.page_support import WIDTHS, sized_page

PROPOSALS, ENTRIES = "[data-testid=proposal]", "[data-testid=entry]"
SIZES = pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())


@SIZES
def test_a_suggestion_appears_without_reload_names_its_agent_and_polls_cost_304s(
    browser: Browser, live: Any, agent: Agent, width: int
) -> None:
    with sized_page(browser, live, width, clock=True) as page:
        polls: list[int] = []
        page.on("response", lambda r: polls.append(r.status) if r.url.endswith("/v1/memory") else None)
        user = new_user("live")
        token = sign_in(page, user)
        switch_on(page)
        expect(page.locator("#tab-badge")).to_be_hidden()
        proposal = agent.propose(user, token, "Prefers trains to planes", agent="memory-agent")
        # No reload: the page's own poll (every 5 s while visible) brings it.
        next_poll(page)
        expect(page.locator(PROPOSALS)).to_have_count(1, timeout=POLL_TIMEOUT_MS)
        item = page.locator(PROPOSALS).first
        expect(item.get_by_test_id("origin")).to_have_text("Suggested by memory-agent")
        expect(item.get_by_test_id("source")).to_have_text("From memory-agent, in a conversation, just now")
        item.get_by_role("button", name="Details of “Prefers trains to planes”").click()  # on demand (issue 39)
        ids = item.locator("details.ids-details")
        expect(ids).not_to_have_attribute("open", "")
        expect(ids.locator("dd").nth(1)).to_be_hidden()
        ids.locator("summary").click()
        expect(ids).to_contain_text(proposal["source"]["session_id"])
        expect(page.locator("#tab-badge")).to_have_text("1")
        expect(page.locator("#tab-memory")).to_have_accessible_name("Memory (1 suggestion waiting)")
        expect(page).to_have_title("(1) Memory")
        expect(page.locator("#count-proposals")).to_have_text("1 / 50 waiting")
        expect(page.locator("#live-note")).to_have_text("A new suggestion is waiting for your review.")
        # While nothing changes, a poll is a 304.
        seen = len(polls)
        next_poll(page)
        deadline = time.monotonic() + POLL_TIMEOUT_MS / 1000
        while polls[seen:].count(304) == 0 and time.monotonic() < deadline:
            page.wait_for_timeout(250)
        assert polls[seen:].count(304) >= 1 and 200 not in polls[seen:], polls
        assert memory(live, token)["proposals"][0]["agent"] == "memory-agent"


def test_a_hidden_page_stops_polling_and_catches_up_when_shown(clocked: Page, live: Any, agent: Agent) -> None:
    """On a paused page clock: hidden, a minute of the page's time brings no question; shown, it asks at once
    (no tick can come, so the suggestion can only arrive by the visibility change, however slow the machine)."""
    page = clocked
    polls = Polls(page)
    user = new_user("hidden")
    token = sign_in(page, user)
    switch_on(page)
    pause_clock(page)
    polls.settle()
    set_hidden(page, True)
    agent.propose(user, token, "Reads the news at seven")
    assert polls.over(65) == 0, "a hidden page kept polling"  # a visible one asks every 5 s here
    expect(page.locator(PROPOSALS)).to_have_count(0)
    set_hidden(page, False)
    expect(page.locator(PROPOSALS)).to_have_count(1)  # at once: the paused clock fires no tick


@SIZES
def test_edit_and_accept_keeps_origin_source_and_taint_and_shows_the_edit(
    browser: Browser, live: Any, agent: Agent, width: int
) -> None:
    with sized_page(browser, live, width, clock=True) as page:
        user = new_user("correct")
        token = sign_in(page, user)
        switch_on(page)
        proposal = agent.propose(user, token, "Likes jaz", kind="note", tainted=True, agent="memory-agent")
        next_poll(page)
        expect(page.locator(PROPOSALS)).to_have_count(1, timeout=POLL_TIMEOUT_MS)
        item = page.locator(PROPOSALS).first
        item.get_by_role("button", name="Edit and accept “Likes jaz”").click()
        editor = item.get_by_test_id("edit-text")
        expect(editor).to_be_focused()
        editor.fill("")
        item.get_by_role("button", name="Accept with changes").click()
        error = item.get_by_test_id("field-error").first
        expect(error).to_have_text("Write something to remember first.")
        expect(editor).to_have_attribute("aria-invalid", "true")
        expect(editor).to_be_focused()
        editor.fill("Likes jazz")
        expect(editor).not_to_have_attribute("aria-invalid", "true")
        item.get_by_test_id("edit-kind").select_option("preference")
        item.get_by_role("button", name="Accept with changes").click()
        expect(page.locator("#status")).to_have_text("Accepted with your changes: it is now in your memory.")
        expect(page.locator(PROPOSALS)).to_have_count(0)
        entry = page.locator(ENTRIES).first
        expect(entry.get_by_test_id("text")).to_have_text("Likes jazz")
        expect(entry.get_by_test_id("kind")).to_have_text("Preference")
        expect(entry.get_by_test_id("edited")).to_have_text("Edited by you")
        expect(entry.get_by_test_id("origin")).to_have_text("Suggested by memory-agent, accepted and edited by you")
        expect(entry.get_by_test_id("tainted")).to_be_visible()
        settled(page)
        (stored,) = memory(live, token)["items"]
        assert (
            stored["text"],
            stored["kind"],
            stored["edited"],
            stored["origin"],
            stored["tainted"],
            stored["agent"],
        ) == ("Likes jazz", "preference", True, "agent", True, "memory-agent")
        assert stored["source"] == proposal["source"]


@SIZES
def test_memory_off_disables_add_and_accept_with_the_reason_and_keeps_editing(
    browser: Browser, live: Any, agent: Agent, width: int
) -> None:
    with sized_page(browser, live, width, clock=True) as page:
        user = new_user("offstate")
        token = sign_in(page, user)
        switch_on(page)
        add_entry(page, "Keep me while off")
        agent.propose(user, token, "Suggested while on")
        next_poll(page)
        expect(page.locator(PROPOSALS)).to_have_count(1, timeout=POLL_TIMEOUT_MS)
        page.locator("#memory-enabled").uncheck()
        expect(page.locator("#memory-state")).to_have_text("Off")
        settled(page)
        expect(page.locator("#add-off-note")).to_be_visible()
        for control in ("#add-text", "#add-kind", "#add-expiry", "#add-pinned", "#add-submit"):
            expect(page.locator(control)).to_be_disabled()
        accept = page.locator(PROPOSALS).get_by_role("button", name="Accept “Suggested while on”", exact=True)
        expect(accept).to_be_disabled()
        expect(accept).to_have_accessible_description(page.locator("#proposals-off-note").inner_text())
        expect(page.locator("#proposals-off-note")).to_be_visible()
        expect(page.locator(PROPOSALS).get_by_role("button", name="Edit and accept")).to_be_disabled()
        expect(page.locator(PROPOSALS).get_by_role("button", name="Reject")).to_be_enabled()
        # The list stays readable and editable.
        entry = page.locator(ENTRIES).first
        entry.get_by_role("button", name="Edit “Keep me while off”").click()
        entry.get_by_test_id("edit-text").fill("Kept and edited while off")
        entry.get_by_role("button", name="Save").click()
        expect(page.locator("#status")).to_have_text("Saved.")
        settled(page)
        state = memory(live, token)
        assert state["enabled"] is False and [i["text"] for i in state["items"]] == ["Kept and edited while off"]
        assert len(state["proposals"]) == 1
        page.locator("#memory-enabled").check()
        expect(page.locator("#add-text")).to_be_enabled()
        expect(accept).to_be_enabled()
