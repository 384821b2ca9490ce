"""The Agents tab, the bulk decisions on suggestions and the per-conversation forget, driven in Chromium.

Each test checks what the stack stored afterwards (through the API), not only what the page said.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.browser_support import (
    POLL_TIMEOUT_MS,
    PROPOSAL_DEADLINE_S,
    Agent,
    add_entry,
    after_two_frames,
    eventually,
    memory,
    new_user,
    next_poll,
    settled,
    sign_in,
    switch_on,
)
from tests.browser.page_support import WIDTHS, axe_violations, no_horizontal_scroll, sized_page
from tests.support.signing import signed_request

PROPOSALS, ENTRIES, AGENTS = "[data-testid=proposal]", "[data-testid=entry]", "[data-testid=agent]"
CONVERSATIONS = "[data-testid=conversation]"  # a conversation's group of suggestions (review-groups.js)


def _agents(live: Any, token: str) -> dict[str, dict[str, Any]]:
    status, body, _ = live.request("GET", "/v1/agents", token=token)
    assert status == 200, body
    return {row["agent"]: row for row in body["agents"]}


def _accept(live: Any, token: str, proposal_id: str) -> dict[str, Any]:
    status, entry, _ = live.request("POST", f"/v1/memory/{proposal_id}/accept", token=token)
    assert status == 201, entry
    return entry


def _open_agents(page: Page) -> None:
    page.locator("#tab-agents").click()
    expect(page.locator("#panel-agents")).to_be_visible()
    expect(page.locator(f"{AGENTS}, #agents-empty:visible").first).to_be_visible()


def test_the_agents_tab_says_what_each_agent_did_and_its_switches_gate_it(page: Page, live: Any, agent: Agent) -> None:
    user = new_user("agents")
    token = sign_in(page, user)
    switch_on(page)
    page.locator("#tab-agents").click()
    expect(page.locator("#agents-empty")).to_be_visible()
    page.locator("#tab-memory").click()
    add_entry(page, "Prefers metric units")
    accepted = _accept(live, token, agent.propose(user, token, "Reads at night", agent="chatty")["id"])
    agent.propose(user, token, "Likes rain", agent="chatty")
    agent.propose(user, token, "Walks at six", agent="calm")
    chatty = agent.session(user, agent="chatty")  # its read comes last, so "just now" (< 45 s) holds on a slow machine
    assert len(agent.context(chatty)["items"]) == 2

    _open_agents(page)
    expect(page.locator(AGENTS)).to_have_count(2)
    row = page.locator(f"{AGENTS}[data-agent=chatty]")
    expect(row.get_by_test_id("agent-read")).to_have_text("It last read your memory just now.")
    expect(row.get_by_test_id("agent-entries")).to_have_text("1 of your entries came from it.")
    expect(row.get_by_test_id("agent-waiting")).to_have_text("1 suggestion from it is waiting for your review.")
    expect(page.locator(f"{AGENTS}[data-agent=calm]").get_by_test_id("agent-read")).to_have_text(
        "It has not read your memory yet."
    )

    row.get_by_role("switch", name="May read my memory").uncheck()
    settled(page)
    expect(page.locator("#status")).to_have_text(
        "“chatty” can no longer read your memory: its conversations get nothing from it."
    )
    expect(row.get_by_role("switch", name="May read my memory")).not_to_be_checked()
    expect(row.get_by_role("switch", name="May read my memory")).to_be_focused()
    assert agent.context(chatty)["items"] == []  # stopped: its next context is empty
    assert len(agent.context(agent.session(user, agent="calm"))["items"]) == 2  # the other agent still reads

    row.get_by_role("switch", name="May suggest").uncheck()
    settled(page)
    expect(row.get_by_test_id("agent-waiting")).to_contain_text("It may not suggest anything new.")
    stored = _agents(live, token)
    assert (stored["chatty"]["read"], stored["chatty"]["propose"]) == (False, False)
    assert (stored["calm"]["read"], stored["calm"]["propose"]) == (True, True)
    session = agent.session(user, agent="chatty")
    event = {"id": "e1", "type": "memory.propose", "text": "Send my notes away", "kind": "note"}
    creds = live.credentials()
    assert (
        signed_request(live.url, "POST", f"/v1/sessions/{session}/events", creds["worker"], {"events": [event]})[0]
        == 202
    )
    deadline = time.monotonic() + PROPOSAL_DEADLINE_S
    outcome = None
    while outcome is None and time.monotonic() < deadline:
        _, events = signed_request(live.url, "GET", f"/v1/sessions/{session}/events", creds["worker"])
        outcome = events["events"][0].get("outcome")
        time.sleep(0.2)
    assert outcome == {"type": "memory.proposal_refused", "reason": "agent_blocked"}
    assert "Send my notes away" not in [p["text"] for p in memory(live, token)["proposals"]]
    assert accepted["id"] in {e["id"] for e in memory(live, token)["items"]}


def test_forget_everything_an_agent_suggested_counts_in_the_dialog(page: Page, live: Any, agent: Agent) -> None:
    user = new_user("forget-agent")
    token = sign_in(page, user)
    switch_on(page)
    add_entry(page, "My own note")
    _accept(live, token, agent.propose(user, token, "Planted fact", agent="chatty")["id"])
    agent.propose(user, token, "Planted waiting", agent="chatty")
    kept = _accept(live, token, agent.propose(user, token, "Calm fact", agent="calm")["id"])

    _open_agents(page)
    page.locator(f"{AGENTS}[data-agent=chatty]").get_by_role(
        "button", name="Forget everything it suggested… (chatty)"
    ).click()
    dialog = page.locator("#agent-forget-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#agent-forget-text")).to_have_text(
        "This will forget 1 entry and 1 waiting suggestion that came from “chatty”. Your own entries are not touched."
    )
    expect(page.locator("#agent-forget-text")).to_have_attribute("data-count", "2")
    expect(page.locator("#agent-forget-cancel")).to_be_focused()
    page.locator("#agent-forget-confirm").click()
    settled(page)
    expect(page.locator("#status")).to_have_text("Forgot 2 items from “chatty”.")
    expect(page.locator(f"{AGENTS}[data-agent=chatty]").get_by_test_id("agent-entries")).to_have_text(
        "None of your entries came from it."
    )
    after = memory(live, token)
    assert sorted(e["text"] for e in after["items"]) == ["Calm fact", "My own note"] and after["proposals"] == []
    assert kept["id"] in {e["id"] for e in after["items"]}
    page.locator("#tab-memory").click()
    expect(page.locator(ENTRIES)).to_have_count(2)


def test_forget_everything_from_one_conversation_leaves_the_agents_others(page: Page, live: Any, agent: Agent) -> None:
    user = new_user("forget-conversation")
    token = sign_in(page, user)
    switch_on(page)
    poisoned = _accept(live, token, agent.propose(user, token, "From a poisoned page", agent="helper")["id"])
    clean = _accept(live, token, agent.propose(user, token, "From a clean chat", agent="helper")["id"])
    page.reload()
    expect(page.locator(ENTRIES)).to_have_count(2)
    item = page.locator(f"{ENTRIES}[data-entry-id='{poisoned['id']}']")
    item.get_by_role("button", name="Forget everything from this conversation").click()
    expect(page.locator("#agent-forget-dialog")).to_be_visible()
    expect(page.locator("#agent-forget-title")).to_have_text("Forget everything from this conversation?")
    expect(page.locator("#agent-forget-text")).to_have_text(
        "This will forget 1 entry and 0 waiting suggestions from this conversation with “helper”. "
        "Its other conversations and your own entries are not touched."
    )
    page.keyboard.press("Escape")  # cancel first: nothing changes, focus goes back to the button
    expect(page.locator("#agent-forget-dialog")).to_be_hidden()
    expect(item.get_by_role("button", name="Forget everything from this conversation")).to_be_focused()
    assert len(memory(live, token)["items"]) == 2
    item.get_by_role("button", name="Forget everything from this conversation").click()
    page.locator("#agent-forget-confirm").click()
    settled(page)
    expect(page.locator(ENTRIES)).to_have_count(1)
    assert [e["id"] for e in memory(live, token)["items"]] == [clean["id"]]


def test_a_suggestion_offers_forgetting_its_conversation_too(clocked: Page, live: Any, agent: Agent) -> None:
    page = clocked
    user = new_user("forget-from-suggestion")
    token = sign_in(page, user)
    switch_on(page)
    waiting = agent.propose(user, token, "Waiting from a bad page", agent="helper")
    next_poll(page)
    expect(page.locator(PROPOSALS)).to_have_count(1, timeout=POLL_TIMEOUT_MS)
    # On the suggestion's conversation group (issue 39), above its rows.
    page.locator(CONVERSATIONS).get_by_role("button", name="Forget everything from this conversation").click()
    expect(page.locator("#agent-forget-text")).to_contain_text("0 entries and 1 waiting suggestion")
    page.locator("#agent-forget-confirm").click()
    settled(page)
    expect(page.locator(PROPOSALS)).to_have_count(0)
    assert waiting["id"] not in {p["id"] for p in memory(live, token)["proposals"]}


def test_accept_all_accepts_each_under_the_rules_and_reports_the_ones_that_failed(
    page: Page, live: Any, agent: Agent
) -> None:
    user = new_user("accept-all")
    token = sign_in(page, user)
    switch_on(page)
    for n in range(199):  # one slot left: of three suggestions, two must fail at the cap
        assert live.request("POST", "/v1/memory", token=token, body={"text": f"note {n}"})[0] == 201
    for text in ("First idea", "Second idea", "Third idea"):
        agent.propose(user, token, text, agent="ideas")
    page.reload()
    expect(page.locator(PROPOSALS)).to_have_count(3)
    accepts: list[str] = []
    page.on("request", lambda r: accepts.append(r.url) if r.method == "POST" and r.url.endswith("/accept") else None)
    page.locator("#accept-all").click()
    settled(page)
    assert len(accepts) == 2  # it stops at the first `limit_reached`: the third is not even tried
    expect(page.locator("[data-testid=bulk-failure]")).to_have_count(2)
    expect(page.locator("[data-testid=bulk-failure]").first).to_contain_text("Memory is full: 200 of 200 entries.")
    expect(page.locator("[data-testid=bulk-failure]").last).to_contain_text("Not tried: memory is full.")
    expect(page.locator("#status")).to_have_attribute("data-kind", "error")
    expect(page.locator("#status")).to_contain_text("Accepted 1 of 3 suggestions, then memory was full")
    expect(page.locator("#status")).to_contain_text("2 are still waiting")
    after = memory(live, token)
    assert len(after["items"]) == 200 and len(after["proposals"]) == 2
    failed = {li.get_attribute("data-proposal-id") for li in page.locator("[data-testid=bulk-failure]").all()}
    assert failed == {p["id"] for p in after["proposals"]}


def test_reject_all_from_one_agent_leaves_the_others_suggestions(clocked: Page, live: Any, agent: Agent) -> None:
    page = clocked
    user = new_user("reject-all")
    token = sign_in(page, user)
    switch_on(page)
    for text in ("Noise one", "Noise two"):
        agent.propose(user, token, text, agent="chatty")
    calm = agent.propose(user, token, "Useful one", agent="calm")
    next_poll(page)
    expect(page.locator(PROPOSALS)).to_have_count(3, timeout=POLL_TIMEOUT_MS)
    page.get_by_role("button", name="Reject all from chatty (2)").click()
    settled(page)
    expect(page.locator(PROPOSALS)).to_have_count(1)
    expect(page.locator("#status")).to_have_text("Rejected 2 suggestions from “chatty”: they were deleted.")
    assert [p["id"] for p in memory(live, token)["proposals"]] == [calm["id"]]
    assert memory(live, token)["items"] == []


def test_a_journal_row_of_an_agent_read_links_to_that_agent(page: Page, live: Any, agent: Agent) -> None:
    user = new_user("journal-link")
    sign_in(page, user)
    switch_on(page)
    add_entry(page, "Prefers tea")
    agent.context(agent.session(user, agent="reader"))
    page.locator("#tab-journal").click()
    row = page.locator("[data-journal-action='keep.memory.context']").first
    expect(row).to_contain_text("The agent “reader” was given 1 entry")
    row.get_by_role("link", name="What “reader” may do").click()
    expect(page.locator("#panel-agents")).to_be_visible()
    expect(page.locator("#tab-agents")).to_have_attribute("aria-selected", "true")
    expect(page.locator(f"{AGENTS}[data-agent=reader] .agent-name")).to_be_focused()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_axe_finds_nothing_in_the_agents_view_the_bulk_actions_and_the_dialog(
    browser: Browser, live: Any, agent: Agent, width: int, scheme: str
) -> None:
    with sized_page(browser, live, width, scheme) as page:
        user = new_user("axe-agents")
        token = sign_in(page, user)
        switch_on(page)
        add_entry(page, "Prefers metric units")
        agent.context(agent.session(user, agent="a-rather-long-agent-name.with:every-allowed_character"))
        _accept(live, token, agent.propose(user, token, "Accepted from chatty", agent="chatty")["id"])
        agent.propose(user, token, "Waiting from chatty", agent="chatty")
        agent.propose(user, token, "Waiting from calm", agent="calm")
        page.reload()
        expect(page.locator(PROPOSALS)).to_have_count(2)
        expect(page.locator("#accept-all")).to_be_visible()
        assert axe_violations(page) == [], "suggestions with bulk actions and conversation buttons"
        assert no_horizontal_scroll(page)
        page.locator(CONVERSATIONS).first.get_by_role("button", name="Forget everything from this conversation").click()
        expect(page.locator("#agent-forget-dialog")).to_be_visible()
        assert axe_violations(page) == [], "the per-conversation dialog"
        page.locator("#agent-forget-cancel").click()
        _open_agents(page)
        expect(page.locator(AGENTS)).to_have_count(3)
        page.locator(f"{AGENTS}[data-agent=calm]").get_by_role("switch", name="May suggest").uncheck()
        settled(page)
        assert axe_violations(page) == [], "the agents view with a switch off"
        assert no_horizontal_scroll(page)
        page.locator(f"{AGENTS}[data-agent=chatty]").get_by_role(
            "button", name="Forget everything it suggested… (chatty)"
        ).click()
        expect(page.locator("#agent-forget-dialog")).to_be_visible()
        assert axe_violations(page) == [], "the forget-an-agent dialog"
        page.locator("#agent-forget-cancel").click()


def test_a_forget_answered_after_sign_out_says_nothing_to_the_next_person(page: Page, live: Any, agent: Agent) -> None:
    """A slow POST /v1/agents/{id}/forget: the user signs out before it answers; the next one sees nothing of it."""
    user, other = new_user("forget-late"), new_user("next-person")
    name = f"late-{int(time.time() * 1000) % 10**8}"
    token = sign_in(page, user)
    switch_on(page)
    agent.propose(user, token, "Planted waiting", agent=name)
    held: list[Any] = []
    page.route("**/v1/agents/*/forget", lambda route: held.append(route))
    _open_agents(page)
    page.locator(f"{AGENTS}[data-agent={name}]").get_by_role(
        "button", name=f"Forget everything it suggested… ({name})"
    ).click()
    page.locator("#agent-forget-confirm").click()
    page.wait_for_function("() => document.body.dataset.busy === 'true'")
    page.locator("#signout").click()
    sign_in(page, other)
    held[0].continue_()
    page.wait_for_function("() => document.body.dataset.busy !== 'true'")
    page.wait_for_timeout(200)
    holders = page.evaluate(
        """(name) => [...document.querySelectorAll('body *')]
        .filter((n) => [...n.childNodes].some((c) => c.nodeType === 3 && c.textContent.includes(name))).map((n) => n.id || n.tagName)""",
        name,
    )
    assert holders == [], holders
    assert memory(live, token)["proposals"] == []  # the forget itself went through


def test_accept_all_stops_at_sign_out_and_the_next_person_sees_none_of_its_suggestions(
    page: Page, live: Any, agent: Agent
) -> None:
    """Accept all is one request per suggestion: signed out midway, the rest must not go out under the next person's token."""
    user, other = new_user("bulk-late"), new_user("bulk-next")
    secret = f"Secret idea {int(time.time() * 1000) % 10**8}"
    token = sign_in(page, user)
    switch_on(page)
    agent.propose(user, token, "Plain idea", agent="ideas")
    agent.propose(user, token, secret, agent="ideas")
    page.reload()
    expect(page.locator(PROPOSALS)).to_have_count(2)
    held: list[Any] = []
    page.route("**/v1/memory/*/accept", lambda route: route.continue_() if held else held.append(route))
    page.locator("#accept-all").click()
    page.wait_for_function("() => document.body.dataset.busy === 'true'")
    page.locator("#signout").click()
    sign_in(page, other)
    held[0].continue_()  # the first accept answers now, while the next person is signed in
    page.wait_for_function("() => document.body.dataset.busy !== 'true'")
    page.wait_for_timeout(300)
    text = page.evaluate("() => document.body.textContent")
    leaked = [t for t in (secret, "Plain idea", "could not be") if t in text]
    assert leaked == [], page.locator("#proposals-bulk").text_content()
    assert len(memory(live, token)["proposals"]) == 1  # the first went through; the second was not sent for anyone


