"""Host and worker clients against a real HTTP server on 127.0.0.1: signing, bodies, retries."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from personal_memory_sdk import (
    AgentMemory,
    HostClient,
    MemoryItem,
    RetryPolicy,
    ServerError,
    TransportError,
    WorkerClient,
)
from sdk_http_support import ACCESS_KEY, SECRET_KEY, RecordingServer, Reply

SESSION = {
    "session_id": "s-1",
    "user_id": "alice",
    "thread_id": "t-1",
    "agent": "memory-agent",
    "manifest": {"memory": True},
    "tainted": False,
}


def _worker(server: RecordingServer, delays: list[float], **kwargs: object) -> WorkerClient:
    return WorkerClient(server.url, ACCESS_KEY, SECRET_KEY, sleep=delays.append, **kwargs)  # type: ignore[arg-type]


def _host(server: RecordingServer, delays: list[float], **kwargs: object) -> HostClient:
    return HostClient(server.url, ACCESS_KEY, SECRET_KEY, sleep=delays.append, **kwargs)  # type: ignore[arg-type]


def test_propose_sends_one_signed_memory_propose_event(
    server: RecordingServer, no_sleep: list[float], verify_sigv4: Callable[..., bool]
) -> None:
    server.reply(Reply(202, {"accepted": 1}))
    memory = AgentMemory([], "s-1", _worker(server, no_sleep))
    event_id = memory.propose("Prefers tea", kind="preference")
    assert len(server.requests) == 1
    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/sessions/s-1/events")
    assert request.json() == {
        "events": [{"id": event_id, "type": "memory.propose", "text": "Prefers tea", "kind": "preference"}]
    }
    assert uuid.UUID(event_id).version == 4
    assert request.headers["content-type"] == "application/json"
    assert verify_sigv4(request, ACCESS_KEY, SECRET_KEY)


def test_authorization_is_sigv4_for_execute_api_in_us_east_1(server: RecordingServer, no_sleep: list[float]) -> None:
    server.reply(Reply(200, {"items": []}))
    _host(server, no_sleep).fetch_context("s-1")
    auth = server.requests[0].headers["authorization"]
    date = server.requests[0].headers["x-amz-date"][:8]
    assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{date}/us-east-1/execute-api/aws4_request, ")
    assert "SignedHeaders=" in auth and "host" in auth.split("SignedHeaders=")[1]


def test_the_signature_checker_rejects_a_wrong_secret_or_a_changed_body(
    server: RecordingServer, no_sleep: list[float], verify_sigv4: Callable[..., bool]
) -> None:
    server.reply(Reply(202, {"accepted": 1}))
    _worker(server, no_sleep).propose("s-1", "Prefers tea")
    request = server.requests[0]
    assert verify_sigv4(request, ACCESS_KEY, SECRET_KEY)
    assert not verify_sigv4(request, ACCESS_KEY, "another-secret")
    request.body = request.body.replace(b"tea", b"tee")
    assert not verify_sigv4(request, ACCESS_KEY, SECRET_KEY)


def test_a_retry_after_503_resends_the_same_event_id_and_body(
    server: RecordingServer, no_sleep: list[float], verify_sigv4: Callable[..., bool]
) -> None:
    server.reply(Reply(503, {"code": "unavailable", "message": "try again"}), Reply(202, {"accepted": 1}))
    memory = AgentMemory([], "s-1", _worker(server, no_sleep))
    event_id = memory.propose("Prefers tea", kind="preference")
    assert len(server.requests) == 2
    first, second = server.requests
    assert first.body == second.body
    assert [r.json()["events"][0]["id"] for r in server.requests] == [event_id, event_id]
    assert all(verify_sigv4(r, ACCESS_KEY, SECRET_KEY) for r in server.requests)
    assert len(no_sleep) == 1  # backed off once, between the two attempts


def test_a_dropped_connection_and_a_429_are_retried_with_the_same_id(
    server: RecordingServer, no_sleep: list[float]
) -> None:
    server.reply(
        Reply(drop=True),
        Reply(429, {"code": "throttled"}, headers={"Retry-After": "1"}),
        Reply(202, {"accepted": 1}),
    )
    event_id = _worker(server, no_sleep).propose("s-1", "Prefers tea")
    ids = [r.json()["events"][0]["id"] for r in server.requests]
    assert ids == [event_id] * 3
    assert no_sleep[1] == 1.0  # Retry-After honoured


def test_persistent_5xx_raises_server_error_after_the_attempt_budget(
    server: RecordingServer, no_sleep: list[float]
) -> None:
    server.default = Reply(500, {"code": "internal", "message": "boom"})
    worker = _worker(server, no_sleep, retry=RetryPolicy(max_attempts=3))
    with pytest.raises(ServerError) as caught:
        worker.propose("s-1", "Prefers tea")
    assert caught.value.status == 500
    assert len(server.requests) == 3
    assert len({r.body for r in server.requests}) == 1


def test_client_errors_are_not_retried(server: RecordingServer, no_sleep: list[float]) -> None:
    server.reply(Reply(409, {"code": "conflict", "message": "session differs"}))
    from personal_memory_sdk import ConflictError

    with pytest.raises(ConflictError):
        _host(server, no_sleep).register_session("s-1", user_id="bob", agent="a", memory=True)
    assert len(server.requests) == 1 and no_sleep == []


def test_an_unreachable_server_is_a_transport_error(no_sleep: list[float]) -> None:
    with RecordingServer() as gone:
        url = gone.url
    worker = WorkerClient(url, ACCESS_KEY, SECRET_KEY, sleep=no_sleep.append)
    with pytest.raises(TransportError) as caught:
        worker.propose("s-1", "Prefers tea")
    assert caught.value.attempts == 4 and len(no_sleep) == 3
    assert "tea" not in str(caught.value)


def test_register_session_sends_the_contract_body_and_parses_the_session(
    server: RecordingServer, no_sleep: list[float], verify_sigv4: Callable[..., bool]
) -> None:
    server.reply(Reply(200, SESSION))
    session = _host(server, no_sleep).register_session(
        "s-1", user_id="alice", thread_id="t-1", agent="memory-agent", memory=True
    )
    request = server.requests[0]
    assert (request.method, request.path) == ("PUT", "/v1/sessions/s-1")
    assert request.json() == {
        "user_id": "alice",
        "thread_id": "t-1",
        "agent": "memory-agent",
        "manifest": {"memory": True},
    }
    assert session.user_id == "alice" and session.memory is True and session.tainted is False
    assert verify_sigv4(request, ACCESS_KEY, SECRET_KEY)


def test_mark_untrusted_posts_without_a_body(server: RecordingServer, no_sleep: list[float]) -> None:
    server.reply(Reply(200, {**SESSION, "tainted": True}))
    session = _host(server, no_sleep).mark_untrusted("s-1")
    request = server.requests[0]
    assert (request.method, request.path, request.body) == (
        "POST",
        "/v1/sessions/s-1/untrusted",
        b"",
    )
    assert session.tainted is True


def test_fetch_context_returns_frozen_items(server: RecordingServer, no_sleep: list[float]) -> None:
    server.reply(
        Reply(
            200,
            {"items": [{"text": "Prefers tea", "kind": "preference", "pinned": True, "tainted": False}]},
        )
    )
    items = _host(server, no_sleep).fetch_context("s-1")
    assert server.requests[0].method == "GET" and server.requests[0].path == "/v1/sessions/s-1/memory"
    assert list(items) == [MemoryItem("Prefers tea", "preference", True, False)]


def test_list_events_parses_outcomes(server: RecordingServer, no_sleep: list[float]) -> None:
    server.reply(
        Reply(
            200,
            {
                "events": [
                    {
                        "id": "e1",
                        "type": "memory.propose",
                        "kind": "note",
                        "message_id": None,
                        "status": "handled",
                        "outcome": {"type": "memory.proposed", "proposal_id": "p1"},
                        "created_at": "2026-01-01T00:00:00Z",
                    },
                    {
                        "id": "e2",
                        "type": "memory.propose",
                        "kind": "note",
                        "message_id": "m",
                        "status": "handled",
                        "outcome": {"type": "memory.proposal_refused", "reason": "session_cap"},
                        "created_at": "2026-01-01T00:00:01Z",
                    },
                    {
                        "id": "e3",
                        "type": "memory.propose",
                        "kind": "note",
                        "message_id": None,
                        "status": "pending",
                        "outcome": None,
                        "created_at": "2026-01-01T00:00:02Z",
                    },
                ]
            },
        )
    )
    events = _worker(server, no_sleep).list_events("s-1")
    assert [(e.id, e.handled) for e in events] == [("e1", True), ("e2", True), ("e3", False)]
    assert events[0].outcome is not None and events[0].outcome.proposal_id == "p1"
    assert events[1].outcome is not None and events[1].outcome.reason == "session_cap"
    assert events[2].outcome is None


def test_session_token_is_sent_and_signed(
    server: RecordingServer, no_sleep: list[float], verify_sigv4: Callable[..., bool]
) -> None:
    server.reply(Reply(200, {"items": []}))
    HostClient(server.url, ACCESS_KEY, SECRET_KEY, "tok-123", sleep=no_sleep.append).fetch_context("s-1")
    request = server.requests[0]
    assert request.headers["x-amz-security-token"] == "tok-123"
    assert "x-amz-security-token" in request.headers["authorization"]
    assert verify_sigv4(request, ACCESS_KEY, SECRET_KEY)


def test_session_ids_are_one_encoded_path_segment(server: RecordingServer, no_sleep: list[float]) -> None:
    server.reply(Reply(200, {"items": []}))
    _host(server, no_sleep).fetch_context("../operator/memory?user_id=bob")
    assert server.requests[0].path == "/v1/sessions/..%2Foperator%2Fmemory%3Fuser_id%3Dbob/memory"


@pytest.mark.parametrize("session_id", ["", ".", "..", "x" * 257])
def test_session_ids_that_cannot_name_a_session_are_refused_before_sending(
    server: RecordingServer, no_sleep: list[float], session_id: str
) -> None:
    with pytest.raises(ValueError):
        _host(server, no_sleep).fetch_context(session_id)
    assert server.requests == []


@pytest.mark.parametrize("session_id", ["s-1", "sess 1/ü?x=1"])
def test_signatures_verify_with_the_local_stack_verifier(
    server: RecordingServer, no_sleep: list[float], session_id: str
) -> None:
    sigv4 = pytest.importorskip("local.sigv4")
    principal = sigv4.LocalPrincipal(ACCESS_KEY, SECRET_KEY, "arn:aws:iam::123456789012:role/host")
    server.reply(Reply(202, {"accepted": 1}))
    _worker(server, no_sleep, session_token=None).propose(session_id, "Prefers tea")
    request = server.requests[0]
    path, _, query = request.path.partition("?")
    arn = sigv4.verify_request(request.method, path, query, request.headers, request.body, {"host": principal})
    assert arn == principal.arn


def test_redirects_are_not_followed(server: RecordingServer, no_sleep: list[float]) -> None:
    server.reply(Reply(302, b"", headers={"Location": "http://127.0.0.1:9/elsewhere"}))
    with pytest.raises(Exception) as caught:
        _host(server, no_sleep).fetch_context("s-1")
    assert getattr(caught.value, "status", None) == 302
    assert len(server.requests) == 1


def test_only_http_base_urls_are_accepted() -> None:
    with pytest.raises(ValueError):
        HostClient("file:///etc/passwd", ACCESS_KEY, SECRET_KEY)
