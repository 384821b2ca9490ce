"""`make demo` is part of `make test`: the story passes on a fresh stack, and a broken expectation fails it."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from local import demo
from local.demo import Step, StepFailed, Story, run_steps
from local.demo_steps import NEW_ENTRY_TEXT

ROOT = Path(__file__).resolve().parents[2]
# The story as issue 4 tells it, one line per check; a step that silently disappears fails this.
EXPECTED_STEPS = 29  # issue 12 added forget-all destroying the key and the new key after it; issue 25 three MCP steps; issue 26 the receipt; issue 38 four connection steps
PROPOSAL_TEXT = "Prefers short, direct answers"  # what examples/memory-agent proposes


def _step_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(("✓", "✗"))]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/page-config", timeout=5):
            return True
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def test_make_demo_runs_every_step_green_and_stops_its_stack() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "local.demo"], cwd=ROOT, capture_output=True, timeout=300, check=False
    )
    output = result.stdout.decode("utf-8")
    assert result.returncode == 0, output + result.stderr.decode("utf-8", errors="replace")
    steps = _step_lines(output)
    assert len(steps) == EXPECTED_STEPS, output
    assert all(line.startswith("✓ ") for line in steps), output
    assert f"demo: {EXPECTED_STEPS} of {EXPECTED_STEPS} steps held" in output
    url = next(
        line.split(" at ", 1)[1] for line in output.splitlines() if line.startswith("demo: fresh local stack at ")
    )
    assert not _answers(url.strip())  # the demo's stack is gone once the demo exits


def test_a_failing_step_is_crossed_the_later_steps_still_run_and_the_run_fails() -> None:
    def differs() -> None:
        raise StepFailed("the context gave 2 items, expected 1")

    def crashes() -> None:
        raise KeyError("secret text must not be printed")

    ran: list[str] = []
    out = io.StringIO()
    status = run_steps(
        [
            Step("first holds", lambda: ran.append("first")),
            Step("second differs", differs),
            Step("third crashes", crashes),
            Step("fourth holds", lambda: ran.append("fourth")),
        ],
        out,
    )
    assert status == 1
    assert ran == ["first", "fourth"]
    assert _step_lines(out.getvalue()) == [
        "✓ first holds",
        "✗ second differs: the context gave 2 items, expected 1",
        "✗ third crashes: unexpected KeyError",
        "✓ fourth holds",
    ]
    assert "demo: 2 of 4 steps held" in out.getvalue()
    assert "secret text" not in out.getvalue()


def test_steps_that_all_hold_exit_zero() -> None:
    out = io.StringIO()
    assert run_steps([Step("holds", lambda: None)], out) == 0
    assert _step_lines(out.getvalue()) == ["✓ holds"]


def test_the_demo_fails_when_the_stack_does_not_start(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_stack(workdir: Path) -> Any:
        raise RuntimeError("the local stack exited while starting")

    monkeypatch.setattr(demo, "start_local_stack", no_stack)
    out = io.StringIO()
    assert demo.main([], out) == 1
    assert _step_lines(out.getvalue()) == ["✗ a fresh local stack starts: the local stack exited while starting"]


def _fresh_users() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"alice-{tag}", f"bob-{tag}"


def test_the_story_fails_on_an_account_that_is_not_fresh(live: Any) -> None:
    """The account as a finished story leaves it (memory off, its last entry kept), made directly: the whole
    story once more would repeat what the green run above already shows."""
    users = _fresh_users()
    token = live.token(users[0])
    for request in (
        ("PUT", "/v1/memory/settings", {"enabled": True}),
        ("POST", "/v1/memory", {"text": NEW_ENTRY_TEXT}),
        ("PUT", "/v1/memory/settings", {"enabled": False}),
    ):
        status, body, _ = live.request(request[0], request[1], token=token, body=request[2])
        assert status in (200, 201), body

    again = io.StringIO()
    assert run_steps(Story(live.url, live.credentials_file, users).steps(), again) == 1
    crossed = [line for line in _step_lines(again.getvalue()) if line.startswith("✗")]
    assert (
        crossed[0]
        == f"✗ {users[0]} signs in (POST /dev/token); her memory is off and empty: the account already holds 1 entries and 0 proposals"
    )
    assert any(line.startswith("✗ a new session's context gives the entry exactly once") for line in crossed)
    # Failure lines give counts and ids, never what the person shared.
    assert all(text not in again.getvalue() for text in (demo.ENTRY_TEXT, PROPOSAL_TEXT, NEW_ENTRY_TEXT))


def test_the_story_fails_when_the_worker_signs_with_a_wrong_secret(live: Any, tmp_path: Path) -> None:
    keys = json.loads(live.credentials_file.read_text())
    secret = keys["worker"]["secret_access_key"]
    keys["worker"]["secret_access_key"] = ("y" if secret[0] == "x" else "x") + secret[1:]
    tampered = tmp_path / "credentials.json"
    tampered.write_text(json.dumps(keys))

    out = io.StringIO()
    assert run_steps(Story(live.url, tampered, _fresh_users()).steps(), out) == 1
    lines = _step_lines(out.getvalue())
    assert len(lines) == EXPECTED_STEPS
    proposes = next(line for line in lines if "proposes one entry" in line)
    assert proposes.startswith("✗ ") and "403 forbidden" in proposes, proposes
    # The host's keys are intact, so the steps that need no worker still hold.
    assert lines[0].startswith("✓ ") and lines[1].startswith("✓ ")


def test_the_mcp_steps_share_one_server_and_each_is_crossed_when_it_cannot_start(
    live: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The three MCP steps use one session (one server process, as a client keeps one per conversation); a
    server that cannot start crosses all three, in seconds, and leaves no loop thread behind."""
    import threading

    from local import demo_mcp
    from local.demo_mcp import McpStory

    users = _fresh_users()
    story = Story(live.url, live.credentials_file, users)
    assert run_steps(story.steps()[:22], io.StringIO()) == 0  # the main story, up to the MCP steps
    sessions: list[Any] = []

    class Counted(demo_mcp._Session):
        def __init__(self, *args: Any) -> None:
            sessions.append(args)
            super().__init__(*args)

    monkeypatch.setattr(demo_mcp, "_Session", Counted)
    out = io.StringIO()
    assert run_steps(McpStory(story).steps(), out) == 0, out.getvalue()
    assert len(sessions) == 1  # one server process for the three steps

    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))  # the server cannot start
    out = io.StringIO()
    assert run_steps(McpStory(story).steps(), out) == 1
    assert [line[0] for line in _step_lines(out.getvalue())] == ["✗", "✗", "✗"]
    assert not [t for t in threading.enumerate() if t.name == "mcp-session"]
