"""Tokens put back together where a single space, tab or line break splits them, as a reader would.

'ghp_aB3d E5gH…', 'AKIA QW3R T5YU 7IOP', 'g h p _ a B 3 …', 'https://hooks.s\\nlack.com/…': a
person sees one token; a pattern sees pieces. Only chains of token characters separated by single
breaks are looked at, and a break is closed only where a piece looks generated (letters mixed with
digits, a case change inside, symbols between characters, a run of capitals) or is a token's cut
end, never between ordinary words, and never where a new line starts a `KEY=` / `name:` of its own.
A short piece beside a token is ambiguous: a cut end ('…bTf0SCs\nVpa') or a word ('aws key AKIA QW3R…',
'my key ghp_…'). ``rejoined_views`` gives every reading: joined greedily, without gluing a piece that is not
token-like onto the token's left, onto its right, or on either side. The checks read each of them and the
unjoined view, so over-joining cannot hide anything.
"""

from __future__ import annotations

import re
from os.path import commonprefix

__all__ = ["rejoined", "rejoined_views"]

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
# Japanese and Chinese put no space between words: one between two such characters splits a word ('APIキ ーは')
_CJK_GAP = re.compile(r"(?<=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]) (?=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff])")
_PADDED, _B64_PIECE = re.compile(r"[A-Za-z0-9+/]{7,}={1,2}[\"',;)}\]]*"), re.compile(r"[A-Za-z0-9+/]{2,}")
_PEELABLE = re.compile(r"[A-Za-z]{1,8}(?:[=:][A-Za-z]{0,8})?")  # a word glued onto a token, not a piece of it
_COMPLETE = re.compile(r"0x[0-9a-fA-F]{40}|[0-9a-f]{40}|[0-9a-f]{64}")  # an Ethereum address, a SHA-1 or SHA-256
_NAMES_NEXT = re.compile(r"[A-Za-z_]+:")  # 'one:', 'key:' (not '612:', a Telegram bot id)
_SPELLED_OUT = 8  # 'g h p _ a B 3 ...': this many single characters in a row are one token spelled out
_LONG = 16  # a generated-looking piece this long carries on into whatever follows a break
_GROUP_MAX = 16  # people write a token in groups of 4 to 8 characters, never of hundreds


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


def _wordish(f: str, tokenish: bool) -> bool:
    """A short word rather than a piece of a token ('key', 'bot', 'aws')."""
    return not tokenish and f.isalpha() and len(f) <= 3


def _spelled_out(fragments: list[str], tokenish: list[bool]) -> None:
    singles = 0
    for i, f in enumerate([*fragments, ""]):
        if len(f) == 1:
            singles += 1
            continue
        if singles >= _SPELLED_OUT:
            tokenish[i - singles : i] = [True] * singles
        singles = 0


