"""openapi.yaml as real generators read it: openapi-python-client generates a client with no warning, and that
client drives the user story over HTTP, every status it meets parsing into its documented model."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.support.live import STREAM_DEADLINE_S
from tests.support.signing import signed_request

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "personal_memory_client"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n-----END RSA PRIVATE KEY-----"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    """Generate the client offline (the generator, installed from PyPI, reads only the local file) and import it."""
    out = tmp_path_factory.mktemp("client")
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}  # for its ruff post-hook
    result = subprocess.run(
        [
            os.path.join(bin_dir, "openapi-python-client"),
            "generate",
            "--path",
            str(ROOT / "openapi.yaml"),
            "--meta",
            "none",
            "--output-path",
            str(out / PACKAGE),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=out,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(out))
    try:
        modules = {
            name: importlib.import_module(f"{PACKAGE}.{name}")
            for name in ("client", "models", "errors", "api.user", "api.host")
        }
        user_ops = {
            op: importlib.import_module(f"{PACKAGE}.api.user.{op}")
            for op in (
                "get_memory",
                "put_settings",
                "add_entry",
                "edit_entry",
                "forget_entry",
                "forget_all",
                "accept_proposal",
                "reject_proposal",
                "get_inbox",
                "get_journal",
                "export_memory",
            )
        }
        host_ops = {op: importlib.import_module(f"{PACKAGE}.api.host.{op}") for op in ("register_session",)}
        yield SimpleNamespace(
            log=result.stdout + result.stderr,
            m=modules["models"],
            client=modules["client"],
            errors=modules["errors"],
            user=SimpleNamespace(**user_ops),
            host=SimpleNamespace(**host_ops),
        )
    finally:
        sys.path.remove(str(out))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def test_the_generator_reads_the_spec_with_no_warning(generated: SimpleNamespace) -> None:
    assert "warning" not in generated.log.lower(), generated.log
    assert "cannot parse" not in generated.log.lower(), generated.log
    assert [line for line in generated.log.splitlines() if line.strip()] == [f"Generating {PACKAGE}"] or all(
        PACKAGE in line for line in generated.log.splitlines() if line.strip()
    ), generated.log


def _propose(live: Any, user: str, token: str, text: str) -> str:
    creds = live.credentials()
    session_id = f"s-gen-{time.monotonic_ns()}"
    body = {"user_id": user, "thread_id": "t-gen", "agent": "memory-agent", "manifest": {"memory": True}}
    assert signed_request(live.url, "PUT", f"/v1/sessions/{session_id}", creds["host"], body)[0] == 200
    event = {"id": "e1", "type": "memory.propose", "text": text, "kind": "note", "message_id": "m-1"}
    assert (
        signed_request(live.url, "POST", f"/v1/sessions/{session_id}/events", creds["worker"], {"events": [event]})[0]
        == 202
    )
    deadline = time.monotonic() + STREAM_DEADLINE_S
    while time.monotonic() < deadline:
        _, inbox, _ = live.request("GET", "/v1/inbox", token=token)
        for proposal in inbox["memory_proposals"]:
            if proposal["source"].get("session_id") == session_id:
                return str(proposal["id"])
        time.sleep(0.2)
    raise AssertionError("the proposal never reached the inbox")


def test_the_generated_client_drives_the_user_story_and_parses_every_status(
    generated: SimpleNamespace, live: Any
) -> None:
    m, ops = generated.m, generated.user
    user = f"gen-{time.monotonic_ns()}"
    token = live.token(user)
    client = generated.client.AuthenticatedClient(base_url=live.url, token=token, raise_on_unexpected_status=True)
    anonymous = generated.client.Client(base_url=live.url, raise_on_unexpected_status=True)
    seen: set[tuple[str, int]] = set()

    def call(op: str, expected: int, model: Any, **kwargs: Any) -> Any:
        response = getattr(ops, op).sync_detailed(client=kwargs.pop("client", client), **kwargs)
        assert response.status_code == expected, (op, response.status_code, response.content[:200])
        if model is None:
            assert response.parsed is None, (op, response.parsed)
        else:
            assert isinstance(response.parsed, model), (op, type(response.parsed))
        seen.add((op, expected))
        return response

    view = call("get_memory", 200, m.MemoryView)
    assert view.parsed.enabled is False and view.parsed.items == []
    etag = view.headers["etag"]
    call("get_memory", 304, None, if_none_match=etag)
    call("get_memory", 401, m.UnauthorizedError, client=anonymous)
    off = call("add_entry", 409, m.MemoryOffOrLimitError, body=m.NewEntry(text="Likes tea"))
    assert off.parsed.code.value == "memory_off"
    call("put_settings", 200, m.Settings, body=m.Settings(enabled=True))
    call("get_memory", 200, m.MemoryView, if_none_match=etag)  # turning on changed the view
    entry = call(
        "add_entry", 201, m.Entry, body=m.NewEntry(text="Likes tea", kind=m.Kind.PREFERENCE, expires_in_days=30)
    ).parsed
    assert entry.agent is None and entry.edited is False and entry.expires_at is not None
    bad = call("add_entry", 400, m.InvalidRequestError, body=m.NewEntry(text="   "))
    assert bad.parsed.field == "text"
    refused = call("add_entry", 422, m.CredentialRefusedError, body=m.NewEntry(text=PEM))
    assert refused.parsed.shape == "private_key"
    edited = call("edit_entry", 200, m.Entry, id=entry.id, body=m.EntryChanges(kind=m.Kind.FACT, pinned=True)).parsed
    assert (edited.kind, edited.pinned, edited.edited) == (m.Kind.FACT, True, True)
    call("edit_entry", 404, m.NotFoundError, id="0" * 32, body=m.EntryChanges(pinned=True))

    first = _propose(live, user, token, "Likes maps")
    second = _propose(live, user, token, "Likes rain")
    inbox = call("get_inbox", 200, m.Inbox)
    assert {p.agent for p in inbox.parsed.memory_proposals} == {"memory-agent"}
    call("get_inbox", 304, None, if_none_match=inbox.headers["etag"])
    accepted = call("accept_proposal", 201, m.Entry, id=first, body=m.AcceptChanges(text="Likes old maps")).parsed
    assert (accepted.text, accepted.edited, accepted.origin.value, accepted.agent) == (
        "Likes old maps",
        True,
        "agent",
        "memory-agent",
    )
    call("accept_proposal", 404, m.NotFoundError, id=first)
    call("accept_proposal", 400, m.InvalidRequestError, id=second, body=m.AcceptChanges(text=" "))
    call("accept_proposal", 422, m.CredentialRefusedError, id=second, body=m.AcceptChanges(text=PEM))
    call("reject_proposal", 204, None, id=second)
    call("reject_proposal", 404, m.NotFoundError, id=second)
    call("forget_entry", 204, None, id=entry.id)
    call("forget_entry", 404, m.NotFoundError, id=entry.id)
    call("get_journal", 200, m.JournalPage)
    call("get_journal", 400, m.InvalidRequestError, limit=0)
    call("export_memory", 200, m.Export)
    third = _propose(live, user, token, "Likes snow")
    call("put_settings", 200, m.Settings, body=m.Settings(enabled=False))
    call("accept_proposal", 409, m.MemoryOffOrLimitError, id=third)
    assert call("forget_all", 200, m.Deleted).parsed.deleted == 2  # the accepted entry and the waiting one

    # An IAM route's refusal parses too: an unsigned host call is the gateway's 403.
    host = generated.host.register_session.sync_detailed(
        "s-unsigned", client=client, body=m.SessionRequest(agent="helper", user_id=user)
    )
    assert host.status_code == 403 and isinstance(host.parsed, m.ForbiddenError)

    statuses = {status for _, status in seen}
    assert statuses == {200, 201, 204, 304, 400, 401, 404, 409, 422}
    state = live.request("GET", "/v1/memory", token=token)[1]
    assert (state["enabled"], state["items"], state["proposals"]) == (False, [], [])
