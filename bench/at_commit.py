"""Figures of chalicelib/ as it was at an earlier commit, beside this tree's (the credential benches' before-columns):
read from the record bench/results/before.json while it is current, measured now otherwise.

A before-column runs this tree's bench code and corpora against the old chalicelib/. The old tree never changes, so
its figures change only when those files or the interpreter's version do: the record keeps, with the figures, the
SHA-256 of every file of this tree the measurement imported and the Python version, and is used only while all of
them still match. `bench/credentials_bench.py --record-before` (`make bench-before`) measures and records them anew.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "bench" / "results" / "before.json"
# tarfile's "data" filter where this Python has it (3.11.4+; Debian's 3.11.2 has not): the archive is our own.
_DATA_FILTER: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
# Runs the child (argv: the old tree, this tree, the child's source) with its stdout captured, then prints its figures
# and the files of this tree it imported (hidden folders such as .venv left out): what the figures depend on.
_WRAPPER = """
import contextlib, io, json, sys
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    exec(compile(sys.argv.pop(3), "<child>", "exec"), {"__name__": "__main__"})
root = sys.argv[2].rstrip("/") + "/"
files = {getattr(m, "__file__", None) or "" for m in list(sys.modules.values())}
ours = sorted(f[len(root):] for f in files if f.startswith(root) and not f[len(root):].startswith("."))
print(json.dumps({"figures": json.loads(printed.getvalue()), "inputs": ours}))
"""

__all__ = ["RECORD", "figures_at", "provenance"]


def figures_at(name: str, commit: str, child: str, *, record: bool = False) -> dict[str, Any]:
    """`child`'s figures (Python source; argv: the old tree, this tree; prints one JSON object) against chalicelib/
    at `commit`: the record's under `name` while current, else measured now (and recorded when `record`), or why
    they could not be measured."""
    recorded = _recorded(name, commit, child)
    if recorded is not None and not record:
        return {"available": True, "commit": commit, "source": "recorded", **recorded}
    measured = _measure(commit, child)
    if not measured["available"]:
        return measured
    figures = measured["figures"]
    if record:
        _write(name, _entry(commit, child, figures, measured["inputs"]))
    why = "asked to record it" if record else ("the record is stale" if name in _read() else "no record")
    return {"available": True, "commit": commit, "source": "measured now", "why_measured": why, **figures}


def provenance(before: dict[str, Any]) -> str:
    """How a before-column was obtained, for its header line."""
    if before.get("source") == "recorded":
        return (
            f"recorded {before['recorded_at'][:10]} on Python {before['python_version']} "
            f"at load {before['load_average'][0]:g} ({RECORD.relative_to(ROOT)}; make bench-before measures it anew)"
        )
    return f"measured now ({before['why_measured']})" if before.get("available") else "not measured"


def _entry(commit: str, child: str, figures: dict[str, Any], inputs: list[str]) -> dict[str, Any]:
    """What the record keeps of a measurement: the figures, what they depend on, and when and how busy it was."""
    return {
        "commit": commit,
        "python": _python(),
        "child": _digest(child.encode()),
        "inputs": {path: _sha256(ROOT / path) for path in inputs},
        "recorded_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python_version": platform.python_version(),
        "load_average": [round(load, 2) for load in os.getloadavg()],
        "figures": figures,
    }


def _recorded(name: str, commit: str, child: str) -> dict[str, Any] | None:
    """The record's figures and how they were measured, if they were measured at `commit` by `child` on this Python's
    version with every input file as it is now; else None."""
    entry = _read().get(name)
    if not isinstance(entry, dict) or (entry.get("commit"), entry.get("python")) != (commit, _python()):
        return None
    if entry.get("child") != _digest(child.encode()):
        return None
    inputs = entry.get("inputs")
    if not isinstance(inputs, dict) or not inputs or any(_sha256(ROOT / p) != h for p, h in inputs.items()):
        return None
    about = {key: entry[key] for key in ("recorded_at", "python_version", "load_average")}
    return {**about, **entry["figures"]}


def _measure(commit: str, child: str) -> dict[str, Any]:
    try:
        archive = subprocess.run(
            ["git", "archive", commit, "chalicelib"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return {"available": False, "why": f"git archive {commit[:10]} failed ({type(exc).__name__})"}
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, **_DATA_FILTER)
        done = subprocess.run(
            [sys.executable, "-c", _WRAPPER, tmp, str(ROOT), child],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    if done.returncode:
        return {"available": False, "why": done.stderr[-300:]}
    return {"available": True, **json.loads(done.stdout)}


def _python() -> str:
    return "{}.{}".format(*sys.version_info[:2])


def _sha256(path: Path) -> str | None:
    try:
        return _digest(path.read_bytes())
    except OSError:
        return None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read() -> dict[str, Any]:
    try:
        document = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _write(name: str, entry: dict[str, Any]) -> None:
    document = _read() | {name: entry}
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(dict(sorted(document.items())), indent=2, ensure_ascii=False) + "\n")
