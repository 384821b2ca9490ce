"""Docs that stay true: links, anchors and shell commands resolve (scripts/check_docs.py), and the screenshots
show the page's current assets (scripts/page_assets.py). Each check is shown failing on a planted break."""

from __future__ import annotations

import shutil
from pathlib import Path

from scripts import check_docs, page_assets

ROOT = Path(__file__).resolve().parents[2]


def test_every_link_anchor_and_command_of_the_docs_resolves() -> None:
    files = {path.relative_to(ROOT).as_posix() for path in check_docs.doc_files()}
    assert {"README.md", "bench/README.md", "sdk/README.md"} <= files and any(f.startswith("docs/") for f in files)
    assert check_docs.problems() == []


def _repo(tmp_path: Path, doc: str) -> Path:
    """A small repository: a Makefile with `run` and `test`, one script, a docs page with two headings, and `doc`."""
    (tmp_path / "Makefile").write_text("VENV := .venv\nrun: $(VENV)\n\tpython -m local.run\ntest check: run\n\t@true\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "smoke.py").write_text("")
    (tmp_path / "local").mkdir()
    (tmp_path / "local" / "run.py").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(
        "# The `make run` guide\n\n## Tokens, and 401s?\n\n## Tokens, and 401s?\n"
    )
    (tmp_path / "README.md").write_text(doc)
    return tmp_path


GOOD = """# Front

[guide](docs/guide.md), [its heading](docs/guide.md#tokens-and-401s), [again](docs/guide.md#tokens-and-401s-1),
[top](docs/guide.md#the-make-run-guide), [here](#front), <img src="docs/guide.md" alt="x">, [web](https://example.com/x#y),
`[not a link](nowhere.md)`

```sh
make run                         # a comment naming make nothing
make test check
make run PORT=9000 && .venv/bin/python scripts/smoke.py --base-url <URL> \\
  --token x
python -m local.run
```

```json
{"make": "nothing", "path": "scripts/none.py"}
```
"""


def test_a_repository_whose_docs_all_resolve_has_no_problem(tmp_path: Path) -> None:
    repo = _repo(tmp_path, GOOD)
    assert check_docs.problems(repo) == []


def test_a_planted_missing_file_anchor_or_outside_link_is_found(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        GOOD + "\n[gone](docs/missing.md) [bad anchor](docs/guide.md#no-such-heading) [mine](#nowhere)\n"
        '[up](../elsewhere.md) <img src="docs/screenshots/none.png">\n',
    )
    found = "\n".join(check_docs.problems(repo))
    for planted in ("docs/missing.md", "#no-such-heading", "#nowhere", "../elsewhere.md", "none.png"):
        assert planted in found, (planted, found)
    assert len(check_docs.problems(repo)) == 5


def test_a_planted_missing_make_target_script_or_module_in_a_sh_block_is_found(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        GOOD + "\n```sh\nmake screenshotz\nmake test smoke BASE_URL=x\n.venv/bin/python scripts/gone.py\n"
        "python -m local.gone\nFOO=1 make deploy\n```\n",
    )
    found = check_docs.problems(repo)
    assert len(found) == 5, found
    for planted in ("make screenshotz", "make smoke", "scripts/gone.py", "-m local.gone", "make deploy"):
        assert any(planted in problem for problem in found), (planted, found)


def test_a_planted_issue_number_or_commit_is_found_but_a_hash_in_a_file_name_or_another_projects_issue_is_not(
    tmp_path: Path,
) -> None:
    import subprocess

    # A recent commit whose short hash reads as one: the check skips all-digit words (numbers in prose), and a
    # HEAD like 4683476 once made this test fail.
    log = subprocess.run(
        ["git", "log", "--format=%h", "--abbrev=7", "-n", "50"], cwd=ROOT, capture_output=True, text=True
    )
    short = next(h for h in log.stdout.split() if check_docs._HEX.fullmatch(h))
    repo = _repo(
        tmp_path,
        GOOD
        + f"\nThe cap was added for issue 23.\nMeasured at {short}.\n"
        f"Kept in `tests/events/template-{short}.json`; see aws/serverless-application-model issues #390.\n"
        "```sh\ngit show {short}\n```\n".replace("{short}", short),
    )
    found = check_docs.problems(repo, repo=ROOT)
    assert len(found) == 2, found
    assert "issue 23" in found[0] and short in found[1]


def test_the_makefiles_targets_are_read_from_its_rules_not_its_variables() -> None:
    targets = check_docs.make_targets(ROOT / "Makefile")
    assert {"run", "test", "check", "bench", "smoke", "screenshots", "test-oldest"} <= targets
    assert not {"VENV", "PYTHON", "PY", "STAMP"} & targets


def test_the_screenshots_show_the_pages_current_assets() -> None:
    recorded, current = page_assets.read_record(), page_assets.asset_digests()
    changed = sorted(name for name in recorded.keys() | current.keys() if recorded.get(name) != current.get(name))
    assert not changed, f"docs/screenshots/ are older than {', '.join(changed)}: run make screenshots"
    assert "chalicelib/web/app.js" in current and "chalicelib/web/index.html" in current


def test_a_changed_added_or_removed_asset_makes_the_screenshots_stale(tmp_path: Path) -> None:
    web = tmp_path / "chalicelib" / "web"
    shutil.copytree(ROOT / "chalicelib" / "web", web, ignore=shutil.ignore_patterns("__pycache__"))
    record = tmp_path / "assets.sha256"
    page_assets.write_record(record, web)
    assert page_assets.read_record(record) == page_assets.asset_digests(web)
    (web / "app.css").write_text((web / "app.css").read_text() + "\n/* a new rule */\n")
    assert page_assets.read_record(record) != page_assets.asset_digests(web)
    page_assets.write_record(record, web)
    (web / "new-view.js").write_text("export {};\n")
    assert "chalicelib/web/new-view.js" not in page_assets.read_record(record)
    assert "chalicelib/web/new-view.js" in page_assets.asset_digests(web)
    (web / "__init__.py").write_text("# the Python that serves the page is not shown")
    assert "chalicelib/web/__init__.py" not in page_assets.asset_digests(web)


def test_the_committed_record_matches_what_sha256sum_checks() -> None:
    lines = page_assets.RECORD.read_text().splitlines()
    assert lines and all(
        len(line.split("  ", 1)[0]) == 64 and (ROOT / line.split("  ", 1)[1]).is_file() for line in lines
    )
