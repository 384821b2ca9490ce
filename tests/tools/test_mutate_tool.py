"""`make mutate`'s tool itself, fast: every mutation still applies, and exit codes are read honestly.

The full mutation run takes minutes and is not part of `make test`; this file is, so a refactor that
moves a mutation's original text fails here ("mutation no longer applies") instead of rotting quietly.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutate_tool", ROOT / "scripts" / "mutate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


tool = _load_tool()
REQUIRED = {
    "user_token_honors_user_id_query",
    "drop_manifest_gate",
    "drop_context_freezing",
    "drop_session_user_gate",
    "drop_memory_on_gate",
    "untainted_proposals",
    "no_credential_check_on_patch",
    "journal_text_in_context",
    "skip_operator_journal",
    "session_cap_six",
}


@pytest.mark.parametrize("mutation", tool.MUTATIONS, ids=lambda m: m.name)
def test_every_mutation_still_applies_exactly_once_to_the_tree(mutation: Any) -> None:
    tool.check_applies(mutation, ROOT)


@pytest.mark.parametrize("mutation", tool.MUTATIONS, ids=lambda m: m.name)
def test_every_mutation_changes_the_code_and_names_existing_test_files(mutation: Any) -> None:
    assert mutation.edits and all(edit.old != edit.new for edit in mutation.edits)
    assert mutation.tests and all((ROOT / test).is_file() for test in mutation.tests)
    assert not any("browser" in test for test in mutation.tests)


def test_the_issues_mutations_are_all_there_once() -> None:
    names = [m.name for m in tool.MUTATIONS]
    assert len(names) == len(set(names))
    assert REQUIRED <= set(names)


def _mutation(tool_module: ModuleType, old: str, new: str = "broken") -> Any:
    return tool_module.Mutation("probe", "a probe", ("tests/x.py",), (tool_module.Edit("code.py", old, new),))


@pytest.mark.parametrize("content", ["nothing to see\n", "gate = 1\ngate = 1\n"], ids=["missing", "twice"])
def test_a_mutation_whose_text_is_missing_or_repeated_is_refused_loudly(tmp_path: Path, content: str) -> None:
    (tmp_path / "code.py").write_text(content)
    with pytest.raises(tool.MutationRotted, match="mutation no longer applies"):
        tool.apply(_mutation(tool, "gate = 1\n"), tmp_path)
    assert (tmp_path / "code.py").read_text() == content


def test_apply_replaces_exactly_the_named_text(tmp_path: Path) -> None:
    (tmp_path / "code.py").write_text("a = 1\ngate = 1\nb = 2\n")
    tool.apply(_mutation(tool, "gate = 1\n", "gate = 0\n"), tmp_path)
    assert (tmp_path / "code.py").read_text() == "a = 1\ngate = 0\nb = 2\n"


def test_main_stops_before_running_anything_when_a_mutation_rotted(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    rotted = tool.Mutation(
        "rotted", "gone", ("tests/routes/test_agents.py",), (tool.Edit("app.py", "no such text anywhere\n", "x"),)
    )
    monkeypatch.setattr(tool, "MUTATIONS", (rotted,))
    monkeypatch.setattr(tool, "run_in_scratch", lambda *a, **k: pytest.fail("must not run"))
    assert tool.main(["rotted"]) == 2
    assert "mutation no longer applies" in capsys.readouterr().err


def _summary(failed: int = 0, errors: int = 0) -> Any:
    return tool.Summary(failed=failed, errors=errors, failed_ids=(), last_line="")


@pytest.mark.parametrize(
    ("exit_code", "failed", "errors", "verdict"),
    [
        (0, 0, 0, "SURVIVED"),
        (1, 1, 0, "CAUGHT"),
        (1, 2, 1, "CAUGHT"),
        (1, 0, 1, "ERROR"),  # only a fixture/setup error: the mutation broke the harness, no test caught it
        (2, 0, 1, "ERROR"),  # collection error / interrupted
        (3, 0, 0, "ERROR"),  # pytest internal error
        (4, 0, 0, "ERROR"),  # usage error, e.g. a test file that does not exist
        (5, 0, 0, "ERROR"),  # no tests collected
        (-1, 0, 0, "ERROR"),  # our timeout
    ],
)
def test_exit_codes_are_classified(exit_code: int, failed: int, errors: int, verdict: str) -> None:
    assert tool.classify(exit_code, _summary(failed, errors)) == verdict


def test_the_pytest_summary_gives_counts_and_failed_ids_with_spaces_in_parameters() -> None:
    output = "\n".join(
        [
            "..F",
            "=========================== short test summary info ============================",
            "FAILED tests/test_v.py::test_refused[aws_key-aws key AKIA123] - KeyError: 'code'",
            "FAILED tests/test_a.py::test_gate",
            "ERROR tests/test_b.py::test_setup - RuntimeError: boom",
            "E       AssertionError: [] != ['x']",
            "2 failed, 1 passed, 1 error in 3.21s",
        ]
    )
    summary = tool.parse_summary(output)
    assert (summary.failed, summary.errors) == (2, 1)
    assert summary.failed_ids == (
        "tests/test_v.py::test_refused[aws_key-aws key AKIA123]",
        "tests/test_a.py::test_gate",
    )
    assert summary.errored_ids == ("tests/test_b.py::test_setup",)
    assert summary.evidence == ("E       AssertionError: [] != ['x']",)


@pytest.mark.slow
def test_real_pytest_runs_are_classified_caught_survived_and_error(tmp_path: Path) -> None:
    (tmp_path / "test_passes.py").write_text("def test_ok():\n    assert True\n")
    (tmp_path / "test_fails.py").write_text("def test_bad():\n    assert False\n")
    (tmp_path / "test_broken.py").write_text("import no_such_module_here\n")

    def verdict(test: str) -> str:
        exit_code, output = tool.run_pytest(tmp_path, [test], stop_first=True)
        return tool.classify(exit_code, tool.parse_summary(output))

    assert verdict("test_passes.py") == "SURVIVED"
    assert verdict("test_fails.py") == "CAUGHT"
    assert verdict("test_broken.py") == "ERROR"
    assert verdict("test_missing.py") == "ERROR"


def test_the_scratch_copy_holds_the_source_but_not_the_venv_or_git() -> None:
    files = tool.source_files(ROOT)
    assert "app.py" in files and "scripts/mutate.py" in files and "tests/conftest.py" in files
    assert not any(name.startswith((".venv/", ".git/", ".local/")) or "__pycache__" in name for name in files)


def test_outcome_lines_name_the_verdict_and_the_first_failing_test() -> None:
    summary = tool.Summary(failed=1, errors=0, failed_ids=("tests/test_a.py::test_gate",), last_line="1 failed")
    assert (
        tool.Outcome("gate", "CAUGHT", summary, 1, 4.2).line()
        == "CAUGHT   gate  (1 failed: tests/test_a.py::test_gate)  [4s]"
    )
    assert tool.Outcome("gate", "SURVIVED", _summary(), 0, 9.6).line() == "SURVIVED gate  [10s]"
    assert tool.Outcome("gate", "ERROR", _summary(), 4, 1).line().startswith("ERROR    gate  (pytest exit 4:")


def _fake_runs(monkeypatch: pytest.MonkeyPatch, by_file: dict[str, tuple[int, Any]]) -> None:
    def fake(name: str, pristine: Path, tests: list[str], mutation: Any, deselect: Any) -> Any:
        [test] = tests
        exit_code, summary = by_file[test]
        return tool.Outcome(name, tool.classify(exit_code, summary), summary, exit_code, 1.0)

    monkeypatch.setattr(tool, "run_in_scratch", fake)


def test_the_baseline_collects_already_failing_tests_to_deselect(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    red = tool.Summary(
        failed=1, errors=1, failed_ids=("tests/a.py::test_red",), last_line="", errored_ids=("tests/a.py::test_setup",)
    )
    _fake_runs(monkeypatch, {"tests/a.py": (1, red), "tests/b.py": (0, _summary())})
    base = tool.baseline(tmp_path, ["tests/a.py", "tests/b.py"], 2)
    assert base.verdict != "ERROR"
    assert (base.summary.failed_ids, base.summary.errored_ids) == (
        ("tests/a.py::test_red",),
        ("tests/a.py::test_setup",),
    )


def test_a_baseline_that_cannot_run_its_tests_is_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_runs(monkeypatch, {"tests/a.py": (2, _summary(errors=1)), "tests/b.py": (0, _summary())})
    assert tool.baseline(tmp_path, ["tests/a.py", "tests/b.py"], 2).verdict == "ERROR"


def test_a_catch_by_a_test_that_fails_unmutated_is_run_again_without_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    """The baseline runs the catching tests unmutated; a red one is deselected and its mutations run again."""
    red, green = "tests/a.py::test_red", "tests/a.py::test_green"
    seen: list[tuple[str, frozenset[str]]] = []

    def fake(name: str, pristine: Path, tests: Any, mutation: Any, deselect: Any) -> Any:
        seen.append((name, frozenset(deselect)))
        if mutation is None:  # the baseline: only the red test fails unmutated
            ran = [t for t in tests if t == red]
            summary = tool.Summary(failed=len(ran), errors=0, failed_ids=tuple(ran), last_line="")
            return tool.Outcome(name, tool.classify(1 if ran else 0, summary), summary, 1 if ran else 0, 1.0)
        caught_by = {
            "noticed": green if red in deselect else red,
            "unnoticed": None if red in deselect else red,
            "plain": green,
        }[name]
        summary = tool.Summary(
            failed=1 if caught_by else 0, errors=0, failed_ids=(caught_by,) if caught_by else (), last_line=""
        )
        return tool.Outcome(name, tool.classify(1 if caught_by else 0, summary), summary, 1 if caught_by else 0, 1.0)

    monkeypatch.setattr(tool, "run_in_scratch", fake)
    chosen = [tool.Mutation(name, "why", ("tests/a.py",), ()) for name in ("noticed", "unnoticed", "plain")]
    outcomes = tool.run_all(chosen, tmp_path, jobs=2, use_baseline=True, show=False)
    assert outcomes is not None
    assert {o.name: (o.verdict, o.summary.failed_ids) for o in outcomes} == {
        "noticed": ("CAUGHT", (green,)),
        "unnoticed": ("SURVIVED", ()),
        "plain": ("CAUGHT", (green,)),
    }
    reruns = [(name, deselect) for name, deselect in seen if name in ("noticed", "unnoticed") and deselect]
    assert sorted(reruns) == [("noticed", frozenset({red})), ("unnoticed", frozenset({red}))]  # "plain" ran once
    assert "already fail unmutated, deselected: tests/a.py::test_red" in capsys.readouterr().out
    assert [name for name, _ in seen].count("baseline") == 1  # green was confirmed once, not again


def test_with_no_baseline_the_catches_are_taken_as_they_are(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_runs(
        monkeypatch, {"tests/a.py": (1, tool.Summary(failed=1, errors=0, failed_ids=("tests/a.py::t",), last_line=""))}
    )
    outcomes = tool.run_all(
        [tool.Mutation("m", "why", ("tests/a.py",), ())], tmp_path, jobs=1, use_baseline=False, show=False
    )
    assert outcomes is not None and [o.verdict for o in outcomes] == ["CAUGHT"]


def test_every_catcher_hint_names_a_mutation_and_a_test_in_its_files() -> None:
    by_name = {m.name: m for m in tool.MUTATIONS}
    for name, nodeid in tool.CATCHERS.items():
        assert name in by_name, f"CATCHERS names no mutation: {name}"
        assert nodeid.split("::")[0] in by_name[name].tests, f"{name}: {nodeid} is not in its test files"


def test_a_catcher_hint_runs_alone_first_and_the_files_decide_when_it_no_longer_catches(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pristine = tmp_path / "tree"
    pristine.mkdir()
    runs: list[list[str]] = []
    catching = {"tests/a.py::test_hint"}

    def fake_pytest(root: Path, tests: Any, *, stop_first: bool, deselect: Any = ()) -> tuple[int, str]:
        runs.append(list(tests))
        hit = [t for t in tests if t in catching] or (
            ["tests/a.py::test_other"] if list(tests) == ["tests/a.py"] else []
        )
        return (1, f"FAILED {hit[0]}\n1 failed") if hit else (0, "1 passed")

    monkeypatch.setattr(tool, "run_pytest", fake_pytest)
    monkeypatch.setattr(tool, "CATCHERS", {"m": "tests/a.py::test_hint"})
    mutation = tool.Mutation("m", "why", ("tests/a.py",), ())
    outcome = tool.run_in_scratch("m", pristine, mutation.tests, mutation, frozenset())
    assert (outcome.verdict, outcome.summary.failed_ids, runs) == (
        "CAUGHT",
        ("tests/a.py::test_hint",),
        [["tests/a.py::test_hint"]],
    )
    runs.clear()
    catching.clear()  # the hint went stale: its files still judge the mutation
    outcome = tool.run_in_scratch("m", pristine, mutation.tests, mutation, frozenset())
    assert (outcome.verdict, outcome.summary.failed_ids, runs) == (
        "CAUGHT",
        ("tests/a.py::test_other",),
        [["tests/a.py::test_hint"], ["tests/a.py"]],
    )
    runs.clear()
    outcome = tool.run_in_scratch("m", pristine, mutation.tests, mutation, frozenset({"tests/a.py::test_hint"}))
    assert runs == [["tests/a.py"]]  # a hint that fails unmutated (deselected) is not tried
