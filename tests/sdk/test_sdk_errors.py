"""Error answers become typed SDK exceptions that carry status and code, and never the text sent."""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import pytest
from personal_memory_sdk import (
    ApiError,
    ConflictError,
    CredentialRefusedError,
    CredentialsFileError,
    ForbiddenError,
    HostClient,
    InvalidRequestError,
    LimitReachedError,
    MemoryOffError,
    NotFoundError,
    ProtocolError,
    UnauthorizedError,
    WorkerClient,
    load_credentials_file,
)
from sdk_http_support import ACCESS_KEY, SECRET_KEY, RecordingServer, Reply

PRIVATE = "My bank PIN hint is the cat's birthday"


@pytest.mark.parametrize(
    ("status", "code", "expected"),
    [
        (400, "invalid_request", InvalidRequestError),
        (401, "unauthorized", UnauthorizedError),
        (403, "forbidden", ForbiddenError),
        (404, "not_found", NotFoundError),
        (409, "conflict", ConflictError),
        (409, "memory_off", MemoryOffError),
        (409, "limit_reached", LimitReachedError),
        (422, "credential_refused", CredentialRefusedError),
    ],
)
def test_each_contract_code_maps_to_its_exception(
    server: RecordingServer, status: int, code: str, expected: type[ApiError]
) -> None:
    server.reply(Reply(status, {"code": code, "message": "refused"}))
    worker = WorkerClient(server.url, ACCESS_KEY, SECRET_KEY, sleep=lambda _: None)
    with pytest.raises(expected) as caught:
        worker.propose("s-1", PRIVATE)
    assert (caught.value.status, caught.value.code) == (status, code)
    assert (caught.value.method, caught.value.path) == ("POST", "/v1/sessions/s-1/events")


def test_an_error_never_carries_the_text_sent_even_if_the_server_echoes_it(
    server: RecordingServer,
) -> None:
    server.reply(Reply(400, {"code": "invalid_request", "message": f"bad text: {PRIVATE}"}))
    worker = WorkerClient(server.url, ACCESS_KEY, SECRET_KEY, sleep=lambda _: None)
    with pytest.raises(InvalidRequestError) as caught:
        worker.propose("s-1", PRIVATE)
    error = caught.value
    rendered = "".join(traceback.format_exception(error)) + repr(error) + repr(vars(error))
    assert "PIN" not in rendered and "birthday" not in rendered
    assert error.__cause__ is None and error.__context__ is None


@pytest.mark.parametrize("code", [f"nope {PRIVATE}", "forbidden\n" + PRIVATE, "forbidden\n"])
def test_a_code_that_is_not_a_contract_word_is_not_repeated(server: RecordingServer, code: str) -> None:
    server.reply(Reply(403, {"code": code, "message": "x"}))
    host = HostClient(server.url, ACCESS_KEY, SECRET_KEY, sleep=lambda _: None)
    with pytest.raises(ForbiddenError) as caught:
        host.fetch_context("s-1")
    assert caught.value.code == "unknown" and "PIN" not in str(caught.value)


def test_an_error_without_a_json_body_maps_by_status(server: RecordingServer) -> None:
    server.reply(Reply(404, b"<html>Not Found</html>"))
    host = HostClient(server.url, ACCESS_KEY, SECRET_KEY, sleep=lambda _: None)
    with pytest.raises(NotFoundError) as caught:
        host.fetch_context("missing")
    assert caught.value.code == "http_404"


def test_an_unexpected_success_shape_is_a_protocol_error_naming_the_field_only(
    server: RecordingServer,
) -> None:
    server.reply(Reply(200, {"items": [{"text": PRIVATE, "kind": "note", "pinned": 1, "tainted": False}]}))
    host = HostClient(server.url, ACCESS_KEY, SECRET_KEY, sleep=lambda _: None)
    with pytest.raises(ProtocolError) as caught:
        host.fetch_context("s-1")
    assert "pinned" in str(caught.value) and "PIN" not in str(caught.value)


def test_credentials_file_problems_never_show_the_secrets(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"host": {"access_key_id": "AKIDX", "secret_access_key": "s3cr3t"}}))
    keys = load_credentials_file(path, "host")
    assert keys.access_key_id == "AKIDX" and "s3cr3t" not in repr(keys)
    with pytest.raises(CredentialsFileError) as caught:
        load_credentials_file(path, "worker")
    assert "worker" in str(caught.value)
    path.write_text('{"host": {"access_key_id": "AKIDX", "secret_access_key": "s3cr3t"')
    with pytest.raises(CredentialsFileError) as caught:
        load_credentials_file(path, "host")
    assert "s3cr3t" not in str(caught.value)
