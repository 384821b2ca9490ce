"""The chaos run in `make test`: a seeded workload over the real HTTP server with injected DynamoDB faults.

Each run is `python -m tests.support.chaos` in its own process (it starts the local stack there and
patches botocore's backoff sleeps to be recorded, not waited), its tables on this test process's DynamoDB
Local behind a prefix of its own (MEMORY_DYNAMODB_ENDPOINT, MEMORY_TABLE_PREFIX: no JVM of its own). Sequential runs replay exactly for a
seed. Longer runs and other seeds: `make chaos SEED=… N=… RATE=…`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from local.shared_dynamodb import ENDPOINT_VARIABLE, PREFIX_VARIABLE, SharedDynamoDB
from tests.support import ddb_local

ROOT = Path(__file__).resolve().parents[2]


def _chaos(*args: str) -> dict[str, Any]:
    shared = SharedDynamoDB(endpoint=ddb_local.shared().endpoint, prefix=ddb_local.stack_prefix())
    env = {**os.environ, ENDPOINT_VARIABLE: str(shared.endpoint), PREFIX_VARIABLE: shared.prefix}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.support.chaos", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=540,
        )
    finally:
        ddb_local.drop_stack_tables(str(shared.endpoint), shared.prefix)
    assert done.stdout.strip(), done.stderr[-3000:]
    report = json.loads(done.stdout[done.stdout.index("{") :])
    assert done.returncode == (1 if report["violations"] else 0)
    return report


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_five_percent_faults_lose_nothing_and_answer_in_the_contract() -> None:
    report = _chaos("--seed", "7", "--n", "300", "--rate", "0.05")
    assert report["violations"] == [], report
    assert report["server_errors_500"] == 0
    assert report["requests"] >= 200 and report["faults_injected"] >= 10 and report["botocore_retries"] > 0
    assert report["invariants_checked"] >= 400
    assert set(report["statuses"]) >= {"200", "201", "202", "204"}


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_half_of_all_calls_failing_gives_503s_never_a_500_or_a_half_change() -> None:
    report = _chaos("--seed", "3", "--n", "200", "--rate", "0.5")
    assert report["violations"] == [], report
    assert report["server_errors_500"] == 0 and report["unavailable_503"] > 10
    assert report["faults_injected"] > 100 and report["conflict_retries"] > 0
