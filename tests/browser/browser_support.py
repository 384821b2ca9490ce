"""What the browser tests share: launching Debian's headless Chromium, signing in on the page, and making agents propose."""

from __future__ import annotations

import re
import secrets
import string
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect

from tests.support.signing import signed_request

# Debian's headless shell (package chromium-headless-shell, the same Chromium release as the `chromium` package,
# built without the browser UI: what Playwright itself runs for headless Chromium). Against the full browser
# headless, serially, on the same pages: its browser process costs ~0.09 CPU-s per context instead of ~0.22 and
# the browser tests ~25 % less CPU in all (docs/notes.md). Its pictures match (docs/screenshots/).
CHROMIUM = "/usr/bin/chromium-headless-shell"
# The browser a person uses, Debian's full `chromium` (headless): the tests about what the page looks like
# (the screenshots, layout and accessibility) run on it (`person_browser` in conftest.py), as `make screenshots` does.
PERSON_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# The full Chromium 156 preloads the address bar's popups (two WebUI pages, one renderer each) in every new window,
# and a headless context is a window: ~0.55 s of CPU per test. The headless shell has no address bar; the switch
# stays so that a run on the full browser (CHROMIUM) is not slower again, and costs nothing.
# Chromium keeps only the last --disable-features it is given, so ours repeats Playwright's own list first.
WITHOUT_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
_PLAYWRIGHT_BUNDLE = "driver/package/lib/coreBundle.js"
# Playwright's own waits: long enough for 2 busy shared cores, short enough that a hang fails fast.
EXPECT_TIMEOUT_MS = 10_000
# How long an agent's proposal may take to travel worker route → events table → stream pump → inbox
# (and so any wait on the stream), on 2 shared cores under load: conditional waits, so a bound costs nothing.
PROPOSAL_DEADLINE_S = 60.0
# What the page's own poll brings once asked (or, if one was on its way, two polls later), plus a loaded machine.
POLL_TIMEOUT_MS = 25_000
# A forget's request landing once its undo window closed, plus a loaded machine.
UNDO_CLOSED_TIMEOUT_MS = 20_000
# The page's own timers (chalicelib/web/undo.js, live.js), passed on its fake clock rather than waited for.
UNDO_MS = 5_000  # a forget can be undone for this long; then it is sent
FAST_POLL_MS = 5_000  # how often the page asks while something can change (after memory is turned on, a suggestion)


def playwright_disabled_features() -> list[str]:
    """The features the pinned Playwright turns off in Chromium (its `disabledFeatures`), read from its driver."""
    import playwright

    bundle = (Path(playwright.__file__).parent / _PLAYWRIGHT_BUNDLE).read_text()
    listed = re.search(r"\bdisabledFeatures = \[(.*?)\]", bundle, re.S)
    if listed is None:
        raise RuntimeError(f"no disabledFeatures list in Playwright's {_PLAYWRIGHT_BUNDLE}: see WITHOUT_FEATURES")
    code = re.sub(r"//[^\n]*", "", listed.group(1))  # its comments name features too, in prose
    # Every quoted name, a conditional one too (turning off one more feature than Playwright would is harmless).
    return [name for name in re.findall(r'"([^"]*)"', code) if name]


def launch_args() -> list[str]:
    return [*CHROMIUM_ARGS, "--disable-features=" + ",".join([*playwright_disabled_features(), *WITHOUT_FEATURES])]


def launch(playwright: Playwright, executable: str = CHROMIUM) -> Browser:
    """Debian's Chromium headless shell, or the full `chromium` (PERSON_CHROMIUM): never a browser Playwright downloaded."""
    return playwright.chromium.launch(executable_path=executable, headless=True, args=launch_args())


def new_user(label: str) -> str:
    """A user id no other test on the shared stack uses."""
    return f"{label}-{uuid.uuid4().hex[:12]}"


def github_classic_token() -> str:
    """A GitHub classic token shape made at test time, so no real-looking secret lives in the repository."""
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))


@dataclass
class Watch:
    """Everything a page asked for and every script error it raised, checked when the test ends."""

    origin: str
    requests: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    csp_violations: list[str] = field(default_factory=list)

    def foreign(self) -> list[str]:
        return [url for url in self.requests if not _same_origin(url, self.origin)]


def _same_origin(url: str, origin: str) -> bool:
    if url.startswith(("data:", "blob:" + origin)):
        return True
    parts, want = urlsplit(url), urlsplit(origin)
    return (parts.scheme, parts.netloc) == (want.scheme, want.netloc)


