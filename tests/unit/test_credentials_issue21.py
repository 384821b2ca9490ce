"""Issue 21's detector findings: a short word before a split token, pasted encodings, grouped tokens after a
key word; recall 1.0 on every corpus, no false alarm in any benign category. Times are the bench's
(bench/credentials_issue21.py), never asserted here."""

from __future__ import annotations

import random
import string
from collections import defaultdict
from functools import cache

import pytest

from chalicelib.credentials import find_credential
from chalicelib.normalize import decoded_views, rejoined, rejoined_views
from tests.corpora.credential_corpus import negative_cases, positive_cases
from tests.corpora.credential_corpus_encoded import ENCODINGS, GROUP_SEPARATORS, encoded_cases, grouped_cases
from tests.corpora.credential_corpus_evasion import (
    WORDS_BEFORE_A_KEY,
    evasion_cases,
    hard_negative_cases,
    new_shape_cases,
    worded_split_cases,
)

_R = random.Random(21)
_ALNUM = string.ascii_letters + string.digits
GH = "ghp_" + "".join(_R.choice(_ALNUM) for _ in range(36))
AKIA = "AKIAQW3RT5YU7IOPAS2D"


@cache
def _alone(token: str) -> bool:
    return find_credential(token) is not None


@cache
def _worded() -> dict[str, list[tuple[str, str]]]:
    """word -> (shape, text) for every worded split token whose token is found on its own."""
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for case, token in worded_split_cases():
        if _alone(token):
            groups[case.context.split("|")[1]].append((case.label, case.text))
    return groups


# --- 1. a short word before a split token --------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "aws key AKIA QW3R T5YU 7IOP AS2D",
        f"my key {GH[:24]}\n{GH[24:]}",
        "bot AKIA QW3R T5YU 7IOP AS2D",
        f"key {GH[:20]} {GH[20:]}",
        f"pass {' '.join(GH[i : i + 4] for i in range(0, 40, 4))}",
        f"aws key {GH[:3]}\n{GH[3:]}",
        "AKIA QW3R T5YU 7IOP AS2D bot",
        f"the new one: pass {AKIA[:4]} {AKIA[4:]}",
    ],
)
def test_a_short_word_before_or_after_a_split_token_does_not_hide_it(text: str) -> None:
    assert find_credential(text) in ("aws_access_key_id", "github_token")


@pytest.mark.parametrize("word", WORDS_BEFORE_A_KEY)
def test_every_spaced_or_line_broken_token_of_the_corpora_is_caught_after_each_word(word: str) -> None:
    cases = _worded()[word]
    missed = [(shape, text[:80]) for shape, text in cases if find_credential(text) is None]
    assert len(cases) >= 750  # ~800 split tokens of the evasion corpus that stand alone
    assert missed == []


def test_the_greedy_reading_comes_first_and_the_others_unglue_the_word() -> None:
    text = "aws key AKIA QW3R T5YU 7IOP AS2D"
    readings = rejoined_views(text)
    assert readings[0] == rejoined(text) == "aws keyAKIAQW3RT5YU7IOPAS2D"
    assert "aws key AKIAQW3RT5YU7IOPAS2D" in readings
    assert rejoined_views("the cat sat on the mat") == [] and rejoined("the cat sat on the mat") is None


# --- 2. encodings people paste --------------------------------------------------------------------

