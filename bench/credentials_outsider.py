"""Issue 37 item 19's figures for bench/credentials_bench.py: recall per missed category and false alarms on
the benign notes beside them (tests/corpora/credential_corpus_outsider.py), for this tree and for the detector
before that work (chalicelib at BEFORE_COMMIT, run in a subprocess on today's corpus, as issue 21's bench does).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BEFORE_COMMIT = "35fcedf"
Finder = Callable[[str], "str | None"]


def detection(find: Finder) -> dict[str, Any]:
    """recall.<category>, recall.overall, fpr.<benign category> and fpr.overall on the outsider corpus."""
    from tests.corpora.credential_corpus_outsider import outsider_cases, outsider_negative_cases

    seen, caught = Counter[str](), Counter[str]()
    for case in outsider_cases():
        seen[case.context] += 1
        caught[case.context] += find(case.text) is not None
    figures: dict[str, Any] = {f"recall.{k}": round(caught[k] / seen[k], 4) for k in seen}
    figures["recall.overall"] = round(sum(caught.values()) / sum(seen.values()), 4)
    benign, flagged = Counter[str](), Counter[str]()
    for case in outsider_negative_cases():
        benign[case.label] += 1
        flagged[case.label] += find(case.text) is not None
    figures |= {f"fpr.{k}": round(flagged[k] / benign[k], 4) for k in benign}
    figures["fpr.overall"] = round(sum(flagged.values()) / sum(benign.values()), 4)
    return figures


_CHILD = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from chalicelib.credentials import find_credential
from bench.credentials_outsider import detection
print(json.dumps(detection(find_credential)))
"""


def before(*, record: bool = False) -> dict[str, Any]:
    """The same figures for chalicelib/ at BEFORE_COMMIT (bench/at_commit.py: recorded, or measured now and
    recorded when `record`), or why they could not be measured."""
    from bench.at_commit import figures_at

    return figures_at("outsider_categories", BEFORE_COMMIT, _CHILD, record=record)


def lines(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One line per figure: before issue 37's item 19, after."""
    out = [
        f"issue 37 item 19 figures (before = chalicelib at {BEFORE_COMMIT}, after = this tree):",
        f"{'':40s} {'before':>9s} {'after':>9s}",
    ]
    for key, value in new.items():
        was = old.get(key, "n/a") if old.get("available") else "n/a"
        out.append(f"{key:40s} {was!s:>9s} {value!s:>9s}")
    if not old.get("available"):
        out.append(f"before: not measured ({old.get('why', '')})")
    else:
        from bench.at_commit import provenance

        out.append(f"before: {provenance(old)}")
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from chalicelib.credentials import find_credential

    print("\n".join(lines(before(), detection(find_credential))))
