"""CORS on the OAuth endpoints a browser-based MCP client calls from script (the MCP Inspector), and on nothing else,
through the real local HTTP server (API Gateway's preflight is what Chalice generates for these routes: docs/oauth.md).

Fetch standard, "CORS protocol": a preflight (OPTIONS with Access-Control-Request-Method) must answer the method
and headers allowed; the actual answer must carry Access-Control-Allow-Origin, or the page's script cannot read it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

ORIGIN = "http://localhost:6274"  # where the MCP Inspector's page runs
OAUTH = [
    ("GET", "/.well-known/oauth-authorization-server"),
    ("GET", "/.well-known/openid-configuration"),
    ("GET", "/.well-known/oauth-protected-resource/mcp"),
    ("POST", "/oauth/token"),
    ("POST", "/oauth/register"),
    ("POST", "/oauth/revoke"),
]


def _lower(headers: dict[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


@pytest.mark.parametrize(("method", "path"), OAUTH)
def test_a_browser_client_may_call_the_oauth_endpoints(live: Any, method: str, path: str) -> None:
    status, _, headers = live.request(
        "OPTIONS",
        path,
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "content-type",
        },
    )
    preflight = _lower(headers)
    assert status == 200 and preflight["access-control-allow-origin"] == "*", (status, preflight)
    assert method in preflight["access-control-allow-methods"]
    assert "content-type" in preflight["access-control-allow-headers"].lower()
    body = None if method == "GET" else (b"" if path != "/oauth/register" else json.dumps({}).encode())
    kind = "application/json" if path == "/oauth/register" else "application/x-www-form-urlencoded"
    status, _, headers = live.request(method, path, raw=body, headers={"Origin": ORIGIN, "Content-Type": kind})
    answered = _lower(headers)
    assert answered.get("access-control-allow-origin") == "*", (path, status, answered)  # errors too (400s)
    assert "access-control-allow-credentials" not in answered


@pytest.mark.parametrize(
    ("method", "path"), [("GET", "/v1/memory"), ("GET", "/v1/connections"), ("GET", "/oauth/authorize")]
)
def test_the_persons_routes_and_authorize_have_no_cors(live: Any, method: str, path: str) -> None:
    status, _, headers = live.request(method, path, headers={"Origin": ORIGIN})
    assert "access-control-allow-origin" not in _lower(headers), (path, status)
    status, _, headers = live.request(
        "OPTIONS", path, headers={"Origin": ORIGIN, "Access-Control-Request-Method": method}
    )
    assert "access-control-allow-origin" not in _lower(headers), (path, status)
