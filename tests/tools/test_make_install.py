"""How `make` fills .venv: the interpreter it builds it on, the install from uv's cache first, and the checks venv apart."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEBIAN_PYTHON = Path("/usr/bin/python3.11")


def _make_value(name: str, **env: str) -> str:
    """The value `make` gives a variable of the Makefile, as a recipe would see it."""
    run = subprocess.run(
        ["make", "-s", "--no-print-directory", "--eval", f"print-value: ; @echo $({name})", "print-value"],
        cwd=ROOT,
        env={**{k: v for k, v in os.environ.items() if k != "PYTHON"}, **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return run.stdout.strip()


def test_the_venv_is_built_on_debians_optimized_python_where_the_machine_has_it() -> None:
    expected = str(DEBIAN_PYTHON) if DEBIAN_PYTHON.exists() else "python3"
    assert _make_value("PYTHON") == expected


def test_an_interpreter_named_by_the_caller_wins() -> None:
    assert _make_value("PYTHON", PYTHON="/opt/other/python3") == "/opt/other/python3"


def test_the_checks_venv_takes_its_own_interpreter_not_the_makefiles() -> None:
    """checkov's pins need CPython 3.11.5+; Debian 12's python3.11 (the Makefile's choice) is 3.11.2."""
    script = (ROOT / "scripts" / "package.sh").read_text()
    venv_lines = [line for line in script.splitlines() if " venv " in line and '"$CHECKS_VENV"' in line]
    assert venv_lines, "package.sh no longer makes the checks venv"
    assert all("CHECKS_PYTHON" in line and "${PYTHON" not in line for line in venv_lines), venv_lines


def test_the_install_asks_uvs_cache_first_and_pypi_only_when_it_lacks_a_pin() -> None:
    """The offline attempt comes first; its failure (a new machine's empty cache) falls to the same install online."""
    run = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", ".venv/.installed"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "PYTHON"},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    install = " ".join(run.stdout.replace("\\\n", " ").split())
    offline = install.index("uv pip install -q --python .venv/bin/python --offline -r requirements-dev.txt")
    online = install.index("|| .venv/bin/uv pip install -q --python .venv/bin/python -r requirements-dev.txt", offline)
    assert offline < online
