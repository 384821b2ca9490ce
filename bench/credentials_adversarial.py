"""A search for the credential detector's worst input: which text grows its cost most from 1000 to 2000 characters.

Candidates are built from what every rule and view looks for (vendor prefixes, keywords, separators,
encodings, breaks), each repeated or followed by a long run, plus the corpus's hard inputs
(tests/corpora/credential_corpus_hard.py). Each is timed at about 1000 characters and at twice that
input, the same text twice (so the two differ in length only: no cut-off unit at the end, no other
content in a random input's second half; a candidate already holds its unit at least twice, so the
doubling adds no first junction between units, a one-time step of one more view) in CPU time
(time.process_time: other processes on a shared machine count less than in wall time), short and long
interleaved, best of several rounds; the ratio is about 2 where the cost is linear. A first pass
screens every candidate once; the slowest-growing are timed again with more rounds, and the worst is
named. Reported by bench/credentials_bench.py, never asserted in tests.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

Finder = Callable[[str], "str | None"]

# What the rules anchor on: a literal each regex starts from, or a word a check looks around.
PIECES = (
    "ghp_",
    "github_pat_",
    "sk-",
    "sk-ant-api03-",
    "xoxb-",
    "glpat-",
    "AIza",
    "AKIA",
    "eyJ",
    "SG.",
    "hvs.",
    "ya29.",
    "key-",
    "SK",
    "hf_",
    "npm_",
    "pypi-AgE",
    "shpat_",
    "HRKU-",
    "AGE-SECRET-KEY-1",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    "-----BEGIN PRIVATE KEY-----",
    "password",
    "password: ",
    "passwd=",
    "pass ",
    "token:",
    "api_key=",
    "secret ",
    "Bearer ",
    "Authorization: Basic ",
    "https://",
    "postgres://u:",
    "@",
    "sig=",
    "sv=1&",
    "mysql -p",
    "sshpass -p ",
    "curl -u ",
    "PGPASSWORD=",
    "abandon ",
    "seed ",
    "aws ",
    "`",
    '"',
    "1234567890:",
    "-us1",
)
FILLERS = (
    "",
    " ",
    "\n",
    "=",
    ":",
    "-",
    ".",
    "_",
    "|",
    "\u00b7",
    "/",
    "%41",
    "&#65;",
    "&amp;",
    "\\u0041",
    "\u200b",
    "a1B2",
    "Ab1 ",
    "AB12-",
    "ab12.",
    "x",
    "A" * 8,
    "aB3dE5gH " * 2,
)


def whole_units(text: str, n: int = 1000) -> str:
    """The first ``n`` characters of ``text``, shortened to whole units when it repeats one (of up to 64
    characters): doubling then makes no junction a cut-off unit would not have had."""
    for period in range(1, 65):
        if len(text) > 2 * period and text[period:] == text[:-period]:
            return text[: n - n % period]
    return text[:n]


def candidates() -> dict[str, str]:
    """Named candidates of about 1000 characters (doubled when timed): each piece followed by each filler, repeated;
    each piece then a long run; the hard inputs' first 1000 characters."""
    from tests.corpora.credential_corpus_hard import HARD_INPUTS

    out = {f"hard:{name}": whole_units(text) for name, text in HARD_INPUTS.items()}
    for piece in PIECES:
        for filler in FILLERS:
            unit = piece + filler
            out[f"{unit!r} repeated"] = unit * (1000 // len(unit))
        unit = piece + "aB3" * ((500 - len(piece)) // 3)  # twice already: doubling adds no first junction
        out[f"{piece!r} then a run of 'aB3', twice"] = unit * 2
    return out


def _cpu_per_call(find: Finder, text: str, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        find(text)
    return (time.process_time() - start) / calls


def growth(find: Finder, text: str, rounds: int = 5, calls: int = 3) -> tuple[float, float, float]:
    """(best CPU seconds per call on ``text``, on ``text`` twice, their ratio), short and long interleaved."""
    short, long = text, text + text
    best_short = best_long = float("inf")
    gc.disable()
    try:
        for _ in range(rounds):
            best_short = min(best_short, _cpu_per_call(find, short, calls))
            best_long = min(best_long, _cpu_per_call(find, long, calls))
    finally:
        gc.enable()
    return best_short, best_long, best_long / max(best_short, 1e-7)


def search(find: Finder, keep: int = 24) -> dict[str, object]:
    """Screen every candidate, time the ``keep`` slowest-growing again; the worst growth and its input's name."""
    pool = candidates()
    screened = sorted(pool, key=lambda name: -growth(find, pool[name], rounds=3, calls=2)[2])[:keep]
    timed = {name: growth(find, pool[name], rounds=7, calls=3) for name in screened}
    worst = max(timed, key=lambda name: timed[name][2])
    return {
        "time.adversarial_search_candidates": len(pool),
        "time.adversarial_search_worst_growth_2000_over_1000": round(timed[worst][2], 2),
        "time.adversarial_search_worst_input": worst,
        "time.adversarial_search_worst_us_at_2000": round(timed[worst][1] * 1e6, 1),
        "time.adversarial_search_growth": {
            name: round(t[2], 2) for name, t in sorted(timed.items(), key=lambda kv: -kv[1][2])
        },
    }
