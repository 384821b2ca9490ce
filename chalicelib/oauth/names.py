"""A client's name is its own word: the names of known web clients are kept to their hosts, and no name is shown as fact.

Two rules (docs/oauth.md, "A client's name"):
- **Reserved names.** A name that folds to one the stage reserves for a known web client (`OAUTH_RESERVED_NAMES`,
  by default `Claude` for claude.ai/claude.com and `ChatGPT` for chatgpt.com/openai.com) is refused unless every
  redirect URI of the client is https on one of that client's hosts. The fold is the agent-name fold
  (chalicelib/agent_names.py: NFKC, invisible characters dropped, letters of other scripts that imitate Latin ones
  mapped by Unicode's confusables data, case-folded, separators and versions dropped), then the ASCII look-alikes
  `I`/`l`/`1`, `0`/`O` and `rn`/`m` made one: `Сlaude` (Cyrillic С), `CLAUDE`, `C l a u d e`, `Claude 2`, `CIaude`
  are `Claude`. Latin small capitals (`ʟ`, `ɢ`, `ᴘ`: Latin letters, so no other script's look-alikes) are read
  first as the letter they are named after: `ᴄʟᴀᴜᴅᴇ` and `ChatɢPT` are reserved names too. A name that only *contains* a reserved one (`Claude Code`, a real loopback client) is not refused:
  it is shown as what it is, a name the app gave itself.
- **Shown as said.** `shown(...)` is how the consent screen and the Agents tab name a client: the verified part
  (this device, or the https host the browser goes back to, or the host that serves its metadata document)
  beside the name the client claims, in quotes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import urlsplit

from chalicelib.agent_names import fold_agent_name

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_ALIKE = str.maketrans({"i": "l", "1": "l", "0": "o"})


_SMALL_CAPITAL = re.compile(r"LATIN LETTER SMALL CAPITAL ([A-Z])")


def _small_capital(c: str) -> str:
    named = _SMALL_CAPITAL.fullmatch(unicodedata.name(c, "")) if not c.isascii() else None
    return named.group(1) if named else c


def skeleton(name: str) -> str:
    """What a name looks like, for comparing it with a reserved one."""
    capitals = "".join(_small_capital(c) for c in name)
    return fold_agent_name(capitals).replace("rn", "m").translate(_ALIKE)


def reserved_for(name: str, reserved: Iterable[tuple[str, frozenset[str]]]) -> frozenset[str] | None:
    """The hosts a name is kept to, or None when it is nobody's."""
    folded = skeleton(name)
    for known, hosts in reserved:
        if folded and folded == skeleton(known):
            return hosts
    return None


def may_use(name: str, redirect_uris: Iterable[str], reserved: Iterable[tuple[str, frozenset[str]]]) -> bool:
    """A reserved name only with every redirect URI https on that client's hosts."""
    hosts = reserved_for(name, reserved)
    if hosts is None:
        return True
    return all(urlsplit(u).scheme == "https" and (urlsplit(u).hostname or "") in hosts for u in redirect_uris)


def loopback(uri: str) -> bool:
    return (urlsplit(uri).hostname or "") in LOOPBACK


def verified_from(client_id: str, redirect_uri: str, document: bool) -> str:
    """The part of who a client is that the service checked: "" for an app on this device (a loopback redirect,
    which any program on the person's computer can listen on), else the host the browser goes back to (and for
    a metadata-document client on another host, the host serving its document too)."""
    if loopback(redirect_uri):
        return ""
    back = urlsplit(redirect_uri).hostname or ""
    if document:
        published = urlsplit(client_id).hostname or ""
        return back if published == back else f"{back} (its metadata is published by {published})"
    return back


_HOST = r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?"
_VERIFIED = re.compile(rf"(?:{_HOST}(?: \(its metadata is published by {_HOST}\))?)?")
UNREADABLE = "an app whose stored name cannot be shown"


MAX_NAME_CHARACTERS = 100
_QUOTE_WORDS = ("QUOTATION MARK", "APOSTROPHE", "PRIME", "GRAVE ACCENT", "DITTO", "GERSHAYIM")


def _quote(c: str) -> int:
    """2 for a character that reads as a double quotation mark, 1 for a single one, else 0."""
    if c == '"':
        return 2
    if c in "'`":
        return 1
    named = unicodedata.name(c, "")
    if not any(word in named for word in _QUOTE_WORDS):
        return 0
    return 2 if any(word in named for word in ("DOUBLE", "DITTO", "GERSHAYIM")) else 1


def quoted(name: str) -> bool:
    """The screens put a name in quotes (`shown`): one holding a double quotation mark (in any script or width), or
    two single ones side by side, could close them and write the service's words after them."""
    for view in (name, unicodedata.normalize("NFKC", name)):
        kinds = [_quote(c) for c in view]
        if 2 in kinds or any(a and b for a, b in zip(kinds, kinds[1:], strict=False)):
            return True
    return False


def stacked(name: str) -> bool:
    """More than three combining marks on one letter draw over the lines above and below the name."""
    run = 0
    for c in unicodedata.normalize("NFD", name):
        run = run + 1 if unicodedata.category(c) in ("Mn", "Me") else 0
        if run > 3:
            return True
    return False


def readable(name: str, verified: str | None) -> bool:
    """Whether a stored name and checked part are what consent could have recorded (a row is hostile: one altered
    to close the quotes, hold a bidi control or forge the checked part is not shown as it says): the name as
    registration takes it (oauth/clients.py), the checked part as `verified_from` makes it."""
    plain = bool(name.strip()) and name == name.strip() and len(name) <= MAX_NAME_CHARACTERS and name.isprintable()
    fine = plain and not quoted(name) and not stacked(name)
    return fine and (verified is None or _VERIFIED.fullmatch(verified) is not None)


def shown(name: str, verified: str | None) -> str:
    """The client in words, for the consent screen and the Agents tab: never the name alone."""
    if verified is None:
        return f"an app that calls itself “{name}”"  # a connection made before this was recorded
    if verified == "":
        return f"an app on this device that calls itself “{name}”"
    return f"an app at {verified} that calls itself “{name}”"
