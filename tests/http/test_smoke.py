"""`make smoke` against `make run`: the script a first real deploy is verified with, run as a subprocess, step by step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _smoke(live: Any, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "scripts/smoke.py", "--base-url", live.url, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
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


def test_make_smoke_against_the_local_stack_needs_no_credentials_argument(live: Any) -> None:
    """`make smoke BASE_URL=http://127.0.0.1:PORT` alone: the keys are the launcher's own file, found as `make run`
    was told to write it (MEMORY_CREDENTIALS_FILE, here the test stack's), and no AWS credentials are asked for."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env |= {"MEMORY_CREDENTIALS_FILE": str(live.credentials_file), "AWS_CONFIG_FILE": "/nonexistent"}
    env |= {"AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}
    run = subprocess.run(
        ["make", "-s", "--no-print-directory", "smoke", f"BASE_URL={live.url}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"the local stack's keys ({live.credentials_file})" in run.stdout and "smoke: passed" in run.stdout


def test_the_launchers_keys_are_the_default_only_for_a_loopback_url(tmp_path: Path, monkeypatch: Any) -> None:
    from scripts import smoke

    keys = tmp_path / "credentials.json"
    keys.write_text("{}")
    given = {"MEMORY_CREDENTIALS_FILE": str(keys)}
    for local in ("http://127.0.0.1:8000", "http://localhost:9000/", "http://[::1]:8000"):
        assert smoke.launcher_credentials(local, given) == str(keys)
    monkeypatch.setattr(smoke, "LAUNCHER_CREDENTIALS", keys)  # `make run`'s .local/credentials.json, unless told
    assert smoke.launcher_credentials("http://127.0.0.1:8000", {}) == str(keys)
    for stage in ("https://abc123.execute-api.eu-west-1.amazonaws.com/api/", "http://127.0.0.1.example.com"):
        assert smoke.launcher_credentials(stage, given) == ""
    try:
        smoke.launcher_credentials("http://127.0.0.1:8000", {"MEMORY_CREDENTIALS_FILE": str(tmp_path / "none.json")})
    except smoke.SmokeFailed as refused:
        assert "make run" in str(refused) and "CREDENTIALS=" in str(refused)
    else:
        raise AssertionError("a missing keys file was not said")
