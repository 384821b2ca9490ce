"""A username and a password written as a pair in a note, with no keyword: "my bank login is maria / Tr0ub4dor&3".

People keep logins as '<account>: <user> / <password>'. A strong value (three kinds of character, a
typed password not a code or a path) counts when a user name or e-mail address stands just before it,
parted by '/', '|', ',', 'and', 'pass', a space or a line break (or 'user:password'), and an account word (bank, login, gmail,
netflix, router...) is a few words before the pair or just after it. Without the account word, or with
a weak value ('maria / Tuesday'), it is a note.
"""

from __future__ import annotations

import re

from chalicelib.credentials.checks import password_kinds, password_value

_CANDIDATE = re.compile(r"[^\s'\"<>]{7,128}+")
_USER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+\-]{1,63}(?:@[A-Za-z0-9.\-]{1,100})?")
_EMAIL = re.compile(r"[^@\s]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63})+")
_HEX_ID = re.compile(r"[0-9A-Fa-f\-]+")  # a UUID or an order number, not a typed password
# what parts the user from the password: '/', '|', ',', 'and', 'pass', a space or a line break
_SEP_TAIL = re.compile(
    r"(?:[ \t]{0,3}[/|,][ \t]{0,3}|[ \t]{1,3}(?:(?:and|pass|pw|pwd|password):?[ \t]{1,3})?|[ \t]{0,3}\r?\n[ \t]{0,3})\Z"
)
_USER_EDGE = frozenset(" \t\r\n:：,;([")
_ACCOUNT = re.compile(
    r"(?<![a-z])(?:log-?in|logon|sign-?in|account|acct|username|bank(?:ing)?|e-?mail|gmail|outlook|hotmail|yahoo|"
    r"icloud|apple id|netflix|hulu|spotify|disney|paypal|venmo|amazon|ebay|facebook|instagram|twitter|linkedin|"
    r"tiktok|steam|psn|xbox|nintendo|chase|wells fargo|barclays|hsbc|router|wi-?fi|portal|website|gym app|"
    r"insurance|school|gym|uber|airbnb|dropbox|github|gitlab|slack|zoom)(?![a-z])"
)
_NOT_USERS = frozenset(
    "is was and the my for to at on in of login username user pass password pw pwd email mail account".split()
)


_SYMBOL = re.compile(r"[!#$%&*?~^@]")  # not '+': phone numbers and base64 have it
_SHELL = re.compile(r"\$[({]")  # ${VAR}, $(cmd): a reference, not the password


def _strong(v: str) -> bool:
    """Typed, not generated: letters, a digit or capital, and a symbol ('Tr0ub4dor&3'); ids and codes have none."""
    return (
        7 <= len(v) <= 32
        and bool(_SYMBOL.search(v, 1))
        and "=" not in v
        and password_kinds(v) >= 3
        and any(c.isalpha() for c in v)
        and "/" not in v
        and bool(_SYMBOL.search(v, 1))
        and not v.startswith(("%", "$", "&", "#", "-"))
        and not _SHELL.search(v)
        and not _EMAIL.fullmatch(v)
        and not _HEX_ID.fullmatch(v)
        and password_value(v)
    )


def _user_before(text: str, a: int) -> int | None:
    """Where the user name or e-mail address right before the separator at ``a`` starts, or None."""
    tail = _SEP_TAIL.search(text, max(0, a - 20), a)
    if tail is None:
        return None
    end = start = tail.start()
    while start > 0 and end - start <= 170 and text[start - 1] not in _USER_EDGE:
        start -= 1
    return start if start < end and _USER.fullmatch(text, start, end) else None


def _in_context(low: str, u: int, end: int) -> bool:
    return bool(_ACCOUNT.search(low, max(0, u - 60), u) or _ACCOUNT.search(low, end, end + 40))


def find_username_password(text: str, low: str) -> str | None:
    """``username_password`` for '<user> / <strong password>' beside an account word."""
    for m in _CANDIDATE.finditer(text):  # few tokens are strong: the account word is looked for only beside them
        a = m.start()
        v = m.group(0).rstrip(".,;:)]}")  # "!" and "?" end passwords more often than notes
        user, _, after = v.partition(":")  # 'maria:Tr0ub4dor&3', one token
        if after and _USER.fullmatch(user) and user.lower() not in _NOT_USERS and _strong(after):
            if _in_context(low, a, a + len(v)):
                return "username_password"
        if not a or not _strong(v):
            continue
        u = _user_before(text, a)
        if u is None or text[u:a].split()[0].rstrip("/|,").lower() in _NOT_USERS:
            continue
        if _in_context(low, u, a + len(v)):
            return "username_password"
    return None
