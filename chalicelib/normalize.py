"""Text as a person reads it, so a check cannot be dodged by characters nobody sees or notices.

The stored text is always what the user typed; only the checks look at these views:
- ``readable(text)``: invisible (default-ignorable and format) characters removed, Unicode NFKC
  (full-width forms, ligatures, math letters become plain ones), and letters of other scripts that
  look Latin (Unicode's confusables data, via confusable-homoglyphs) mapped to the Latin letter they
  imitate, inside words that mix them with Latin letters;
- ``rejoined(view)`` (chalicelib/rejoin.py): the same view with tokens put back together where a
  single space, tab or line break splits them, or None when no split was found (``rejoined_views``:
  every reading where a join is ambiguous);
- ``decoded_views(view)``: the encodings people paste undone (percent-encoding, JSON/JS ``\\u0041`` and
  ``\\x41`` escapes, HTML entities, each up to three times nested) and, after a word such as
  'key' or 'token', the separators written between a token's groups (``AKIA-QW3R-…``,
  ``ghp_|aB3d|…``) removed: each layer's result, or nothing when there was nothing to undo;
- ``is_blank`` / ``bad_control`` / ``bidi_control``: text with nothing visible is empty; control characters
  other than tab and newline (and the CR of a CRLF) are refused, and so are the bidirectional
  embedding, override and isolate controls (issue 37 #15).
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from functools import cache
from importlib import resources

from chalicelib.rejoin import rejoined, rejoined_views

__all__ = ["bad_control", "bidi_control", "decoded_views", "is_blank", "readable", "rejoined", "rejoined_views"]

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
# Bidirectional embeddings, overrides and isolates (LRE RLE PDF LRO RLO, LRI RLI FSI PDI) reorder what is
# shown around them: after U+202E a page shows "Do ton share" as "Do not share" while agents are given the
# stored words. The marks (U+200E, U+200F, U+061C) are kept: they move no word, and right-to-left text
# copied from other apps carries them.
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")


def is_blank(text: str) -> bool:
    """Nothing a person can see: white space, invisible characters and blank look-alikes only."""
    return _BLANK.fullmatch(text) is not None


def bad_control(text: str) -> bool:
    """A control character other than tab and newline (NUL, escape, a lone CR...)."""
    return _CONTROL.search(text) is not None


def bidi_control(text: str) -> bool:
    """A bidirectional embedding, override or isolate control (U+202A-U+202E, U+2066-U+2069)."""
    return _BIDI_CONTROL.search(text) is not None


# --- look-alike letters -----------------------------------------------------------------------


@cache
def _confusables() -> dict[str, str]:
    """Non-Latin letters (Cyrillic, Greek, Armenian, Cherokee...) → the ASCII letter or digit they
    imitate, from Unicode's confusables.txt as confusable-homoglyphs ships it (built once, lazily)."""
    raw = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    table: dict[str, str] = {}
    for char, glyphs in raw.items():
        if (
            len(char) != 1
            or char.isascii()
            or (
                unicodedata.name(char, "LATIN").startswith("LATIN")
                and (
                    unicodedata.decomposition(char)
                    or any(w in unicodedata.name(char, "") for w in ("STROKE", "DOTLESS"))
                )
            )
        ):
            continue  # accented Latin letters stay ('é', 'ł', 'ş' are not disguises, and keywords use them); 'ɑ', 'ɡ', 'ᴜ' are
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


@cache
def _before_nfkc() -> dict[str, str]:
    """Look-alikes that NFKC would turn into another non-Latin letter ('ϲ' lunate sigma → 'ς'): unmasked first."""
    return {
        c: g
        for c, g in _confusables().items()
        if not unicodedata.normalize("NFKC", c).isascii() and unicodedata.normalize("NFKC", c) != c
    }


def _unmask_before_nfkc(m: re.Match[str]) -> str:
    word = m.group(0)
    table = _before_nfkc()
    if table.keys().isdisjoint(word) or not _ASCII_LETTER.search(word):
        return word
    return "".join(table.get(c, c) for c in word)


def readable(text: str) -> str:
    """The text with invisible characters removed, NFKC applied and look-alike letters unmasked."""
    if text.isascii():
        return text
    view = _INVISIBLE.sub("", text)
    if not _before_nfkc().keys().isdisjoint(view):  # rare: only then is each word looked at twice
        view = _WORD.sub(_unmask_before_nfkc, view)
    view = unicodedata.normalize("NFKC", view)
    return _WORD.sub(_unmask_word, view) if not view.isascii() else view


