"""Issue 21's figures for bench/credentials_bench.py, for this tree and for the detector before issue 21.

Recall per corpus (the three parts of tests/corpora plus issue 21's worded split tokens, encodings and
grouped tokens), false alarms overall and per benign category, the hard inputs' worst growth for twice
the input and the adversarial search's worst input (bench/credentials_adversarial.py), each named.
"Before" is chalicelib/ at BEFORE_COMMIT (main before issue 21) run on today's corpus and method, in a
subprocess, as bench/credentials_evasion.py does for issue 13.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BEFORE_COMMIT = "88af01a"
Finder = Callable[[str], "str | None"]


def _recall(find: Finder, texts: list[str]) -> float:
    return round(sum(find(t) is not None for t in texts) / len(texts), 4)


def detection(find: Finder) -> dict[str, Any]:
    """recall.<corpus> and fpr.<category>/fpr.overall on the benign notes of every part."""
    from tests.corpora.credential_corpus import negative_cases, positive_cases
    from tests.corpora.credential_corpus_encoded import encoded_cases, grouped_cases
    from tests.corpora.credential_corpus_evasion import (
        evasion_cases,
        hard_negative_cases,
        new_shape_cases,
        worded_split_cases,
    )

    alone: dict[str, bool] = {}

    def stands_alone(token: str) -> bool:  # a token found by itself: the words before it must not hide it
        if token not in alone:
            alone[token] = find(token) is not None
        return alone[token]

    figures: dict[str, Any] = {
        "recall.corpus.credential_corpus": _recall(find, [c.text for c in positive_cases()]),
        "recall.corpus.evasion": _recall(find, [c.text for c in evasion_cases()]),
        "recall.corpus.new_shapes": _recall(find, [c.text for c in new_shape_cases()]),
        "recall.corpus.worded_split_tokens": _recall(
            find, [c.text for c, t in worded_split_cases() if stands_alone(t)]
        ),
        "recall.corpus.encoded": _recall(find, [c.text for c in encoded_cases()]),
        "recall.corpus.grouped_after_a_key_word": _recall(
            find, [c.text for c, t in grouped_cases() if stands_alone(t)]
        ),
    }
    seen, flagged = Counter[str](), Counter[str]()
    for case in (*negative_cases(), *hard_negative_cases()):
        seen[case.label] += 1
        flagged[case.label] += find(case.text) is not None
    figures["fpr.overall"] = round(sum(flagged.values()) / sum(seen.values()), 5)
    figures["fpr.categories_with_a_false_alarm"] = sorted(label for label in seen if flagged[label])
    figures["fpr.per_category"] = {label: round(flagged[label] / seen[label], 4) for label in sorted(seen)}
    return figures


def growth(find: Finder) -> dict[str, Any]:
    from bench.credentials_adversarial import search
    from bench.credentials_evasion import timing_figures

    timing = timing_figures(find)
    return {
        key: timing[key]
        for key in ("time.hard_input_worst_growth_2000_over_1000", "time.hard_input_worst_growth_input")
    } | search(find)


_CHILD = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from chalicelib.credentials import find_credential
from bench.credentials_issue21 import detection, growth
print(json.dumps(detection(find_credential) | growth(find_credential)))
"""


def before(*, record: bool = False) -> dict[str, Any]:
    """The same figures for chalicelib/ at BEFORE_COMMIT (bench/at_commit.py: recorded, or measured now and
    recorded when `record`), or why they could not be measured."""
    from bench.at_commit import figures_at

    return figures_at("split_tokens", BEFORE_COMMIT, _CHILD, record=record)


def lines(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One line per figure: before issue 21, after."""
    out = [
        f"issue 21 figures (before = chalicelib at {BEFORE_COMMIT}, after = this tree):",
        f"{'':58s} {'before':>12s} {'after':>12s}",
    ]
    for key, value in new.items():
        if key in ("fpr.per_category", "time.adversarial_search_growth"):
            continue
        was = old.get(key, "n/a") if old.get("available") else "n/a"
        out.append(f"{key:58s} {str(was)[:40]:>12s} {str(value)[:60]:>12s}")
    if not old.get("available"):
        out.append(f"before: not measured ({old.get('why', '')})")
    else:
        from bench.at_commit import provenance

        out.append(f"before: {provenance(old)}")
    return out
