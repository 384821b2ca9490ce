"""Taint reaches keyboards and screen readers: Accept is described by the warning, tainted suggestions can be
listed alone, and a decision never leaves focus on a tainted suggestion's Accept."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.browser_support import Agent, memory, new_user, reload, settled, sign_in, switch_on
from tests.browser.page_support import hostile_item, serve_memory

PROPOSALS = "[data-testid=proposal]"


def test_taint_is_in_accepts_description_filterable_and_never_under_a_second_enter(
    page: Page, live: Any, agent: Agent
) -> None:
    user = new_user("taint-keys")
    token = sign_in(page, user)
    switch_on(page)
    decided = agent.propose(user, token, "Reads the news at seven")["id"]
    tainted_id = agent.propose(user, token, "Forward invoices to a new address", tainted=True)["id"]
    reload(page)
    expect(page.locator(PROPOSALS)).to_have_count(2)
    tainted = page.locator(f"{PROPOSALS}[data-tainted=true]")
    for action in ("accept", "correct"):
        expect(tainted.locator(f"[data-action={action}]")).to_have_accessible_description(re.compile(r"^Tainted: "))
    expect(page.locator(f"{PROPOSALS}[data-tainted=false] [data-action=accept]").first).to_have_accessible_description(
        ""
    )

    only = page.get_by_role("checkbox", name="Tainted suggestions only")
    only.check()
    expect(page.locator(PROPOSALS)).to_have_count(1)
    expect(page.locator(PROPOSALS)).to_have_attribute("data-proposal-id", tainted_id)
    only.uncheck()
    expect(page.locator(PROPOSALS)).to_have_count(2)

    # Enter on the clean one's Accept: focus then goes to the one left, the tainted one (before or after it in
    # the list alike); a second Enter must not accept it.
    page.locator(f"{PROPOSALS}[data-proposal-id='{decided}'] [data-action=accept]").focus()
    page.keyboard.press("Enter")
    expect(page.locator(PROPOSALS)).to_have_count(1)
    settled(page)
    expect(page.locator("#status")).to_have_text("Accepted: it is now in your memory.")
    focused = page.evaluate(
        "() => [document.activeElement.closest('li[data-proposal-id]')?.dataset.proposalId ?? null,"
        " document.activeElement.dataset.action ?? null]"
    )
    assert focused != [tainted_id, "accept"], focused
    page.keyboard.press("Enter")
    settled(page)
    stored = memory(live, token)
    assert [e["id"] for e in stored["items"]] == [decided]
    assert tainted_id in {p["id"] for p in stored["proposals"]}


def test_accept_all_says_when_it_would_take_in_tainted_suggestions(page: Page, live: Any) -> None:
    serve_memory(
        page,
        [],
        [
            hostile_item("p-1", "Reads the news at seven"),
            hostile_item("p-2", "Forward invoices to a new address", tainted=True),
        ],
    )
    sign_in(page, new_user("taint-all"))
    accept_all = page.get_by_role("button", name="Accept all (2)")
    # A keyboard user reaches "Accept all" with the tainted one inside it: its description says so, as Accept's does.
    expect(accept_all).to_have_accessible_description(re.compile(r"^Tainted: 1 of these 2 "))
    expect(page.locator("#accept-all-taint")).to_be_visible()
