"""How well and how fast the credential detector works: recall, false alarms, worst-case time.

Recall per shape and overall, false-positive rate overall and per benign category come from the
seeded corpus in tests/corpora/credential_corpus.py. Times are per call, measured with time.perf_counter
(the best of several repetitions, so a busy machine inflates them less): a typical note, a long
benign note, and the slowest of a set of adversarial 2000-byte inputs built to make regexes and
scans work hard. Times are reported, never asserted.

Then the same corpus goes through detect-secrets (its default plugins and filters, as
`detect-secrets scan` runs them): a text counts as flagged when any plugin reports a secret in any
of its lines. Its recall and false-positive rate, overall and per shape and benign category, are
printed next to ours and stored under "compare". gitleaks is a Go binary this environment cannot
install (not on PyPI; npm's 'gitleaks' is an unrelated package), so its figures are quoted from issue 3.

Then issue 21's (bench/credentials_issue21.py): recall per corpus with words before split tokens, pasted
encodings and grouped tokens, false alarms per benign category, the worst growth for twice the input
and the adversarial search's worst input (bench/credentials_adversarial.py), before and after.

Then issue 37 item 19's (bench/credentials_outsider.py): recall per category an outsider's corpus found
missed and false alarms on the benign notes beside them, before and after.

Then issue 13's figures (bench/credentials_evasion.py): recall on every disguise (invisible
characters, homoglyphs, full-width, breaks) and every new shape, false alarms in the hard benign
categories and over the whole corpus, the typical note and hard inputs (with their cost at 2000 ÷
1000 characters), each beside the same figure for the detector before issue 13.

Prints one line per figure and writes them to bench/results/credentials.json. The before-columns are read from
bench/results/before.json while it is current (bench/at_commit.py); `--record-before` measures them now and records
them, and does nothing else.

Run from the repository root: .venv/bin/python bench/credentials_bench.py [--record-before]
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import credentials_evasion, credentials_issue21, credentials_out_of_scope, credentials_outsider  # noqa: E402
from chalicelib.credentials import find_credential  # noqa: E402
from tests.corpora.credential_corpus import SHAPES, Case, negative_cases, positive_cases  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "credentials.json"
REPEATS = 7
# Issue 3's figures for the tools it names, measured on another corpus of notes; gitleaks cannot run here.
ISSUE_FIGURES = {"detect_secrets": {"recall": 0.72, "fpr": 0.08}, "gitleaks": {"recall": 0.80, "fpr": "almost none"}}
GITLEAKS_NOTE = (
    "gitleaks was not available here (a Go binary: not on PyPI, npm's 'gitleaks' is an unrelated "
    "JavaScript package, no apt package); the issue's figures are quoted"
)


def _adversarial() -> dict[str, str]:
    """Inputs of about 2000 bytes that are hard on scanners: long runs, repeated prefixes and
    keywords, near-misses that almost complete a pattern, separators without values."""
    b64 = "".join(chr(65 + (i * 7919) % 26) + chr(97 + (i * 104729) % 26) + str(i % 10) for i in range(700))[:2000]
    cases = {
        "run_a": "a" * 2000,
        "run_A": "A" * 2000,
        "run_digits": "7" * 2000,
        "run_equals": "=" * 2000,
        "run_colon": ":" * 2000,
        "run_at": "@" * 2000,
        "run_slash": "/" * 2000,
        "run_dash": "-" * 2000,
        "run_dot": "." * 2000,
        "run_space": " " * 2000,
        "run_newline": "\n" * 2000,
        "escaped_newlines": "\\n" * 1000,
        "ghp_repeated": "ghp_" * 500,
        "akia_repeated": "AKIA" * 500,
        "sk_repeated": "sk-" * 666,
        "sk_ant_repeated": "sk-ant-" * 285,
        "eyj_repeated": "eyJ" * 666,
        "eyj_dots": "eyJ." * 500,
        "xoxb_repeated": "xoxb-" * 400,
        "glpat_repeated": "glpat-" * 333,
        "aiza_repeated": "AIza" * 500,
        "pem_headers": "-----BEGIN PRIVATE KEY-----" * 74,
        "pem_then_run": "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 1968,
        "password_equals": "password=" * 222,
        "password_colon_space": "password: " * 200,
        "password_is": "password is " * 166,
        "password_for": "password for the " * 117,
        "password_long_value": "password: " + "a" * 1990,
        "api_key_equals": "api_key=" * 250,
        "token_colon": "token:" * 333,
        "secret_words": "secret " * 285,
        "scheme_runs": "://" * 666,
        "colon_pairs": "a:" * 1000,
        "at_pairs": "a@" * 1000,
        "half_urls": "http://a:" * 222,
        "userinfo_no_host": "postgres://u:" + "p" * 1987,
        "long_scheme": "a" * 1000 + "://" + "b" * 997,
        "telegram_like": "1234567890:" + "A" * 1989,
        "digits_colons": "123456:" * 285,
        "discord_like": ("M" * 24 + ".") * 80,
        "bearer_repeated": "Bearer " * 285,
        "authorization": "Authorization: " * 133,
        "base64_run": b64,
        "aws_then_base64": "aws " + b64[:1996],
        "aws_words": "aws " * 500,
        "forty_char_runs": ("aws " + b64[:40] + " ") * 44,
        "hex_run": "0123456789abcdef" * 125,
        "hex_dashes": ("0123456789abcdef" * 2 + "-") * 60,
        "accents": "é" * 1000,
        "emoji": "😀" * 500,
        "cjk_keywords": "パスワードは" * 111,
        "mixed_keywords": "pass pwd pw token secret key-" * 69,
        "begin_dashes": "-" * 1000 + "BEGIN" * 200,
        "brackets": "[" * 1000 + "{" * 1000,
    }
    return {name: text[:2000] for name, text in cases.items()}


def _stdlib_chunks() -> list[str]:
    """2000-character pieces of the Python standard library: code and prose nobody wrote for this corpus."""
    chunks: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        chunks += [text[i : i + 2000] for i in range(0, len(text), 2000)]
    return chunks


def _per_call_us(text: str, calls: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(calls):
            find_credential(text)
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def detect_secrets_flags(texts: Sequence[str]) -> list[bool] | None:
    """Whether detect-secrets reports a secret in each text, or None when it is not installed.

    Each text is written to a temporary .txt file and scanned with ``scan_file`` under
    ``default_settings()`` (every plugin, the default filters), which is what `detect-secrets scan`
    and its pre-commit hook do. ``scan_line`` is the tool's ad-hoc mode: there the entropy plugins
    skip their entropy limit and report almost any unquoted word, which is no verdict at all.
    """
    try:
        from detect_secrets.core.scan import scan_file
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    flags: list[bool] = []
    with tempfile.TemporaryDirectory() as tmp, default_settings():
        path = Path(tmp) / "note.txt"
        for text in texts:
            path.write_text(text, encoding="utf-8")
            flags.append(next(iter(scan_file(str(path))), None) is not None)
    return flags


def _flag_rates(kind: str, cases: Sequence[Case], flags: Sequence[bool]) -> dict[str, float]:
    """``{kind}.{label}`` and ``{kind}.overall``: the share of texts flagged, per label and in all."""
    seen, flagged = Counter[str](), Counter[str]()
    for case, flag in zip(cases, flags, strict=True):
        seen[case.label] += 1
        flagged[case.label] += flag
    rates = {f"{kind}.{label}": round(flagged[label] / seen[label], 4) for label in sorted(seen)}
    return rates | {f"{kind}.overall": round(sum(flagged.values()) / len(cases), 4)}


def compare(every: int = 1) -> dict[str, Any]:
    """Recall and false-positive rate of ours and of detect-secrets on every ``every``-th text of
    the corpus (the same texts for both); ``detect_secrets`` is ``{"available": False}`` without it."""
    positives, negatives = positive_cases()[::every], negative_cases()[::every]
    texts = [case.text for case in (*positives, *negatives)]
    flags = {
        "ours": [find_credential(text) is not None for text in texts],
        "detect_secrets": detect_secrets_flags(texts),
    }
    figures: dict[str, Any] = {
        "sample": {"every": every, "positives": len(positives), "negatives": len(negatives)},
        "gitleaks": {"available": False, "note": GITLEAKS_NOTE},
        "issue_figures": ISSUE_FIGURES,
    }
    for name, flagged in flags.items():
        figures[name] = {"available": flagged is not None}
        if flagged is not None:
            figures[name] |= _flag_rates("recall", positives, flagged[: len(positives)]) | _flag_rates(
                "fpr", negatives, flagged[len(positives) :]
            )
    if flags["detect_secrets"] is not None:
        figures["detect_secrets"] |= {
            "version": metadata.version("detect-secrets"),
            "method": "scan_file on a temporary .txt file per text, default_settings()",
        }
    return figures


def _compare_lines(figures: dict[str, Any]) -> list[str]:
    ours, theirs, sample, issue = figures["ours"], figures["detect_secrets"], figures["sample"], ISSUE_FIGURES
    gitleaks = f"{GITLEAKS_NOTE}: recall ~{issue['gitleaks']['recall']}, false positives {issue['gitleaks']['fpr']}"
    if not theirs["available"]:
        return ["detect-secrets is not installed: no comparison (pip install -r requirements-dev.txt)", gitleaks]
    scope = "whole corpus" if sample["every"] == 1 else f"every {sample['every']}th text"
    n = f"n={sample['positives']} credentials + {sample['negatives']} benign notes, {scope}"
    rows = [key for key in ours if key.startswith(("recall.", "fpr.")) and not key.endswith(".overall")]
    return [
        f"versus detect-secrets {theirs['version']} (default plugins and filters) on the same texts ({n}):",
        f"{'':40s} {'ours':>7s} {'detect-secrets':>15s}",
        *(f"{key:40s} {ours[key]:7.3f} {theirs[key]:15.3f}" for key in rows),
        gitleaks,
        f"issue 3 quoted detect-secrets at recall ~{issue['detect_secrets']['recall']}, "
        f"FPR ~{issue['detect_secrets']['fpr']} on its own corpus of notes",
        f"versus detect-secrets: recall {ours['recall.overall']:.4f} vs {theirs['recall.overall']:.4f}, "
        f"FPR {ours['fpr.overall']:.4f} vs {theirs['fpr.overall']:.4f} ({n})",
    ]


def record_before() -> None:
    """Measure the three before-columns now and record them (bench/results/before.json), saying what was recorded."""
    for before in (credentials_evasion.before_figures, credentials_issue21.before, credentials_outsider.before):
        figures = before(record=True)
        done = f"{len(figures) - 4} figures recorded" if figures["available"] else f"not measured: {figures['why']}"
        print(f"{before.__module__}.{before.__name__} (chalicelib at {figures.get('commit', '?')}): {done}", flush=True)


def main() -> None:
    if sys.argv[1:] == ["--record-before"]:
        record_before()
        return
    if sys.argv[1:]:
        sys.exit(f"usage: {sys.argv[0]} [--record-before]")
    figures: dict[str, object] = {"python": platform.python_version(), "machine": platform.machine()}
    lines: list[str] = []

    positives, negatives = positive_cases(), negative_cases()
    total, caught, named = Counter[str](), Counter[str](), Counter[str]()
    for case in positives:
        shape = find_credential(case.text)
        total[case.label] += 1
        caught[case.label] += shape is not None
        named[case.label] += shape == case.label
    for shape in SHAPES:
        recall = caught[shape] / total[shape]
        figures[f"recall.{shape}"] = round(recall, 4)
        figures[f"named_correctly.{shape}"] = round(named[shape] / total[shape], 4)
        lines.append(
            f"recall {shape:26s} {recall:.3f}  ({caught[shape]}/{total[shape]}, named correctly {named[shape]})"
        )
    recall = sum(caught.values()) / len(positives)
    figures["recall.overall"] = round(recall, 4)
    lines.append(f"recall overall                    {recall:.4f}  ({sum(caught.values())}/{len(positives)})")

    seen, refused = Counter[str](), Counter[str]()
    for case in negatives:
        seen[case.label] += 1
        refused[case.label] += find_credential(case.text) is not None
    fpr = sum(refused.values()) / len(negatives)
    figures["fpr.overall"] = round(fpr, 4)
    lines.append(f"false-positive rate overall       {fpr:.4f}  ({sum(refused.values())}/{len(negatives)})")
    for category in sorted(seen):
        rate = refused[category] / seen[category]
        figures[f"fpr.{category}"] = round(rate, 4)
        lines.append(f"false-positive rate {category:22s} {rate:.3f}  ({refused[category]}/{seen[category]})")

    # Not part of the corpus: text written by others. A refusal here may be right (the stdlib's docs hold
    # a few password literals), so this is an upper bound on false alarms in code and prose.
    chunks = _stdlib_chunks()
    stdlib_refused = sum(find_credential(chunk) is not None for chunk in chunks)
    figures["stdlib_chunks_refused"] = round(stdlib_refused / len(chunks), 5)
    lines.append(
        f"refused 2000-char pieces of the Python stdlib {stdlib_refused / len(chunks):.5f}  "
        f"({stdlib_refused}/{len(chunks)}, not in the corpus)"
    )

    typical = [c.text for c in negatives if c.label == "memory_notes"][:60]
    long_notes = [c.text for c in negatives if c.label == "long_mixed_notes"][:30]
    typical_us = statistics.median(_per_call_us(text, 50) for text in typical)
    long_us = statistics.median(_per_call_us(text, 5) for text in long_notes)
    adversarial = {name: _per_call_us(text, 5) for name, text in _adversarial().items()}
    worst = max(adversarial, key=adversarial.__getitem__)
    figures |= {
        "time_us.typical_note": round(typical_us, 2),
        "time_us.long_benign_note": round(long_us, 2),
        "time_us.adversarial_worst": round(adversarial[worst], 2),
        "time.adversarial_worst_input": worst,
        "time.adversarial_worst_ratio_to_typical": round(adversarial[worst] / typical_us, 1),
        "time.adversarial_median_us": round(statistics.median(adversarial.values()), 2),
        "time_us.adversarial": {name: round(us, 2) for name, us in sorted(adversarial.items())},
    }
    lines += [
        f"time per call, typical note         {typical_us:9.1f} us (median of {len(typical)})",
        f"time per call, long benign note     {long_us:9.1f} us (median of {len(long_notes)}, ~600-2000 bytes)",
        f"time per call, adversarial median   {statistics.median(adversarial.values()):9.1f} us ({len(adversarial)} inputs of 2000 bytes)",
        f"time per call, adversarial worst    {adversarial[worst]:9.1f} us ({worst})",
        f"adversarial worst / typical note    {adversarial[worst] / typical_us:9.1f} x",
    ]

    print("\n".join(lines), flush=True)
    # Issue 13: disguises, new shapes, hard benign notes and linear cost, before and after that work.
    after = credentials_evasion.detection_figures(find_credential) | credentials_evasion.timing_figures(find_credential)
    before = credentials_evasion.before_figures()
    figures |= after | {"issue13_before": before}
    figures["issue13_targets_missed"] = sum(credentials_evasion.summary(after).values())
    print("\n".join(credentials_evasion.lines(before, after)), flush=True)
    # Issue 21: words before split tokens, encodings, grouped tokens, growth and the adversarial search.
    issue21 = credentials_issue21.detection(find_credential) | credentials_issue21.growth(find_credential)
    issue21_before = credentials_issue21.before()
    figures |= {f"issue21.{key}": value for key, value in issue21.items()} | {"issue21_before": issue21_before}
    print("\n".join(credentials_issue21.lines(issue21_before, issue21)), flush=True)
    # Issue 37 item 19: the categories an outsider's corpus found missed, and the benign notes beside them.
    outsider = credentials_outsider.detection(find_credential)
    outsider_before = credentials_outsider.before()
    figures |= {f"issue37.{key}": value for key, value in outsider.items()} | {"issue37_before": outsider_before}
    print("\n".join(credentials_outsider.lines(outsider_before, outsider)), flush=True)
    out_of_scope = credentials_out_of_scope.false_alarm_cost(find_credential)
    figures |= out_of_scope
    print("\n".join(f"{key:58s} {value}" for key, value in out_of_scope.items()), flush=True)
    figures["compare"] = compare()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    print("\n".join(_compare_lines(figures["compare"])))


if __name__ == "__main__":
    main()
