"""The corpus's third part (issue 21): credentials pasted in an encoding a person decodes at a glance.

- ``encoded_cases()``: every shape's secret (the same run the disguises of credential_corpus_evasion.py
  target) percent-encoded, written as JSON/JS ``\\u0041`` escapes or as HTML entities (decimal, hex,
  named), wholly or in part (label = shape, context = the encoding);
- ``grouped_cases()``: every stand-alone token of the evasion corpus written in groups of four with a
  separator (``-``, ``.``, ``_``, ``|``, ``·``, ``/``) after a word that names a key, beside the token
  as typed (label = shape, context = 'separator|lead').
Deliberate encodings (base64, hex, reversed, spelled out) are not here: they stay out of scope (README).
Seeded like the other parts, so every run sees the same texts.
"""

from __future__ import annotations

import random
import re
from functools import cache

from tests.corpora.credential_corpus import SHAPES, Case, _positive_cases_for
from tests.corpora.credential_corpus_evasion import ALL_SHAPES, _evasions, _new_shape_cases_for, _target

__all__ = ["ENCODINGS", "GROUP_LEADS", "GROUP_SEPARATORS", "encoded_cases", "grouped_cases"]

SEED = 20_261_202
PER_ENCODING = 12  # per shape and encoding
_NAMED = {
    "_": "&lowbar;",
    ".": "&period;",
    ":": "&colon;",
    "/": "&sol;",
    "=": "&equals;",
    "+": "&plus;",
    "@": "&commat;",
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "'": "&apos;",
    "!": "&excl;",
    "#": "&num;",
    "$": "&dollar;",
    "%": "&percnt;",
    "*": "&ast;",
    "?": "&quest;",
    "(": "&lpar;",
    ")": "&rpar;",
}


def _percent(c: str) -> str:
    return "".join(f"%{b:02X}" for b in c.encode("utf-8"))


def _json(c: str) -> str:
    return "".join(f"\\u{ord(u):04x}" for u in c.encode("utf-16-be").decode("utf-16-be")) if ord(c) < 0x10000 else c


ENCODERS = {
    "percent": _percent,
    "json_escape": _json,
    "html_decimal": lambda c: f"&#{ord(c)};",
    "html_hex": lambda c: f"&#x{ord(c):X};",
    "html_named": lambda c: _NAMED.get(c, f"&#{ord(c)};"),
}
ENCODINGS = (*ENCODERS, *(f"{name}_partial" for name in ENCODERS))


def _encode(kind: str, run: str, rng: random.Random) -> str:
    encode = ENCODERS[kind.removesuffix("_partial")]
    if not kind.endswith("_partial"):
        return "".join(encode(c) for c in run)
    # a few characters encoded, as a URL or a template leaves them; named entities where they exist
    spots = {i for i, c in enumerate(run) if kind == "html_named_partial" and c in _NAMED}
    spots |= set(rng.sample(range(len(run)), max(1, len(run) // 6)))
    return "".join(encode(c) if i in spots else c for i, c in enumerate(run))


@cache
def encoded_cases() -> tuple[Case, ...]:
    """Each shape's secret encoded ``PER_ENCODING`` times per encoding (label shape, context encoding)."""
    rng = random.Random(SEED)
    cases: list[Case] = []
    for shape in ALL_SHAPES:
        base = _positive_cases_for(shape, rng, 40) if shape in SHAPES else _new_shape_cases_for(shape, rng, 40)
        for kind in ENCODINGS:
            for case in rng.sample(base, PER_ENCODING):
                a, b = _target(case.text)
                cases.append(Case(shape, kind, case.text[:a] + _encode(kind, case.text[a:b], rng) + case.text[b:]))
    return tuple(cases)


GROUP_SEPARATORS = ("-", ".", "_", "|", "\u00b7", "/")
GROUP_LEADS = ("key:", "my aws key is", "token", "api key =", "the github token:", "bot token")


def _grouped(token: str, sep: str) -> str | None:
    """The token in groups of four with ``sep`` between them; a prefix that ends with ``sep`` ('ghp_')
    keeps it as its own group's end. None when the token uses ``sep`` inside (it would read as two)."""
    head = ""
    if sep in token:
        cut = token.index(sep) + 1
        if cut > 9 or sep in token[cut:]:
            return None
        head, token = token[:cut], token[cut:]
    groups = [token[i : i + 4] for i in range(0, len(token), 4)]
    return head + sep.join(groups)


_SEPARATOR_NAMES = {"-": "dash", ".": "dot", "_": "underscore", "|": "bar", "\u00b7": "middle_dot", "/": "slash"}
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.:]{16,}")
_NAMED_VALUE = re.compile(r"^[A-Za-z_]{2,40}[=:](?=.{16})")  # 'key=ya29.…': the token is the value


@cache
def grouped_cases() -> tuple[tuple[Case, str], ...]:
    """Each token of the evasion corpus (the longest run of token characters in its secret) grouped with every
    separator after a lead word (label shape, context 'separator|lead'), with the token as typed: a test keeps
    the tokens that are found on their own."""
    rng = random.Random(SEED + 1)
    tokens: set[tuple[str, str]] = set()
    for case, _, run in _evasions():
        found = [_NAMED_VALUE.sub("", m.group(0).rstrip(".:")) for m in _TOKEN.finditer(run)]
        if case.context == "space" and found:
            tokens.add((case.label, max(found, key=len)))
    cases: list[tuple[Case, str]] = []
    for shape, token in sorted(tokens):
        for sep in GROUP_SEPARATORS:
            written = _grouped(token, sep)
            if written is not None:
                lead = rng.choice(GROUP_LEADS)
                cases.append((Case(shape, f"{_SEPARATOR_NAMES[sep]}|{lead}", f"{lead} {written}"), token))
    return tuple(cases)
