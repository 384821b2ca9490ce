"""End to end, issue 42: the official TypeScript MCP SDK's OAuth client connects to the real local stack's /mcp.

401 → discovery (RFC 9728, RFC 8414) → registration (Dynamic Client Registration, or a client id that is the URL
of a metadata document served on 127.0.0.1) → authorize (the person signs in on the Memory page and approves in
Chromium) → token → tools → refresh (rotation) → revoke on the Agents tab → 401.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.browser_support import EXPECT_TIMEOUT_MS, loaded

CLIENT = Path(__file__).resolve().parents[1] / "http" / "mcp_client_ts"
REDIRECT = "http://127.0.0.1:33418/callback"  # a loopback redirect (RFC 8252): the test answers it in Chromium


@pytest.fixture(scope="module")
def node_client() -> Path:
    if not (CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        npm = shutil.which("npm")
        assert npm, "npm is needed to install the pinned MCP TypeScript client"
        subprocess.run([npm, "ci", "--prefer-offline", "--no-audit", "--no-fund"], cwd=CLIENT, check=True, timeout=300)
    return CLIENT / "oauth_client.mjs"


@pytest.fixture
def metadata_document() -> Iterator[str]:
    """A client id metadata document served on 127.0.0.1 (the local stage allows http there; AWS stages never)."""
    holder: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            body = json.dumps(
                {
                    "client_id": holder["url"],
                    "client_name": "TS SDK metadata client",
                    "redirect_uris": [REDIRECT],
                    "token_endpoint_auth_method": "none",
                    "grant_types": ["authorization_code", "refresh_token"],
                }
            ).encode()
            self.send_response(200 if self.path == "/client.json" else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder["url"] = f"http://127.0.0.1:{server.server_address[1]}/client.json"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield holder["url"]
    server.shutdown()


class Node:
    def __init__(self, script: Path, url: str, registration: str) -> None:
        node = shutil.which("node")
        assert node
        self.process = subprocess.Popen(  # noqa: S603 - our own script
            [node, str(script), url, REDIRECT, registration],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the TypeScript client stopped"
        found = json.loads(line)
        assert "error" not in found, found
        return dict(found)

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


@pytest.mark.parametrize("registration", ["dcr", "metadata_document"])
def test_the_sdk_signs_in_on_the_page_reads_suggests_refreshes_and_is_cut_off_by_a_revoke(
    live: Any, browser: Browser, node_client: Path, metadata_document: str, registration: str
) -> None:
    person = f"oauth-{registration.replace('_', '-')}"
    token = live.token(person)
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    assert live.request("POST", "/v1/memory", token=token, body={"text": "Prefers oolong"})[0] == 201
    node = Node(node_client, live.url + "/mcp", "dcr" if registration == "dcr" else metadata_document)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        authorize = node.read()["authorize"]
        query = parse_qs(urlsplit(authorize).query)
        assert query["code_challenge_method"] == ["S256"] and query["resource"] == [live.url + "/mcp"]
        page = context.new_page()
        page.set_default_timeout(EXPECT_TIMEOUT_MS)
        landed: list[str] = []
        page.route(REDIRECT + "**", lambda route: (landed.append(route.request.url), route.fulfill(body="back")))
        page.goto(authorize)
        assert "oauth=" not in page.url  # the request id left the address bar
        page.locator("#signin-user").fill(person)
        page.locator("#signin-button").click()
        expect(page.locator("#consent")).to_be_visible()
        client_name = "TS SDK test client" if registration == "dcr" else "TS SDK metadata client"
        expect(page.locator("#consent-client")).to_contain_text(client_name)
        expect(page.locator("#consent-return")).to_contain_text("127.0.0.1:33418")
        page.locator("#consent-agent").fill("ts-sdk")
        page.locator("#consent-approve").click()
        page.wait_for_url(REDIRECT + "**")
        assert parse_qs(urlsplit(landed[0]).query)["code"]
        node.send(landed[0])

        used = node.read()
        assert used["first"] == "unauthorized"
        assert used["tools"] == ["memory_context", "memory_propose"]
        assert "Prefers oolong" in used["context"] and used["expires_in"] == 3600
        assert used["client_id"].startswith("http://127.0.0.1:") == (registration != "dcr")
        connections = live.request("GET", "/v1/connections", token=token)[1]["connections"]
        assert [(c["agent"], c["trusted"], c["client"]["name"]) for c in connections] == [
            ("ts-sdk", False, client_name)
        ]

        node.send("refresh")
        refreshed = node.read()
        assert refreshed["refreshed"] == "AUTHORIZED" and refreshed["rotated"] and refreshed["renewed"]
        assert "Prefers oolong" in refreshed["again"]

        page.goto(live.url + "/")
        loaded(page)
        page.locator("#tab-agents").click()
        page.locator("[data-testid=connection-client]").first.wait_for()
        page.locator("button[data-action=revoke-connection]").click()
        page.locator("#revoke-confirm").click()
        expect(page.locator("[data-testid=connection]")).to_have_count(0)

        node.send("again")
        after = node.read()
        while "authorize" in after:  # the SDK starts a new sign-in once its refresh is refused
            after = node.read()
        assert after["outcome"] == "unauthorized" and after["status"] == 401 and after["redirects"] == 2
        assert live.request("GET", "/v1/connections", token=token)[1]["connections"] == []
        waiting = live.request("GET", "/v1/memory", token=token)[1]
        assert [p["agent"] for p in waiting["proposals"]] in ([], ["ts-sdk"])  # the stream may still be on its way
    finally:
        node.close()
        context.close()
