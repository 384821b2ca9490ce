"""The TypeScript SDK's own Client ID Metadata Document path: its client id is an https URL the SDK itself sends.

The SDK uses a metadata-document client id only over https (`clientMetadataUrl`). The test serves the document
over https on 127.0.0.1 with a certificate it makes (cryptography), and launches a local stack that trusts that
certificate for its insecure metadata hosts only (`OAUTH_METADATA_CA_FILE`, which the launcher passes through):
401 → discovery → the SDK's client id is the document's URL (no registration) → the person approves in Chromium
→ token → tools.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.browser_support import EXPECT_TIMEOUT_MS
from tests.browser.test_oauth_connect import REDIRECT, Node, node_client  # noqa: F401 - the fixture
from tests.routes.test_oauth_metadata_fetch import _certificate
from tests.support.live import LiveStack, start_live_stack


class Document(BaseHTTPRequestHandler):
    url = ""
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.hits.append(self.path)
        body = json.dumps(
            {
                "client_id": self.url,
                "client_name": "TS SDK https metadata client",
                "redirect_uris": [REDIRECT],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
            }
        ).encode()
        self.send_response(200 if self.path == "/client.json" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def trusting_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveStack, str]]:
    folder = tmp_path_factory.mktemp("cimd")
    cert_file, key_file = _certificate(folder)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Document)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    Document.url = f"https://127.0.0.1:{server.server_port}/client.json"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    patch = pytest.MonkeyPatch()
    patch.setenv("OAUTH_METADATA_CA_FILE", cert_file)
    try:
        stack = start_live_stack(folder)
    finally:
        patch.undo()
    yield stack, Document.url
    stack.stop()
    server.shutdown()
    server.server_close()


def test_the_sdk_connects_with_its_own_https_metadata_document_client_id(
    trusting_stack: tuple[LiveStack, str],
    browser: Browser,
    node_client: Path,  # noqa: F811 - the fixture
) -> None:
    live, document = trusting_stack
    person = "oauth-cimd-https"
    token = live.token(person)
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    assert live.request("POST", "/v1/memory", token=token, body={"text": "Prefers sencha"})[0] == 201
    node = Node(node_client, live.url + "/mcp", document)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        authorize = node.read()["authorize"]
        assert parse_qs(urlsplit(authorize).query)["client_id"] == [document]  # the SDK's own choice
        page = context.new_page()
        page.set_default_timeout(EXPECT_TIMEOUT_MS)
        landed: list[str] = []
        page.route(REDIRECT + "**", lambda route: (landed.append(route.request.url), route.fulfill(body="back")))
        page.goto(authorize)
        page.locator("#signin-user").fill(person)
        page.locator("#signin-button").click()
        expect(page.locator("#consent-client")).to_contain_text(
            "An app on this device that calls itself “TS SDK https metadata client”"
        )
        page.locator("#consent-agent").fill("ts-sdk-cimd")
        page.locator("#consent-approve").click()
        page.wait_for_url(REDIRECT + "**")
        node.send(landed[0])
        used = node.read()
        assert used["first"] == "unauthorized" and used["client_id"] == document
        assert "Prefers sencha" in used["context"]
        assert "/client.json" in Document.hits  # fetched over https, the test's certificate trusted
        (made,) = live.request("GET", "/v1/connections", token=token)[1]["connections"]
        assert made["client"]["id"] == document and made["agent"] == "ts-sdk-cimd"
    finally:
        node.close()
        context.close()
