"""Smaller outsiders' finds on the Memory page: the conversation dialog, long and look-alike agent names, a failed
first load, forced colors, accessible names, search redraws and combining marks."""

from __future__ import annotations

import time
from typing import Any

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, Route, expect

from tests.browser.browser_support import (
    PROPOSAL_DEADLINE_S,
    Agent,
    eventually,
    memory,
    new_user,
    reload,
    settled,
    sign_in,
)
from tests.browser.page_support import hostile_item, no_horizontal_scroll, serve_memory, sized_page
from tests.support.signing import signed_request

PROPOSALS, ENTRIES = "[data-testid=proposal]", "[data-testid=entry]"
CONVERSATIONS = "[data-testid=conversation]"  # a conversation's group of suggestions (review-groups.js)


def _propose_again(live: Any, token: str, session: str, text: str, waiting: int) -> None:
    """One more suggestion in the same conversation (session); returns once `waiting` are in the inbox."""
    event = {"id": f"e-{time.monotonic_ns()}", "type": "memory.propose", "text": text, "kind": "note"}
    status, answer = signed_request(
        live.url, "POST", f"/v1/sessions/{session}/events", live.credentials()["worker"], {"events": [event]}
    )
    assert status == 202, answer
    deadline = time.monotonic() + PROPOSAL_DEADLINE_S
    while len(memory(live, token)["proposals"]) < waiting:
        assert time.monotonic() < deadline, "the second suggestion never arrived"
        time.sleep(0.2)


def _open_conversation_dialog(page: Page) -> None:
    page.locator(CONVERSATIONS).first.get_by_role("button", name="Forget everything from this conversation").click()
    expect(page.locator("#agent-forget-dialog")).to_be_visible()


def test_the_conversation_dialog_counts_again_on_confirm(page: Page, live: Any, agent: Agent) -> None:
    user = new_user("recount")
    token = sign_in(page, user)
    page.locator("#memory-enabled").check()
    settled(page)
    first = agent.propose(user, token, "From a bad page", agent="helper")
    reload(page)
    _open_conversation_dialog(page)
    expect(page.locator("#agent-forget-text")).to_contain_text("0 entries and 1 waiting suggestion from")
    _propose_again(live, token, first["source"]["session_id"], "Also from the bad page", 2)
    page.locator("#agent-forget-confirm").click()
    settled(page)
    expect(page.locator("#agent-forget-dialog")).to_be_visible()  # what it said is no longer so: it asks again
    expect(page.locator("#agent-forget-text")).to_contain_text("0 entries and 2 waiting suggestions from")
    expect(page.locator("#agent-forget-text")).to_have_attribute("data-count", "2")
    assert len(memory(live, token)["proposals"]) == 2  # nothing forgotten on stale numbers
    page.locator("#agent-forget-confirm").click()
    settled(page)
    expect(page.locator("#agent-forget-dialog")).to_be_hidden()
    expect(page.locator("#status")).to_have_text("Forgot 2 items from that conversation with “helper”.")
    assert memory(live, token)["proposals"] == []


def test_a_double_enter_on_confirm_does_not_open_the_dialog_again(page: Page, live: Any, agent: Agent) -> None:
    user = new_user("double-enter")
    token = sign_in(page, user)
    page.locator("#memory-enabled").check()
    settled(page)
    agent.propose(user, token, "From a bad page", agent="helper")
    reload(page)
    held: list[Route] = []
    page.route("**/v1/agents/*/forget", lambda route: held.append(route))
    _open_conversation_dialog(page)
    page.locator("#agent-forget-confirm").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    eventually(page, lambda: len(held) == 1)  # the forget is on its way (held), the second Enter already pressed
    expect(page.locator("#agent-forget-dialog")).to_be_hidden()
    held[0].continue_()
    settled(page)
    expect(page.locator("#agent-forget-dialog")).to_be_hidden()
    assert len(held) == 1 and memory(live, token)["proposals"] == []


def test_a_128_character_agent_name_does_not_scroll_the_narrow_page_sideways(browser: Browser, live: Any) -> None:
    name = "a" * 128
    with sized_page(browser, live, 375) as page:
        serve_memory(
            page, [hostile_item("e-1", "Kept from it", agent=name)], [hostile_item("p-1", "Waits from it", agent=name)]
        )
        sign_in(page, new_user("long-agent"))
        expect(page.locator(PROPOSALS)).to_have_count(1)
        assert no_horizontal_scroll(page)


def test_a_failed_first_load_says_so_instead_of_off_and_empty(page: Page, live: Any) -> None:
    page.route(
        "**/v1/memory",
        lambda route: route.fulfill(status=503, json={"code": "unavailable", "message": "Busy."})
        if route.request.method == "GET"
        else route.continue_(),
    )
    page.locator("#signin-user").fill(new_user("failed-load"))
    page.locator("#signin-button").click()
    expect(page.locator("#memory-load-failed")).to_be_visible()
    expect(page.locator("#memory-state")).to_have_text("Unknown")
    expect(page.locator("#counts")).to_be_hidden()
    expect(page.locator("#memory-loading")).to_be_hidden()
    expect(page.locator("#memory-enabled")).to_be_disabled()
    page.unroute("**/v1/memory")
    page.locator("#memory-retry").click()
    expect(page.locator("#memory-load-failed")).to_be_hidden()
    expect(page.locator("#memory-state")).to_have_text("Off")
    expect(page.locator("#count-entries")).to_have_text("0 / 200 entries")


