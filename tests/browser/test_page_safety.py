"""The Memory page is safe and usable without a mouse: data stays text, nothing remote loads, the CSP holds."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.browser_support import Agent, Watch, add_entry, memory, new_user, reload, settled, sign_in, switch_on

IMG = "<img src=x onerror=\"document.title='pwned'\">"
SCRIPT = "<script>document.title='pwned'</script>"
# Suggested beside IMG (the same words would be refused `duplicate`): alike enough to be shown beside it.
IMG_AGAIN = "<img src=y onerror=\"document.title='pwned'\">"


def _markup_never_became_elements(page: Page) -> None:
    assert re.fullmatch(r"(\(\d+\) )?Memory", page.title()), page.title()  # "(2) Memory": suggestions waiting
    for tag in ("img", "script", "iframe", "svg"):
        assert page.locator(f"#main {tag}").count() == 0, tag


def test_markup_in_entries_and_proposals_is_shown_as_text_and_runs_nothing(page: Page, live: Any, agent: Agent) -> None:
    user = new_user("xss")
    token = sign_in(page, user)
    switch_on(page)
    add_entry(page, IMG)
    add_entry(page, SCRIPT, kind="fact", pinned=True)
    agent.propose(user, token, IMG_AGAIN, tainted=True)
    reload(page)
    expect(page.locator("[data-testid=proposal]")).to_have_count(1)

    entries = page.locator("[data-testid=entry] [data-testid=text]")
    expect(entries).to_have_text([SCRIPT, IMG])
    expect(page.locator("[data-testid=proposal] [data-testid=text]")).to_have_text(IMG_AGAIN)
    expect(page.locator("[data-testid=proposal] [data-testid=likely-update]")).to_contain_text(IMG)  # as text, too
    _markup_never_became_elements(page)

    # The inline editor must also hold the markup as a value, not parse it.
    page.locator("[data-testid=entry]").nth(1).get_by_role("button", name="Edit").click()
    expect(page.get_by_test_id("edit-text")).to_have_value(IMG)
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("edit-text")).to_have_count(0)

    page.locator("[data-testid=proposal]").locator("[data-action=keep-both]").click()  # Accept would replace IMG
    page.locator("[data-testid=proposal]").locator("[data-action=accept]").click()
    expect(page.locator("[data-testid=entry]")).to_have_count(3)
    settled(page)
    _markup_never_became_elements(page)
    texts = sorted(i["text"] for i in memory(live, token)["items"])
    assert texts == sorted([IMG, IMG_AGAIN, SCRIPT])


def test_keyboard_alone_signs_in_switches_memory_on_and_adds(page: Page, live: Any) -> None:
    user = new_user("keys")
    keys = page.keyboard

    def focused_outline() -> str:
        """The focus ring of the focused control (the switch draws it on its track)."""
        return str(
            page.evaluate("""() => {
            const el = document.activeElement;
            const ring = el.classList.contains('switch-input') ? el.nextElementSibling : el;
            return getComputedStyle(ring).outlineStyle;
        }""")
        )

    keys.press("Tab")
    expect(page.locator(".skip-link")).to_be_focused()
    keys.press("Tab")
    expect(page.locator("#signin-user")).to_be_focused()
    assert focused_outline() == "solid"
    keys.type(user)
    keys.press("Tab")
    expect(page.locator("#signin-button")).to_be_focused()
    keys.press("Enter")
    expect(page.locator("#account-user")).to_have_text(user)

    switch = page.locator("#memory-enabled")
    expect(switch).to_be_focused()
    assert focused_outline() == "solid"
    keys.press("Space")
    expect(page.locator("#memory-state")).to_have_text("On")
    settled(page)

    keys.press("Tab")
    expect(page.locator("#add-text")).to_be_focused()
    keys.type("Reads the news in Portuguese")
    keys.press("Tab")
    expect(page.locator("#add-kind")).to_be_focused()
    keys.press("ArrowDown")
    expect(page.locator("#add-kind")).to_have_value("preference")
    keys.press("Tab")
    expect(page.locator("#add-expiry")).to_be_focused()
    keys.type("5")
    keys.press("Tab")
    expect(page.locator("#add-pinned")).to_be_focused()
    keys.press("Space")
    expect(page.locator("#add-pinned")).to_be_checked()
    keys.press("Tab")
    expect(page.locator("#add-submit")).to_be_focused()
    assert focused_outline() == "solid"
    keys.press("Enter")
    expect(page.locator("[data-testid=entry] [data-testid=text]")).to_have_text(["Reads the news in Portuguese"])
    settled(page)

    token = page.evaluate("() => sessionStorage.getItem('memory.token')")
    state = memory(live, token)
    assert state["enabled"] is True
    assert [(i["text"], i["kind"], i["pinned"], i["expires_at"] is not None) for i in state["items"]] == [
        ("Reads the news in Portuguese", "preference", True, True)
    ]


def test_the_page_asks_nothing_of_any_origin_but_the_stack(
    page: Page, live: Any, watched: tuple[Any, Watch], agent: Agent
) -> None:
    _, seen = watched
    user = new_user("origin")
    token = sign_in(page, user)
    switch_on(page)
    add_entry(page, "Only ever talks to its own origin")
    agent.propose(user, token, "A suggestion to review")
    reload(page)
    expect(page.locator("[data-testid=proposal]")).to_have_count(1)
    page.locator("#tab-journal").click()
    expect(page.locator("[data-testid=journal-row]").first).to_be_visible()
    page.locator("#signout").click()
    expect(page.locator("#signin-user")).to_be_visible()

    paths = {url[len(live.url) :].split("?")[0] for url in seen.requests if url.startswith(live.url)}
    # The recording really saw the page at work (so an empty "foreign" list means something).
    assert {"/", "/assets/app.js", "/assets/app.css", "/page-config", "/dev/token", "/v1/memory"} <= paths
    assert "/v1/memory/journal" in paths
    assert seen.foreign() == []


def test_the_page_is_served_with_a_csp_that_forbids_inline_and_remote_script(
    page: Page, live: Any, watched: tuple[Any, Watch]
) -> None:
    _, seen = watched
    response = page.reload()
    assert response is not None and response.status == 200
    policy = response.headers.get("content-security-policy", "")
    directives = {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}
    assert directives["default-src"] == ["'none'"]
    assert directives["script-src"] == ["'self'"]
    assert directives["connect-src"] == ["'self'"]
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy and "*" not in policy
    for asset in ("/assets/app.js", "/assets/app.css"):
        status, _, headers = live.request("GET", asset)
        assert status == 200 and headers.get("Content-Security-Policy") == policy

    # The browser really enforces it: an inline script slipped into the DOM does not run.
    with page.expect_console_message(lambda message: "Content Security Policy" in message.text):
        page.evaluate("""() => {
            const s = document.createElement('script');
            s.textContent = "document.title = 'inline ran'";
            document.body.append(s);
        }""")
    assert re.fullmatch(r"(\(\d+\) )?Memory", page.title()), page.title()  # "(2) Memory": suggestions waiting
    seen.csp_violations.clear()  # expected here; the fixture fails any other test that provokes one
