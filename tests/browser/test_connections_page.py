"""Connections on the Agents tab, in Chromium: connect "claude-code", the token shown once with its snippets, the
connection listed under its agent (never used, then used), Revoke behind a dialog; another person sees none of it.

Each test checks what the stack holds afterwards (through the API), not only what the page said.
"""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.browser.browser_support import new_user, settled, sign_in, switch_on
from tests.browser.page_support import WIDTHS, axe_violations, no_horizontal_scroll, sized_page

AGENTS = "[data-testid=agent]"


def _connections(live: Any, token: str) -> list[dict[str, Any]]:
    status, body, _ = live.request("GET", "/v1/connections", token=token)
    assert status == 200, body
    return list(body["connections"])


def _connect(page: Page, agent: str, *, trusted: bool = False) -> str:
    page.locator("#tab-agents").click()
    page.locator("#connect-agent").fill(agent)
    page.locator("#connect-trusted").set_checked(trusted)
    page.locator("#connect-submit").click()
    settled(page)
    expect(page.locator("#connect-token")).to_be_visible()
    return str(page.locator("#connect-token").input_value())


def test_connecting_shows_the_token_once_with_snippets_and_lists_it_under_its_agent(page: Page, live: Any) -> None:
    user = new_user("conn")
    token = sign_in(page, user)
    switch_on(page)
    shown = _connect(page, "claude-code")
    assert shown.startswith("pmc_")
    expect(page.locator("#status")).to_have_text("Connected “claude-code”. Copy its token now: it is shown only once.")
    for key in ("claude-code", "claude-desktop", "cursor", "mcp", "curl"):
        assert shown in page.locator(f"textarea[data-snippet={key}]").input_value(), key
    desktop = json.loads(page.locator("textarea[data-snippet=claude-desktop]").input_value())
    assert desktop["mcpServers"]["personal-memory"]["env"]["PERSONAL_MEMORY_TOKEN"] == shown
    assert "credentials" not in page.locator("#connect-shown").inner_text().lower()
    (stored,) = _connections(live, token)
    assert stored["agent"] == "claude-code" and "token" not in stored

    row = page.locator(f"{AGENTS}[data-agent=claude-code]")  # a row for an agent connected but never used
    expect(row.get_by_test_id("connection")).to_have_count(1)
    expect(row.get_by_test_id("connection-used")).to_have_text("Never used yet: nothing has connected with it.")
    expect(row.get_by_test_id("connection-trust")).to_contain_text("Not trusted")

    page.locator("#connect-done").click()
    expect(page.locator("#connect-shown")).to_be_hidden()
    assert shown not in page.content()  # shown once: gone from the document

    # The agent uses it: the row says so.
    assert live.request("GET", "/v1/agent/memory", headers={"Authorization": f"Bearer {shown}"})[0] == 200
    page.locator("#tab-memory").click()
    page.locator("#tab-agents").click()
    expect(row.get_by_test_id("connection-used")).to_have_text("Last used just now.")


def test_revoke_asks_first_saying_what_stops_and_then_the_token_is_refused(page: Page, live: Any) -> None:
    user = new_user("revoke")
    token = sign_in(page, user)
    switch_on(page)
    shown = _connect(page, "cursor")
    page.locator("#connect-done").click()
    button = page.locator(f"{AGENTS}[data-agent=cursor] button[data-action=revoke-connection]")
    button.click()
    expect(page.locator("#revoke-dialog")).to_be_visible()
    expect(page.locator("#revoke-text")).to_contain_text("stops working at its next call")
    page.locator("#revoke-cancel").click()
    expect(button).to_be_focused()
    assert len(_connections(live, token)) == 1
    button.click()
    page.locator("#revoke-confirm").click()
    settled(page)
    expect(page.locator("#status")).to_have_text("Revoked: that token for “cursor” no longer works.")
    assert _connections(live, token) == []
    assert live.request("GET", "/v1/agent/memory", headers={"Authorization": f"Bearer {shown}"})[0] == 401
    expect(page.locator(f"{AGENTS}[data-agent=cursor]")).to_have_count(0)


def test_the_next_person_in_the_browser_sees_no_name_and_no_token_of_the_previous_ones(page: Page, live: Any) -> None:
    frank, grace = new_user("frank"), new_user("grace")
    sign_in(page, frank)
    switch_on(page)
    shown = _connect(page, "franks-secret-agent")  # still on screen at sign-out
    page.locator("#signout").click()
    expect(page.locator("#signin-user")).to_be_visible()
    assert shown not in page.content() and "franks-secret-agent" not in page.content()
    grace_token = sign_in(page, grace)
    page.locator("#tab-agents").click()
    expect(page.locator("#agents-empty")).to_be_visible()
    assert shown not in page.content() and "franks-secret-agent" not in page.content()
    assert _connections(live, grace_token) == []


def test_the_connect_card_is_accessible_and_fits_every_width(browser: Browser, live: Any) -> None:
    for width in WIDTHS.values():
        with sized_page(browser, live, width) as page:
            sign_in(page, new_user("a11y"))
            _connect(page, "claude-code")
            for details in page.locator("#connect-shown details").all():
                details.locator("summary").click()
            assert no_horizontal_scroll(page), width
            assert axe_violations(page) == [], width
