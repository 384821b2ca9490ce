"""Tokens put back together where a single space, tab or line break splits them, as a reader would.

'ghp_aB3d E5gH…', 'AKIA QW3R T5YU 7IOP', 'g h p _ a B 3 …', 'https://hooks.s\\nlack.com/…': a
person sees one token; a pattern sees pieces. Only chains of token characters separated by single
breaks are looked at, and a break is closed only where a piece looks generated (letters mixed with
digits, a case change inside, symbols between characters, a run of capitals) or is a token's cut
end, never between ordinary words, and never where a new line starts a `KEY=` / `name:` of its own.
Over-joining cannot hide anything: the checks read both this view and the unjoined one.
"""

from __future__ import annotations

import re

__all__ = ["rejoined"]

_T = r"A-Za-z0-9_+/=.:%@?&#!*~^$\-"
# Chains of token-character fragments joined by single breaks: the only places a join can happen.
# (The lookbehind makes a search starting inside a fragment fail at once: linear on any input.)
_CHAIN = re.compile(rf"(?<![{_T}])[{_T}]++(?:(?:[ \t]|\r?\n)[{_T}]++)+")
_GAP = re.compile(r"([ \t]|\r?\n)")
_DIGIT, _LETTER, _ALNUM = re.compile(r"[0-9]"), re.compile(r"[A-Za-z]"), re.compile(r"[A-Za-z0-9]")
_SHAPED = re.compile(r"[a-z][A-Z]|[A-Za-z0-9][_+/=][A-Za-z0-9]|[A-Z]{4}|[A-Za-z0-9][_\-]$")  # ...|"ghp_", "sk-"
# Two characters side by side that only generated text has (or a spelled-out run): a chain without
# one is left alone without being split, which keeps ordinary notes cheap.
_SIGNAL = re.compile(
    r"[0-9][A-Za-z]|[A-Za-z][0-9]|[a-z][A-Z]|[A-Za-z0-9][_+/=][A-Za-z0-9]|[A-Z]{4}|[A-Za-z0-9][_\-][ \t\r\n]|://"
    r"|(?<!\S)\S(?:[ \t]\S){7}(?!\S)"
)
_STOP = frozenset(
    "a an the is are was be to of in on at by for and or not it my me we us you he she his her its our "
    "your this that with from as if so no yes do can will use see has had have am pm id ok via per "
    "le la les de du des un une et est en au ist der die das und ein mit für el los es y".split()
)
_SEPARATORS = (":", "=")
# 'KEY=…', 'name: …' begin a line of their own (base64's closing '==' does not)
_STARTS_LINE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,40}(?::(?!//)|=(?!=*$))")
_WORD = re.compile(r"(?=[a-z]*[g-z])[a-z]{4,}[.,;!?]?|[A-Z][a-z]+[.,;!?]?")  # 'when', 'Thanks' (not hex 'fbeda')
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPELLED_OUT = 8  # 'g h p _ a B 3 ...': this many single characters in a row are one token spelled out
_LONG = 16  # a generated-looking piece this long carries on into whatever follows a break


def _tokenish(f: str) -> bool:
    if len(f) < 2:
        return False
    return bool(_DIGIT.search(f) and _LETTER.search(f)) or _SHAPED.search(f) is not None


def _loose(f: str) -> bool:
    """A short piece that is not a word of its own: the end of a token cut off by a break."""
    return len(f) <= 3 and f.lower().strip(".:") not in _STOP and _ALNUM.search(f) is not None


def _unworded(f: str) -> bool:
    """Not a word of prose ('when', 'Thanks', 'the'): a number, an id, a piece of a token."""
    return not (_WORD.fullmatch(f) or f.lower() in _STOP)


def _spelled_out(fragments: list[str], tokenish: list[bool]) -> None:
    singles = 0
    for i, f in enumerate([*fragments, ""]):
        if len(f) == 1:
            singles += 1
            continue
        if singles >= _SPELLED_OUT:
            tokenish[i - singles:i] = [True] * singles
        singles = 0


def _chunk_groups(fragments: list[str], gaps: list[str], tokenish: list[bool]) -> list[int]:
    """'AKIA QW3R T5YU 7IOP AS2D': three or more equal-length pieces on one line, most of them
    generated-looking, are one token written in groups (with a shorter cut end on either side);
    each piece's group, or -1."""
    group = [-1] * len(fragments)
    i = 0
    while i < len(fragments):
        j, size = i + 1, len(fragments[i])
        while j < len(fragments) and len(fragments[j]) == size and not gaps[j - 1].endswith("\n"):
            j += 1
        unworded = sum(t or _unworded(f) for t, f in zip(tokenish[i:j], fragments[i:j], strict=True))
        if j - i >= 3 and size >= 3 and any(tokenish[i:j]) and 2 * unworded >= j - i:
            lo = i - 1 if i > 0 and len(fragments[i - 1]) < size and _loose(fragments[i - 1]) else i
            hi = j + 1 if j < len(fragments) and len(fragments[j]) < size and _loose(fragments[j]) else j
            group[lo:hi] = [i] * (hi - lo)
            j = hi
        i = max(j, i + 1)
    return group


def _free_join(left: str, right: str, gap: str, left_tokenish: bool, right_tokenish: bool, last: bool) -> bool:
    """Whether a break outside a written-in-groups token splits one token."""
    in_url = "://" in left or (left.endswith(":/") and right.startswith("/"))  # 'sftp:/ /admin:…'
    if not (left_tokenish or right_tokenish or in_url):
        return False  # two ordinary words: every rule below needs a generated-looking side
    starts_line, newline = _STARTS_LINE.match(right) is not None, gap.endswith("\n")
    if in_url and "://" not in right:  # inside a URL: 'amqp://\napi:…', 'https://h ooks.slack.com/…'
        userinfo = "@" in right.split("/", 1)[0]  # 'ci-bot:lbW0\ns%FB@registry…': the password goes on
        if newline and not (right_tokenish or userinfo or right[:1] in "/:@.?&=%#" or left.endswith("://")):
            return False  # '…/post-caf4\nlikes espresso': the URL ended with its line
        return _ALNUM.search(right) is not None and not (starts_line and not userinfo and not left.endswith(("://", ":")))
    if newline and right[:1] in _SEPARATORS and _ALNUM.search(right) and _NAME.fullmatch(left):
        return True  # 'HEROKU_API_KEY\n=…': a name and its value cut apart
    # 'key: value', 'a = b', a new 'KEY=' line: the value is read as written ('DD_API_KE Y=…' is one name)
    new_key = starts_line and (newline or not left_tokenish)
    if left.endswith(_SEPARATORS) or right.startswith(_SEPARATORS) or new_key or "://" in right:
        return False
    if right[:1] in "-_." and right[1:2].isalnum() and right_tokenish and left.lower() not in _STOP:
        return True  # 'glptt -MB6hv…', 'glpat\n-JAsX…': a piece that starts with a token's own separator continues it
    if newline:  # a line of its own unless both halves look generated (or a cut end meets a long half)
        if right.startswith(("--", "/")):
            return False
        if last and left_tokenish and len(left) >= _LONG and _unworded(right) and _ALNUM.search(right):
            return True  # '…bTf0SCs\nVpa': the tail of a long token alone on the next line
        return right_tokenish and (
            left_tokenish or (_loose(left) and len(right) >= 8) or (len(right) >= _LONG and _unworded(left)))
    if left_tokenish and len(left) >= _LONG:  # '…-2c4 fbeda': the rest of a long token, unless a word
        return _ALNUM.search(right) is not None and right.lower() not in _STOP and not _WORD.fullmatch(right) \
            and not right.startswith("--")
    return (left_tokenish or right_tokenish) and (left_tokenish or _loose(left)) and (right_tokenish or _loose(right))


def _join_chain(m: re.Match[str]) -> str:
    if not _SIGNAL.search(m.group(0)):
        return m.group(0)
    pieces = _GAP.split(m.group(0))  # fragment, gap, fragment, gap, ...
    fragments = pieces[::2]
    tokenish = [_tokenish(f) for f in fragments]
    _spelled_out(fragments, tokenish)
    group = _chunk_groups(fragments, pieces[1::2], tokenish)
    out = [fragments[0]]
    for i in range(1, len(fragments)):
        left, gap, right = fragments[i - 1], pieces[2 * i - 1], fragments[i]
        if group[i - 1] >= 0 or group[i] >= 0:
            join = group[i - 1] == group[i]  # inside a grouped token, and never onto its neighbours
        else:
            join = _free_join(left, right, gap, tokenish[i - 1], tokenish[i], i == len(fragments) - 1)
        out.append(right if join else gap + right)
    return "".join(out)


def rejoined(view: str) -> str | None:
    """``view`` with split tokens rejoined, or None when nothing in it looks like a split token."""
    if not _SIGNAL.search(view):
        return None
    joined = _CHAIN.sub(_join_chain, view)
    return joined if joined != view else None
