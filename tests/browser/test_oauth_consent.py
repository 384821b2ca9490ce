"""The consent screen in Chromium: Deny sends the app `access_denied` and makes nothing; a request another person
opened is "no longer waiting" here; the request id never stays in the address bar."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from playwright.sync_api import Browser, expect

from tests.browser.browser_support import EXPECT_TIMEOUT_MS

REDIRECT = "http://127.0.0.1:33419/callback"


def _authorize_url(live: Any) -> str:
    status, client, _ = live.request(
        "POST",
        "/oauth/register",
        body={"redirect_uris": [REDIRECT], "client_name": "Consent test app", "token_endpoint_auth_method": "none"},
    )
    assert status == 201, client
    verifier = secrets.token_urlsafe(40)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": REDIRECT,
        "state": "s-9",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    return f"{live.url}/oauth/authorize?{urlencode(query)}"


def _signed_in_page(browser: Browser, url: str, person: str) -> Any:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(EXPECT_TIMEOUT_MS)
    page.goto(url)
    page.locator("#signin-user").fill(person)
    page.locator("#signin-button").click()
    return page


def test_deny_sends_access_denied_and_makes_no_connection(live: Any, browser: Browser) -> None:
    page = _signed_in_page(browser, _authorize_url(live), "consent-denier")
    landed: list[str] = []
    page.route(REDIRECT + "**", lambda route: (landed.append(route.request.url), route.fulfill(body="back")))
    expect(page.locator("#consent-client")).to_contain_text("Consent test app")
    assert "oauth=" not in page.url
    page.locator("#consent-deny").click()
    page.wait_for_url(REDIRECT + "**")
    query = parse_qs(urlsplit(landed[0]).query)
    assert query["error"] == ["access_denied"] and query["state"] == ["s-9"] and "code" not in query
    token = live.token("consent-denier")
    assert live.request("GET", "/v1/connections", token=token)[1]["connections"] == []
    page.context.close()


def test_a_request_opened_by_another_person_is_no_longer_waiting(live: Any, browser: Browser) -> None:
    authorize = _authorize_url(live)
    first = _signed_in_page(browser, authorize, "consent-first")
    expect(first.locator("#consent")).to_be_visible()
    first_id = first.evaluate("() => sessionStorage.getItem('memory.oauth')")
    assert first_id and len(first_id) == 32
    second = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    second.set_default_timeout(EXPECT_TIMEOUT_MS)
    second.goto(f"{live.url}/?oauth={first_id}")
    second.locator("#signin-user").fill("consent-second")
    second.locator("#signin-button").click()
    expect(second.locator("#status")).to_contain_text("no longer waiting")
    expect(second.locator("#consent")).to_be_hidden()
    first.context.close()
    second.context.close()
