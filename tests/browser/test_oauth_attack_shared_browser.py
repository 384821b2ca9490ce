"""Two people in one browser (an outsider's attack on the consent screen): a link opened where someone else is still
signed in shows the consent screen for *their* memory, so the screen itself must say whose memory the app joins."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, expect

from tests.browser.browser_support import EXPECT_TIMEOUT_MS
from tests.browser.test_oauth_consent import _authorize_url


def test_the_consent_screen_says_whose_memory_the_app_joins(live: Any, browser: Browser) -> None:
    # B signed in on a shared computer and left; A adds the connector in their app and lands here. The consent screen
    # opens for B (the request binds to whoever opens it): without B's name on the screen, A approves into B's memory.
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(EXPECT_TIMEOUT_MS)
    page.goto(live.url)
    page.locator("#signin-user").fill("shared-browser-b")
    page.locator("#signin-button").click()
    expect(page.locator("#account-user")).to_have_text("shared-browser-b")
    page.goto(_authorize_url(live))  # A's app sends the browser to authorize, and on to the page
    expect(page.locator("#consent")).to_be_visible()
    expect(page.locator("#consent-account")).to_contain_text("shared-browser-b")
    context.close()
