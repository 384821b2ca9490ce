"""Bad input gets a clear 400/422 in the contract's shape, never echoes the text, and loses nothing."""

from __future__ import annotations

import random
import string
from typing import Any

import pytest

SECRET_MARK = "zq-distinctive-7731"


@pytest.fixture
def on(api: Any) -> dict[str, Any]:
    api.turn_on("alice")
    return api.add("alice", "kept entry")


@pytest.mark.parametrize(
    "body",
    [
        {"text": "x", "colour": "blue"},
        {"text": 5},
        {"text": "x", "kind": "wish"},
        {"text": "x", "pinned": "yes"},
        {"text": "x", "expires_in_days": 0},
        {"text": "x", "expires_in_days": 3651},
        {"text": "x", "expires_in_days": 1.5},
        {"text": "x", "expires_in_days": "7"},
        {"kind": "note"},
        [],
        "text",
    ],
)
def test_bad_post_bodies_are_400(api: Any, on: Any, body: Any) -> None:
    status, answer = api.call("POST", "/v1/memory", "alice", body)
    assert status == 400 and answer["code"] == "invalid_request" and answer["message"]


@pytest.mark.parametrize("raw", ['{"text": ', "", "not json", '{"text": "a"} trailing'])
def test_malformed_json_is_400_in_the_contract_shape(api: Any, on: Any, raw: str) -> None:
    status, answer = api.call("POST", "/v1/memory", "alice", raw=raw)
    assert status == 400 and set(answer) >= {"code", "message"} and answer["code"] == "invalid_request"


def test_empty_and_too_long_text_are_400_without_the_text(api: Any, on: Any) -> None:
    for text in ("   \n\t ", ""):
        status, answer = api.call("POST", "/v1/memory", "alice", {"text": text})
        assert (status, answer["code"]) == (400, "invalid_request")
    long_text = SECRET_MARK + "é" * 1000  # 2000+ bytes, fewer than 2000 characters
    status, answer = api.call("POST", "/v1/memory", "alice", {"text": long_text})
    assert (status, answer["code"]) == (400, "invalid_request") and SECRET_MARK not in repr(answer)
    assert api.call("POST", "/v1/memory", "alice", {"text": "é" * 1000})[0] == 201  # exactly 2000 bytes


def test_patch_validates_too(api: Any, on: Any) -> None:
    for body in ({"text": ""}, {"kind": "mood"}, {"expires_in_days": 0}, {"pinned": None, "x": 1}):
        status, answer = api.call("PATCH", f"/v1/memory/{on['id']}", "alice", body)
        assert status == 400, body
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["items"][0]["text"] == "kept entry"


def test_settings_needs_a_boolean(api: Any) -> None:
    for body in ({}, {"enabled": "true"}, {"enabled": 1}, {"enabled": True, "extra": 1}):
        assert api.call("PUT", "/v1/memory/settings", "alice", body)[0] == 400


def _random(alphabet: str, length: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(length))


def _credential_samples() -> list[tuple[str, str]]:
    alnum = string.ascii_letters + string.digits
    upper = string.ascii_uppercase + "234567"  # AWS key ids are base32
    b64url = alnum + "-_"
    jwt_like = "eyJhbGciOiJIUzI1NiJ9." + "eyJ" + _random(b64url, 40, 4) + "." + _random(b64url, 43, 5)
    pem_body = "\n".join(_random(alnum + "+/", 64, n) for n in range(6, 12))
    return [
        ("github_token", "my token ghp_" + _random(alnum, 36, 1)),
        ("aws_access_key_id", "aws key AKIA" + _random(upper, 16, 2)),
        ("private_key", f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----"),
        ("jwt", "session " + jwt_like),
    ]


@pytest.mark.parametrize(("shape", "text"), _credential_samples())
def test_credentials_are_refused_on_post_and_patch_naming_the_shape(api: Any, on: Any, shape: str, text: str) -> None:
    status, answer = api.call("POST", "/v1/memory", "alice", {"text": text})
    assert (status, answer["code"], answer["shape"]) == (422, "credential_refused", shape)
    status, answer2 = api.call("PATCH", f"/v1/memory/{on['id']}", "alice", {"text": text})
    assert (status, answer2["code"], answer2["shape"]) == (422, "credential_refused", shape)
    secret_core = text.split()[-1][-12:]
    assert secret_core not in repr(answer) and secret_core not in repr(answer2)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [e["text"] for e in view["items"]] == ["kept entry"]


def test_ids_we_never_issue_are_404_without_a_lookup(api: Any, on: Any) -> None:
    for bad in ("x" * 3000, on["id"].upper(), on["id"] + "0"):
        for method, path, body in (
            ("PATCH", "/v1/memory/{}", {"pinned": True}),
            ("DELETE", "/v1/memory/{}", None),
            ("POST", "/v1/memory/{}/accept", None),
            ("POST", "/v1/memory/{}/reject", None),
        ):
            status, answer = api.call(method, path.format(bad), "alice", body)
            assert (status, answer["code"]) == (404, "not_found")


def test_a_forged_journal_cursor_is_400(api: Any, on: Any) -> None:
    import base64

    for cursor in ("%FF%FE", base64.urlsafe_b64encode(b"x" * 2000).decode(), "bm90LWEta2V5"):
        status, answer = api.call("GET", f"/v1/memory/journal?cursor={cursor}", "alice")
        assert (status, answer["code"]) == (400, "invalid_request")
