"""The journal says who, in words: the agent of a refused suggestion, support staff by role (the ARN tucked away), and it stays current."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.browser_support import (
    POLL_TIMEOUT_MS,
    PROPOSAL_DEADLINE_S,
    Agent,
    eventually,
    github_classic_token,
    new_user,
    next_poll,
    sign_in,
    switch_on,
)
from tests.browser.page_support import WIDTHS, axe_violations, no_horizontal_scroll, sized_page
from tests.support.signing import signed_request

ROWS = "[data-testid=journal-row]"


def refuse_a_suggestion(live: Any, agent: Agent, user: str, token: str, agent_name: str) -> None:
    """An agent suggests a credential: the stream refuses it, and the user's journal says so."""
    session_id = agent.session(user, agent=agent_name)
    event = {"id": "e1", "type": "memory.propose", "text": f"token {github_classic_token()}", "kind": "note"}
    status, answer = signed_request(
        live.url, "POST", f"/v1/sessions/{session_id}/events", live.credentials()["worker"], {"events": [event]}
    )
    assert status == 202, answer
    deadline = time.monotonic() + PROPOSAL_DEADLINE_S
    while time.monotonic() < deadline:
        _, journal, _ = live.request("GET", "/v1/memory/journal", token=token)
        if any(row["action"] == "keep.memory.proposal_refused" for row in journal["items"]):
            return
        time.sleep(0.2)
    raise AssertionError("the refusal never reached the journal")


def operator_reads(live: Any, user: str) -> str:
    creds = live.credentials()["operator"]
    status, answer = signed_request(live.url, "GET", f"/v1/operator/memory?user_id={user}", creds)
    assert status == 200, answer
    return str(creds["arn"])


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_refusals_name_their_agent_and_support_staff_are_named_by_role(
    browser: Browser, live: Any, agent: Agent, width: int, scheme: str
) -> None:
    with sized_page(browser, live, width, scheme) as page:
        user = new_user("journal-words")
        token = sign_in(page, user)
        switch_on(page)
        refuse_a_suggestion(live, agent, user, token, "memory-agent")
        arn = operator_reads(live, user)
        role = arn.rsplit("/", 1)[-1]
        page.locator("#tab-journal").click()
        refused = page.locator(f"{ROWS}[data-journal-action='keep.memory.proposal_refused']")
        expect(refused.get_by_test_id("journal-text")).to_contain_text("A suggestion from “memory-agent”")
        expect(refused.get_by_test_id("journal-text")).to_contain_text("it looked like a GitHub token")
        support = page.locator(f"{ROWS}[data-journal-action='keep.memory.operator_access']")
        sentence = support.get_by_test_id("journal-text")
        expect(sentence).to_have_text(f"Support staff (role {role}) looked at your memory.")
        expect(sentence).not_to_contain_text("arn:")
        details = support.locator("details.ids-details")
        expect(details.locator("dd").first).to_be_hidden()
        details.locator("summary").click()
        expect(details.locator("dd").first).to_have_text(arn)
        assert no_horizontal_scroll(page)
        # The sentence wraps between words (or after a hyphen) only: no line of it ends inside a word.
        assert page.evaluate(
            """(node) => {
                const range = document.createRange();
                const text = node.firstChild;
                let lastTop = null, broken = false;
                for (let i = 0; i < text.length; i++) {
                    range.setStart(text, i); range.setEnd(text, i + 1);
                    const top = range.getBoundingClientRect().top;
                    if (lastTop !== null && top > lastTop + 1 && !/[\\s-]/.test(text.data[i - 1])) broken = true;
                    lastTop = top;
                }
                return !broken;
            }""",
            sentence.element_handle(),
        ), "the support-staff sentence breaks inside a word"
        found = axe_violations(page)
        assert found == [], found


def test_the_journal_refreshes_while_it_is_shown(clocked: Page, live: Any, agent: Agent) -> None:
    page = clocked
    user = new_user("journal-live")
    sign_in(page, user)
    switch_on(page)
    session_id = agent.session(user, agent="reader-agent")
    page.locator("#tab-journal").click()
    expect(page.locator(ROWS).first).to_be_visible()
    before = page.locator(ROWS).count()
    agent.context(session_id)  # the agent is given the (empty) memory: a new journal row
    # No click, no reload: the page's own poll (fast for a while after memory was turned on) brings it.
    next_poll(page)
    expect(page.locator(ROWS)).to_have_count(before + 1, timeout=POLL_TIMEOUT_MS)
    expect(page.locator(ROWS).first).to_contain_text("The agent “reader-agent” asked for your memory")


