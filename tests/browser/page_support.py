"""Support for the Memory page tests at two widths: sized contexts, axe-core runs, and layout measurements."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page

from tests.browser.browser_support import open_page, watch

WIDTHS = {"wide": 1280, "narrow": 375}
_axe = Axe()  # axe-core as shipped inside the axe-playwright-python wheel (PyPI): nothing is downloaded


@contextmanager
def sized_page(
    browser: Browser, live: Any, width: int, scheme: str = "light", *, clock: bool = False
) -> Iterator[Page]:
    """The page in a fresh context `width` px wide; when done, nothing left the origin, no script failed, CSP held.

    `clock`: on Playwright's fake clock, as the `clocked` fixture (tests/browser/conftest.py)."""
    context = browser.new_context(viewport={"width": width, "height": 800}, device_scale_factor=1, color_scheme=scheme)
    seen = watch(context, live.url)
    if clock:
        context.clock.install()
    try:
        yield open_page(context, live.url)
    finally:
        context.close()
    assert seen.foreign() == [], seen.foreign()
    assert seen.page_errors == [], seen.page_errors
    assert seen.csp_violations == [], seen.csp_violations


def axe_violations(page: Page) -> list[str]:
    """axe-core's violations on the page as it is now (WCAG 2.x A/AA and best practices), one line each."""
    results = _axe.run(page)
    return [
        f"{v['id']} ({v['impact']}): {', '.join(str(n['target']) for n in v['nodes'][:3])}"
        for v in results.response["violations"]
    ]


def box(page: Page, selector: str) -> dict[str, float]:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not laid out"
    return found


def in_viewport(page: Page, selector: str) -> bool:
    viewport = page.viewport_size or {"height": 800}
    where = box(page, selector)
    return where["y"] >= 0 and where["y"] + where["height"] <= viewport["height"]


def no_horizontal_scroll(page: Page) -> bool:
    return bool(page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"))
