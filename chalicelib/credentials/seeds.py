"""Wallet recovery phrases: 12 to 24 words of the BIP-39 list, in order, as a wallet shows them.

Whoever holds the words holds the wallet. A run of at least 12 list words counts when its words
carry a valid BIP-39 checksum (Trezor's `mnemonic` word list), when the note calls it a seed or
recovery phrase, or when it is written as a wallet shows one: exactly 12, 15, 18, 21 or 24 list words in
one case, without commas (a person does not check the checksum; an outsider's phrases often fail it).
Prose made of common words is not such a run: the list holds no 'the', 'a', 'of', 'and' nor plurals.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache

_WORD = re.compile(r"[a-z]++")
_BETWEEN = re.compile(r"[\s,;.\-]*(?:[0-9]{1,2}[.):]?[\s]+)?")  # '1. abandon 2. ability', 'abandon, ability'
_CONTEXT = re.compile(
    r"seed|mnemonic|recovery|backup phrase|secret phrase|wallet|metamask|ledger|trezor|bip-?39|(?:12|24)[ -]words"
)
_MIN_WORDS = 12
_TITLE = re.compile(r"(?<![A-Za-z])[A-Z][a-z]++(?![A-Za-z])")  # 'Apple', not 'APPLE' nor 'apple'
_LENGTHS = (24, 21, 18, 15, 12)
_MAX_RUN = 26


@cache
def _index() -> dict[str, int]:
    """Each BIP-39 English word's 11-bit value (the list from Trezor's `mnemonic`, imported on first use)."""
    from mnemonic import Mnemonic

    return {word: n for n, word in enumerate(Mnemonic("english").wordlist)}


def _runs(low: str) -> list[tuple[list[str], bool]]:
    """Each run of 12 or more adjacent list words, and whether a comma or semicolon parted any two."""
    words = _index()
    runs: list[tuple[list[str], bool]] = []
    run: list[str] = []
    listed = False
    last_end = -1
    for m in _WORD.finditer(low):
        word, start = m.group(0), m.start()
        adjacent = last_end >= 0 and _BETWEEN.fullmatch(low, last_end, start) is not None
        boundary = (start == 0 or not low[start - 1].isalpha()) and (m.end() == len(low) or not low[m.end()].isalpha())
        if word in words and boundary:
            if not (run and adjacent):
                if len(run) >= _MIN_WORDS:
                    runs.append((run, listed))
                run, listed = [], False
            elif not listed and (low.find(",", last_end, start) >= 0 or low.find(";", last_end, start) >= 0):
                listed = True
            run.append(word)
        else:
            if len(run) >= _MIN_WORDS:
                runs.append((run, listed))
            run, listed = [], False
        last_end = m.end()
    if len(run) >= _MIN_WORDS:
        runs.append((run, listed))
    return runs


def _checksum_ok(words: list[str]) -> bool:
    """BIP-39: the words' 11-bit values are the entropy then the first bits of its SHA-256.

    (mnemonic's own `check` looks each word up in a list; a dict keeps every note's scan linear.)
    """
    index = _index()
    value = 0
    for word in words:
        value = value << 11 | index[word]
    total = 11 * len(words)
    checksum_bits = total // 33
    entropy = value >> checksum_bits
    digest = hashlib.sha256(entropy.to_bytes((total - checksum_bits) // 8, "big")).digest()
    return digest[0] >> (8 - checksum_bits) == value & ((1 << checksum_bits) - 1)


def _has_valid_checksum(run: list[str]) -> bool:
    """A phrase of 12 to 24 words at the start or the end of the run (a stray list word may touch it)."""
    if len(run) > _MAX_RUN:
        return False  # a page of list words is a list, not a phrase someone wrote down
    return any(_checksum_ok(run[i : i + n]) for n in _LENGTHS if n <= len(run) for i in {0, len(run) - n})


def _dash_joined(low: str) -> bool:
    """'lemon-legend-swim-…': 10 or more parts of 3 to 8 letters in a row between dashes."""
    if low.count("-") < _MIN_WORDS - 1:
        return False
    streak = 0
    for part in low.split("-"):
        streak = streak + 1 if 3 <= len(part) <= 8 and part.isalpha() else 0
        if streak >= _MIN_WORDS - 2:
            return True
    return False


def _written_as_a_phrase(text: str, run: list[str], listed: bool) -> bool:
    """Exactly 12, 15, 18, 21 or 24 list words, in one case, not a list with commas: how wallets show a
    phrase. Prose breaks such runs with words the list lacks ('the', 'a', 'of', 'and', plurals)."""
    if listed or len(run) not in _LENGTHS or len(set(run)) < len(run) - 2:
        return False
    return text.islower() or text.isupper()


def find_seed_phrase(text: str, low: str) -> str | None:
    """``seed_phrase`` for a run of 12+ BIP-39 words with a valid checksum, named as a seed, or written
    out as a wallet shows one (12 to 24 words in a row, one case, no commas)."""
    if low.count(" ") + low.count("\n") < _MIN_WORDS - 1 and not _dash_joined(low):
        return None
    for run, listed in _runs(low):
        if _CONTEXT.search(low):
            return "seed_phrase"
        if len(_TITLE.findall(text)) >= len(run):
            continue  # 'Apple Banana Orange …': a list a person typed (one in 16 has a valid checksum), not a wallet's
        if _has_valid_checksum(run) or (len(run) <= _MAX_RUN and _written_as_a_phrase(text, run, listed)):
            return "seed_phrase"
    return None
