"""A client's name is its own word (docs/oauth.md, "A client's name"): names of known web clients are kept to their
hosts at registration, and the consent screen and the Agents tab never show a name as fact, through the real routes."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest

from chalicelib.config import reset_settings
from chalicelib.oauth import clients, fetch
from chalicelib.services import connections as connections_service
from tests.support.oauth_flow import OAuthFlow

LOOPBACK = "http://127.0.0.1:33418/callback"


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    connections_service.forget_cache()
    clients.forget_documents()


@pytest.fixture
def flow(client: Any, issuer: Any) -> OAuthFlow:
    return OAuthFlow(client, issuer)


def _opened(flow: OAuthFlow, client_id: str, redirect: str) -> dict[str, Any]:
    request_id = flow.request_id(flow.authorize(client_id, secrets.token_urlsafe(40), redirect_uri=redirect))
    answer = flow.get(f"/v1/oauth/requests/{request_id}", "alice")
    assert answer.status == 200, answer.body
    return dict(answer.body, request_id=request_id)


def test_a_loopback_client_is_shown_as_an_app_on_this_device_that_calls_itself_so(flow: OAuthFlow, api: Any) -> None:
    # Claude Code registers so: a name that contains a reserved one is not refused, it is shown as the app's own word.
    answer = flow.register(LOOPBACK, client_name="Claude Code")
    assert answer.status == 201, answer.body
    opened = _opened(flow, answer.body["client_id"], LOOPBACK)
    assert opened["client"]["shown"] == "an app on this device that calls itself “Claude Code”"
    assert opened["client"]["from"] == ""
    decided = flow.decide(opened["request_id"], "alice", agent="claude-code")
    assert decided.status == 200 and decided.body["redirect"].startswith(LOOPBACK + "?code=")
    (listed,) = api.call("GET", "/v1/connections", "alice")[1]["connections"]
    assert listed["client"]["shown"] == "an app on this device that calls itself “Claude Code”"


def test_an_https_client_is_shown_with_the_host_the_browser_goes_back_to(flow: OAuthFlow, api: Any) -> None:
    client_id = flow.client_id()  # "Claude", redirecting to https://claude.ai/...: its own host
    opened = _opened(flow, client_id, "https://claude.ai/api/mcp/auth_callback")
    assert opened["client"]["shown"] == "an app at claude.ai that calls itself “Claude”"
    assert flow.decide(opened["request_id"], "alice").status == 200
    (listed,) = api.call("GET", "/v1/connections", "alice")[1]["connections"]
    assert listed["client"]["shown"] == "an app at claude.ai that calls itself “Claude”"


@pytest.mark.parametrize(
    ("name", "redirect"),
    [
        ("ChatGPT", "https://claude.ai/cb"),  # another known client's host
        ("Chat GPT", "http://localhost:8765/cb"),
        ("ChatGРТ", "http://127.0.0.1:8765/cb"),  # Cyrillic Р and Т
        ("ｃｌａｕｄｅ", "https://chatgpt.com/cb"),  # full-width
    ],
)
def test_a_reserved_name_off_its_hosts_is_refused(flow: OAuthFlow, name: str, redirect: str) -> None:
    answer = flow.register(redirect, client_name=name)
    assert answer.status == 400 and answer.body["error"] == "invalid_client_metadata", answer.body


def test_a_reserved_name_with_one_redirect_off_its_hosts_is_refused(flow: OAuthFlow) -> None:
    body = {
        "redirect_uris": ["https://claude.ai/cb", "http://127.0.0.1:9/cb"],
        "client_name": "Claude",
        "token_endpoint_auth_method": "none",
    }
    answer = flow.post_json("/oauth/register", body)
    assert answer.status == 400 and answer.body["error"] == "invalid_client_metadata"


def test_the_stage_decides_which_names_are_reserved(
    flow: OAuthFlow, monkeypatch: pytest.MonkeyPatch, client: Any
) -> None:
    monkeypatch.setenv("OAUTH_RESERVED_NAMES", "Cursor=cursor.com")
    reset_settings()
    try:
        assert flow.register(LOOPBACK, client_name="Cursor").status == 400
        assert flow.register(LOOPBACK, client_name="Claude").status == 201  # no longer reserved on this stage
    finally:
        reset_settings()


def test_an_altered_client_row_taking_a_reserved_name_is_not_believed(flow: OAuthFlow, dynamodb: Any) -> None:
    answer = flow.register(LOOPBACK, client_name="Helper")
    client_id = answer.body["client_id"]
    key = {"user_id": {"S": f"oclient#{client_id}"}, "sk": {"S": "#oclient"}}
    stored = json.loads(dynamodb.get_item(TableName="memory-keys", Key=key)["Item"]["metadata"]["S"])
    dynamodb.update_item(
        TableName="memory-keys",
        Key=key,
        UpdateExpression="SET metadata = :m",
        ExpressionAttributeValues={":m": {"S": json.dumps({**stored, "client_name": "Claude"})}},
    )
    refused = flow.authorize(client_id, secrets.token_urlsafe(40), redirect_uri=LOOPBACK)
    assert refused.status == 400 and refused.body["error"] == "invalid_client"


def _serve(monkeypatch: pytest.MonkeyPatch, document: dict[str, Any]) -> None:
    monkeypatch.setattr(fetch, "resolve", lambda host, port: ["93.184.216.34"])
    monkeypatch.setattr(fetch, "get", lambda *args: json.dumps(document).encode())


def test_a_metadata_document_client_may_not_take_a_reserved_name_off_its_hosts(
    flow: OAuthFlow, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = "https://tools.example.com/client.json"
    _serve(monkeypatch, {"client_id": doc, "client_name": "Сlaude", "redirect_uris": [LOOPBACK]})
    answer = flow.authorize(doc, secrets.token_urlsafe(40), redirect_uri=LOOPBACK)
    assert answer.status == 400 and answer.body["error"] == "invalid_client", answer.body


def test_a_metadata_document_client_is_shown_with_its_verified_hosts(
    flow: OAuthFlow, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = "https://tools.example.com/client.json"
    redirect = "https://claude.ai/api/mcp/auth_callback"
    _serve(monkeypatch, {"client_id": doc, "client_name": "Tools", "redirect_uris": [redirect, LOOPBACK]})
    shown = _opened(flow, doc, redirect)["client"]["shown"]
    assert shown == "an app at claude.ai (its metadata is published by tools.example.com) that calls itself “Tools”"
    assert _opened(flow, doc, LOOPBACK)["client"]["shown"] == "an app on this device that calls itself “Tools”"
