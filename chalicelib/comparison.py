"""Texts as a person compares them, so "Prefers tea" and " prefers  TEA" are one memory, not two.

`comparison_form` is what a duplicate check compares (never what is stored or shown): the credential
check's reading of the text (chalicelib/normalize.py: invisible characters dropped, NFKC, look-alike
letters unmasked in mixed-script words), case-folded, runs of white space as one space, trimmed.
"""
from __future__ import annotations

import re
import unicodedata

from chalicelib.normalize import readable

__all__ = ["comparison_form"]

_SPACE = re.compile(r"\s+")


def comparison_form(text: str) -> str:
    """The text as compared for duplicates: equal forms are the same memory."""
    # casefold can leave text outside NFKC ("ǰ" folds to j + combining caron): normalize once more.
    folded = unicodedata.normalize("NFKC", readable(text).casefold())
    return _SPACE.sub(" ", folded).strip()