def test_a_poll_while_the_journal_tab_is_loading_draws_no_row_twice(clocked: Page, live: Any, agent: Agent) -> None:
    """The tab's first page is still on its way when a poll ends: the refresh waits for it, rather than drawing
    the same rows once from each answer."""
    page = clocked
    user = new_user("journal-twice")
    token = sign_in(page, user)
    switch_on(page)
    agent.context(agent.session(user, agent="reader-agent"))  # one more row
    held: list[Any] = []
    asked: list[str] = []  # every journal request the page sends

    def hold_the_first(route: Any) -> None:
        asked.append(route.request.url)
        if not held:
            held.append(route)
        else:
            route.continue_()

    page.route("**/v1/memory/journal*", hold_the_first)
    page.locator("#tab-journal").click()
    eventually(page, lambda: len(held) == 1)
    with page.expect_response(lambda r: r.request.method == "GET" and r.url.endswith("/v1/memory")):
        next_poll(page)  # the page's own poll: it ends with "polled", and the journal is shown
    page.wait_for_timeout(300)  # a refresh that did not wait would have sent its request by now
    assert len(asked) == 1, asked  # the refresh waited for the load
    held[0].continue_()

    _, journal, _ = live.request("GET", "/v1/memory/journal", token=token)
    expect(page.locator(ROWS)).to_have_count(len(journal["items"]))
    keys = page.locator(ROWS).evaluate_all("(rows) => rows.map((row) => row.dataset.key)")
    assert len(keys) == len(set(keys)) == len(journal["items"]), keys


def test_one_journal_refresh_at_a_time(clocked: Page, live: Any) -> None:
    """A refresh is still on its way when the next poll ends: no second one is sent, so an older answer can never
    land after a newer one and put the list back."""
    page = clocked
    sign_in(page, new_user("journal-one-refresh"))
    switch_on(page)
    page.locator("#tab-journal").click()
    expect(page.locator(ROWS).first).to_be_visible()
    held: list[Any] = []
    page.route("**/v1/memory/journal*", lambda route: held.append(route))
    for _ in range(2):
        with page.expect_response(lambda r: r.request.method == "GET" and r.url.endswith("/v1/memory")):
            next_poll(page)  # a poll ends with "polled": the journal is shown, so it refreshes
        eventually(page, lambda: len(held) >= 1)
    page.wait_for_timeout(300)  # a second refresh would have sent its request by now
    assert len(held) == 1, [r.request.url for r in held]
    held[0].continue_()


def test_a_field_error_replaces_an_older_success_message(page: Page, live: Any) -> None:
    sign_in(page, new_user("banner"))
    switch_on(page)
    page.locator("#add-text").fill("A first note")
    page.locator("#add-submit").click()
    expect(page.locator("#status")).to_have_text("Added to memory.")
    page.locator("#add-expiry").fill("0")
    page.locator("#add-text").fill("A second note")
    page.locator("#add-submit").click()
    expect(page.locator("#add-expiry-error")).to_be_visible()
    expect(page.locator("#status")).to_have_text("")
    page.locator("#add-expiry").fill("")
    page.locator("#add-text").fill("   ")
    page.locator("#add-submit").click()
    expect(page.locator("#add-text-error")).to_have_text("Write something to remember first.")
    expect(page.locator("#status")).to_have_text("")


def test_an_empty_sign_in_is_an_error_at_the_field_too(page: Page) -> None:
    page.locator("#signin-button").click()
    error = page.locator("#signin-user-error")
    expect(error).to_have_text("Type a user name to sign in as.")
    expect(page.locator("#status")).to_have_text("Type a user name to sign in as.")
    field = page.locator("#signin-user")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_be_focused()
    assert "signin-user-error" in (field.get_attribute("aria-describedby") or "").split()
    expect(field).to_have_accessible_description(re.compile("Type a user name to sign in as."))
    field.fill("someone")
    expect(error).to_be_hidden()
    expect(field).not_to_have_attribute("aria-invalid", "true")
    found = axe_violations(page)
    assert found == [], found


def test_a_forget_reads_as_a_receipt_with_the_time_it_is_final_everywhere(page: Page, live: Any) -> None:
    """Issue 26: "One entry forgotten at 14:02 · unrecoverable everywhere by 14:07", and forget-all says it too."""
    user = new_user("journal-receipt")
    token = sign_in(page, user)
    switch_on(page)
    status, entry, _ = live.request("POST", "/v1/memory", token=token, body={"text": "A note to forget"})
    assert status == 201, entry
    assert live.request("DELETE", f"/v1/memory/{entry['id']}", token=token)[0] == 204
    assert live.request("DELETE", "/v1/memory", token=token)[0] == 200
    page.locator("#tab-journal").click()
    one = page.locator(f"{ROWS}[data-journal-action='keep.memory.forget']").get_by_test_id("journal-text")
    expect(one).to_have_text(
        re.compile(
            r"^One entry forgotten at \d{2}:\d{2} · unrecoverable everywhere by \d{2}:\d{2}: "
            r"no copy of it, backups included, can be read after that\.$"
        )
    )
    times = re.findall(r"\d{2}:\d{2}", one.inner_text())
    assert times[0] != times[1]  # five minutes apart: the key cache's age
    every = page.locator(f"{ROWS}[data-journal-action='keep.memory.forget_all']").get_by_test_id("journal-text")
    expect(every).to_contain_text(re.compile(r"· unrecoverable everywhere by \d{2}:\d{2}\.$"))
    expect(one).not_to_contain_text("A note to forget")
