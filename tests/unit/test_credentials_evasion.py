"""Issue 13's figures on the corpus's second part: disguised credentials, the new shapes, hard benign notes.

recall >= 0.99 on every disguise and every new shape (or new variant of an old one), no false alarm in
any new benign category, false-positive rate <= 0.002 over both parts of the corpus. Times are the
bench's (bench/credentials_bench.py), never asserted here.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections import defaultdict
from functools import cache

import pytest

from chalicelib.credentials import find_credential
from chalicelib.normalize import _INVISIBLE_CLASS, bad_control, is_blank, readable, rejoined
from tests.corpora.credential_corpus import negative_cases
from tests.corpora.credential_corpus_evasion import (
    ALL_SHAPES,
    DISGUISES,
    HARD_INPUTS,
    HARD_NEGATIVES,
    NEW_SHAPES,
    evasion_cases,
    hard_negative_cases,
    new_shape_cases,
)


@cache
def _verdicts() -> dict[str, str | None]:
    texts = [c.text for c in (*evasion_cases(), *new_shape_cases(), *hard_negative_cases(), *negative_cases())]
    return {text: find_credential(text) for text in texts}


def _by(cases: tuple, key: object) -> dict[str, list]:  # type: ignore[type-arg]
    groups: dict[str, list] = defaultdict(list)  # type: ignore[type-arg]
    for case in cases:
        groups[key(case)].append(case)  # type: ignore[operator]
    return groups


EVASION_GROUPS = _by(evasion_cases(), lambda c: c.context)
NEW_GROUPS = _by(
    new_shape_cases(), lambda c: c.label if c.label in NEW_SHAPES else f"{c.label}:{c.context.split('_')[0]}"
)


@pytest.mark.parametrize("disguise", DISGUISES)
def test_every_disguise_is_seen_through(disguise: str) -> None:
    cases = EVASION_GROUPS[disguise]
    missed = [c for c in cases if _verdicts()[c.text] is None]
    assert len(cases) >= 400
    assert 1 - len(missed) / len(cases) >= 0.99, [(c.label, c.text[:60]) for c in missed[:5]]


def test_every_shape_is_disguised_in_every_way_the_corpus_allows() -> None:
    seen = {(c.label, c.context) for c in evasion_cases()}
    for shape in ALL_SHAPES:
        kinds = {kind for label, kind in seen if label == shape}
        assert {"zero_width", "soft_hyphen", "homoglyph", "fullwidth"} <= kinds, shape


@pytest.mark.parametrize("group", sorted(NEW_GROUPS))
def test_every_new_shape_is_refused_and_named(group: str) -> None:
    cases = NEW_GROUPS[group]
    verdicts = [_verdicts()[c.text] for c in cases]
    assert len(cases) >= 100
    assert sum(v is not None for v in verdicts) / len(cases) >= 0.99, [
        c.text[:60] for c, v in zip(cases, verdicts, strict=True) if v is None
    ][:5]
    assert sum(v == c.label for c, v in zip(cases, verdicts, strict=True)) / len(cases) >= 0.99, sorted(
        {str(v) for v in verdicts}
    )


@pytest.mark.parametrize("category", sorted(HARD_NEGATIVES))
def test_hard_benign_category_has_no_false_alarm(category: str) -> None:
    cases = [c for c in hard_negative_cases() if c.label == category]
    refused = [c.text for c in cases if _verdicts()[c.text] is not None]
    assert len(cases) >= 200
    assert refused == []


def test_false_positive_rate_over_the_whole_corpus_is_at_most_0_2_percent() -> None:
    benign = (*negative_cases(), *hard_negative_cases())
    refused = sum(_verdicts()[c.text] is not None for c in benign)
    assert refused / len(benign) <= 0.002, refused


# --- reading as a person sees -----------------------------------------------------------------


def test_the_invisible_class_holds_every_format_character() -> None:
    invisible = re.compile(f"[{_INVISIBLE_CLASS}]")
    format_chars = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert all(invisible.match(c) for c in format_chars)
    for c in ("\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\ufe00", "\ufe0f", "\U000e0100", "\u180b"):
        assert invisible.match(c), hex(ord(c))  # default-ignorable although not Cf
    for c in ("a", " ", "\u00a0", "\u0301", "\u0915", "\u05d0"):
        assert not invisible.match(c)


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("ghp_\u200babc", "ghp_abc"),
        ("pass\u00adword", "password"),
        ("ｇｈｐ＿ＡＢ１", "ghp_AB1"),
        ("АКІАQW3R", "AKIAQW3R"),
        ("ghр_x1", "ghp_x1"),
        ("Пароль от почты", "Пароль от почты"),
        ("Γειά σου", "Γειά σου"),
        ("Schlüssel café", "Schlüssel café"),
        ("5\u00a0kg", "5 kg"),
        ("👩\u200d💻", "👩💻"),
        ("می\u200cخواهم", "میخواهم"),
    ],
)
def test_readable_view(typed: str, read: str) -> None:
    assert readable(typed) == read


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("ghp_aB3dE5 gH7jK9mN1pQ3", "ghp_aB3dE5gH7jK9mN1pQ3"),
        ("AKIA QW3R T5YU 7IOP AS2D", "AKIAQW3RT5YU7IOPAS2D"),
        ("g h p _ a B 3 d E 5", "ghp_aB3dE5"),
        ("token ghp_aB3dE5gH7j\nK9mN1pQ3sT5 thanks", "token ghp_aB3dE5gH7jK9mN1pQ3sT5 thanks"),
        ("https://hooks.s\nlack.com/services/T1/B2/x3", "https://hooks.slack.com/services/T1/B2/x3"),
    ],
)
def test_split_tokens_are_rejoined(text: str, joined: str) -> None:
    assert rejoined(text) == joined


@pytest.mark.parametrize(
    "text",
    [
        "prefers dark mode",
        "flight LH 454 on 2024-06-12 at 14:25",
        "gym Tuesdays 7pm",
        "password: SHA-256 + salt",
        "key: value pairs",
        "NASA and ESA launch in May",
        "line one\nline two\nline 3",
    ],
)
def test_ordinary_text_is_not_rejoined(text: str) -> None:
    assert rejoined(text) is None
    assert find_credential(text) is None


@pytest.mark.parametrize(
    ("text", "blank"),
    [
        ("\u200b\u200c\u200d\ufeff", True),
        (" \u2800\u3164\u00ad ", True),
        ("\ufe0f\U000e0041", True),
        ("", True),
        ("a\u200b", False),
        ("\u00a0x", False),
        ("👍", False),
    ],
)
def test_text_with_nothing_visible_is_blank(text: str, blank: bool) -> None:
    assert is_blank(text) is blank


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("tab\tand\nnewline", False),
        ("crlf\r\nline", False),
        ("nul\x00", True),
        ("lone\rcr", True),
        ("esc\x1b[31m", True),
        ("del\x7f", True),
        ("c1\x85", True),
    ],
)
def test_control_characters_other_than_tab_and_newline_are_bad(text: str, bad: bool) -> None:
    assert bad_control(text) is bad


@pytest.mark.parametrize("name", sorted(HARD_INPUTS))
def test_hard_inputs_return_a_shape_or_none(name: str) -> None:
    assert find_credential(HARD_INPUTS[name]) in (None, *ALL_SHAPES)
