"""Errors at their field, status lines that clear, undo for forget, kind edits, search and filter, names per entry."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.browser_support import (
    POLL_TIMEOUT_MS,
    UNDO_CLOSED_TIMEOUT_MS,
    UNDO_MS,
    Agent,
    add_entry,
    eventually,
    github_classic_token,
    memory,
    new_user,
    next_poll,
    pause_clock,
    settled,
    sign_in,
    switch_on,
)
from tests.browser.page_support import WIDTHS, in_viewport, sized_page

ENTRIES, PROPOSALS = "[data-testid=entry]", "[data-testid=proposal]"
SIZES = pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())


def _described_by(page: Page, selector: str) -> list[str]:
    return (page.locator(selector).get_attribute("aria-describedby") or "").split()


@SIZES
def test_a_refused_add_shows_its_error_at_the_field_keeps_the_text_and_loses_nothing(
    browser: Browser, live: Any, width: int
) -> None:
    with sized_page(browser, live, width) as page:
        token = sign_in(page, new_user("fielderr"))
        switch_on(page)
        secret = github_classic_token()
        typed = f"key {secret}"
        page.locator("#add-text").fill(typed)
        page.locator("#add-submit").click()
        error = page.locator("#add-text-error")
        expect(error).to_be_visible()
        expect(error).to_contain_text("GitHub token")
        expect(error).to_have_attribute("data-code", "credential_refused")
        expect(page.locator("#add-text")).to_have_attribute("aria-invalid", "true")
        assert "add-text-error" in _described_by(page, "#add-text")
        expect(page.locator("#add-text")).to_be_focused()
        expect(page.locator("#add-text")).to_have_value(typed)
        assert in_viewport(page, "#add-text-error") and in_viewport(page, "#add-text")
        assert secret not in (error.text_content() or "")
        settled(page)
        assert memory(live, token)["items"] == []

        page.locator("#add-text").type(" ")  # typing clears the error
        expect(error).to_be_hidden()
        expect(page.locator("#add-text")).not_to_have_attribute("aria-invalid", "true")
        assert "add-text-error" not in _described_by(page, "#add-text")

        page.locator("#add-text").fill("Walks at noon")
        page.locator("#add-expiry").fill("0")
        page.locator("#add-submit").click()
        expect(page.locator("#add-expiry-error")).to_contain_text("whole number of days")
        expect(page.locator("#add-expiry")).to_be_focused()
        expect(page.locator("#add-text")).to_have_value("Walks at noon")
        page.locator("#add-text").fill("   ")
        page.locator("#add-expiry").fill("")
        page.locator("#add-submit").click()
        expect(page.locator("#add-text-error")).to_have_text("Write something to remember first.")
        assert memory(live, token)["items"] == []


@SIZES
def test_status_messages_clear_on_the_next_action_and_on_a_tab_change(browser: Browser, live: Any, width: int) -> None:
    with sized_page(browser, live, width) as page:
        sign_in(page, new_user("clears"))
        switch_on(page)
        add_entry(page, "First note")
        expect(page.locator("#status")).to_have_text("Added to memory.")
        page.locator(ENTRIES).first.get_by_role("button", name="Pin").click()
        expect(page.locator("#status")).to_have_text("Pinned to the top.")
        page.locator("#tab-journal").click()
        expect(page.locator("#status")).to_have_text("")
        page.locator("#tab-memory").click()
        page.locator("#add-text").fill("Second")
        page.locator("#add-submit").click()
        expect(page.locator("#status")).to_have_text("Added to memory.")
        page.locator("#forget-all").click()
        expect(page.locator("#status")).to_have_text("")
        page.locator("#forget-all-cancel").click()


@SIZES
def test_forget_one_can_be_undone_and_sends_nothing_until_the_window_closes(
    browser: Browser, live: Any, width: int
) -> None:
    with sized_page(browser, live, width, clock=True) as page:
        deletes: list[str] = []
        page.on("request", lambda r: deletes.append(r.url) if r.method == "DELETE" else None)
        token = sign_in(page, new_user("undo"))
        switch_on(page)
        add_entry(page, "first note")
        add_entry(page, "second note")
        pause_clock(page)  # the window passes only as the test moves the clock, however slow the machine
        page.locator(ENTRIES).filter(has_text="second note").get_by_role("button", name="Forget").click()
        expect(page.locator(ENTRIES)).to_have_count(1)
        expect(page.locator("#undo-bar")).to_be_visible()
        expect(page.locator("#undo-text")).to_contain_text("Forgotten: “second note”")
        expect(page.locator("#undo")).to_be_focused()
        expect(page.locator("#count-entries")).to_have_text("1 / 200 entries")
        expect(page.locator("#undo")).to_have_accessible_name("Undo forgetting “second note”")
        assert deletes == [] and len(memory(live, token)["items"]) == 2  # nothing sent yet
        page.locator("#undo").click()
        expect(page.locator(ENTRIES)).to_have_count(2)
        expect(page.locator("#undo-bar")).to_be_hidden()
        expect(page.locator("#status")).to_have_text("Restored: nothing was forgotten.")
        page.clock.run_for(UNDO_MS + 500)  # past the window (the page's clock): the undone forget is never sent
        page.wait_for_timeout(300)  # real time, for a DELETE that would be on its way
        assert deletes == [] and len(memory(live, token)["items"]) == 2

        page.locator(ENTRIES).filter(has_text="first note").get_by_role("button", name="Forget").click()
        expect(page.locator("#undo-bar")).to_be_visible()
        page.clock.run_for(UNDO_MS - 100)  # still inside the window: nothing sent yet
        expect(page.locator("#undo-bar")).to_be_visible()
        assert deletes == []
        page.clock.run_for(100)
        expect(page.locator("#undo-bar")).to_be_hidden()  # the window closed: now it is sent
        eventually(page, lambda: len(memory(live, token)["items"]) == 1 and len(deletes) == 1)
        assert [i["text"] for i in memory(live, token)["items"]] == ["second note"]
        expect(page.locator(ENTRIES)).to_have_count(1)


def test_a_forget_in_its_undo_window_is_still_sent_when_the_page_goes_away(page: Page, live: Any) -> None:
    token = sign_in(page, new_user("leave"))
    switch_on(page)
    add_entry(page, "gone on leaving")
    page.locator(ENTRIES).get_by_role("button", name="Forget").click()
    expect(page.locator("#undo-bar")).to_be_visible()
    page.goto("about:blank")
    deadline = time.monotonic() + UNDO_CLOSED_TIMEOUT_MS / 1000
    while memory(live, token)["items"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert memory(live, token)["items"] == []


@SIZES
def test_editing_changes_the_kind_and_errors_sit_at_the_edit_field(browser: Browser, live: Any, width: int) -> None:
    with sized_page(browser, live, width) as page:
        token = sign_in(page, new_user("kind"))
        switch_on(page)
        add_entry(page, "Walks at noon", kind="note")
        entry = page.locator(ENTRIES).first
        entry.get_by_role("button", name="Edit “Walks at noon”").click()
        entry.get_by_test_id("edit-kind").select_option("fact")
        entry.get_by_test_id("edit-text").fill(f"token {github_classic_token()}")
        entry.get_by_role("button", name="Save").click()
        error = entry.get_by_test_id("field-error").first
        expect(error).to_contain_text("GitHub token")
        expect(entry.get_by_test_id("edit-text")).to_have_attribute("aria-invalid", "true")
        expect(entry.get_by_test_id("edit-text")).to_be_focused()
        assert memory(live, token)["items"][0]["text"] == "Walks at noon"
        entry.get_by_test_id("edit-text").fill("Walks at one")
        entry.get_by_role("button", name="Save").click()
        expect(page.locator("#status")).to_have_text("Saved.")
        expect(entry.get_by_test_id("kind")).to_have_text("Fact")
        expect(entry.get_by_test_id("edited")).to_be_visible()
        settled(page)
        (stored,) = memory(live, token)["items"]
        assert (stored["text"], stored["kind"], stored["edited"]) == ("Walks at one", "fact", True)


@SIZES
def test_search_and_filter_by_text_kind_origin_and_taint(browser: Browser, live: Any, agent: Agent, width: int) -> None:
    with sized_page(browser, live, width, clock=True) as page:
        user = new_user("filter")
        token = sign_in(page, user)
        switch_on(page)
        add_entry(page, "Prefers tea in the morning", kind="preference")
        add_entry(page, "Lives in Porto", kind="fact")
        agent.propose(user, token, "Drinks green tea", kind="preference", tainted=True)
        next_poll(page)
        expect(page.locator(PROPOSALS)).to_have_count(1, timeout=POLL_TIMEOUT_MS)
        page.locator(PROPOSALS).get_by_role("button", name="Accept", exact=False).first.click()
        expect(page.locator(ENTRIES)).to_have_count(3)
        settled(page)
        texts = page.locator(f"{ENTRIES} [data-testid=text]")
        page.get_by_label("Search").fill("TEA")
        expect(texts).to_have_text(["Drinks green tea", "Prefers tea in the morning"])
        expect(page.locator("#filter-summary")).to_have_text("Showing 2 of 3 entries.")
        page.get_by_label("From", exact=True).select_option("user")
        expect(texts).to_have_text(["Prefers tea in the morning"])
        page.get_by_label("From", exact=True).select_option("")
        page.get_by_label("Only tainted").check()
        expect(texts).to_have_text(["Drinks green tea"])
        page.get_by_label("Only tainted").uncheck()
        page.get_by_label("Search").fill("")
        page.locator("#filter-kind").select_option("fact")
        expect(texts).to_have_text(["Lives in Porto"])
        page.get_by_label("Search").fill("tea")
        expect(page.locator(ENTRIES)).to_have_count(0)
        expect(page.locator("#entries-no-match")).to_be_visible()
        page.get_by_role("button", name="Clear the search and filters").click()
        expect(page.locator(ENTRIES)).to_have_count(3)
        expect(page.get_by_label("Search")).to_be_focused()
        assert len(memory(live, token)["items"]) == 3  # filtering changes nothing stored


@SIZES
def test_every_button_names_the_entry_it_acts_on(browser: Browser, live: Any, agent: Agent, width: int) -> None:
    with sized_page(browser, live, width, clock=True) as page:
        user = new_user("names")
        token = sign_in(page, user)
        switch_on(page)
        for text in ("Likes tea", "Likes coffee"):
            add_entry(page, text)
        agent.propose(user, token, "Likes maps")
        agent.propose(user, token, "Likes rain")
        next_poll(page)
        expect(page.locator(PROPOSALS)).to_have_count(2, timeout=POLL_TIMEOUT_MS)
        names = page.evaluate("""() => [...document.querySelectorAll('#entries button, #proposals button')]
            .map((b) => b.getAttribute('aria-label'))""")
        # 3 per entry, 4 per suggestion (Details too), each conversation's "Forget everything from this conversation"
        # (one suggestion each: no "Accept these"), and "Replace this one" beside each similar entry ("Likes maps"
        # is like both "Likes …" entries: 2 each).
        assert None not in names and len(names) == len(set(names)) == 20, names
        for verb in ("Edit", "Pin", "Forget"):
            for text in ("Likes tea", "Likes coffee"):
                expect(page.get_by_role("button", name=f"{verb} “{text}”", exact=True)).to_have_count(1)
        for verb in ("Accept", "Edit and accept", "Reject"):
            for text in ("Likes maps", "Likes rain"):
                expect(page.get_by_role("button", name=f"{verb} “{text}”", exact=True)).to_have_count(1)
        for text in ("Likes maps", "Likes rain"):
            for old in ("Likes tea", "Likes coffee"):
                expect(
                    page.get_by_role("button", name=f"Replace this one: accept “{text}” and forget “{old}”", exact=True)
                ).to_have_count(1)
        # The visible label starts the accessible name (WCAG 2.5.3, label in name).
        first = page.locator(ENTRIES).first.locator("[data-action=forget]")
        assert (first.get_attribute("aria-label") or "").startswith(first.inner_text())