def test_a_list_answered_before_a_switch_but_arriving_after_it_does_not_undo_the_switch(page: Page, live: Any) -> None:
    """A GET /v1/agents is on its way (the tab opened again) when the person turns an agent off; its answer, read
    before the change, arrives last. The switch stays as the person set it and as it is stored, and news that
    came meanwhile (a new agent) is shown: the page asks for the list again after the switch."""
    user = new_user("stale-list")
    token = sign_in(page, user)
    switch_on(page)
    assert live.request("PUT", "/v1/agents/late-reader", token=token, body={"read": True})[0] == 200
    _open_agents(page)
    switch = page.locator(f"{AGENTS}[data-agent=late-reader]").get_by_role("switch", name="May read my memory")
    expect(switch).to_be_checked()

    stale: list[tuple[Any, Any]] = []  # (route, the answer it got from the stack before the switch)

    def hold_one_answer(route: Any) -> None:
        if route.request.method == "GET" and not stale:
            stale.append((route, route.fetch()))
        else:
            route.continue_()

    page.route("**/v1/agents", hold_one_answer)
    page.locator("#tab-memory").click()
    page.locator("#tab-agents").click()  # the tab asks for the list again: its answer is held
    eventually(page, lambda: len(stale) == 1)
    assert (
        live.request("PUT", "/v1/agents/newcomer", token=token, body={"read": True})[0] == 200
    )  # news the held list lacks
    switch.uncheck()
    settled(page)
    expect(switch).not_to_be_checked()
    expect(page.locator(f"{AGENTS}[data-agent=newcomer]")).to_have_count(1)  # the list was asked for again
    route, answer = stale[0]
    with page.expect_request_finished(lambda r: r.method == "GET" and r.url.endswith("/v1/agents")):
        route.fulfill(response=answer)  # the answer from before the switch arrives last
    after_two_frames(page)  # whatever the late answer would draw has been drawn

    expect(switch).not_to_be_checked()
    expect(page.locator(f"{AGENTS}[data-agent=newcomer]")).to_have_count(1)
    assert _agents(live, token)["late-reader"]["read"] is False


def test_the_agents_tab_lists_every_agent_beyond_the_first_page(page: Page, live: Any) -> None:
    """GET /v1/agents pages (issue 37 #10, 50 rows a page by default): the tab follows `next` to the last row."""
    user = new_user("agents-pages")
    token = sign_in(page, user)
    switch_on(page)
    names = [f"setbot{n:02d}x" for n in range(53)]
    for name in names:
        assert live.request("PUT", f"/v1/agents/{name}", token=token, body={"propose": False})[0] == 200
    status, first, _ = live.request("GET", "/v1/agents", token=token)
    assert status == 200 and len(first["agents"]) == 50 and first["next"], first
    _open_agents(page)
    expect(page.locator(AGENTS)).to_have_count(53)
    expect(page.locator(f"{AGENTS}[data-agent=setbot52x]")).to_be_visible()
