"""Issue 13's figures for bench/credentials_bench.py: disguises, new shapes, hard benign notes, linearity,
and the same figures for the detector as it was before issue 13 (read from git), side by side.

"Before" is chalicelib/ at BEFORE_COMMIT (the last commit before the work on issue 13), extracted with
`git archive` into a temporary directory and run in a subprocess on today's corpus, so both columns
judge the same texts. Without git or that commit the column says so and the bench goes on.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BEFORE_COMMIT = "8186d2a6fd4819a5fcd1de85a75cdc304466d993"
Finder = Callable[[str], "str | None"]


def detection_figures(find: Finder) -> dict[str, float]:
    """Recall per disguise and per new shape or variant, false-positive rate per hard benign category
    and over both parts of the corpus."""
    from tests.corpora.credential_corpus import negative_cases
    from tests.corpora.credential_corpus_evasion import NEW_SHAPES, evasion_cases, hard_negative_cases, new_shape_cases

    figures: dict[str, float] = {}

    def rate(prefix: str, groups: dict[str, list[str]], flagged: bool = True) -> None:
        for name, texts in sorted(groups.items()):
            hits = sum((find(t) is not None) == flagged for t in texts)
            figures[f"{prefix}.{name}"] = round(hits / len(texts), 4)

    disguised: dict[str, list[str]] = {}
    for case in evasion_cases():
        disguised.setdefault(case.context, []).append(case.text)
    rate("recall.disguise", disguised)
    new: dict[str, list[str]] = {}
    for case in new_shape_cases():
        key = case.label if case.label in NEW_SHAPES else f"{case.label}:{case.context.split('_')[0]}"
        new.setdefault(key, []).append(case.text)
    rate("recall.new_shape", new)
    hard: dict[str, list[str]] = {}
    for case in hard_negative_cases():
        hard.setdefault(case.label, []).append(case.text)
    rate("fpr.hard", hard)
    benign = [c.text for c in (*negative_cases(), *hard_negative_cases())]
    figures["fpr.whole_corpus"] = round(sum(find(t) is not None for t in benign) / len(benign), 5)
    figures["recall.disguise.overall"] = round(
        sum(find(c.text) is not None for c in evasion_cases()) / len(evasion_cases()), 4
    )
    return figures


def _per_call_us(find: Finder, text: str, calls: int, repeats: int = 5) -> float:
    """Best per-call time, with the garbage collector paused as timeit does: the corpus held in
    memory makes each full collection slow, which would charge allocation-heavy inputs for it."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(calls):
                find(text)
            best = min(best, (time.perf_counter() - start) / calls)
    finally:
        gc.enable()
    return best * 1e6


def timing_figures(find: Finder) -> dict[str, Any]:
    """Typical note, hard inputs at 2000 characters, and each hard input's growth for twice the input: its
    first 1000 characters in whole units, then those twice, in CPU time, interleaved, best of 7
    (bench/credentials_adversarial.py's ``growth``; about 2 when the cost is linear), the worst named."""
    from bench.credentials_adversarial import growth as grown
    from bench.credentials_adversarial import whole_units
    from tests.corpora.credential_corpus import negative_cases
    from tests.corpora.credential_corpus_evasion import HARD_INPUTS

    typical = [c.text for c in negative_cases() if c.label == "memory_notes"][:60]
    typical_us = statistics.median(_per_call_us(find, t, 50) for t in typical)
    growth, at_2000 = {}, {}
    for name, text in HARD_INPUTS.items():
        _, long_s, ratio = grown(find, whole_units(text), rounds=7, calls=5)
        at_2000[name], growth[name] = long_s * 1e6, round(ratio, 2)
    worst = max(at_2000, key=at_2000.__getitem__)
    steepest = max(growth, key=growth.__getitem__)
    return {
        "time_us.typical_note": round(typical_us, 2),
        "time_us.hard_input_worst": round(at_2000[worst], 2),
        "time.hard_input_worst_input": worst,
        "time.hard_input_worst_growth_2000_over_1000": growth[steepest],
        "time.hard_input_worst_growth_input": steepest,
        "time.hard_input_growth": growth,
    }


_CHILD = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from chalicelib.credentials import find_credential
from bench.credentials_evasion import detection_figures, timing_figures
print(json.dumps(detection_figures(find_credential) | timing_figures(find_credential)))
"""


def before_figures(*, record: bool = False) -> dict[str, Any]:
    """The same figures for chalicelib/ at BEFORE_COMMIT (bench/at_commit.py: recorded, or measured now and
    recorded when `record`), or why they could not be measured."""
    from bench.at_commit import figures_at

    return figures_at("disguise_rules", BEFORE_COMMIT, _CHILD, record=record)


def lines(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per figure: before issue 13, after."""
    out = [
        f"issue 13 figures (before = chalicelib at {BEFORE_COMMIT[:10]}, after = this tree):",
        f"{'':52s} {'before':>9s} {'after':>9s}",
    ]
    for key, value in after.items():
        if isinstance(value, dict):
            continue
        old = before.get(key, "n/a") if before.get("available") else "n/a"
        out.append(f"{key:52s} {old!s:>9s} {value!s:>9s}")
    if not before.get("available"):
        out.append(f"before: not measured ({before.get('why', '')})")
    else:
        from bench.at_commit import provenance

        out.append(f"before: {provenance(before)}")
    return out


def summary(figures: dict[str, Any]) -> Counter[str]:
    """How many groups miss their target: recall < 0.99, any hard false alarm, whole-corpus FPR > 0.002."""
    missed = Counter[str]()
    for key, value in figures.items():
        if key.startswith("recall.") and isinstance(value, float) and value < 0.99:
            missed["recall"] += 1
        if key.startswith("fpr.hard.") and value > 0:
            missed["fpr_hard"] += 1
    if figures.get("fpr.whole_corpus", 0) > 0.002:
        missed["fpr_whole"] += 1
    return missed
