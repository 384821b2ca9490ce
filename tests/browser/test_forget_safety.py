"""Forgetting stays honest: forget-all inside an undo window counts what is left, and focus never lands on another Forget."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.browser_support import (
    UNDO_MS,
    add_entry,
    close_undo_window,
    memory,
    new_user,
    pause_clock,
    set_hidden,
    settled,
    sign_in,
    switch_on,
)

ENTRIES = "[data-testid=entry]"


def test_forget_everything_inside_an_undo_window_counts_what_is_left_and_ends_the_undo(
    clocked: Page, live: Any
) -> None:
    page = clocked
    token = sign_in(page, new_user("undo-all"))
    switch_on(page)
    add_entry(page, "stays until everything goes")
    add_entry(page, "forgotten first")
    pause_clock(page)
    page.locator(ENTRIES).filter(has_text="forgotten first").get_by_role("button", name="Forget").click()
    expect(page.locator("#undo-bar")).to_be_visible()
    page.locator("#forget-all").click()  # well inside the 5 s window
    dialog = page.locator("#forget-all-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#forget-all-text")).to_have_attribute("data-entries", "1")
    expect(page.locator("#forget-all-text")).to_contain_text("forget 1 entry and")
    expect(page.locator("#undo-bar")).to_be_hidden()  # the forget was sent: nothing left to undo
    assert [i["text"] for i in memory(live, token)["items"]] == ["stays until everything goes"]
    page.locator("#forget-all-confirm").click()
    expect(page.locator("#status")).to_have_text("Forgot everything: 1 item removed. Memory stays on.")
    expect(page.locator(ENTRIES)).to_have_count(0)
    expect(page.locator("#undo-bar")).to_be_hidden()
    expect(page.locator("#undo")).to_be_hidden()
    settled(page)
    assert memory(live, token)["items"] == []


def test_an_entry_forgotten_elsewhere_withdraws_its_undo(clocked: Page, live: Any) -> None:
    page = clocked
    token = sign_in(page, new_user("undo-elsewhere"))
    switch_on(page)
    add_entry(page, "gone in another tab")
    pause_clock(page)  # the undo window below never closes by itself: only the page's question can end it
    page.locator(ENTRIES).get_by_role("button", name="Forget").click()
    expect(page.locator("#undo-bar")).to_be_visible()
    status, _, _ = live.request("DELETE", "/v1/memory", token=token)  # another tab forgets everything
    assert status == 200
    set_hidden(page, True)
    set_hidden(page, False)  # shown again: the page asks at once, and learns the entry is gone
    expect(page.locator("#undo-bar")).to_be_hidden()  # at once: the window's own 5 s cannot pass on the paused clock
    page.clock.run_for(1_000)  # the status line's short delay, still well inside the window
    expect(page.locator("#status")).not_to_have_text("Restored: nothing was forgotten.")
    expect(page.locator(ENTRIES)).to_have_count(0)


def test_when_the_undo_window_closes_focus_goes_where_enter_destroys_nothing(clocked: Page, live: Any) -> None:
    page = clocked
    token = sign_in(page, new_user("undo-focus"))
    switch_on(page)
    add_entry(page, "keep me")
    add_entry(page, "forget me")
    pause_clock(page)  # the window closes only inside close_undo_window, which is then waiting for its DELETE
    page.get_by_role("button", name="Forget “forget me”").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#undo")).to_be_focused()
    assert close_undo_window(page) == 204  # the window closed on the page's clock: the forget is sent and answered
    expect(page.locator("#undo-bar")).to_be_hidden()
    expect(page.locator("#entries-heading")).to_be_focused()
    page.keyboard.press("Enter")  # a keyboard user presses Enter again
    page.keyboard.press("Space")
    page.wait_for_timeout(500)
    settled(page)
    expect(page.locator(ENTRIES)).to_have_count(1)
    assert [i["text"] for i in memory(live, token)["items"]] == ["keep me"]


def test_undo_puts_focus_on_the_restored_entry_not_on_its_forget_button(clocked: Page, live: Any) -> None:
    page = clocked
    token = sign_in(page, new_user("undo-back"))
    switch_on(page)
    add_entry(page, "brought back")
    pause_clock(page)
    page.locator(ENTRIES).get_by_role("button", name="Forget").click()
    page.locator("#undo").click()
    expect(page.locator(ENTRIES)).to_have_count(1)
    expect(page.locator(ENTRIES).first).to_be_focused()
    page.keyboard.press("Enter")
    page.clock.run_for(UNDO_MS + 1_000)  # longer than an undo window, on the page's clock: nothing was forgotten
    page.wait_for_timeout(500)  # real time, for a DELETE that would be on its way
    settled(page)
    assert [i["text"] for i in memory(live, token)["items"]] == ["brought back"]
