"""`make smoke` against `make run`: the script a first real deploy is verified with, run as a subprocess, step by step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _smoke(live: Any, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "scripts/smoke.py", "--base-url", live.url, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_smoke_story_passes_against_the_local_stack_and_leaves_the_user_with_nothing_but_the_journal(
    live: Any,
) -> None:
    run = _smoke(live, "--credentials", str(live.credentials_file), "--user-id", "smoke-user-1")
    assert run.returncode == 0, run.stdout + run.stderr
    steps = [line for line in run.stdout.splitlines() if line.startswith("ok ")]
    assert len(steps) >= 14 and "smoke: passed" in run.stdout
    for route in ("/v1/sessions/", "/v1/inbox", "/accept", "/v1/operator/memory"):
        assert any(route in line for line in steps), route
    # What is stored afterwards: nothing listed for the user, and the journal holds what the story did.
    token = live.token("smoke-user-1")
    status, memory, _ = live.request("GET", "/v1/memory", token=token)
    assert status == 200 and memory["items"] == [] and memory["proposals"] == []
    status, journal, _ = live.request("GET", "/v1/memory/journal", token=token)
    kinds = json.dumps(journal)
    assert status == 200 and "keep.memory.operator_access" in kinds and "keep.memory.forget_all" in kinds
    assert "green tea" not in kinds and "walks at noon" not in kinds  # the journal never holds text


def test_the_smoke_fails_loudly_at_the_first_step_the_stage_refuses(live: Any, tmp_path: Path) -> None:
    wrong = {role: {**keys, "secret_access_key": "not-the-secret"} for role, keys in live.credentials().items()}
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    run = _smoke(live, "--credentials", str(tmp_path / "wrong.json"), "--user-id", "smoke-user-2")
    assert run.returncode == 1
    [failed] = [line for line in run.stdout.splitlines() if line.startswith("FAILED")]
    assert "host" in failed and "/v1/sessions/" in failed and "→ 403" in failed
    assert "smoke FAILED" in run.stdout and "not-the-secret" not in run.stdout


def test_the_signing_region_comes_from_the_url_and_the_operator_is_given_the_tokens_subject() -> None:
    import base64

    from scripts import smoke

    assert smoke.region_of("https://abc123.execute-api.eu-west-1.amazonaws.com/api/") == "eu-west-1"
    assert smoke.region_of("http://127.0.0.1:8000") == "us-east-1"  # the local stack checks us-east-1 signatures
    claims = base64.urlsafe_b64encode(json.dumps({"sub": "auth0|alice"}).encode()).decode().rstrip("=")
    assert smoke.token_subject(f"e30.{claims}.sig") == "auth0|alice"
    for bad in ("", "no-dots", "e30.e30.sig"):
        try:
            smoke.token_subject(bad)
        except smoke.SmokeFailed:
            continue
        raise AssertionError(f"{bad!r} was accepted")
