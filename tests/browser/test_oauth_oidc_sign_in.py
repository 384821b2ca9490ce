"""Consent under the page's real OIDC sign-in: `?oauth=<id>` survives the round trip to an OIDC provider and back.

The stack is launched with the page's OIDC settings (local/stack.py: `OIDC_AUTHORIZE_URL` in the environment turns
the dev form off) pointing at a minimal OIDC provider served here on 127.0.0.1: its authorize endpoint signs the
person in at once and sends the browser back with a code; its token endpoint checks the code, the redirect URI and
the PKCE verifier (RFC 7636 §4.6) and answers an ID token signed by the key the stack's API trusts (the launcher's
dev issuer, asked through `/dev/token`). The page does what it does in production: the redirect, the state check,
the code exchange by fetch, then the consent screen, then the app's redirect with a code.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.browser_support import EXPECT_TIMEOUT_MS
from tests.support.live import LiveStack, start_live_stack

REDIRECT = "http://127.0.0.1:33420/callback"
PERSON = "oidc-person"
CLIENT_ID = "memory-page"


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class Provider(BaseHTTPRequestHandler):
    """A minimal OIDC provider: authorization code + PKCE S256, one person, already signed in."""

    codes: dict[str, dict[str, str]] = {}
    seen: list[str] = []
    stack: LiveStack | None = None

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.seen.append(parts.path)
        if parts.path != "/authorize" or query.get("response_type") != "code" or query.get("client_id") != CLIENT_ID:
            self._send(400, {"error": "invalid_request"})
            return
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge") or not query.get("state"):
            self._send(400, {"error": "invalid_request"})
            return
        code = secrets.token_urlsafe(16)
        self.codes[code] = {"challenge": query["code_challenge"], "redirect_uri": query["redirect_uri"]}
        back = f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query['state']})}"
        self.send_response(302)
        self.send_header("Location", back)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        self.seen.append(urlsplit(self.path).path)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode()).items()}
        issued = self.codes.pop(form.get("code", ""), None)
        if (
            issued is None
            or form.get("grant_type") != "authorization_code"
            or form.get("client_id") != CLIENT_ID
            or form.get("redirect_uri") != issued["redirect_uri"]
            or _s256(form.get("code_verifier", "")) != issued["challenge"]
        ):
            self._send(400, {"error": "invalid_grant"})
            return
        assert self.stack is not None
        token = self.stack.token(PERSON)  # signed by the key the stack's API trusts
        self._send(200, {"id_token": token, "access_token": token, "token_type": "Bearer", "expires_in": 3600})

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-store")
        origin = self.headers.get("Origin") or ""
        if origin.startswith("http://127.0.0.1:"):
            self.send_header("Access-Control-Allow-Origin", origin)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def oidc_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveStack]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Provider)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    provider = f"http://127.0.0.1:{server.server_port}"
    patch = pytest.MonkeyPatch()
    patch.setenv("OIDC_AUTHORIZE_URL", f"{provider}/authorize")
    patch.setenv("OIDC_TOKEN_URL", f"{provider}/token")
    patch.setenv("OIDC_CLIENT_ID", CLIENT_ID)
    patch.setenv("OIDC_SCOPE", "openid")
    patch.delenv("OIDC_REDIRECT_URI", raising=False)
    try:
        stack = start_live_stack(tmp_path_factory.mktemp("oidc"))
    finally:
        patch.undo()
    Provider.stack = stack
    yield stack
    stack.stop()
    server.shutdown()
    server.server_close()


def _authorize_url(live: LiveStack) -> str:
    status, client, _ = live.request(
        "POST",
        "/oauth/register",
        body={"redirect_uris": [REDIRECT], "client_name": "OIDC test app", "token_endpoint_auth_method": "none"},
    )
    assert status == 201, client
    query = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": REDIRECT,
        "state": "s-oidc",
        "code_challenge": _s256(secrets.token_urlsafe(40)),
        "code_challenge_method": "S256",
    }
    return f"{live.url}/oauth/authorize?{urlencode(query)}"


def test_consent_survives_the_pages_real_oidc_sign_in_and_approves(oidc_stack: LiveStack, browser: Browser) -> None:
    assert oidc_stack.request("GET", "/page-config")[1]["sign_in"] == "oidc"
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(EXPECT_TIMEOUT_MS)
    landed: list[str] = []
    page.route(REDIRECT + "**", lambda route: (landed.append(route.request.url), route.fulfill(body="back")))
    page.goto(_authorize_url(oidc_stack))
    expect(page.locator("#signin-oidc-button")).to_be_visible()
    assert "oauth=" not in page.url  # moved into sessionStorage at once
    page.locator("#signin-oidc-button").click()  # to the provider and back with a code
    expect(page.locator("#consent-client")).to_contain_text("An app on this device that calls itself “OIDC test app”")
    assert Provider.seen[-2:] == ["/authorize", "/token"]
    assert "code=" not in page.url
    page.locator("#consent-agent").fill("oidc-app")
    page.locator("#consent-approve").click()
    page.wait_for_url(REDIRECT + "**")
    query = parse_qs(urlsplit(landed[0]).query)
    assert query["state"] == ["s-oidc"] and query["code"]
    token = oidc_stack.token(PERSON)
    (made,) = oidc_stack.request("GET", "/v1/connections", token=token)[1]["connections"]
    assert made["agent"] == "oidc-app" and made["client"]["name"] == "OIDC test app"
    context.close()
