"""Docs that stay true: every relative link and #anchor of the Markdown docs resolves, every command of a
fenced ```sh block names a make target, script or module that exists, and no doc narrates history (an issue
by number, a commit). `make check` runs it (tests/tools/
test_docs_check.py); `.venv/bin/python scripts/check_docs.py` prints what it finds.

Anchors follow GitHub's heading slugs: the heading's text (code and link markup dropped) in lower case, every
character that is not a letter, digit, `-`, `_` or space removed, spaces as `-`, and a repeated slug `-1`, `-2`...
"""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["command_problems", "doc_files", "history_problems", "link_problems", "make_targets", "problems", "slugs"]

_FENCE = re.compile(r"^ {0,3}(```+|~~~+)\s*([\w-]*)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]+)\"", re.IGNORECASE)
_HTML_ANCHOR = re.compile(r"<[a-z]+\b[^>]*?\b(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_TARGET = re.compile(r"^([A-Za-z0-9_.%/-]+(?:[ \t]+[A-Za-z0-9_.%/-]+)*)[ \t]*::?(?!=)", re.MULTILINE)
_SHELL_FENCES = {"sh", "bash", "shell", "console"}
_NOT_IN_REPO = {".venv", ".venv-oldest", ".local", "build", "node_modules"}


def doc_files(root: Path = ROOT) -> list[Path]:
    """README.md, docs/**/*.md, bench/README.md and every README.md under sdk/."""
    found = [root / "README.md", *sorted((root / "docs").rglob("*.md")), root / "bench" / "README.md"]
    found += sorted((root / "sdk").rglob("README.md"))
    return [path for path in found if path.is_file() and not set(path.relative_to(root).parts) & _NOT_IN_REPO]


def _blocks(text: str) -> Iterable[tuple[int, str, str | None]]:
    """(line number, line, fence info or None outside a fence) for each line that is not a fence marker."""
    fence: tuple[str, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        opened = _FENCE.match(line)
        if opened and fence is None:
            fence = (opened.group(1), opened.group(2).lower())
            continue
        if (
            fence is not None
            and line.strip().startswith(fence[0][0] * len(fence[0]))
            and not line.strip().strip(fence[0][0])
        ):
            fence = None
            continue
        yield number, line, None if fence is None else fence[1]


def slugs(text: str) -> set[str]:
    """Every anchor a reader can link to in `text`: its headings' GitHub slugs and any HTML id or name."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line, fence in _blocks(text):
        if fence is not None:
            continue
        found |= set(_HTML_ANCHOR.findall(line))
        heading = _HEADING.match(line)
        if not heading:
            continue
        words = _CODE_SPAN.sub(lambda m: m.group(2), heading.group(2))
        words = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", words)  # a link's text stays, its target goes
        words = re.sub(r"<[^>]+>", "", words)
        slug = re.sub(r"[^\w\- ]", "", words.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def _links(text: str) -> Iterable[tuple[int, str]]:
    for number, line, fence in _blocks(text):
        if fence is not None:
            continue
        prose = _CODE_SPAN.sub("", line)  # a link written inside `code` is an example, not a link
        for pattern in (_MD_LINK, _HTML_LINK):
            for target in pattern.findall(prose):
                yield number, target


def link_problems(path: Path, root: Path = ROOT) -> list[str]:
    """Each relative link or anchor of `path` that resolves to nothing (outside the repository counts as nothing)."""
    problems = []
    text = path.read_text(encoding="utf-8")
    where = path.relative_to(root)
    for number, target in _links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
            continue  # http:, https:, mailto: — not ours to check offline
        file_part, _, anchor = target.partition("#")
        file_part = unquote(file_part.split("?", 1)[0])
        resolved = (path.parent / file_part).resolve() if file_part else path.resolve()
        if file_part.startswith("/") or not resolved.is_relative_to(root.resolve()):
            problems.append(f"{where}:{number}: {target}: outside the repository")
            continue
        if not resolved.exists():
            problems.append(f"{where}:{number}: {target}: no such file")
            continue
        if anchor and (resolved.is_dir() or resolved.suffix.lower() != ".md"):
            problems.append(f"{where}:{number}: {target}: an anchor into a file that has no headings")
        elif anchor and unquote(anchor) not in slugs(resolved.read_text(encoding="utf-8")):
            problems.append(f"{where}:{number}: {target}: no heading or anchor #{anchor} there")
    return problems


def make_targets(makefile: Path) -> set[str]:
    """The targets a Makefile defines (rules, not variable assignments)."""
    text = re.sub(r"\\\n", " ", makefile.read_text(encoding="utf-8"))
    targets: set[str] = set()
    for match in _TARGET.finditer(text):
        targets |= {name for name in match.group(1).split() if not name.startswith(".") and "%" not in name}
    return targets


def _commands(line: str) -> list[list[str]]:
    """The simple commands of one shell line, as words (comments, pipes, `&&`, `;` and `$(...)` taken apart)."""
    line = re.sub(r"<[^<>]*>", "PLACEHOLDER", line)  # `<EndpointURL>`, `<a user's ID token>`: the reader's own
    line = re.sub(r"(^|\s)#.*$", "", line)
    try:
        words = shlex.split(line, posix=True)
    except ValueError:
        words = line.split()
    commands: list[list[str]] = [[]]
    for word in words:
        if word in {"|", "||", "&&", ";", "&"}:
            commands.append([])
        else:
            commands[-1].append(word.rstrip(";&").lstrip("$("))
    return [c for c in commands if c]


def command_problems(path: Path, root: Path = ROOT) -> list[str]:
    """Each command of a fenced shell block in `path` that names a make target, script or module that is not there."""
    targets = make_targets(root / "Makefile")
    tops = {p.name for p in root.iterdir() if p.is_dir() and p.name not in _NOT_IN_REPO and not p.name.startswith(".")}
    tops |= {".ci"}
    problems = []
    where = path.relative_to(root)
    pending = ""
    for number, line, fence in _blocks(path.read_text(encoding="utf-8")):
        if fence not in _SHELL_FENCES:
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "  # a command continued on the next line
            continue
        line, pending = pending + line, ""
        for words in _commands(line.removeprefix("$ ")):
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
                words = words[1:]  # VAR=value before the command
            if not words:
                continue
            if words[0] == "make":
                for word in words[1:]:
                    if "=" in word:
                        break  # the variables; a target named after them is rare enough to write first
                    if word.startswith("-"):
                        continue
                    if word not in targets:
                        problems.append(f"{where}:{number}: make {word}: no such target in the Makefile")
            for i, word in enumerate(words):
                if i and words[i - 1] == "-m" and re.fullmatch(r"[A-Za-z_][\w.]*", word):
                    module = root / word.replace(".", "/")
                    if word.split(".")[0] in tops and not (
                        module.with_suffix(".py").is_file() or (module / "__init__.py").is_file()
                    ):
                        problems.append(f"{where}:{number}: -m {word}: no such module")
                    continue
                candidate = re.sub(r"\[[\w,-]*\]$", "", word.split("::", 1)[0].removeprefix("./"))  # pip's extras
                if "/" in candidate and candidate.split("/")[0] in tops and not (root / candidate).exists():
                    problems.append(f"{where}:{number}: {word}: no such file")
    return problems


_ISSUE = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
_HEX = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")


@functools.cache
def _is_commit(repo: Path, word: str) -> bool:
    try:
        found = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "-q", "--verify", f"{word}^{{commit}}"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False  # no git here: nothing to name
    return found.returncode == 0


def history_problems(path: Path, root: Path = ROOT, repo: Path | None = None) -> list[str]:
    """Each place `path` narrates history: names an issue by number, or a commit of `repo` (a doc says what is,
    and git keeps what was). A file name that carries a hash (in a `code/path`) is a name, not a reference."""
    problems = []
    where = path.relative_to(root)
    for number, line, fence in _blocks(path.read_text(encoding="utf-8")):
        if fence is not None:
            continue
        prose = _CODE_SPAN.sub(lambda m: "" if "/" in m.group(2) else m.group(2), line)
        for found in _ISSUE.finditer(prose):
            if re.search(r"[\w.-]+/[\w.-]+\s+$", prose[: found.start()]):
                continue  # another project's issue (owner/repo issues #390): a source, not our history
            problems.append(f"{where}:{number}: {found.group()!r}: say what is; the issue's history is git's")
        for word in _HEX.findall(prose):
            if _is_commit(repo or root, word):
                problems.append(f"{where}:{number}: {word}: names a commit; say what is, git keeps what was")
    return problems


def problems(root: Path = ROOT, repo: Path | None = None) -> list[str]:
    return [
        p
        for path in doc_files(root)
        for p in (*link_problems(path, root), *command_problems(path, root), *history_problems(path, root, repo))
    ]


def main() -> int:
    found = problems()
    for problem in found:
        print(problem)
    print(f"docs: {len(found)} problem(s) in {len(doc_files())} files")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
