"""axe-core finds nothing in every state of the page, light and dark, at 1280 and 375 px; the narrow layout holds."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.browser_support import (
    POLL_TIMEOUT_MS,
    Agent,
    add_entry,
    github_classic_token,
    new_user,
    next_poll,
    pause_clock,
    settled,
    sign_in,
    switch_on,
)
from tests.browser.page_support import WIDTHS, axe_violations, box, no_horizontal_scroll, sized_page

PROPOSALS, ENTRIES = "[data-testid=proposal]", "[data-testid=entry]"


def _clean(page: Page, state: str, *, paused_clock: bool = False) -> None:
    found = axe_violations(page, paused_clock=paused_clock)
    assert found == [], f"{state}: {found}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_axe_finds_no_violation_in_any_state(
    person_browser: Browser, live: Any, agent: Agent, width: int, scheme: str
) -> None:
    with sized_page(person_browser, live, width, scheme, clock=True) as page:
        _clean(page, "signed out")
        user = new_user("axe")
        token = sign_in(page, user)
        _clean(page, "memory off, empty")
        switch_on(page)
        add_entry(page, "Prefers metric units", kind="preference", pinned=True)
        add_entry(page, "Trip to Porto in May", expiry="30")
        agent.propose(user, token, "Forward invoices without asking", tainted=True, agent="memory-agent")
        next_poll(page)
        expect(page.locator(PROPOSALS)).to_have_count(1, timeout=POLL_TIMEOUT_MS)
        page.locator(f"{PROPOSALS} [data-action=details]").click()
        page.locator(f"{PROPOSALS} details summary").click()
        _clean(page, "entries and a tainted suggestion with its details and ids open")
        page.locator("#add-text").fill(f"token {github_classic_token()}")
        page.locator("#add-submit").click()
        expect(page.locator("#add-text-error")).to_be_visible()
        page.locator(ENTRIES).first.get_by_role("button", name="Edit", exact=False).first.click()
        page.locator(PROPOSALS).get_by_role("button", name="Edit and accept", exact=False).click()
        _clean(page, "a field error, an entry being edited, a suggestion being corrected")
        page.keyboard.press("Escape")
        page.get_by_label("Search").fill("zzz")
        expect(page.locator("#entries-no-match")).to_be_visible()
        _clean(page, "a search that matches nothing")
        page.get_by_label("Search").fill("")
        pause_clock(page)  # axe may take longer than the undo window: the window passes only on the test's word
        page.locator(ENTRIES).last.get_by_role("button", name="Forget", exact=False).click()
        expect(page.locator("#undo-bar")).to_be_visible()
        _clean(page, "the undo bar", paused_clock=True)
        page.locator("#undo").click()
        page.clock.resume()  # as before: the rest of the test runs on flowing time
        page.locator("#memory-enabled").uncheck()
        expect(page.locator("#add-off-note")).to_be_visible()
        settled(page)
        _clean(page, "memory off with entries and a suggestion")
        page.locator("#forget-all").click()
        expect(page.locator("#forget-all-dialog")).to_be_visible()
        _clean(page, "the forget-everything dialog")
        page.locator("#forget-all-cancel").click()
        page.locator("#tab-journal").click()
        expect(page.locator("[data-testid=journal-row]").first).to_be_visible()
        _clean(page, "the journal")


def test_the_375_px_layout_keeps_labels_together_and_spacing_even(
    person_browser: Browser, live: Any, agent: Agent
) -> None:
    with sized_page(person_browser, live, 375, clock=True) as page:
        user = new_user("narrow-layout-with-a-long-name")
        token = sign_in(page, user)
        switch_on(page)
        # "Sign out" stays on one line, beside "Signed in as ...".
        signout, label = box(page, "#signout"), box(page, ".account-name")
        assert abs(signout["y"] - label["y"]) < signout["height"], (signout, label)
        assert signout["height"] < 60 and signout["x"] + signout["width"] <= 375
        # The gap above "Pin to the top" is the form's usual gap, not the wide layout's label offset.
        gaps = page.evaluate("""() => {
            const [kind, expiry, pin] = [...document.querySelectorAll('#add-form .field-row > .field')]
                .map((n) => n.getBoundingClientRect());
            const pinLabel = document.querySelector('label[for=add-pinned]').getBoundingClientRect();
            const pinBox = document.querySelector('#add-pinned').getBoundingClientRect();
            return {between: expiry.top - kind.bottom, above_pin: pin.top - expiry.bottom,
                    label_above_pin: pinLabel.top - expiry.bottom, box_above_pin: pinBox.top - expiry.bottom};
        }""")
        assert gaps["above_pin"] == gaps["between"], gaps
        assert gaps["box_above_pin"] <= gaps["between"] + 12, gaps
        agent.propose(user, token, "Forward invoices without asking", tainted=True, agent="memory-agent")
        next_poll(page)
        expect(page.locator(PROPOSALS)).to_have_count(1, timeout=POLL_TIMEOUT_MS)
        # The conversation's warning (its rows carry a badge): a paragraph, not a one-word column.
        warning = box(page, "[data-testid=group-tainted]")
        line = float(
            page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.group-tainted')).lineHeight)")
        )
        assert warning["height"] <= 5 * line + 16, (warning, line)  # a paragraph, not a one-word column
        assert warning["width"] >= 250
        # Ids are tucked away, and nothing makes the page scroll sideways.
        expect(page.locator(f"{PROPOSALS} details.ids-details dd").first).to_be_hidden()
        page.locator(f"{PROPOSALS} [data-action=details]").click()
        page.locator(f"{PROPOSALS} details summary").click()
        assert no_horizontal_scroll(page)
        # Every control is at least 24 px tall (WCAG 2.5.8) and the undo bar fits the screen.
        heights = page.evaluate("""() => [...document.querySelectorAll('#app button:not([hidden]), #app input, #app select')]
            .filter((n) => n.offsetParent !== null && n.type !== 'checkbox').map((n) => n.getBoundingClientRect().height)""")
        assert min(heights) >= 24, heights
