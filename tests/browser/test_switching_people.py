"""Signing out clears every rendered trace of the previous person before anything else is drawn (issue 21 item 15)."""

from __future__ import annotations

import uuid
from typing import Any

from playwright.sync_api import Page, Route, expect

from tests.browser.browser_support import add_entry, eventually, memory, new_user, sign_in, switch_on

# Sampled on every DOM mutation (before the browser can paint it) and on every animation frame (which
# also sees property changes such as a checkbox's `checked`, which mutations do not report).
RECORDER = """(secrets) => {
  window.__frames = [];
  const snap = (why) => {
    const entries = [...document.querySelectorAll('[data-testid=entry] [data-testid=text]')].map((n) => n.textContent);
    const all = document.body.textContent + ' ' + document.title + ' ' +
      [...document.querySelectorAll('input, textarea')].map((n) => n.value).join(' ');
    window.__frames.push({
      why,
      user: document.getElementById('account-user').textContent,
      signedIn: !document.getElementById('account').hidden,
      appShown: !document.getElementById('app').hidden,
      entries,
      counts: document.getElementById('count-entries').textContent,
      switchOn: document.getElementById('memory-enabled').checked,
      traces: secrets.filter((s) => all.includes(s)),
    });
  };
  new MutationObserver(() => snap('mutation')).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
  const frame = () => { snap('frame'); window.__rafs = (window.__rafs || 0) + 1; requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
  // The page's own handler runs after this capturing one: every sample from here on is after "Sign out".
  document.getElementById('signout').addEventListener('click', () => { window.__cut = window.__frames.length; }, {capture: true});
}"""


def test_the_next_person_never_sees_a_frame_of_the_previous_persons_memory(page: Page, live: Any) -> None:
    frank, grace = new_user("frank"), new_user("grace")
    notes = [f"frank-note-{n}-{uuid.uuid4().hex[:8]}" for n in (1, 2, 3)]
    token = sign_in(page, frank)
    switch_on(page)
    for note in notes:
        add_entry(page, note)
    page.get_by_role("button", name=f"Forget “{notes[2]}”").click()  # still in its undo window at sign-out
    expect(page.locator("#undo-text")).to_contain_text(notes[2])
    page.locator("#add-text").fill("frank was typing this")  # a half-typed note is frank's too
    expect(page.locator("#count-entries")).to_have_text("2 / 200 entries")

    # Grace's memory takes a while to arrive, as it may on a slow network: every frame until then is sampled.
    # It is held until the page has drawn 10 frames as grace (not for a fixed 0.8 s, which a loaded machine
    # may render in fewer frames), then let through.
    slow = {"on": False}
    held: list[Route] = []

    def delay_memory(route: Route) -> None:
        if slow["on"] and route.request.method == "GET":
            held.append(route)
        else:
            route.continue_()

    page.route("**/v1/memory", delay_memory)
    page.evaluate(RECORDER, [*notes, frank, "frank was typing this"])
    page.locator("#signout").click()
    expect(page.locator("#signin-user")).to_be_visible()
    slow["on"] = True
    page.locator("#signin-user").fill(grace)
    page.locator("#signin-button").click()
    expect(page.locator("#account-user")).to_have_text(grace)
    page.wait_for_function(
        "(grace) => window.__frames.slice(window.__cut).filter((f) => f.user === grace && f.why === 'frame').length >= 10",
        arg=grace,
    )
    slow["on"] = False
    while held:
        held.pop().continue_()
    expect(page.locator("#count-entries")).to_have_text("0 / 200 entries")
    expect(page.locator("#entries-empty-off")).to_be_visible()
    frames: list[dict[str, Any]] = page.evaluate("() => window.__frames.slice(window.__cut)")
    kept = lambda: sorted(i["text"] for i in memory(live, token)["items"])  # noqa: E731
    eventually(page, lambda: kept() == sorted(notes[:2]))  # the pending forget went out (sent on sign-out)

    # From the first thing drawn after "Sign out", nothing of frank's is anywhere in the document.
    assert frames and not frames[0]["signedIn"], frames[:1]
    as_grace = [f for f in frames if f["user"] == grace]
    assert len([f for f in as_grace if f["why"] == "frame"]) >= 10, "too few frames sampled while grace's memory loaded"
    wrong = [f for f in as_grace if f["entries"] or f["counts"].startswith("2 /") or f["switchOn"]]
    assert wrong == [], f"grace's name over someone else's memory: {wrong[:3]}"
    # Nor anywhere in the document, hidden or not (text, inputs, the title).
    leaks = [f for f in frames if f["traces"]]
    assert leaks == [], f"frank's data still in the document: {leaks[:3]}"
    # While grace's memory is on its way, the page says so instead of guessing (off, or empty).
    loading = [f for f in as_grace if f["counts"].startswith("–")]
    assert loading, "no frame showed the loading state"


def test_an_agent_switch_answered_after_sign_out_says_nothing_to_the_next_person(page: Page, live: Any) -> None:
    """A slow PUT /v1/agents/{id}: frank signs out before it answers; grace must see nothing of it, and may act at once."""
    frank, grace = new_user("frank"), new_user("grace")
    secret_agent = f"frank-agent-{uuid.uuid4().hex[:8]}"
    token = sign_in(page, frank)
    switch_on(page)
    status, _, _ = live.request("PUT", f"/v1/agents/{secret_agent}", token=token, body={"read": True})
    assert status == 200
    held: list[Route] = []
    page.route(
        "**/v1/agents/*", lambda route: held.append(route) if route.request.method == "PUT" else route.continue_()
    )
    page.locator("#tab-agents").click()
    row = page.locator(f"[data-testid=agent][data-agent={secret_agent}]")
    row.get_by_role("switch", name="May read my memory").uncheck()
    page.wait_for_function("() => document.body.dataset.busy === 'true'")
    eventually(page, lambda: len(held) == 1)  # the route's handler runs on Playwright's loop, maybe just after

    page.locator("#signout").click()
    expect(page.locator("#signin-user")).to_be_visible()
    page.locator("#signin-user").fill(grace)
    page.locator("#signin-button").click()
    expect(page.locator("#account-user")).to_have_text(grace)
    held[0].continue_()  # frank's answer lands while grace is signed in
    page.wait_for_function("() => document.body.dataset.busy !== 'true'")
    page.wait_for_timeout(200)  # anything the late answer would draw has been drawn

    assert secret_agent not in page.evaluate("() => document.body.textContent"), page.locator("#status").text_content()
    status, stored, _ = live.request("GET", "/v1/agents", token=token)
    assert [r["read"] for r in stored["agents"] if r["agent"] == secret_agent] == [False]  # frank's switch did land
