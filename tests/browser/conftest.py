"""Browser fixtures: one headless Debian Chromium per run, a fresh context per test that watches every request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Playwright, expect, sync_playwright

from tests.browser.browser_support import EXPECT_TIMEOUT_MS, PERSON_CHROMIUM, Agent, Watch, launch, open_page, watch

expect.set_options(timeout=EXPECT_TIMEOUT_MS)


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    chromium = launch(playwright)
    yield chromium
    chromium.close()


@pytest.fixture(scope="session")
def person_browser(playwright: Playwright) -> Iterator[Browser]:
    """The full Chromium a person uses, for the tests about what the page looks like (launched when first asked)."""
    chromium = launch(playwright, PERSON_CHROMIUM)
    yield chromium
    chromium.close()


@pytest.fixture
def watched(browser: Browser, live: Any) -> Iterator[tuple[Any, Watch]]:
    """A desktop-sized context; when the test ends, nothing left the stack's origin and no script failed."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
    seen = watch(context, live.url)
    yield context, seen
    context.close()
    assert seen.foreign() == [], f"requests to other origins: {seen.foreign()}"
    assert seen.page_errors == [], f"script errors: {seen.page_errors}"
    assert seen.csp_violations == [], f"CSP refused something: {seen.csp_violations}"


@pytest.fixture
def page(watched: tuple[Any, Watch], live: Any) -> Page:
    """The Memory page, loaded and showing its sign-in form."""
    context, _ = watched
    return open_page(context, live.url)


@pytest.fixture
def clocked(watched: tuple[Any, Watch], live: Any) -> Page:
    """The Memory page with Playwright's fake clock installed before any script runs. It flows as real time
    until a test moves it on (`page.clock.run_for`, so the page's 5 s timers pass without waiting for them) or
    pauses it (`pause_clock`: from then on no page timer fires unless the test moves it)."""
    context, _ = watched
    context.clock.install()
    return open_page(context, live.url)


@pytest.fixture
def agent(live: Any) -> Agent:
    return Agent(live)
