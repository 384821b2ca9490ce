"""Text as a person reads it, so a check cannot be dodged by characters nobody sees or notices.

The stored text is always what the user typed; only the checks look at these views:
- ``readable(text)``: invisible (default-ignorable and format) characters removed, Unicode NFKC
  (full-width forms, ligatures, math letters become plain ones), and letters of other scripts that
  look Latin (Unicode's confusables data, via confusable-homoglyphs) mapped to the Latin letter they
  imitate, inside words that mix them with Latin letters;
- ``rejoined(view)`` (chalicelib/rejoin.py): the same view with tokens put back together where a
  single space, tab or line break splits them, or None when no split was found;
- ``is_blank`` / ``bad_control``: text with nothing visible is empty; control characters other than
  tab and newline (and the CR of a CRLF) are refused.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from importlib import resources

from chalicelib.rejoin import rejoined, rejoined_views

__all__ = ["bad_control", "is_blank", "readable", "rejoined", "rejoined_views"]

# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties.txt) and general category Cf: Hangul
# fillers, variation selectors, zero-width and bidi controls, soft hyphen, tags. tests check this
# class against unicodedata over every code point.
_INVISIBLE_CLASS = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
_INVISIBLE = re.compile(f"[{_INVISIBLE_CLASS}]+")
# Blank to the eye although not white space in Unicode: the braille blank and the Hangul fillers.
_BLANK = re.compile(f"[\\s\u2800{_INVISIBLE_CLASS}]*")
# C0/C1 controls and DEL, except tab, newline and the CR of a CRLF.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")


def is_blank(text: str) -> bool:
    """Nothing a person can see: white space, invisible characters and blank look-alikes only."""
    return _BLANK.fullmatch(text) is not None


def bad_control(text: str) -> bool:
    """A control character other than tab and newline (NUL, escape, a lone CR...)."""
    return _CONTROL.search(text) is not None


# --- look-alike letters -----------------------------------------------------------------------

@cache
def _confusables() -> dict[str, str]:
    """Non-Latin letters (Cyrillic, Greek, Armenian, Cherokee...) → the ASCII letter or digit they
    imitate, from Unicode's confusables.txt as confusable-homoglyphs ships it (built once, lazily)."""
    raw = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    table: dict[str, str] = {}
    for char, glyphs in raw.items():
        if len(char) != 1 or char.isascii() or unicodedata.name(char, "LATIN").startswith("LATIN"):
            continue  # accented Latin letters stay: 'é', 'ł', 'ş' are not disguises, and keywords use them
        ascii_glyphs = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalnum()]
        if not ascii_glyphs:
            continue
        # 'І' (Cyrillic) looks like 'I', 'l' and '1': take the one of the same kind (case, digit)
        same = [g for g in ascii_glyphs if g.isupper() == char.isupper() and g.isdigit() == char.isdigit()]
        table[char] = (same or ascii_glyphs)[0]
    for char, glyph in table.items():  # the data's prototype for 'Ι' (Greek) is 'l': read a capital as 'I'
        lower = table.get(char.lower(), "")
        if char.isupper() and not glyph.isupper() and lower.isalpha():
            table[char] = lower.upper()
    return table


_WORD = re.compile(r"[^\s:：,;]+")
_ASCII_LETTER = re.compile(r"[A-Za-z]")


def _unmask_word(m: re.Match[str]) -> str:
    word = m.group(0)
    if word.isascii() or not _ASCII_LETTER.search(word):
        return word  # a word wholly in one script ('пароль', 'токен') is read as written
    table = _confusables()
    return "".join(table.get(c, c) for c in word)


def readable(text: str) -> str:
    """The text with invisible characters removed, NFKC applied and look-alike letters unmasked."""
    if text.isascii():
        return text
    view = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))
    return _WORD.sub(_unmask_word, view) if not view.isascii() else view
