"""The local launcher's own edges (red team, issue 21 #14): clear 400s, never a dead server or a 500."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

from local.dev_clock import MAX_ADVANCE_SECONDS
from tests.support.live import LiveStack, start_live_stack


@pytest.fixture(scope="module")
def own_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveStack]:
    """A stack of this module's own: its clock is pushed to the end, which no other test should see."""
    stack = start_live_stack(tmp_path_factory.mktemp("launcher-edges"))
    yield stack
    stack.stop()


def _raw(stack: LiveStack, request: bytes) -> bytes:
    address = urlparse(stack.url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as conn:
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_the_dev_clock_refuses_to_run_past_its_bound_and_the_server_keeps_answering(own_stack: LiveStack) -> None:
    token = own_stack.token("clock-edge")
    answers = [
        own_stack.request("POST", "/dev/clock", body={"advance_seconds": MAX_ADVANCE_SECONDS})[:2] for _ in range(8)
    ]
    statuses = [status for status, _ in answers]
    assert statuses[:5] == [200] * 5 and set(statuses[5:]) == {400}, statuses
    assert answers[-1][1]["code"] == "invalid_request"
    assert own_stack.request("GET", "/v1/memory", token=token)[0] == 200
    assert own_stack.request("POST", "/dev/ttl-sweep", body={})[0] == 200


@pytest.mark.parametrize("body", [b"[" * 100_000, b"{" * 50_000, b'"alice"', b"not json", b"\xff\xfe"])
def test_dev_token_with_a_body_that_is_not_one_json_object_is_a_400(own_stack: LiveStack, body: bytes) -> None:
    status, answer, _ = own_stack.request("POST", "/dev/token", raw=body)
    assert status == 400 and answer["code"] == "invalid_request"


@pytest.mark.parametrize("length", [b"abc", b"-5", b"1e3", b"\xd9\xa3", b"99999999999999999999"])
def test_a_bad_content_length_is_a_400_and_the_server_answers_the_next_request(
    own_stack: LiveStack, length: bytes
) -> None:
    answer = _raw(own_stack, b"POST /dev/token HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n\r\n{}")
    assert answer.startswith(b"HTTP/1.0 400") or answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b'"code": "invalid_request"' in answer
    assert own_stack.request("POST", "/dev/token", body={"user_id": "after"})[0] == 200
