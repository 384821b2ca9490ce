"""The credential benches' before-columns (bench/at_commit.py): read from the record while every file they were
measured with is unchanged, measured now when one changed or nothing is recorded, recorded only when asked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import at_commit

# Reads a module of "this tree" (the second path) beside the old chalicelib/ (the first), as the benches' children do.
CHILD = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import chalicelib, probe
print(json.dumps({"value": probe.VALUE, "old": chalicelib.OLD}))
"""


def _git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=tree, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A repository whose old commit's chalicelib says OLD = 1 (later 2), and a probe module read from the tree."""
    (tmp_path / "chalicelib").mkdir()
    (tmp_path / "chalicelib" / "__init__.py").write_text("OLD = 1\n")
    (tmp_path / "probe.py").write_text("VALUE = 'first'\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "old")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "chalicelib" / "__init__.py").write_text("OLD = 2\n")
    monkeypatch.setattr(at_commit, "ROOT", tmp_path)
    monkeypatch.setattr(at_commit, "RECORD", tmp_path / "bench" / "results" / "before.json")
    return tmp_path, commit


def _record(tree: Path) -> dict[str, Any]:
    return json.loads((tree / "bench" / "results" / "before.json").read_text())


def test_without_a_record_the_column_is_measured_now_at_the_commit_and_nothing_is_written(
    tree: tuple[Path, str],
) -> None:
    root, commit = tree
    figures = at_commit.figures_at("probe", commit, CHILD)
    assert (figures["source"], figures["why_measured"]) == ("measured now", "no record")
    assert (figures["value"], figures["old"]) == ("first", 1)
    assert not (root / "bench" / "results" / "before.json").exists()


def test_a_recorded_column_is_read_without_git_or_a_child(
    tree: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, commit = tree
    at_commit.figures_at("probe", commit, CHILD, record=True)
    entry = _record(root)["probe"]
    assert entry["commit"] == commit and entry["figures"] == {"value": "first", "old": 1}
    assert list(entry["inputs"]) == ["probe.py"]  # this tree's files the child imported, .venv and the old tree not
    assert entry["python"] == "{}.{}".format(*sys.version_info[:2])

    def no_subprocess(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a current record is read, not measured")

    monkeypatch.setattr(at_commit.subprocess, "run", no_subprocess)
    figures = at_commit.figures_at("probe", commit, CHILD)
    assert figures["source"] == "recorded" and (figures["value"], figures["old"]) == ("first", 1)
    assert "recorded" in at_commit.provenance(figures)


def test_a_changed_input_file_child_or_python_makes_the_record_stale(tree: tuple[Path, str]) -> None:
    root, commit = tree
    at_commit.figures_at("probe", commit, CHILD, record=True)
    (root / "probe.py").write_text("VALUE = 'second'\n")
    figures = at_commit.figures_at("probe", commit, CHILD)
    assert (figures["source"], figures["why_measured"]) == ("measured now", "the record is stale")
    assert figures["value"] == "second"
    assert _record(root)["probe"]["figures"]["value"] == "first"  # kept until asked to record

    at_commit.figures_at("probe", commit, CHILD, record=True)
    assert at_commit.figures_at("probe", commit, CHILD)["source"] == "recorded"
    assert at_commit.figures_at("probe", commit, CHILD + "\n")["source"] == "measured now"
    document = _record(root)
    document["probe"]["python"] = "3.0"
    (root / "bench" / "results" / "before.json").write_text(json.dumps(document))
    assert at_commit.figures_at("probe", commit, CHILD)["source"] == "measured now"