# --- encodings people paste -------------------------------------------------------------------

_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_ESCAPE = re.compile(r"\\(?:u\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4})|x([0-9A-Fa-f]{2}))")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?")
_ROUNDS = 3  # '%2541', '&amp;#65;': an encoding of an encoding


def _unescape(m: re.Match[str]) -> str:
    code = int(m.group(1) or m.group(2) or m.group(3), 16)
    return chr(code) if 0 < code < 0x110000 and not 0xD800 <= code < 0xE000 else m.group(0)


def _percent_decode(text: str) -> str:
    return _PERCENT_RUN.sub(_unquote_run, text) if "%" in text else text


def _escape_decode(text: str) -> str:
    return _ESCAPE.sub(_unescape, text) if "\\" in text else text


def _entity_decode(text: str) -> str:
    return html.unescape(text) if "&" in text and _ENTITY.search(text) else text


_DECODERS = (_percent_decode, _escape_decode, _entity_decode)


def _decode_once(text: str) -> str:
    for decode in _DECODERS:
        text = decode(text)
    return text


_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _unquote_run(m: re.Match[str]) -> str:
    try:  # each run of %XX as UTF-8 bytes; a run that is not UTF-8 stays as typed
        return bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:
        return m.group(0)


# After a word that names a key, groups of a token written with a separator between them: 'AKIA-QW3R-T5YU-…',
# 'ghp_|aB3d|…', 'ya29.Zjq7.fGU2…'. The groups after the first have one length, the last no longer (dates,
# versions, UUIDs, paths and phone numbers do not), so the run reads as one token.
_NAMES_A_KEY = re.compile(r"(?i)key|token|secret|pass|pwd|pw|credential|api|aws|auth|bearer|pat\b|cred")
_GROUP_CHARS = "_+=-./:"


def _grouped_pattern(sep: str) -> re.Pattern[str]:
    """Groups of letters, digits and token punctuation other than ``sep``, joined by ``sep``: no character is both,
    so every match is read in one pass."""
    g = "A-Za-z0-9" + re.escape(_GROUP_CHARS.replace(sep, ""))
    s = re.escape(sep)
    return re.compile(rf"(?<![{g}{s}])[{g}]{{1,12}}+(?:{s}[{g}]{{1,12}}+){{3,80}}+(?![{g}])")


_GROUPED = {sep: _grouped_pattern(sep) for sep in "-._|\u00b7/"}


def _ungroup(text: str, keep_head: bool) -> str:
    """The grouped tokens closed up; with ``keep_head`` the first separator stays ('ya29.' and 'shpat_' are prefixes)."""
    for sep, pattern in _GROUPED.items():
        if sep not in text:
            continue
        out, at = [], 0
        for m in pattern.finditer(text):
            groups = m.group(0).split(sep)
            size = len(groups[1])
            if (
                size < 3
                or any(len(g) != size for g in groups[1:-1])
                or len(groups[-1]) > size
                or not _NAMES_A_KEY.search(text, max(0, m.start() - 40), m.start())
            ):
                continue
            out += [text[at : m.start()], groups[0] + (sep if keep_head else "") + "".join(groups[1:])]
            at = m.end()
        if out:
            text = "".join(out) + text[at:]
    return text


def decoded_views(view: str) -> list[str]:
    """``view`` with pasted encodings undone, one layer after another (a password may hold a '%3F' of its
    own), and with grouped tokens closed up: each distinct result, none equal to ``view``."""
    if "%" not in view and "\\" not in view and "&" not in view and not _NAMES_A_KEY.search(view):
        return []  # most notes: nothing encoded, no word that names a key
    layers: list[str] = []
    fully = view  # all three encodings undone, layer after layer
    # then each encoding alone to its end: '&#58;%3F0*…' is an HTML entity beside a password's own '%3F'.
    # At most eight views, whatever the text.
    for decode in (_decode_once, *_DECODERS):
        text = view
        for _ in range(_ROUNDS):
            once = decode(text)
            if once == text:
                break
            text = once
            if decode is _decode_once:
                layers.append(text)
        if decode is _decode_once:
            fully = text
        elif text not in layers and text != view:
            layers.append(text)
    views: list[str] = []
    grouped = (_ungroup(fully, keep_head=False), _ungroup(fully, keep_head=True)) if _NAMES_A_KEY.search(fully) else ()
    for v in (*layers, *grouped):
        if v != view and v not in views:
            views.append(v)
    return views
