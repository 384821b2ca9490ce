"""Wallet recovery phrases: 12 to 24 words of the BIP-39 list, in order, as a wallet shows them.

Whoever holds the words holds the wallet. A run of at least 12 list words counts when its words
carry a valid BIP-39 checksum (checked with Trezor's `mnemonic`), or when the note calls it a seed
or recovery phrase. Prose made of common words is not such a run: the list holds no 'the', 'a', 'of'.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_WORD = re.compile(r"[a-z]++")
_BETWEEN = re.compile(r"[\s,;.\-]*(?:[0-9]{1,2}[.):]?[\s]+)?")  # '1. abandon 2. ability', 'abandon, ability'
_CONTEXT = re.compile(r"seed|mnemonic|recovery|backup phrase|secret phrase|wallet|metamask|ledger|trezor|bip-?39|(?:12|24)[ -]words")
_MIN_WORDS = 12
_LENGTHS = (24, 21, 18, 15, 12)


@cache
def _bip39() -> Any:
    from mnemonic import Mnemonic  # imported on first use: most notes have no 12-word run

    return Mnemonic("english")


@cache
def _wordlist() -> frozenset[str]:
    return frozenset(_bip39().wordlist)


def _runs(low: str) -> list[list[str]]:
    words = _wordlist()
    runs: list[list[str]] = []
    run: list[str] = []
    last_end = -1
    for m in _WORD.finditer(low):
        word, start = m.group(0), m.start()
        adjacent = last_end >= 0 and _BETWEEN.fullmatch(low, last_end, start) is not None
        boundary = (start == 0 or not low[start - 1].isalpha()) and (m.end() == len(low) or not low[m.end()].isalpha())
        if word in words and boundary:
            if not (run and adjacent):
                if len(run) >= _MIN_WORDS:
                    runs.append(run)
                run = []
            run.append(word)
        else:
            if len(run) >= _MIN_WORDS:
                runs.append(run)
            run = []
        last_end = m.end()
    if len(run) >= _MIN_WORDS:
        runs.append(run)
    return runs


def _has_valid_checksum(run: list[str]) -> bool:
    check = _bip39().check
    return any(check(" ".join(run[i:i + n])) for n in _LENGTHS if n <= len(run) for i in range(len(run) - n + 1))


def find_seed_phrase(text: str, low: str) -> str | None:
    """``seed_phrase`` for a run of 12+ BIP-39 words with a valid checksum or named as a seed."""
    if low.count(" ") + low.count("\n") < _MIN_WORDS - 1:
        return None
    for run in _runs(low):
        if _has_valid_checksum(run) or _CONTEXT.search(low):
            return "seed_phrase"
    return None
