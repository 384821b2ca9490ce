"""Our credential detector does at least as well as detect-secrets, the scanner issue 3 set out to beat.

Both run on the same deterministic sample of the labelled corpus (every 20th text), through the
bench's own comparison (bench/credentials_bench.py), which prints the whole-corpus figures.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

pytest.importorskip("detect_secrets")

from bench.credentials_bench import compare  # noqa: E402

EVERY = 20


@cache
def _figures() -> dict[str, Any]:
    return compare(every=EVERY)


def test_sample_holds_both_credentials_and_benign_notes() -> None:
    sample = _figures()["sample"]
    assert sample["positives"] >= 300 and sample["negatives"] >= 200


def test_recall_is_at_least_detect_secrets() -> None:
    figures = _figures()
    assert figures["ours"]["recall.overall"] >= figures["detect_secrets"]["recall.overall"]


def test_false_positive_rate_is_at_most_detect_secrets() -> None:
    figures = _figures()
    assert figures["ours"]["fpr.overall"] <= figures["detect_secrets"]["fpr.overall"]
