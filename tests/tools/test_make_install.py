"""How `make` fills .venv: the interpreter it builds it on, the install from uv's cache first, and the checks venv apart."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
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


def _lambda_python(home: Path) -> str | None:
    """The python3.13 the Makefile should find: a system one first, else pyenv's newest 3.13.x under `home`."""
    for system in (Path("/usr/bin/python3.13"), Path("/usr/local/bin/python3.13")):
        if system.exists():
            return str(system)
    pyenv = sorted(home.glob(".pyenv/versions/3.13.*/bin/python3.13"))
    return str(pyenv[-1]) if pyenv else None


def test_the_venv_is_built_on_the_python_lambda_runs_where_the_machine_has_it() -> None:
    runtimes = set(re.findall(r'"Runtime": "(python[0-9.]+)"', _template()))
    assert runtimes == {"python3.13"}, runtimes  # the version looked for below is the one Lambda runs
    found = _lambda_python(Path.home())
    expected = found or (str(DEBIAN_PYTHON) if DEBIAN_PYTHON.exists() else "python3")
    assert _make_value("PYTHON") == expected


def test_without_python313_the_venv_falls_back_to_debians_then_python3(tmp_path: Path) -> None:
    if _lambda_python(tmp_path) is not None:  # a system-wide 3.13: no home can hide it
        return
    expected = str(DEBIAN_PYTHON) if DEBIAN_PYTHON.exists() else "python3"
    assert _make_value("PYTHON", HOME=str(tmp_path)) == expected


def _template() -> str:
    """The Runtime the packaged functions declare (infra/, read as text)."""
    return "".join(p.read_text() for p in sorted((ROOT / "infra").glob("*.json")))


def test_the_oldest_job_runs_on_the_oldest_python_the_sdk_claims() -> None:
    claim = tomllib.loads((ROOT / "sdk" / "pyproject.toml").read_text())["project"]["requires-python"]
    oldest = re.fullmatch(r">=(\d+)\.(\d+)", claim)
    assert oldest, claim
    interpreter = _make_value("OLDEST_PYTHON")
    version = subprocess.run(
        [interpreter, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert tuple(version) == oldest.groups()


def test_an_interpreter_named_by_the_caller_wins() -> None:
    assert _make_value("PYTHON", PYTHON="/opt/other/python3") == "/opt/other/python3"


def test_the_checks_venv_takes_its_own_interpreter_not_the_makefiles() -> None:
    """checkov's pins need CPython 3.11.5+; Debian 12's python3.11 (the Makefile's choice) is 3.11.2."""
    script = (ROOT / "scripts" / "package.sh").read_text()
    venv_lines = [line for line in script.splitlines() if " venv " in line and '"$CHECKS_VENV"' in line]
    assert venv_lines, "package.sh no longer makes the checks venv"
    assert all("CHECKS_PYTHON" in line and "${PYTHON" not in line for line in venv_lines), venv_lines


def _install_commands() -> str:
    """What `make` would run to fill .venv from nothing (`make -n -B`), as one line."""
    run = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", ".venv/.installed"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "PYTHON"},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return " ".join(run.stdout.replace("\\\n", " ").split())


def test_the_install_asks_uvs_cache_first_and_pypi_only_when_it_lacks_a_pin() -> None:
    """The offline attempt comes first; its failure (a new machine's empty cache) falls to the same install online."""
    install = _install_commands()
    offline = install.index("uv pip install -q --python .venv/bin/python --offline -r requirements-dev.txt")
    online = install.index("|| .venv/bin/uv pip install -q --python .venv/bin/python -r requirements-dev.txt", offline)
    assert offline < online


def test_the_venv_is_made_without_ensurepip_and_pip_comes_pinned_with_the_requirements() -> None:
    """ensurepip took 6 of a fresh clone's 11 s of install: the base interpreter's pip puts uv in the venv, and
    pip (which chalice needs, and `.venv/bin/pip` gives a person) is a pin of requirements-dev.txt."""
    install = _install_commands()
    assert "-m venv --without-pip .venv" in install
    assert "-m pip --python .venv/bin/python install -q uv==" in install
    pins = re.findall(r"^pip==(\S+)", (ROOT / "requirements-dev.txt").read_text(), re.M)
    assert len(pins) == 1, pins
