"""One run of `make package` per test session (it takes a while), shared by every test that reads its output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True)
class Package:
    build: Path
    template: dict[str, Any]
    expanded: dict[str, Any]  # the SAM translator's CloudFormation, as deploy will make it
    log: str

    @property
    def out(self) -> Path:
        return self.build / "package"

    def resource(self, logical_id: str) -> dict[str, Any]:
        return self.template["Resources"][logical_id]

    def props(self, logical_id: str) -> dict[str, Any]:
        return self.resource(logical_id)["Properties"]

    def statements(self, role: str) -> list[dict[str, Any]]:
        policies = self.props(role)["Policies"]
        assert len(policies) == 1 and "ManagedPolicyArns" not in self.props(role)
        return policies[0]["PolicyDocument"]["Statement"]


@pytest.fixture(scope="session")
def package(tmp_path_factory: pytest.TempPathFactory) -> Package:
    """scripts/package.sh from scratch (no cached layer), into a build folder of its own."""
    build = tmp_path_factory.mktemp("package-build")
    env = {**os.environ, "PACKAGE_BUILD_DIR": str(build), "PY": sys.executable}
    run = subprocess.run(["bash", "scripts/package.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return Package(
        build=build,
        template=json.loads((build / "package" / "sam.json").read_text()),
        expanded=json.loads((build / "lint" / "cloudformation.json").read_text()),
        log=run.stdout,
    )
