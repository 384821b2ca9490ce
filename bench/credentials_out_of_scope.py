"""What decoding the deliberate encodings would cost in false alarms: base64, hex, reversed and spelled-out text.

Each benign note of the corpus (tests/corpora: the first part's benign categories and the hard benign
notes) is decoded the way a detector trying each encoding would (every base64 or hex run of 16+
characters that decodes to printable UTF-8 put in its place; the text reversed; NATO and digit
words spelled out as characters), and the note counts as a false alarm when find_credential refuses
a decoded view that it accepts as typed. The README quotes these rates (why they stay out of scope).
Run by bench/credentials_bench.py; never asserted in tests.
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from collections.abc import Callable

Finder = Callable[[str], "str | None"]

_B64 = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){8,}\b")
_NATO = dict(
    zip(
        "alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec "
        "romeo sierra tango uniform victor whiskey xray yankee zulu zero one two three four five six seven eight nine "
        "underscore dash hyphen dot".split(),
        [*"abcdefghijklmnopqrstuvwxyz0123456789", "_", "-", "-", "."],
        strict=True,
    )
)
_SPELLED = re.compile(r"\b(?:%s)(?:[ ,\-]+(?:%s)){3,}\b" % (("|".join(_NATO),) * 2), re.I)


def _printable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.isprintable() and len(text) >= 8 else None


def _from_base64(m: re.Match[str]) -> str:
    run = m.group(0)
    try:
        raw = base64.urlsafe_b64decode(run.replace("+", "-").replace("/", "_") + "=" * (-len(run) % 4))
    except (binascii.Error, ValueError):
        return run
    return _printable(raw) or run


def _from_hex(m: re.Match[str]) -> str:
    return _printable(bytes.fromhex(m.group(0))) or m.group(0)


def _spelled(m: re.Match[str]) -> str:
    words = re.split(r"[ ,\-]+", m.group(0))
    return "".join(_NATO[w.lower()].upper() if w.isupper() else _NATO[w.lower()] for w in words)


DECODERS: dict[str, Callable[[str], str]] = {
    "base64": lambda t: _B64.sub(_from_base64, t),
    "hex": lambda t: _HEX.sub(_from_hex, t),
    "reversed": lambda t: t[::-1],
    "spelled_out": lambda t: _SPELLED.sub(_spelled, t),
}


def false_alarm_cost(find: Finder) -> dict[str, float]:
    """out_of_scope.<encoding>.fpr: the share of benign notes refused only once decoded that way (and in all)."""
    from tests.corpora.credential_corpus import negative_cases
    from tests.corpora.credential_corpus_evasion import hard_negative_cases

    benign = [c.text for c in (*negative_cases(), *hard_negative_cases()) if find(c.text) is None]
    figures: dict[str, float] = {}
    any_alarm = [False] * len(benign)
    for name, decode in DECODERS.items():
        hits = changed = 0
        spent = time.process_time()
        for i, text in enumerate(benign):
            view = decode(text)
            changed += view != text
            if view != text and find(view) is not None:
                hits += 1
                any_alarm[i] = True
        figures[f"out_of_scope.{name}.fpr"] = round(hits / len(benign), 4)
        figures[f"out_of_scope.{name}.notes_decoded"] = changed  # how many notes the decoder changed at all
        figures[f"out_of_scope.{name}.cpu_s"] = round(time.process_time() - spent, 2)
    figures["out_of_scope.all_four.fpr"] = round(sum(any_alarm) / len(benign), 4)
    figures["out_of_scope.benign_notes"] = len(benign)
    spent = time.process_time()
    for text in benign:
        find(text)
    figures["out_of_scope.as_typed.cpu_s"] = round(time.process_time() - spent, 2)
    return figures