def _chunk_groups(
    fragments: list[str], gaps: list[str], tokenish: list[bool], trim: tuple[bool, bool] = (False, False)
) -> list[int]:
    """With ``trim`` (left, right), a group neither starts (ends) with a short word nor takes a cut end on that side
    ('aws key hf_\n…').
    'AKIA QW3R T5YU 7IOP AS2D': three or more equal-length pieces on one line, most of them
    generated-looking, are one token written in groups (with a shorter cut end on either side);
    each piece's group, or -1."""
    group = [-1] * len(fragments)
    i = 0
    while i < len(fragments):
        j, size = i + 1, len(fragments[i])
        # 'one: pass AKIA JCH7…': a word and a colon names what follows; no group runs across it
        while (
            j < len(fragments)
            and len(fragments[j]) == size
            and not gaps[j - 1].endswith("\n")
            and not (
                _NAMES_NEXT.fullmatch(fragments[j - 1])
                and not fragments[j].startswith("/")
                and not any("//" in f for f in fragments[i:j])
            )
        ):
            j += 1
        unworded = sum(t or _unworded(f) for t, f in zip(tokenish[i:j], fragments[i:j], strict=True))
        if j - i >= 3 and 3 <= size <= _GROUP_MAX and any(tokenish[i:j]) and 2 * unworded >= j - i:
            lo = i - 1 if i > 0 and len(fragments[i - 1]) < size and _loose(fragments[i - 1]) else i
            hi = j + 1 if j < len(fragments) and len(fragments[j]) < size and _loose(fragments[j]) else j
            if trim[0]:  # one word at each end: 'key ghp _aB 3dE…'
                lo = i + _wordish(fragments[i], tokenish[i])
            if trim[1]:
                hi = j - (j - 1 > lo and _wordish(fragments[j - 1], tokenish[j - 1]))
            if hi - lo < 3:
                lo = hi = j
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
        return _ALNUM.search(right) is not None and not (
            starts_line and not userinfo and not left.endswith(("://", ":"))
        )
    if newline and right[:1] in _SEPARATORS and _ALNUM.search(right) and _NAME.fullmatch(left):
        return True  # 'HEROKU_API_KEY\n=…': a name and its value cut apart
    # 'key: value', 'a = b', a new 'KEY=' line: the value is read as written ('DD_API_KE Y=…' is one name)
    new_key = starts_line and (newline or not left_tokenish)
    if left.endswith(_SEPARATORS) or right.startswith(_SEPARATORS) or new_key or "://" in right:
        return False
    if right[:1] in "-_." and right[1:2].isalnum() and right_tokenish and left.lower() not in _STOP:
        return True  # 'glptt -MB6hv…', 'glpat\n-JAsX…': a piece that starts with a token's own separator continues it
    if newline:  # a line of its own unless both halves look generated (or a cut end meets a long half)
        if _COMPLETE.fullmatch(left):
            return False  # an address or a digest has its full length: the next line is not more of it
        if right.startswith(("--", "/")):
            return False
        if (
            last
            and left_tokenish
            and len(left) >= _LONG
            and (_unworded(right) or _loose(right))
            and _ALNUM.search(right)
        ):
            return True  # '…bTf0SCs\nVpa': the tail of a long token alone on the next line
        if _PADDED.fullmatch(right) and _B64_PIECE.fullmatch(left) and left.lower() not in _STOP:
            return True  # 'Basic bmlhajp\nwaXJhdGU5OEJJQ14=': base64 ends with its padding
        return right_tokenish and (
            left_tokenish or (_loose(left) and len(right) >= 8) or (len(right) >= _LONG and _unworded(left))
        )
    if left_tokenish and len(left) >= _LONG:  # '…-2c4 fbeda': the rest of a long token, unless a word
        return (
            _ALNUM.search(right) is not None
            and right.lower() not in _STOP
            and not _WORD.fullmatch(right)
            and not right.startswith("--")
        )
    return (left_tokenish or right_tokenish) and (left_tokenish or _loose(left)) and (right_tokenish or _loose(right))


def _join_chain(chain: str) -> list[str]:
    """The chain's readings: its splits closed greedily, then without each joined run's first piece,
    without its last piece, and without both (a word such as 'key' or 'bot' glued onto a token)."""
    pieces = _GAP.split(chain)  # fragment, gap, fragment, gap, ...
    fragments, gaps = pieces[::2], pieces[1::2]
    tokenish = [_tokenish(f) for f in fragments]
    _spelled_out(fragments, tokenish)

    def joins_of(group: list[int]) -> list[bool]:
        joins = [False]  # joins[i]: fragment i is glued onto fragment i - 1
        for i in range(1, len(fragments)):
            if group[i - 1] >= 0 or group[i] >= 0:
                joins.append(group[i - 1] == group[i])  # inside a grouped token, and never onto its neighbours
            else:
                joins.append(
                    _free_join(
                        fragments[i - 1],
                        fragments[i],
                        gaps[i - 1],
                        tokenish[i - 1],
                        tokenish[i],
                        i == len(fragments) - 1,
                    )
                )
        return [*joins, False]

    # each joined run's first (last) join, where the piece it glues on reads as a word ('key', 'bot', 'key=key')
    def firsts(joins: list[bool]) -> list[int]:
        return [
            i
            for i in range(1, len(fragments))
            if joins[i] and not joins[i - 1] and _PEELABLE.fullmatch(fragments[i - 1])
        ]

    def lasts(joins: list[bool]) -> list[int]:
        return [
            i for i in range(1, len(fragments)) if joins[i] and not joins[i + 1] and _PEELABLE.fullmatch(fragments[i])
        ]

    groups = _chunk_groups(fragments, gaps, tokenish)
    greedy = joins_of(groups)
    if not any(greedy):
        return [chain] * 6  # nothing to join: every reading is the chain as written
    left = right = both = greedy
    if any(g >= 0 for g in groups):  # a token written in groups: also read it without its edge words and cut ends
        left, right, both = (
            greedy if trimmed == groups else joins_of(trimmed)
            for trimmed in (
                _chunk_groups(fragments, gaps, tokenish, trim) for trim in ((True, False), (False, True), (True, True))
            )
        )
    readings = []
    for joins, unglued in (
        (greedy, []),
        (left, []),
        (left, firsts(left)),
        (right, []),
        (right, lasts(right)),
        (both, firsts(both) + lasts(both)),
    ):
        glued = joins.copy()
        for i in unglued:
            glued[i] = False
        readings.append("".join(f if glued[i] else (gaps[i - 1] if i else "") + f for i, f in enumerate(fragments)))
    return readings