ENCODED = {
    "percent": "AKIA%51W3RT5YU7IOPAS2D",
    "percent_all": "".join(f"%{ord(c):02X}" for c in AKIA),
    "percent_twice": AKIA[:4] + "%2551" + AKIA[5:],
    "json_escape": "\\u0041KIAQW3RT5YU7IOPAS2D",
    "json_escape_all": "".join(f"\\u{ord(c):04x}" for c in GH),
    "js_hex": "\\x41KIAQW3RT5YU7IOPAS2D",
    "html_decimal": "&#65;KIAQW3RT5YU7IOPAS2D",
    "html_hex": "&#x41;KIAQW3RT5YU7IOPAS2D",
    "html_named": GH.replace("_", "&lowbar;"),
    "html_amp_nested": "&amp;#65;KIAQW3RT5YU7IOPAS2D",
    "dash_groups": "aws key AKIA-QW3R-T5YU-7IOP-AS2D",
    "dot_groups": f"token {GH[:4]}" + ".".join(GH[i : i + 4] for i in range(4, 40, 4)),
    "bar_groups": "token " + "|".join(GH[i : i + 4] for i in range(0, 40, 4)),
    "middle_dot_groups": "key: " + "\u00b7".join(AKIA[i : i + 4] for i in range(0, 20, 4)),
    "slash_groups": "my aws key is " + "/".join(AKIA[i : i + 4] for i in range(0, 20, 4)),
    "underscore_groups": "token " + GH[:4] + "_".join(GH[i : i + 4] for i in range(4, 40, 4)),
}


@pytest.mark.parametrize("name", ENCODED)
def test_a_pasted_encoding_is_decoded_and_read_again(name: str) -> None:
    assert find_credential(ENCODED[name]) in ("aws_access_key_id", "github_token")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_shape_encoded_in_every_way_is_caught(encoding: str) -> None:
    cases = [c for c in encoded_cases() if c.context == encoding]
    missed = [(c.label, c.text[:80]) for c in cases if find_credential(c.text) is None]
    assert len(cases) >= 400 and missed == []


@pytest.mark.parametrize("separator", GROUP_SEPARATORS)
def test_every_corpus_token_in_groups_after_a_key_word_is_caught(separator: str) -> None:
    sep_name = {"-": "dash", ".": "dot", "_": "underscore", "|": "bar", "\u00b7": "middle_dot", "/": "slash"}[separator]
    cases = [(c, t) for c, t in grouped_cases() if c.context.startswith(sep_name + "|") and _alone(t)]
    missed = [(c.label, c.text[:80]) for c, _ in cases if find_credential(c.text) is None]
    assert len(cases) >= 150 and missed == []


@pytest.mark.parametrize(
    "text",
    [
        "café: caf%C3%A9 is 100% good",
        "%E2%82%AC 5 budget",
        "Tom &amp; Jerry &lt;3",
        "na\\u00efve \\u00e9t\\u00e9",
        "key dates: 2024-05-01 and 2025-06-30",
        "api key id 123e4567-e89b-12d3-a456-426614174000",
        "token server at 10.0.0.12, version 1.2.3.4",
        "key file in /usr/local/etc/app.conf",
        "call +1-415-555-1098",
        "the key is under the mat.the door.the hall.the stairs",
        "token%20count%3A%2012",
        "&#x1F600; &#128512; &hearts;",
    ],
)
def test_benign_encodings_and_separators_are_not_refused(text: str) -> None:
    assert find_credential(text) is None


def test_decoded_views_undo_each_layer_and_each_encoding_alone() -> None:
    assert decoded_views("plain text") == []
    views = decoded_views("mar&#105;adb://root:%3Fpw@db")  # the password's own %3F stays in one view
    assert "mariadb://root:%3Fpw@db" in views and "mariadb://root:?pw@db" in views
    assert decoded_views("AKIA%2551") == ["AKIA%51", "AKIAQ"]
    assert len(decoded_views("&#37;41%26%2365;\\u0025" * 80)) <= 8  # a few views, whatever the text


# --- 4. recall 1.0 on every corpus, no false alarm in any benign category -----------------------


@pytest.mark.parametrize(
    ("corpus", "cases"),
    [
        ("credential_corpus", positive_cases),
        ("evasion", evasion_cases),
        ("new_shapes", new_shape_cases),
    ],
)
def test_recall_is_one_on_every_corpus(corpus: str, cases: object) -> None:
    missed = [(c.label, c.context, c.text[:80]) for c in cases() if find_credential(c.text) is None]  # type: ignore[operator]
    assert missed == [], corpus


def test_no_benign_category_has_a_false_alarm() -> None:
    flagged = [(c.label, c.text[:80]) for c in (*negative_cases(), *hard_negative_cases()) if find_credential(c.text)]
    assert flagged == []
