"""Figures of chalicelib/ as it was at an earlier commit, measured beside this tree's (the credential benches' before-columns)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# tarfile's "data" filter where this Python has it (3.11.4+; Debian's 3.11.2 has not): the archive is our own.
_DATA_FILTER: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}

__all__ = ["figures_at"]


def figures_at(commit: str, child: str) -> dict[str, Any]:
    """Run `child` (Python source; argv: the old tree, this tree; prints one JSON object) against chalicelib/ at
    `commit`, or say why it could not be measured."""
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
            [sys.executable, "-c", child, tmp, str(ROOT)],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    if done.returncode:
        return {"available": False, "why": done.stderr[-300:]}
    return {"available": True, "commit": commit, **json.loads(done.stdout)}
