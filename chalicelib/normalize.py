"""Text as a person reads it, so a check cannot be dodged by characters nobody sees or notices.

The stored text is always what the user typed; only the checks look at these views:
- ``readable(text)``: invisible (default-ignorable and format) characters removed, Unicode NFKC
  (full-width forms, ligatures, math letters become plain ones), and letters of other scripts that
  look Latin (Unicode's confusables data, via confusable-homoglyphs) mapped to the Latin letter they
  imitate, inside words that mix them with Latin letters;
- ``rejoined(view)``: the same view with tokens put back together where a single space, tab or line
  break splits them ('ghp_aB3d E5gH...', 'AKIA QW3R T5YU...', 'g h p _ ...'), or None when no split
  was found;
- ``is_blank`` / ``bad_control``: text with nothing visible is empty; control characters other than
  tab and newline (and the CR of a CRLF) are refused.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from importlib import resources

__all__ = ["bad_control", "is_blank", "readable", "rejoined"]

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


# --- tokens split by a break ------------------------------------------------------------------

_T = r"A-Za-z0-9_+/=.:%@?&#!*~^\-"
# Chains of token-character fragments joined by single breaks: the only places a join can happen.
# (The lookbehind makes a search starting inside a fragment fail at once: linear on any input.)
_CHAIN = re.compile(rf"(?<![{_T}])[{_T}]++(?:(?:[ \t]|\r?\n)[{_T}]++)+")
_GAP = re.compile(r"([ \t]|\r?\n)")
# Generated-looking: letters and digits mixed, a case change inside, symbols between characters, caps runs.
_DIGIT, _LETTER = re.compile(r"[0-9]"), re.compile(r"[A-Za-z]")
_SHAPED = re.compile(r"[a-z][A-Z]|[A-Za-z0-9][_+/=][A-Za-z0-9]|[A-Z]{4}|[A-Za-z0-9][_\-]$")  # ...|"ghp_", "sk-"
_ANY_TOKENISH = re.compile(r"[0-9_+/=]|[a-z][A-Z]|[A-Z]{4}")  # without one of these, nothing is tokenish
_STOP = frozenset(
    "a an the is are was be to of in on at by for and or not it my me we us you he she his her its our "
    "your this that with from as if so no yes do can will use see has had have am pm id ok via per "
    "le la les de du des un une et est en au ist der die das und ein mit für el los es y".split()
)
_ALNUM = re.compile(r"[A-Za-z0-9]")
_SEPARATORS = (":", "=")
_STARTS_LINE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,40}[:=](?!//)")  # 'KEY=…', 'name: …' begin a line of their own
_SPELLED_OUT = 8  # 'g h p _ a B 3 ...': this many single characters in a row are one token spelled out


def _tokenish(f: str) -> bool:
    if len(f) < 2:
        return False
    return bool(_DIGIT.search(f) and _LETTER.search(f)) or _SHAPED.search(f) is not None


def _kinds(f: str) -> tuple[bool, bool, bool]:
    return any(c.islower() for c in f), any(c.isupper() for c in f), any(c.isdigit() for c in f)


def _cut_run(left: str, right: str, left_tokenish: bool, right_tokenish: bool) -> bool:
    """Both sides of a line break are one token's halves: generated-looking, in the same case
    ('…a81c9e0f' then 'EC2Instance' are two lines: lower-case hex, then capitals), and at
    least one long, with no separator that starts a line of its own ('KEY=', 'name:')."""
    long_side = (left_tokenish and len(left) >= 8) or (right_tokenish and len(right) >= 8)
    if not long_side or left.lower() in _STOP or not (right_tokenish or _loose(right)):
        return False
    if _STARTS_LINE.match(right) or right.startswith(("--", "/")):
        return False
    return True


def _worth_joining(fragments: list[str]) -> tuple[list[bool], list[bool]]:
    """(generated-looking, may be part of a token) for each fragment of a chain."""
    tokenish = [_tokenish(f) for f in fragments]
    singles = 0
    for i, f in enumerate(fragments + [""]):
        if len(f) == 1:
            singles += 1
            continue
        if singles >= _SPELLED_OUT:
            tokenish[i - singles:i] = [True] * singles
        singles = 0
    _mark_chunks(fragments, tokenish)
    return tokenish, [tokenish[i] or _loose(f) for i, f in enumerate(fragments)]


def _loose(f: str) -> bool:
    """A short piece that is not a word of its own: the end of a token cut off by a break."""
    return len(f) <= 3 and f.lower().strip(".:") not in _STOP and _ALNUM.search(f) is not None


def _mark_chunks(fragments: list[str], tokenish: list[bool]) -> None:
    """'AKIA QW3R T5YU 7IOP AS2D': three or more equal-length pieces, one generated-looking, are one
    token written in groups, with a shorter piece at either end."""
    i = 0
    while i < len(fragments):
        j, size = i, len(fragments[i])
        while j < len(fragments) and len(fragments[j]) == size:
            j += 1
        if j - i >= 3 and size >= 3 and any(tokenish[i:j]):
            lo = i - 1 if i > 0 and len(fragments[i - 1]) < size and _loose(fragments[i - 1]) else i
            hi = j + 1 if j < len(fragments) and len(fragments[j]) < size and _loose(fragments[j]) else j
            tokenish[lo:hi] = [True] * (hi - lo)
        i = max(j, i + 1)


def _join_chain(m: re.Match[str]) -> str:
    pieces = _GAP.split(m.group(0))  # fragment, gap, fragment, gap, ...
    fragments = pieces[::2]
    tokenish, part = _worth_joining(fragments)
    out = [fragments[0]]
    for i in range(1, len(fragments)):
        left, gap, right = fragments[i - 1], pieces[2 * i - 1], fragments[i]
        if gap.endswith("\n"):  # a new line is a new line unless it cuts a generated-looking run
            join = _cut_run(left, right, tokenish[i - 1], tokenish[i])
        elif right[:1] in "-_." and tokenish[i] and left.lower() not in _STOP:
            join = True  # 'glptt -MB6hv…': a piece that starts with a token's own separator continues it
        else:
            join = part[i - 1] and part[i] and (tokenish[i - 1] or tokenish[i])
        # 'key: value', 'a = b' keep their separator: the value is read as written
        join = join and not (left.endswith(_SEPARATORS) or right.startswith(_SEPARATORS))
        out.append(right if join else gap + right)
    return "".join(out)


def rejoined(view: str) -> str | None:
    """``view`` with split tokens rejoined, or None when nothing in it looks like a split token."""
    if not _ANY_TOKENISH.search(view):
        return None
    joined = _CHAIN.sub(_join_chain, view)
    return joined if joined != view else None
