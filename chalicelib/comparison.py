"""Texts as a person compares them, so "Prefers tea" and " prefers  TEA" are one memory, not two.

`comparison_form` is what a duplicate check compares (never what is stored or shown): the credential
check's reading of the text (chalicelib/normalize.py: invisible characters dropped, NFKC, look-alike
letters unmasked in mixed-script words), case-folded ("İ" as "i": a dotted capital folds to i + a dot
nobody sees), runs of white space (and the braille blank and the Hangul fillers, blank to the eye: a filler
between two words reads as a space, not as nothing) as one space, trimmed, and closing full stops,
ellipses, commas and semicolons dropped: "Prefers tea." and "Prefers tea," are the same memory as
"Prefers tea" ("?" and "!" stay: a question or an exclamation is read differently).
"""

from __future__ import annotations

import re
import unicodedata

from chalicelib.normalize import readable

__all__ = ["comparison_form"]

_SPACE = re.compile("[\\s\u2800]+")
# The Hangul fillers are invisible (`readable` drops them), but a person reads one between words as a space.
_FILLERS = re.compile("[\u115f\u1160\u3164\uffa0]")
_CLOSING_STOPS = re.compile("[ .,;\u3002]+$")  # after NFKC: "…" is "...", the full-width "．" "，" "；" are ". , ;"


def comparison_form(text: str) -> str:
    """The text as compared for duplicates: equal forms are the same memory."""
    # casefold can leave text outside NFKC ("ǰ" folds to j + combining caron): normalize once more.
    folded = unicodedata.normalize("NFKC", readable(_FILLERS.sub(" ", text)).casefold()).replace("i\u0307", "i")
    spaced = _SPACE.sub(" ", folded).strip()
    return _CLOSING_STOPS.sub("", spaced) or spaced  # "..." alone stays itself
