"""What one person started and signed out before it was answered never acts for the next person at the page."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.browser_support import (
    POLL_TIMEOUT_MS,
    Agent,
    add_entry,
    after_two_frames,
    eventually,
    memory,
    new_user,
    next_poll,
    reload,
    sign_in,
    switch_on,
)


def _hold_next(page: Page, glob: str, method: str) -> list[Route]:
    """From now on, the first `method` request to `glob` waits (in the list) until the test lets it go."""
    held: list[Route] = []
    page.route(
        glob, lambda route: held.append(route) if route.request.method == method and not held else route.continue_()
    )
    return held


def _sign_out(page: Page) -> None:
    page.locator("#signout").click()
    expect(page.locator("#signin-user")).to_be_visible()


def _start_settings(page: Page) -> None:
    page.locator("#memory-enabled").check()  # frank turns memory on


def _start_forget_all(page: Page) -> None:
    page.locator("#forget-all").click()
    expect(page.locator("#forget-all-dialog")).to_be_visible()
    page.locator("#forget-all-confirm").click()
    page.keyboard.press("Escape")  # the dialog closes while the forget is on its way; then he signs out


def _start_export(page: Page) -> None:
    page.locator("#export").click()


def _start_journal(page: Page) -> None:
    page.locator("#tab-journal").click()


def _start_add(page: Page) -> None:
    page.locator("#add-text").fill("frank adds this as he leaves")
    page.locator("#add-submit").click()


def _start_pin(page: Page) -> None:
    page.locator("[data-testid=entry]").get_by_role("button", name="Pin", exact=False).first.click()


# What frank starts, the request it waits on (held until grace is signed in), and how that request is answered.
LATE_ANSWERS = {
    "memory switch": (_start_settings, "PUT", "/v1/memory/settings", None),
    "forget everything": (_start_forget_all, "DELETE", "/v1/memory", None),
    "export": (_start_export, "GET", "/v1/memory/export", None),
    "journal refused as signed out": (_start_journal, "GET", "/v1/memory/journal", 401),
    "add": (_start_add, "POST", "/v1/memory", None),
    "pin": (_start_pin, "PATCH", "/v1/memory/*", None),
    "pin refused as signed out": (_start_pin, "PATCH", "/v1/memory/*", 401),
}


@pytest.mark.parametrize("case", LATE_ANSWERS.keys())
def test_an_answer_to_the_previous_person_changes_and_says_nothing_to_the_next(
    page: Page, live: Any, case: str
) -> None:
    """Frank starts something and signs out before it is answered; grace signs in. The late answer is frank's:
    it must not change grace's page, speak on her status line, download into her session, or sign her out."""
    start, method, path, refuse = LATE_ANSWERS[case]
    frank, grace = new_user("frank"), new_user("grace")
    frank_token = sign_in(page, frank)
    if case != "memory switch":
        switch_on(page)
        add_entry(page, f"frank-note-{uuid.uuid4().hex[:8]}")
    held = _hold_next(page, f"**{path}", method)
    downloads: list[Any] = []
    page.on("download", lambda download: downloads.append(download))
    start(page)
    eventually(page, lambda: len(held) == 1)

    _sign_out(page)
    grace_token = sign_in(page, grace)
    expect(page.locator("#memory-state")).to_have_text("Off")
    status_before = page.locator("#status").text_content()
    with page.expect_request_finished(lambda r: r.method == method and r.url == held[0].request.url):
        if refuse:
            held[0].fulfill(status=refuse, json={"code": "unauthorized", "message": "Sign in again."})
        else:
            held[0].continue_()  # frank's answer lands while grace is signed in
    after_two_frames(page)
    page.wait_for_timeout(200)  # and anything it would await after that (a reload of memory) has been drawn

    expect(page.locator("#account-user")).to_have_text(grace)  # still signed in
    expect(page.locator("#signin")).to_be_hidden()
    expect(page.locator("#memory-state")).to_have_text("Off")  # her memory, as stored
    assert page.locator("#status").text_content() == status_before
    assert downloads == []
    grace_stored, frank_stored = memory(live, grace_token), memory(live, frank_token)
    assert grace_stored["enabled"] is False and grace_stored["items"] == []  # nothing of frank's went to her
    # What frank asked for did land, for frank (a refused one changed nothing).
    frank_texts = [i["text"] for i in frank_stored["items"]]
    if case == "memory switch":
        assert frank_stored["enabled"] is True
    elif case == "forget everything":
        assert frank_texts == []
    elif case == "add":
        assert "frank adds this as he leaves" in frank_texts and len(frank_texts) == 2
    elif case == "pin":
        assert [i["pinned"] for i in frank_stored["items"]] == [True]
    elif case == "pin refused as signed out":
        assert [i["pinned"] for i in frank_stored["items"]] == [False]