def watch(context: BrowserContext, origin: str) -> Watch:
    """Record every request of every page in the context (including the ones CSP blocks before sending)."""
    seen = Watch(origin)
    context.on("request", lambda request: seen.requests.append(request.url))

    def on_page(page: Page) -> None:
        page.on("pageerror", lambda error: seen.page_errors.append(str(error)))
        # 4xx answers are logged as console errors and are expected; CSP refusals are not.
        page.on(
            "console",
            lambda message: seen.csp_violations.append(message.text)
            if "Content Security Policy" in message.text
            else None,
        )

    context.on("page", on_page)
    return seen


def open_page(context: BrowserContext, base_url: str) -> Page:
    page = context.new_page()
    page.set_default_timeout(EXPECT_TIMEOUT_MS)
    page.goto(base_url + "/")
    # page-config loads before the sign-in form appears.
    expect(page.locator("#signin-user")).to_be_visible()
    return page


def sign_in(page: Page, user: str) -> str:
    """Sign in through the "sign in as" field; returns the token the page keeps (for API checks)."""
    page.locator("#signin-user").fill(user)
    page.locator("#signin-button").click()
    expect(page.locator("#account-user")).to_have_text(user)
    loaded(page)
    token = page.evaluate("() => sessionStorage.getItem('memory.token')")
    assert isinstance(token, str) and token.count(".") == 2
    return token


def loaded(page: Page) -> None:
    """The first GET /v1/memory has been rendered: the entries list or its empty state is showing.

    Until then the switch shows the HTML's default "Off", and a toggle made that early can be
    overwritten by the load's older answer, so tests act only after this.
    """
    expect(page.locator("#app")).to_be_visible()
    expect(page.locator("#entries-empty:visible, [data-testid=entry]").first).to_be_visible()


def reload(page: Page) -> None:
    """Reload while signed in (the token is in sessionStorage) and wait for the memory to render."""
    page.reload()
    loaded(page)


