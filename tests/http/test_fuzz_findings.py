"""What schemathesis found (issue 21, item 20), each pinned over real HTTP so it stays fixed whatever the fuzzer draws."""

from __future__ import annotations

import json
import re
import socket
import uuid
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.http.test_fuzz import SPEC_PATH
from tests.support.signing import signed_request

SPEC = yaml.safe_load(SPEC_PATH.read_text())
# What the deployed API answers for a method or path it does not have (infra/stack.json's gateway responses).
_GATEWAY = json.loads((SPEC_PATH.parent / "infra" / "stack.json").read_text())["Resources"]["RestAPI"]["Properties"]
NO_SUCH_ROUTE = _GATEWAY["DefinitionBody"]["x-amazon-apigateway-gateway-responses"]["MISSING_AUTHENTICATION_TOKEN"]


def _on(live: Any) -> str:
    token = live.token(f"finding-{uuid.uuid4().hex[:8]}")
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    return token


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "PROPFIND", "QUERY"])
@pytest.mark.parametrize("path", ["/v1/memory", "/v1/memory/journal", "/v1/sessions/s-1/memory", "/v1/operator/memory"])
def test_any_undeclared_method_is_api_gateways_403_in_the_contract_shape(live: Any, method: str, path: str) -> None:
    """API Gateway answers a method a resource does not define with 403 (its MISSING_AUTHENTICATION_TOKEN
    response: "An API request was made to a method or resource that does not exist", AWS knowledge center,
    api-gateway-authentication-token-errors); the template gives that response the contract's body."""
    status, body, headers = live.request(method, path, token=_on(live) if path.startswith("/v1/memory") else None)
    assert str(status) == NO_SUCH_ROUTE["statusCode"] == "403", (status, body)
    assert body == json.loads(NO_SUCH_ROUTE["responseTemplates"]["application/json"]), body
    assert headers["Content-Type"] == "application/json"


def _raw(live: Any, data: bytes) -> bytes:
    host = urlsplit(live.url)
    with socket.create_connection((host.hostname, host.port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize(
    "request_line",
    [
        pytest.param(b"GARBAGE\r\n\r\n", id="no-method-or-path"),
        pytest.param(b"GET /v1/memory HTTP/9.9\r\n\r\n", id="unknown-http-version"),
        pytest.param(b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", id="request-line-over-64k"),
    ],
)
def test_a_request_http_server_cannot_read_is_answered_in_the_contract_shape(live: Any, request_line: bytes) -> None:
    answer = _raw(live, request_line)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert re.match(rb"HTTP/1\.[01] (400|414|505) ", head), head
    assert b"Content-Type: application/json" in head and body.startswith(b'{"code": "invalid_request"'), answer[:300]


@pytest.mark.parametrize("days", ["371.0", "3.71e2", "371"])
def test_a_whole_number_of_days_written_as_a_float_is_that_integer(live: Any, days: str) -> None:
    """JSON has one number type and JSON Schema's `integer` includes 371.0: the schema cannot say
    otherwise, so the server reads it as 371 (and still refuses 1.5)."""
    token = _on(live)
    status, entry, _ = live.request(
        "POST", "/v1/memory", token=token, raw=b'{"text": "Prefers tea", "expires_in_days": %s}' % days.encode()
    )
    assert status == 201, entry
    span = datetime.fromisoformat(entry["expires_at"].replace("Z", "+00:00")) - datetime.fromisoformat(
        entry["created_at"].replace("Z", "+00:00")
    )
    assert round(span.total_seconds() / 86_400) == 371
    stored = live.request("GET", "/v1/memory", token=token)[1]["items"]
    assert [(item["id"], item["expires_at"]) for item in stored] == [(entry["id"], entry["expires_at"])]
    assert live.request("POST", "/v1/memory", token=token, raw=b'{"text": "x", "expires_in_days": 1.5}')[0] == 400


def test_the_journal_cursor_is_exactly_its_pattern(live: Any) -> None:
    """Every cursor the server gives matches openapi.yaml's pattern, every string of the pattern is a position
    (200), and what is not of it is a 400."""
    token = _on(live)
    for enabled in (False, True, False, True):  # each change of the setting is a journal row
        assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": enabled})[0] == 200
    pattern = re.compile(SPEC["paths"]["/v1/memory/journal"]["get"]["parameters"][0]["schema"]["pattern"])
    status, page, _ = live.request("GET", "/v1/memory/journal?limit=2", token=token)
    assert status == 200 and pattern.fullmatch(page["next_cursor"]), page
    status, rest, _ = live.request("GET", f"/v1/memory/journal?limit=50&cursor={page['next_cursor']}", token=token)
    assert status == 200 and rest["items"] and not {str(r) for r in rest["items"]} & {str(r) for r in page["items"]}
    for made_up in ("0000-00-00T::::::::Z_0", "9999-12-31T23:59:59.999999Z_" + "f" * 32):
        assert pattern.fullmatch(made_up)
        status, answer, _ = live.request("GET", f"/v1/memory/journal?cursor={made_up}", token=token)
        assert status == 200 and set(answer) == {"items", "next_cursor"}, answer
    for forged in ("bm90LWEta2V5", "2026-01-01T00:00:00Z#ab", "x"):
        assert not pattern.fullmatch(forged)
        assert live.request("GET", f"/v1/memory/journal?cursor={forged.replace('#', '%23')}", token=token)[0] == 400


def test_a_percent_encoded_session_id_is_the_same_session(live: Any) -> None:
    """The SDK quotes every reserved character of a session id (`:` as `%3A`); the server decodes once."""
    creds = live.credentials()
    user = f"u-{uuid.uuid4().hex[:8]}"
    session = f"host:{uuid.uuid4().hex[:8]}"
    body = {"user_id": user, "thread_id": None, "agent": "a", "manifest": {"memory": True}}
    status, made = signed_request(live.url, "PUT", f"/v1/sessions/{session.replace(':', '%3A')}", creds["host"], body)
    assert status == 200 and made["session_id"] == session, made
    assert signed_request(live.url, "GET", f"/v1/sessions/{session}/memory", creds["host"])[0] == 200
    assert (
        signed_request(live.url, "GET", f"/v1/sessions/{session.replace(':', '%3a')}/memory", creds["host"])[0] == 200
    )
    for bad in ("%25", "a%2Fb", "%FF", "a%20b"):
        assert signed_request(live.url, "GET", f"/v1/sessions/{bad}/memory", creds["host"])[0] == 400, bad
