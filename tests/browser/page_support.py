"""Support for the Memory page tests at two widths: sized contexts, axe-core runs, and layout measurements."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, Route

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


_AXE_START = """() => {
  window.__axeResults = null;
  axe.run(document, {resultTypes: ['violations']}).then(
    (results) => { window.__axeResults = results; },
    (error) => { window.__axeResults = {error: String(error)}; });
}"""
AXE_STEP_MS = 20  # of the page's paused clock, per step of an axe run on it (one step has been enough)
AXE_MAX_STEPS = 100  # 2 s of that clock: well inside a 5 s undo window


def axe_violations(page: Page, *, paused_clock: bool = False) -> list[str]:
    """axe-core's violations on the page as it is now (WCAG 2.x A/AA and best practices), one line each.

    `paused_clock`: the page's fake clock is paused (`pause_clock`). axe waits on the page's timers between its
    steps, so it is started and its timers are run in short steps of that clock until it answers: a state that
    lasts 5 s on the page (an undo window) is still there however long axe takes in real time."""
    if not paused_clock:
        return _lines(_axe.run(page).response)
    page.evaluate(_axe.axe_script)
    page.evaluate(_AXE_START)
    for _ in range(AXE_MAX_STEPS):
        if (results := page.evaluate("() => window.__axeResults")) is not None:
            break
        page.clock.run_for(AXE_STEP_MS)
    else:
        raise AssertionError(f"axe did not answer within {AXE_MAX_STEPS * AXE_STEP_MS} ms of the page's clock")
    assert "error" not in results, results
    return _lines(results)


def _lines(results: dict[str, Any]) -> list[str]:
    return [
        f"{v['id']} ({v['impact']}): {', '.join(str(n['target']) for n in v['nodes'][:3])}"
        for v in results["violations"]
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


def hostile_item(
    item_id: str, text: str, *, agent: str | None = "helper", tainted: bool = False, session: str = "s-stored"
) -> dict[str, Any]:
    """An entry or suggestion as GET /v1/memory returns one, for text the server would refuse today but a store
    may still hold from before (or from a backup): the page must show it safely all the same."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    source = {"session_id": session, "thread_id": "t-1"} if agent else {}
    return {
        "id": item_id,
        "text": text,
        "kind": "note",
        "origin": "agent" if agent else "user",
        "agent": agent,
        "source": source,
        "created_at": now,
        "tainted": tainted,
        "pinned": False,
        "edited": False,
        "expires_at": None,
    }


def serve_memory(
    page: Page, items: list[dict[str, Any]], proposals: list[dict[str, Any]], *, enabled: bool = True
) -> None:
    """Every GET /v1/memory of this page is answered with this stored state (everything else reaches the stack).

    With an ETag, as the stack answers: a poll is a 304, so nothing is drawn again behind the test's back."""
    body = {
        "enabled": enabled,
        "items": items,
        "proposals": proposals,
        "limits": {"entries": 200, "proposals": 50, "bytes_per_entry": 2000},
    }
    etag = '"served-by-the-test"'

    def answer(route: Route) -> None:
        if route.request.method != "GET":
            route.continue_()
        elif route.request.headers.get("if-none-match") == etag:
            route.fulfill(status=304, headers={"ETag": etag})
        else:
            route.fulfill(json=body, headers={"ETag": etag})

    page.route("**/v1/memory", answer)
