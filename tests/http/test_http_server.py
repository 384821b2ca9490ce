"""The contract where it is about HTTP: the real local server (`make run`'s launcher) on 127.0.0.1."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from tests.support.signing import signed_request


def _user(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_readme_curl_session_works(live: Any) -> None:
    user = _user("alice")
    token = live.token(user)
    assert live.request("GET", "/v1/memory", token=token)[1]["enabled"] is False
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[:2] == (
        200,
        {"enabled": True},
    )
    status, entry, _ = live.request(
        "POST", "/v1/memory", token=token, body={"text": "Prefers tea", "kind": "preference"}
    )
    assert status == 201 and entry["text"] == "Prefers tea"
    status, entry, _ = live.request("PATCH", f"/v1/memory/{entry['id']}", token=token, body={"pinned": True})
    assert status == 200 and entry["pinned"] is True
    assert live.request("DELETE", f"/v1/memory/{entry['id']}", token=token)[0] == 204
    assert live.request("DELETE", "/v1/memory", token=token)[:2] == (200, {"deleted": 0})


def test_missing_and_invalid_tokens_are_401_in_the_contract_shape(live: Any) -> None:
    for token in (None, "not-a-jwt"):
        status, body, headers = live.request("GET", "/v1/memory", token=token)
        assert status == 401 and body["code"] == "unauthorized" and set(body) == {"code", "message"}


def test_malformed_json_is_400_in_the_contract_shape(live: Any) -> None:
    token = live.token(_user("bad-json"))
    status, body, _ = live.request("POST", "/v1/memory", token=token, raw=b'{"text": ')
    assert status == 400 and body["code"] == "invalid_request" and "Code" not in body


def test_unknown_route_is_a_contract_error(live: Any) -> None:
    status, body, _ = live.request("GET", "/v1/nothing-here")
    assert status == 403 and body["code"] == "forbidden"


def test_iam_routes_need_a_real_signature(live: Any) -> None:
    creds = live.credentials()
    body = {"user_id": _user("u"), "thread_id": None, "agent": "a", "manifest": {"memory": True}}
    session = "/v1/sessions/" + uuid.uuid4().hex
    assert signed_request(live.url, "PUT", session, creds["host"], body)[0] == 200
    assert signed_request(live.url, "PUT", session, creds["host"], body, tamper=True)[0] == 403
    forged = {**creds["host"], "secret_access_key": "x" * 40}
    assert signed_request(live.url, "GET", session + "/memory", forged)[0] == 403
    assert live.request("GET", session + "/memory")[0] == 403
    assert signed_request(live.url, "GET", session + "/memory", creds["worker"])[0] == 403
    assert signed_request(live.url, "GET", session + "/memory", creds["host"])[:2] == (200, {"items": []})


def test_the_page_is_served_with_a_strict_csp(live: Any) -> None:
    status, html, headers = live.request("GET", "/")
    assert status == 200 and "<html" in html.lower()
    csp = headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert live.request("GET", "/assets/app.js")[0] == 200
    assert live.request("GET", "/assets/..%2Fapp.py")[0] == 404


def test_the_entry_cap_holds_under_20_concurrent_posts(live: Any) -> None:
    user = _user("busy")
    token = live.token(user)
    live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})
    for n in range(190):
        assert live.request("POST", "/v1/memory", token=token, body={"text": f"note {n}"})[0] == 201
    statuses: list[int] = []
    barrier = threading.Barrier(20)

    def post(n: int) -> None:
        barrier.wait()
        statuses.append(live.request("POST", "/v1/memory", token=token, body={"text": f"race {n}"})[0])

    threads = [threading.Thread(target=post, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201] * 10 + [409] * 10
    assert len(live.request("GET", "/v1/memory", token=token)[1]["items"]) == 200


def test_a_method_a_route_does_not_have_is_403_in_the_contract_shape_as_api_gateway_answers(live: Any) -> None:
    token = live.token(_user("methods"))
    status, body, _ = live.request("DELETE", "/v1/memory/journal", token=token)
    assert (status, body["code"]) == (403, "forbidden") and set(body) == {"code", "message"}
