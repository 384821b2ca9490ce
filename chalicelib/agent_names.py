"""Agent names as a person reads them, so a block on `helper` holds for `Helper`, `helper_` and `helper2`.

`fold_agent_name` is what every per-agent decision compares and what an agent's row is keyed by
(storage/agents.py); the name an agent gave is still what is stored on its sessions and proposals and
shown. docs/agents.md says the fold in words. In order:

1. NFKC, and invisible characters and word-like marks (`™`) dropped (chalicelib/normalize.py's class):
   `ｈｅｌｐｅｒ` and `helper™` are `helper`.
2. Every letter of another script that imitates a Latin letter or digit becomes that letter (Unicode's
   confusables data as confusable-homoglyphs ships it, chalicelib/normalize.py): Cyrillic `е` is `e`.
3. Case-folded, and accents dropped (NFKD without combining marks): `Zéd` is `zed`.
4. Cut into runs of letters and digits: every other character (`-_.:/`, spaces, brackets…) separates
   and is dropped, so `claude--code`, `claude_code`, `Claude Code` and `claudecode` are one name.
5. Versions never name another agent: a run that is a number (`2`, `1`) or `v` and a number (`v3`) is
   dropped, and so are the digits that end the last run (`helper2`, `gpt4`): `cursor/1.2`, `Claude Code 2`,
   `helper-v3` fold as `cursor`, `claudecode`, `helper`.
6. The runs joined. A name with nothing left after 5 (`2024`, `v2`) keeps its runs as they were after 4.

What this merges on purpose: spellings and versions of one product. What it also merges, the price of
the above: names that differ only by separators (`a-b`, `ab`) or by a version (`gpt-4`, `gpt-5`); a person
who blocks one blocks the other, which errs towards the block.
"""

from __future__ import annotations

import re
import unicodedata

from chalicelib.normalize import _INVISIBLE, _confusables

__all__ = ["MAX_FOLDED_LENGTH", "fold_agent_name", "same_agent"]

MAX_FOLDED_LENGTH = 256  # a 128-character id can only grow by NFKC; a key never holds more than this
_RUN = re.compile(r"[^\W_]+")  # letters and digits (Unicode), never the underscore
_VERSION = re.compile(r"v?\d+")
_TRAILING_DIGITS = re.compile(r"\d+$")


def _without_marks(name: str) -> str:
    """`name` without the symbols NFKC spells as words (™ "TM", ℠ "SM", ℡ "TEL"): marks beside a name."""
    return "".join(
        c
        for c in name
        if not (
            unicodedata.category(c).startswith("S") and sum(x.isalpha() for x in unicodedata.normalize("NFKC", c)) > 1
        )
    )


def fold_agent_name(name: str) -> str:
    """The name an agent is compared and keyed by (see the module's docstring for the exact fold)."""
    view = unicodedata.normalize("NFKC", _without_marks(_INVISIBLE.sub("", name)))
    if not view.isascii():
        table = _confusables()
        view = "".join(table.get(c, c) for c in view)
    view = unicodedata.normalize("NFKD", view.casefold().replace("ı", "i"))  # Turkish dotless ı: Latin, so not in 2
    view = "".join(c for c in view if not unicodedata.combining(c))
    runs = _RUN.findall(view)
    words = [run for run in runs if not _VERSION.fullmatch(run)]
    if words:
        words[-1] = _TRAILING_DIGITS.sub("", words[-1])
    folded = "".join(words) or "".join(runs)
    return (folded or view.strip())[:MAX_FOLDED_LENGTH]


def same_agent(a: str | None, b: str | None) -> bool:
    """Whether two stored agent names are one agent to the person."""
    return a is not None and b is not None and fold_agent_name(a) == fold_agent_name(b)