def test_the_next_person_may_act_while_the_previous_persons_change_is_on_its_way(page: Page, live: Any) -> None:
    """Frank's add is still on its way: grace, signed in after him, turns her memory on at once, and it sticks."""
    sign_in(page, new_user("frank"))
    switch_on(page)
    held = _hold_next(page, "**/v1/memory", "POST")
    page.locator("#add-text").fill("frank adds this as he leaves")
    page.locator("#add-submit").click()
    eventually(page, lambda: len(held) == 1)
    _sign_out(page)
    grace_token = sign_in(page, new_user("grace"))
    switch_on(page)  # not refused as "another change is in flight": that change was frank's
    assert memory(live, grace_token)["enabled"] is True
    with page.expect_request_finished(lambda r: r.url == held[0].request.url and r.method == "POST"):
        held[0].continue_()
    after_two_frames(page)
    expect(page.locator("#memory-state")).to_have_text("On")
    expect(page.locator("body")).not_to_have_attribute("data-busy", "true")


@pytest.mark.parametrize("what", ["pin", "accept"])
def test_a_change_reloaded_after_sign_out_leaves_the_next_persons_focus_alone(
    page: Page, live: Any, agent: Agent, what: str
) -> None:
    """Frank's pin (or accept) is answered, but the reload after it lands once grace is signed in: her keyboard
    focus stays where she put it (it used to jump to a heading of the list)."""
    frank = new_user("frank")
    token = sign_in(page, frank)
    switch_on(page)
    add_entry(page, f"frank-note-{uuid.uuid4().hex[:8]}")
    if what == "accept":
        agent.propose(frank, token, "Likes short answers")
        reload(page)
        expect(page.locator("[data-testid=proposal]")).to_have_count(1)
    held = _hold_next(page, "**/v1/memory", "GET")
    if what == "pin":
        page.locator("[data-testid=entry]").get_by_role("button", name="Pin", exact=False).first.click()
    else:
        page.locator("[data-testid=proposal]").get_by_role("button", name="Accept", exact=False).first.click()
    eventually(page, lambda: len(held) == 1)  # the change was answered; the reload after it waits
    _sign_out(page)
    sign_in(page, new_user("grace"))
    expect(page.locator("#memory-enabled")).to_be_focused()  # where signing in puts it
    her_focus = page.locator("#signout")  # grace moves it on
    her_focus.focus()
    expect(her_focus).to_be_focused()
    with page.expect_request_finished(lambda r: r.url == held[0].request.url and r.method == "GET"):
        held[0].continue_()
    after_two_frames(page)
    expect(her_focus).to_be_focused()


def test_a_journal_refresh_held_at_sign_out_does_not_stop_the_next_persons_refreshes(
    clocked: Page, live: Any, agent: Agent
) -> None:
    page = clocked
    sign_in(page, new_user("frank"))
    switch_on(page)
    page.locator("#tab-journal").click()
    expect(page.locator("[data-testid=journal-row]").first).to_be_visible()
    held = _hold_next(page, "**/v1/memory/journal*", "GET")
    next_poll(page)  # frank's poll: its journal refresh is held
    eventually(page, lambda: len(held) == 1)
    _sign_out(page)
    grace = new_user("grace")
    sign_in(page, grace)
    switch_on(page)
    page.locator("#tab-journal").click()
    rows = page.locator("[data-testid=journal-row]")
    expect(rows.first).to_be_visible()
    before = rows.count()
    agent.context(agent.session(grace, agent="reader-agent"))  # a new row in grace's journal
    next_poll(page)
    expect(rows).to_have_count(before + 1, timeout=POLL_TIMEOUT_MS)  # her own refreshes run
    held[0].continue_()


def test_an_older_sign_in_answered_last_does_not_replace_the_newer_one(page: Page, live: Any) -> None:
    """ "Sign in as bob" is slow to answer; alice signs in meanwhile. Bob's answer, landing last, is dropped."""
    bob, alice = new_user("bob"), new_user("alice")
    held = _hold_next(page, "**/dev/token", "POST")
    page.locator("#signin-user").fill(bob)
    page.locator("#signin-button").click()
    eventually(page, lambda: len(held) == 1)
    sign_in(page, alice)
    with page.expect_request_finished(lambda r: r.url == held[0].request.url):
        held[0].continue_()
    after_two_frames(page)
    page.wait_for_timeout(200)  # a sign-in would also load bob's memory
    expect(page.locator("#account-user")).to_have_text(alice)
    assert page.evaluate("() => sessionStorage.getItem('memory.user')") == alice
