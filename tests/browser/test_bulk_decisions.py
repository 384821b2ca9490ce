"""Accepting while a forget waits out its undo window, and bulk decisions that stop midway say what happened.

Each test reads back what the stack stored, not only what the page said.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.browser_support import (
    Agent,
    memory,
    new_user,
    open_page,
    pause_clock,
    reload,
    settled,
    sign_in,
    switch_on,
)

PROPOSALS, ENTRIES = "[data-testid=proposal]", "[data-testid=entry]"


def _fill_memory(live: Any, token: str, n: int) -> None:
    for i in range(n):
        status, body, _ = live.request("POST", "/v1/memory", token=token, body={"text": f"note {i}"})
        assert status == 201, body


@pytest.mark.parametrize("button", ["accept", "accept all", "add"])
def test_a_forget_in_its_undo_window_makes_room_before_an_accept(
    clocked: Page, live: Any, agent: Agent, button: str
) -> None:
    """At 200 entries, forget one (its undo window still open) and accept: the forget is sent first, so memory
    is not full. On a paused clock, the window cannot close by itself however slow the machine."""
    page = clocked
    user = new_user("full-undo")
    token = sign_in(page, user)
    switch_on(page)
    proposal = agent.propose(user, token, "Waits for a free place")
    _fill_memory(live, token, 200)
    reload(page)
    expect(page.locator(ENTRIES)).to_have_count(200)
    expect(page.locator(PROPOSALS)).to_have_count(1)
    pause_clock(page)
    forgotten = page.locator(ENTRIES).first.get_attribute("data-entry-id")
    page.locator(ENTRIES).first.locator("[data-action=forget]").click()
    expect(page.locator("#undo-bar")).to_be_visible()
    settled(page)
    if button == "accept":
        page.locator(PROPOSALS).locator("[data-action=accept]").click()
    elif button == "accept all":
        page.locator("#accept-all").click()
    else:
        page.locator("#add-text").fill("Added in the forgotten one's place")
        page.locator("#add-submit").click()
    settled(page)
    expect(page.locator("#status")).to_have_attribute("data-kind", "ok")
    expect(page.locator("#status")).not_to_contain_text("Memory is full")
    expect(page.locator("#undo-bar")).to_be_hidden()
    stored = memory(live, token)
    ids = {e["id"] for e in stored["items"]}
    assert len(ids) == 200 and forgotten not in ids
    if button == "add":
        assert "Added in the forgotten one's place" in {e["text"] for e in stored["items"]}
    else:
        assert proposal["id"] in ids and stored["proposals"] == []


def _cut_from(page: Page, glob: str, nth: int) -> list[str]:
    """The `nth` (1-based) request to `glob` and every later one fail as a lost connection would; the others go."""
    sent: list[str] = []

    def handle(route: Route) -> None:
        sent.append(route.request.url)
        if len(sent) >= nth:
            route.abort("internetdisconnected")
        else:
            route.continue_()

    page.route(glob, handle)
    return sent


def test_bulk_decisions_that_lose_the_connection_say_how_many_were_done_and_how_many_wait(
    page: Page, live: Any, agent: Agent
) -> None:
    user = new_user("bulk-offline")
    token = sign_in(page, user)
    switch_on(page)
    for text in ("First idea", "Second idea", "Third idea"):
        agent.propose(user, token, text, agent="ideas")
    reload(page)
    expect(page.locator(PROPOSALS)).to_have_count(3)
    status = page.locator("#status")

    sent = _cut_from(page, "**/v1/memory/*/accept", 2)
    page.locator("#accept-all").click()
    settled(page)
    expect(status).to_have_attribute("data-kind", "error")
    expect(status).to_contain_text("Accepted 1 of 3 suggestions")
    expect(status).to_contain_text("2 are still waiting")
    expect(status).not_to_contain_text("Accepted all")
    assert len(sent) == 2  # nothing after the lost connection was tried
    after = memory(live, token)
    assert len(after["items"]) == 1 and len(after["proposals"]) == 2
    expect(page.locator("[data-testid=bulk-failure]")).to_have_count(2)

    page.unroute("**/v1/memory/*/accept")
    sent = _cut_from(page, "**/v1/memory/*/accept", 1)  # the very first fails
    page.locator("#accept-all").click()
    settled(page)
    expect(status).to_have_attribute("data-kind", "error")
    expect(status).to_contain_text("Accepted 0 of 2 suggestions")
    expect(status).not_to_contain_text("Accepted all")

    _cut_from(page, "**/v1/memory/*/reject", 1)
    page.get_by_role("button", name="Reject all from ideas (2)").click()
    settled(page)
    expect(status).to_have_attribute("data-kind", "error")
    expect(status).to_contain_text("Rejected 0 of 2 suggestions")
    assert len(memory(live, token)["proposals"]) == 2


def test_accept_all_stops_and_asks_while_a_suggestion_is_being_corrected(page: Page, live: Any, agent: Agent) -> None:
    user = new_user("bulk-correcting")
    token = sign_in(page, user)
    switch_on(page)
    agent.propose(user, token, "Likes jaz", agent="ideas")
    agent.propose(user, token, "Walks at six", agent="ideas")
    reload(page)
    expect(page.locator(PROPOSALS)).to_have_count(2)
    item = page.locator(PROPOSALS).filter(has_text="Likes jaz")
    item.get_by_role("button", name="Edit and accept “Likes jaz”").click()
    item.get_by_test_id("edit-text").fill("Likes jazz")
    page.locator("#accept-all").click()
    settled(page)
    expect(page.locator("#status")).to_have_attribute("data-kind", "error")
    expect(page.locator("#status")).to_contain_text("being edited")
    expect(item.get_by_test_id("edit-text")).to_have_value("Likes jazz")  # the correction is kept
    expect(item.get_by_test_id("edit-text")).to_be_focused()
    stored = memory(live, token)
    assert stored["items"] == [] and len(stored["proposals"]) == 2  # nothing accepted, least of all uncorrected


def test_accept_all_in_a_stale_tab_does_not_call_one_decided_in_another_tab_a_failure(
    clocked: Page, live: Any, agent: Agent
) -> None:
    """Two tabs, one person: one suggestion is accepted in the first; the second, not refreshed yet, accepts all.
    That one is no longer waiting: not a failure to list under "Waiting for your review", and said so."""
    first = clocked
    user = new_user("two-tabs")
    token = sign_in(first, user)
    switch_on(first)
    ids = [agent.propose(user, token, text)["id"] for text in ("Tea at four", "Walks at six", "Reads at nine")]
    reload(first)
    second = open_page(first.context, live.url)
    sign_in(second, user)
    expect(second.locator(PROPOSALS)).to_have_count(3)
    pause_clock(second)  # the second tab asks for nothing more until it acts: it stays stale
    first.locator(f"{PROPOSALS}[data-proposal-id='{ids[0]}'] [data-action=accept]").click()
    expect(first.locator(PROPOSALS)).to_have_count(2)
    settled(first)
    second.locator("#accept-all").click()
    settled(second)
    assert sorted(e["id"] for e in memory(live, token)["items"]) == sorted(ids)  # all three kept, none twice
    expect(second.locator("#status")).to_have_text(
        "Accepted 2 suggestions: they are now in your memory. 1 suggestion was no longer waiting"
        " (decided or forgotten in another tab or on another device), so nothing was done to it here."
    )
    expect(second.locator("#status")).to_have_attribute("data-kind", "ok")
    expect(second.locator("[data-testid=bulk-failure]")).to_have_count(0)


def test_after_a_lost_connection_the_ones_accepted_leave_the_list_and_a_retry_says_all_went(
    page: Page, live: Any, agent: Agent
) -> None:
    """The connection goes mid Accept all and stays gone for the refresh after it: the one accepted must not still
    be listed as waiting, and once back online, Accept all again takes the rest in without calling the first
    one "decided elsewhere"."""
    user = new_user("bulk-retry")
    token = sign_in(page, user)
    switch_on(page)
    for text in ("First idea", "Second idea", "Third idea"):
        agent.propose(user, token, text)
    reload(page)
    expect(page.locator(PROPOSALS)).to_have_count(3)
    accepts = _cut_from(page, "**/v1/memory/*/accept", 2)
    loads = _cut_from(page, "**/v1/memory", 1)
    page.locator("#accept-all").click()
    settled(page)
    assert len(accepts) == 2 and loads  # the refresh after it was tried, and failed
    first = accepts[0].split("/")[-2]
    assert [e["id"] for e in memory(live, token)["items"]] == [first]
    expect(page.locator(PROPOSALS)).to_have_count(2)
    expect(page.locator(f"{PROPOSALS}[data-proposal-id='{first}']")).to_have_count(0)

    page.unroute("**/v1/memory/*/accept")
    page.unroute("**/v1/memory")
    page.locator("#accept-all").click()
    settled(page)
    expect(page.locator("#status")).to_have_text("Accepted all 2 suggestions: they are now in your memory.")
    assert len(memory(live, token)["items"]) == 3
