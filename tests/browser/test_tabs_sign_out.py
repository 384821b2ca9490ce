"""Signing out in one tab signs out every tab of the page in that browser: none stays signed in or keeps asking."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_support import Polls, Watch, new_user, open_page, pause_clock, sign_in


def test_sign_out_in_one_tab_signs_out_the_other_and_it_stops_asking(watched: tuple[Any, Watch], live: Any) -> None:
    context, _ = watched
    context.clock.install()
    first, second = open_page(context, live.url), open_page(context, live.url)
    user = new_user("two-tabs")
    sign_in(first, user)
    sign_in(second, user)
    polls = Polls(second)
    first.locator("#signout").click()
    expect(first.locator("#signin-user")).to_be_visible()
    expect(second.locator("#signin-user")).to_be_visible()
    expect(second.locator("#app")).to_be_hidden()
    expect(second.locator("#account-user")).to_have_text("")
    assert second.evaluate("() => sessionStorage.getItem('memory.token')") is None
    pause_clock(second)
    polls.settle()
    assert polls.over(65) == 0, "the other tab kept asking for memory after sign-out"