class Polls:
    """GET /v1/memory requests the page made, and whether one is still on its way."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.count = 0
        self.open = 0
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)

    def _ours(self, request: Any) -> bool:
        return request.method == "GET" and request.url.endswith("/v1/memory")

    def _started(self, request: Any) -> None:
        if self._ours(request):
            self.count += 1
            self.open += 1

    def _ended(self, request: Any) -> None:
        if self._ours(request):
            self.open -= 1

    def settle(self) -> None:
        # Real time: lets the answer land and the next timer be set. Bounded generously (a GET on a loaded
        # machine can take seconds), never by a count of short waits that a slow answer outlasts.
        deadline = time.monotonic() + POLL_TIMEOUT_MS / 1000
        while True:
            self.page.wait_for_timeout(15)
            if self.open == 0:
                return
            if time.monotonic() > deadline:
                raise AssertionError("a poll never finished")

    def over(self, seconds: int, step: int = 5) -> int:
        """Move the page's (paused) clock `seconds` forward in steps shorter than any poll interval; GETs made."""
        before = self.count
        for _ in range(seconds // step):
            self.page.clock.run_for(step * 1000)
            self.settle()
        return self.count - before


def pause_clock(page: Page) -> None:
    """Stop the page's (installed, fake) clock a second from now: its timers (polls, undo windows, status
    text) fire only as the test moves it, so "at once" is told from "at the next tick" however slow the machine."""
    now = page.evaluate("() => Date.now()")
    page.clock.pause_at(now + 1000)


def set_hidden(page: Page, hidden: bool) -> None:
    """Make the page hidden or visible as a background tab would be (headless tabs are always visible)."""
    page.evaluate(
        """(hidden) => {
        Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => hidden ? 'hidden' : 'visible'});
        document.dispatchEvent(new Event('visibilitychange'));
    }""",
        hidden,
    )


def next_poll(page: Page) -> None:
    """On the page's fake clock: move on by the fast poll interval, so the page's own poll asks now."""
    page.clock.run_for(FAST_POLL_MS)


def settled(page: Page) -> None:
    """The page has finished its one change in flight (a forget sent as its undo window closes is not one: see below)."""
    expect(page.locator("body")).not_to_have_attribute("data-busy", "true")


def close_undo_window(page: Page) -> int:
    """Pass the undo window on the page's fake clock and wait until the forget it sends is answered; its status.

    The page sends that DELETE from a timer, outside its one-change-at-a-time `data-busy` mark (undo.js), so
    `settled` cannot wait for it: a test that read the API after `settled` raced the request (seen once in CI).
    """
    is_forget = lambda r: r.request.method == "DELETE" and "/v1/memory/" in r.url  # noqa: E731
    with page.expect_response(is_forget, timeout=UNDO_CLOSED_TIMEOUT_MS) as answered:
        page.clock.run_for(UNDO_MS)
    return answered.value.status


def eventually(page: Page, check: Callable[[], bool], timeout_ms: int = UNDO_CLOSED_TIMEOUT_MS) -> None:
    """Wait until `check()` holds, for something the page does that no element shows (a request sent on
    leaving, a route reached). Waits on the page's event loop, so Playwright's route handlers still run."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not so after {timeout_ms} ms")
        page.wait_for_timeout(100)


def after_two_frames(page: Page) -> None:
    """Return once the page has drawn two more frames: what an answer just delivered would draw is drawn."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def switch_on(page: Page) -> None:
    expect(page.locator("#memory-state")).to_have_text("Off")
    page.locator("#memory-enabled").check()
    expect(page.locator("#memory-state")).to_have_text("On")
    settled(page)


def add_entry(page: Page, text: str, *, kind: str = "note", pinned: bool = False, expiry: str = "") -> None:
    before = page.locator("[data-testid=entry]").count()
    page.locator("#add-text").fill(text)
    page.locator("#add-kind").select_option(kind)
    page.locator("#add-pinned").set_checked(pinned)
    page.locator("#add-expiry").fill(expiry)
    page.locator("#add-submit").click()
    expect(page.locator("[data-testid=entry]")).to_have_count(before + 1)
    expect(page.locator("#add-text")).to_have_value("")
    settled(page)


def memory(live: Any, token: str) -> dict[str, Any]:
    status, body, _ = live.request("GET", "/v1/memory", token=token)
    assert status == 200, body
    return body


@dataclass
class Agent:
    """A host and a worker on the shared stack: sessions are registered and proposals posted with SigV4."""

    live: Any

    def session(self, user: str, *, tainted: bool = False, agent: str = "helper") -> str:
        creds = self.live.credentials()
        session_id = "s-" + uuid.uuid4().hex[:16]
        body = {"user_id": user, "thread_id": "t-1", "agent": agent, "manifest": {"memory": True}}
        status, answer = signed_request(self.live.url, "PUT", f"/v1/sessions/{session_id}", creds["host"], body)
        assert status == 200, answer
        if tainted:
            status, answer = signed_request(
                self.live.url, "POST", f"/v1/sessions/{session_id}/untrusted", creds["host"]
            )
            assert status in (200, 204), answer
        return session_id

    def propose(
        self,
        user: str,
        token: str,
        text: str,
        *,
        kind: str = "preference",
        tainted: bool = False,
        agent: str = "helper",
    ) -> dict[str, Any]:
        """Post a memory.propose through the worker route and wait (bounded) until the stream makes it a proposal."""
        session_id = self.session(user, tainted=tainted, agent=agent)
        event = {"id": "e1", "type": "memory.propose", "text": text, "kind": kind}
        creds = self.live.credentials()
        status, answer = signed_request(
            self.live.url, "POST", f"/v1/sessions/{session_id}/events", creds["worker"], {"events": [event]}
        )
        assert status == 202, answer
        deadline = time.monotonic() + PROPOSAL_DEADLINE_S
        while time.monotonic() < deadline:
            status, inbox, _ = self.live.request("GET", "/v1/inbox", token=token)
            assert status == 200, inbox
            for proposal in inbox["memory_proposals"]:
                if proposal.get("source", {}).get("session_id") == session_id:
                    return proposal
            time.sleep(0.2)
        raise AssertionError(f"no proposal from session {session_id} reached the inbox in {PROPOSAL_DEADLINE_S} s")

    def propose_all(self, user: str, token: str, texts: list[str], *, agent: str = "helper") -> dict[str, Any]:
        """Post `texts` in one session and wait (bounded) until the stream has decided each: the inbox then lists
        one proposal or one repeat (a text the person already keeps) per text from that session."""
        session_id = self.session(user, agent=agent)
        events = [
            {"id": f"e{n}", "type": "memory.propose", "text": text, "kind": "note"} for n, text in enumerate(texts)
        ]
        status, answer = signed_request(
            self.live.url,
            "POST",
            f"/v1/sessions/{session_id}/events",
            self.live.credentials()["worker"],
            {"events": events},
        )
        assert status == 202, answer
        deadline = time.monotonic() + PROPOSAL_DEADLINE_S
        while time.monotonic() < deadline:
            status, inbox, _ = self.live.request("GET", "/v1/inbox", token=token)
            assert status == 200, inbox
            mine = [p for p in inbox["memory_proposals"] if p.get("source", {}).get("session_id") == session_id]
            if len(mine) + sum(r["session_id"] == session_id for r in inbox["repeats"]) == len(texts):
                return inbox
            time.sleep(0.2)
        raise AssertionError(
            f"the proposals of session {session_id} did not all reach the inbox in {PROPOSAL_DEADLINE_S} s"
        )

    def context(self, session_id: str) -> dict[str, Any]:
        """The host's memory fetch for a session (journaled as keep.memory.context)."""
        status, answer = signed_request(
            self.live.url, "GET", f"/v1/sessions/{session_id}/memory", self.live.credentials()["host"]
        )
        assert status == 200, answer
        return answer