_CONTEXT = 120  # characters of context kept around a reading's changes: a key word, its separator and a long value
_EDGE = re.compile(r"\s")


def _around_changes(reading: str, changes: list[tuple[int, int]]) -> str:
    """Only the parts of a reading near where it differs from the greedy one (``changes``, in order), so an extra
    reading costs about what its changes cost, not a whole pass over the text. Each part is widened to white
    space, so no token is cut in two; each search starts where the previous part ended (linear)."""
    windows: list[list[int]] = []
    for a, b in changes:
        lo, hi = max(0, a - _CONTEXT), min(len(reading), b + _CONTEXT)
        floor = windows[-1][1] if windows else 0
        if lo > floor:
            lo = max(reading.rfind(c, floor, lo) for c in " \n\t") + 1 or floor
        if windows and lo <= windows[-1][1]:
            if hi <= windows[-1][1]:
                continue
            lo = windows.pop()[0]
        end = _EDGE.search(reading, hi)
        windows.append([lo, end.start() if end else len(reading)])
    return "\n\n".join(reading[lo:hi] for lo, hi in windows)


def rejoined_views(view: str) -> list[str]:
    """The greedy reading of ``view`` with split tokens rejoined, then every other distinct reading (cut down to
    where it differs from the greedy one); none equal to ``view``."""
    if not _SIGNAL.search(view):
        return []
    original, view = view, _CJK_GAP.sub("", view) if not view.isascii() else view
    parts: list[tuple[str, list[str]]] = []
    at = 0
    for m in _CHAIN.finditer(view):
        if _SIGNAL.search(m.group(0)):
            parts.append((view[at : m.start()], _join_chain(m.group(0))))
            at = m.end()
    tail = view[at:]
    if not parts:
        return []
    greedy = "".join(before + chain[0] for before, chain in parts) + tail
    readings = [greedy] if greedy != original else []
    for k in range(1, len(parts[0][1])):
        pieces: list[str] = []
        changes: list[tuple[int, int]] = []
        size = 0
        for before, chain in parts:
            size += len(before)
            if chain[k] != chain[0]:  # where this chain's reading differs: between their common prefix and suffix
                same = len(commonprefix((chain[k], chain[0])))
                same_end = min(len(commonprefix((chain[k][::-1], chain[0][::-1]))), len(chain[k]) - same)
                changes.append((size + same, size + len(chain[k]) - same_end))
            pieces += [before, chain[k]]
            size += len(chain[k])
        if changes:
            reading = _around_changes("".join(pieces) + tail, changes)
            if reading not in readings:
                readings.append(reading)
    return readings


def rejoined(view: str) -> str | None:
    """``view`` with split tokens rejoined greedily, or None when nothing in it looks like a split token."""
    readings = rejoined_views(view)
    return readings[0] if readings else None
