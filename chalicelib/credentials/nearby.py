"""Keys that have no shape of their own: a Heroku API key is a plain UUID, a secret only beside the word.

A UUID alone is an order, a device or a request (notes hold many), so it counts only within a few words
of 'heroku' (gitleaks' heroku-api-key: the word, up to 20 characters, then the UUID), before or after it,
and not when the words between name what the UUID identifies (an app, a release, an order...) or when it
sits in a URL's path. The word is read in the person's view, so full-width, zero-width and line-broken
spellings are the same word.
"""

from __future__ import annotations

import re

_UUID = re.compile(
    r"(?<![A-Za-z0-9_\-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![A-Za-z0-9_\-])"
)
# the word, also broken over two lines ('hero\nku')
_HEROKU = re.compile(
    r"(?<![a-z])h(?:\s{0,3}\n\s{0,3})?e(?:\s{0,3}\n\s{0,3})?r(?:\s{0,3}\n\s{0,3})?o(?:\s{0,3}\n\s{0,3})?k(?:\s{0,3}\n\s{0,3})?u"
)
# a line break inside the UUID, with the spaces a paste leaves around it ('…-c57417994 \ne54')
_BREAK = re.compile(r"(?<=[0-9a-fA-F\-])[ \t]{0,4}\r?\n[ \t]{0,4}(?=[0-9a-fA-F\-])")


def _unbroken(low: str) -> str:
    return low.replace("\n", "").replace("\r", "").replace(" ", "").replace("\t", "")


_GAP = 48  # characters between the word and the UUID, either side
# Words that say what a UUID identifies: it is then an id, not a key
_ID_WORDS = re.compile(
    r"(?<![a-z])(?:id|ids|uuid|app|apps|release|build|dyno|slug|addon|add-on|pipeline|space|team|region|stack|domain|"
    r"order|invoice|ticket|request|booking|tracking|device|account id|user id|owner|organization|org|formation|"
    r"attachment|webhook|review|spec|source|config var|var name)(?![a-z])"
)
_SENTENCE_END = re.compile(r"[.;!?]\s|\n")


def _names_an_id(words: str) -> bool:
    return bool(_ID_WORDS.search(words))


def _between_is_a_label(between: str, after: bool) -> bool:
    """The words between the name and the UUID call it a key (or nothing), never an id of something."""
    if "/" in between or "\n\n" in between or _names_an_id(between):
        return False  # 'https://api.heroku.com/apps/<uuid>': a path; a blank line: another note
    # '<uuid> is my heroku key', not '<uuid> shipped. Heroku was down': the same sentence, few words
    return not after or (len(between) <= 24 and not _SENTENCE_END.search(between))


def _near(text: str, low: str, words: list[tuple[int, int]]) -> bool:
    for m in _UUID.finditer(text):
        a, b = m.span()
        if (a and text[a - 1] == "/") or _names_an_id(low[max(0, a - 16) : a]):
            continue  # a path's part, or 'order <uuid>': an id named by the word before it
        for w, end in words:
            if end <= a <= end + _GAP and _between_is_a_label(low[end:a], after=False):
                return True
            if b <= w <= b + _GAP and _between_is_a_label(low[b:w], after=True):
                return True
    return False


def find_heroku_uuid(text: str, low: str) -> str | None:
    """``heroku_api_key`` for a UUID within a few words after or before 'heroku' that names no id."""
    if "-" not in text or not ("heroku" in low or ("\n" in low and "ku" in low and "heroku" in _unbroken(low))):
        return None
    if _near(text, low, [m.span() for m in _HEROKU.finditer(low)]):
        return "heroku_api_key"
    if "\n" in text:
        joined = _BREAK.sub("", text)
        if joined != text:
            low = joined.lower()
            return "heroku_api_key" if _near(joined, low, [m.span() for m in _HEROKU.finditer(low)]) else None
    return None
