"""Issue 39's "Done when": a week of one agent's suggestions reviewed in a few decisions, ending exactly right.

One agent, 60 suggestions over 12 conversations to a person keeping 180 entries (tests/browser/week_support.py).
With the agent marking its 10 updates: forget the two poisoned conversations, accept the rest (the agent's
repeats go with its last waiting suggestion). Without the marks: rows the word-overlap matcher sees as updates
say "Looks like an update of" and "Accept all" replaces those entries; the person forgets the old facts it
cannot see, the last forget still in its undo window when "Accept all" is pressed, and no accept fails. Both
read the stored state back. The counts and the screens the 40 suggestions take (1280 x 900 and 375 x 812) are
printed (run with -s to see them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.browser_support import Agent, memory, new_user, pause_clock, reload, settled, sign_in, switch_on
from tests.browser.page_support import no_horizontal_scroll, sized_page
from tests.browser.week_support import (
    FILLER,
    GOOD,
    POISONED,
    RESTATED,
    UPDATES,
    Clicks,
    Week,
    keep_180,
    screens,
    suggest_the_week,
)
from tests.support.stored import StoredState

PROPOSALS, ENTRIES, GROUPS = "[data-testid=proposal]", "[data-testid=entry]", "[data-testid=conversation]"
BULK_TIMEOUT_MS = 120_000


def _narrow_screens(browser: Browser, live: Any, user: str) -> float:
    with sized_page(browser, live, 375) as page:
        page.set_viewport_size({"width": 375, "height": 812})
        sign_in(page, user)
        expect(page.locator(PROPOSALS)).to_have_count(40)
        assert no_horizontal_scroll(page)
        return screens(page)


def _forget_conversation(clicks: Clicks, page: Page, session: str) -> None:
    group = page.locator(GROUPS).filter(has=page.locator(f"[data-session='{session}']"))
    clicks.decide(
        "forget a poisoned conversation",
        group.get_by_role("button", name="Forget everything from this conversation"),
        page.locator("#agent-forget-confirm"),
    )
    expect(group).to_have_count(0)
    settled(page)


def _forget_old_facts_not_guessed(clicks: Clicks, page: Page, week: Week) -> int:
    """Without the marks: each update whose row shows the right "Looks like an update of" is left to "Accept all"
    (which replaces that entry); the person forgets each old fact the matcher did not see, the last forget still
    in its undo window. Returns how many the matcher saw."""
    unseen = []
    for fact, new in UPDATES:
        row = page.locator(PROPOSALS).filter(has=page.get_by_test_id("text").get_by_text(new, exact=True))
        expect(row).to_have_count(1)
        guess = row.get_by_test_id("likely-update")
        if guess.count() and guess.get_attribute("data-replaces") == week.old[fact]:
            expect(guess).to_contain_text(f"Looks like an update of: {fact}")
            continue
        unseen.append(fact)
    for fact in unseen:
        clicks.decide(
            "forget the old fact", page.locator(f"{ENTRIES}[data-entry-id='{week.old[fact]}'] [data-action=forget]")
        )
        expect(page.locator("#undo-bar")).to_be_visible()
        settled(page)
    return len(UPDATES) - len(unseen)


@pytest.mark.parametrize("marked", [True, False], ids=["agent-marks-updates", "no-marks"])
def test_a_week_of_suggestions_in_a_few_decisions_ends_exactly_right(
    browser: Browser, clocked: Page, live: Any, agent: Agent, marked: bool
) -> None:
    page = clocked
    user = new_user("week")
    token = sign_in(page, user)
    switch_on(page)
    week = Week(user, token, keep_180(live, token))
    suggest_the_week(live, agent, week, marked=marked)
    reload(page)
    expect(page.locator(PROPOSALS)).to_have_count(40)
    expect(page.locator(GROUPS)).to_have_count(8)
    wide, narrow = screens(page), _narrow_screens(browser, live, user)
    if marked:  # the agent said what each update replaces: the row says so
        for fact, new in UPDATES:
            row = page.locator(PROPOSALS).filter(has=page.get_by_test_id("text").get_by_text(new, exact=True))
            expect(row.get_by_test_id("update-of")).to_have_text(f"Update of: {fact}")

    pause_clock(page)  # an undo window stays open until the page itself sends its forget
    clicks = Clicks(page)
    for session in week.tainted:
        _forget_conversation(clicks, page, session)
    seen = None if marked else _forget_old_facts_not_guessed(clicks, page, week)
    if not marked:
        expect(page.locator("#undo-bar")).to_be_visible()  # the last forget is still in its undo window
    clicks.decide("accept all", page.locator("#accept-all"))
    # 20 to 30 accepts, one request each, on a loaded machine: longer than one expect's default wait
    expect(page.locator("body")).not_to_have_attribute("data-busy", "true", timeout=BULK_TIMEOUT_MS)
    expect(page.locator("#status")).to_have_attribute("data-kind", "ok")
    if not marked:  # the guessed updates replaced their entries, and the summary counts them
        expect(page.locator("#status")).to_contain_text(f"{seen} older notes were replaced by their updates.")
    expect(page.locator("[data-testid=bulk-failure]")).to_have_count(0)
    expect(page.locator("#undo-bar")).to_be_hidden()
    # The agent's last waiting suggestion decided: the server dismissed its repeats with it (services/repeats.py),
    # so the "repeated N notes" line is gone with no click, and no waiting place is left in storage.
    expect(page.locator("[data-testid=repeats]")).to_have_count(0)
    expect(page.locator(PROPOSALS)).to_have_count(0)
    assert memory(live, token).get("repeats", []) == []

    print(
        f"\nissue 39 week ({'marked' if marked else 'no marks'}): {len(clicks.decisions)} decisions, "
        f"{clicks.clicks} clicks after sign-in; 40 suggestions take {wide:.2f} screens at 1280x900, "
        f"{narrow:.2f} at 375x812; the matcher saw {seen} of 10 updates; refused: {week.refused}"
    )
    stored = memory(live, token)
    texts = {e["text"] for e in stored["items"]}
    assert len(stored["items"]) == 200
    assert texts == set(FILLER) | set(RESTATED) | set(GOOD) | {new for _, new in UPDATES}
    assert not texts & ({fact for fact, _ in UPDATES} | set(POISONED))
    assert stored["proposals"] == [] and stored.get("repeats", []) == []
    state = StoredState(Path(live.credentials_file).parent / "stack.json").user(user)
    assert (state.active_counter, state.waiting_counter, len(state.entry_ids), state.proposal_ids) == (
        200,
        0,
        200,
        frozenset(),
    )
    assert wide <= 4, wide  # 40 waiting suggestions in at most 4 screens at 1280 x 900
    if marked:
        assert len(clicks.decisions) <= 3 and clicks.clicks <= 5, clicks.decisions
    else:
        # The updates the matcher guesses are replaced by "Accept all" (likely-update.js); the person forgets only
        # the old facts it does not see (2): with the two conversations and Accept all, 5 decisions (issue: <= 12).
        assert seen == 8, seen
        assert len(clicks.decisions) == 5 and clicks.clicks == 7, clicks.decisions
