"""The JavaScript SDK's own tests (`node --test`, sdk/js/test/), the live ones against the real local stack.

The SDK is installed from sdk/js/package-lock.json with `npm ci` the first time (as the Makefile's stamp does;
offline from npm's cache when it holds the pins). The live tests read BASE_URL and CREDENTIALS_FILE. Their
counts are recorded on this test and printed in the run's summary (tests/conftest.py, pytest_terminal_summary).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "sdk" / "js"
EXAMPLE = ROOT / "examples" / "memory-agent-js"
STAMP = JS / "node_modules" / ".installed"


def _installed() -> None:
    if STAMP.exists():
        return
    npm = shutil.which("npm")
    assert npm, "npm is needed to install the JavaScript SDK's pinned dependencies"
    command = [npm, "ci", "--prefer-offline", "--no-audit", "--no-fund"]
    for folder in (JS, EXAMPLE):  # the SDK's pins, then the example's link to it (as the Makefile's stamp)
        subprocess.run(command, cwd=folder, check=True, capture_output=True, timeout=300)
    STAMP.touch()


def _node_test(folder: str, env: dict[str, str]) -> dict[str, int]:
    """Run one folder's tests; their TAP summary counts, after asserting none failed, was skipped or left todo."""
    node = shutil.which("node")
    assert node, "node (20+) is needed for the JavaScript SDK's tests"
    done = subprocess.run(
        [node, "--test", "--test-reporter=tap", f"test/{folder}/"],
        cwd=JS,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    failures = [line for line in done.stdout.splitlines() if line.lstrip().startswith("not ok")]
    assert done.returncode == 0, "\n".join(failures) or done.stdout[-3000:] + done.stderr[-2000:]
    counts = {name: int(n) for name, n in re.findall(r"^# (tests|pass|fail|skipped|todo) (\d+)$", done.stdout, re.M)}
    assert counts["tests"] == counts["pass"] > 0 and counts["skipped"] == counts["todo"] == 0, counts
    return counts


def test_the_javascript_sdk_passes_its_tests_against_the_real_api(live: Any, record_property: Any) -> None:
    _installed()
    env = {**os.environ, "BASE_URL": live.url, "CREDENTIALS_FILE": str(live.credentials_file)}
    unit = _node_test("unit", env)
    live_counts = _node_test("live", env)
    # Every live test ran: as many as the live files declare (a file that cannot reach the stack fails whole).
    declared = sum(
        len(re.findall(r"^test\(", path.read_text(encoding="utf-8"), re.M))
        for path in (JS / "test" / "live").glob("*.test.js")
    )
    assert live_counts["tests"] == declared
    record_property("js_sdk_tests", f"{unit['tests']} unit + {live_counts['tests']} against the real API")