def test_forced_colors_keep_the_selected_tab_marked(page: Page, live: Any) -> None:
    page.emulate_media(forced_colors="active")
    sign_in(page, new_user("forced-colors"))
    underline = "(id) => getComputedStyle(document.getElementById(id)).borderBottomColor"
    background = "(id) => getComputedStyle(document.getElementById(id)).backgroundColor"
    selected, other = page.evaluate(underline, "tab-memory"), page.evaluate(underline, "tab-journal")
    assert selected != other, (selected, other)
    page.locator("#tab-journal").click()
    assert page.evaluate(underline, "tab-journal") == selected  # the mark follows the selection
    assert page.evaluate(underline, "tab-journal") != page.evaluate(background, "tab-journal")


def test_every_accessible_name_contains_its_visible_words(page: Page, live: Any) -> None:
    serve_memory(
        page,
        [
            hostile_item("e-1", "Prefers coffee in the morning", agent=None),
            hostile_item("e-2", "Prefers coffee at noon", agent=None),
        ],
        [hostile_item("p-1", "Now prefers coffee in the morning")],
    )
    rows = {
        "agents": [
            {
                "agent": "helper",
                "read": True,
                "propose": True,
                "entries": 0,
                "waiting": 1,
                "last_read_at": None,
                "last_proposal_at": None,
            }
        ]
    }
    page.route("**/v1/agents", lambda route: route.fulfill(json=rows))
    sign_in(page, new_user("names"))
    expect(page.locator(f"{PROPOSALS} [data-action=replace]")).to_be_visible()
    expect(page.locator(f"{PROPOSALS} [data-action=keep-both]")).to_be_visible()  # "Looks like an update of" e-1
    rule = {
        "runOnly": {"type": "rule", "values": ["label-content-name-mismatch"]},
        "rules": {"label-content-name-mismatch": {"enabled": True}},
        "resultTypes": ["violations"],
    }

    def mismatches() -> list[str]:
        return [
            str(node["target"]) for v in Axe().run(page, options=rule).response["violations"] for node in v["nodes"]
        ]

    assert mismatches() == []
    page.locator("#tab-agents").click()
    expect(page.locator("[data-testid=agent] [data-action=forget-agent]")).to_be_visible()
    assert mismatches() == []


def test_a_search_keystroke_redraws_no_suggestion(page: Page, live: Any) -> None:
    entries = [
        hostile_item(f"e-{n}", text, agent=None)
        for n, text in enumerate(["Likes coffee", "Walks at six", "Reads at night"])
    ]
    serve_memory(page, entries, [hostile_item("p-1", "Plays chess " * 150), hostile_item("p-2", "Swims on Sundays")])
    sign_in(page, new_user("search"))
    expect(page.locator(PROPOSALS)).to_have_count(2)
    page.evaluate("""() => {
        window.__redraws = {proposals: 0, entries: 0};
        for (const name of ["proposals", "entries"]) {
            new MutationObserver((records) => { window.__redraws[name] += records.length; })
                .observe(document.getElementById(name), {childList: true});
        }
    }""")
    page.locator("#filter-text").press_sequentially("cof")
    expect(page.locator("#filter-summary")).to_have_text("Showing 1 of 3 entries.")
    redraws = page.evaluate("() => window.__redraws")
    assert redraws["entries"] >= 1, redraws  # the observer sees redraws: the search did redraw its own list
    assert redraws["proposals"] == 0, redraws


def test_stacked_combining_marks_are_drawn_inside_their_item(page: Page, live: Any) -> None:
    # Ten different marks above and ten below, ten times over: fonts stack different marks (DejaVu does), not the same one.
    above_marks, below_marks = (
        "\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u030a\u030b\u030c",
        "\u0316\u0317\u0318\u0319\u031c\u031d\u031e\u031f\u0320\u0323",
    )
    serve_memory(page, [], [hostile_item("p-1", "Z" + above_marks * 10 + below_marks * 10)])
    sign_in(page, new_user("zalgo"))
    item = page.locator(PROPOSALS)
    item.evaluate("(li) => li.scrollIntoView({block: 'center'})")  # room above and below it on the screen
    box = item.bounding_box()
    assert box is not None
    above = {"x": box["x"], "y": box["y"] - 80, "width": box["width"], "height": 78}
    below = {"x": box["x"], "y": box["y"] + box["height"] + 2, "width": box["width"], "height": 78}
    marked = [page.screenshot(clip=above), page.screenshot(clip=below)]
    page.evaluate("() => { document.querySelector('[data-testid=proposal] [data-testid=text]').textContent = 'Z'; }")
    assert item.bounding_box() == box  # the same layout, only the marks gone
    assert [page.screenshot(clip=above), page.screenshot(clip=below)] == marked, "marks drawn outside the item"


def test_agent_names_that_read_as_page_words_are_marked_as_agents(page: Page, live: Any) -> None:
    names = ["You", "Memory", "Support-staff"]
    serve_memory(
        page,
        [],
        [hostile_item(f"p-{n}", f"Suggestion {n}", agent=name, session=f"s-{n}") for n, name in enumerate(names)],
    )
    sign_in(page, new_user("page-words"))
    for n, name in enumerate(names):
        item = page.locator(f"{PROPOSALS}[data-proposal-id=p-{n}]")
        expect(item.get_by_test_id("origin")).to_have_text(f"Suggested by agent “{name}”")
        expect(item.get_by_test_id("source")).to_contain_text(f"From agent “{name}”, in a conversation")
        expect(page.get_by_role("button", name=f"Reject all from agent “{name}” (1)")).to_be_visible()
