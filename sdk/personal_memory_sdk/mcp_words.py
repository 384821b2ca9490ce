"""What the MCP server says in words: agent names from client names, refusal reasons, answers.

The server never repeats a proposal's or an entry's text in these sentences; a refusal names its
reason (and, for credentials, the shape), as the contract's refusal events do.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "FALLBACK_AGENT",
    "NO_ITEMS_REASON",
    "agent_name",
    "describe_shape",
    "refusal_words",
]

# The contract's identifier rule (chalicelib/identifiers.py): 1..128 of letters, digits, . _ : -
MAX_AGENT_CHARS = 128
FALLBACK_AGENT = "mcp-client"
_KEY_CHARS = 16  # below an AWS key id's 20; a client's name ("cursor/1.2 (vscode)") joins to fewer
_NOT_ALLOWED = re.compile(r"[^a-z0-9._:-]+")
_EDGES = "._:-"

# The host API answers [] without saying why; these are the reasons it can have.
NO_ITEMS_REASON = (
    "No notes were shared with this client: memory is off, or this client isn't allowed to "
    "read it (or the person has no notes yet)."
)

_REFUSALS = {
    "not_requested": "this session did not ask to use memory",
    "no_user": "the session belongs to no one",
    "memory_off": "memory is off",
    "session_cap": "this conversation has already made 5 suggestions",
    "waiting_cap": "50 suggestions are already waiting for review",
    "empty": "it was empty",
    "too_long": "it was longer than 2000 bytes",
    "invalid_kind": "its kind was not preference, fact or note",
    "invalid_text": "it held control characters",
    "unknown_session": "the session was unknown",
    "agent_blocked": "the person does not allow this client to make suggestions",
    "duplicate": "the person already has that note, or it is already waiting for review",
    "unreadable": "its sealed text could not be opened",
}
_WORDS = {
    "aws": "AWS",
    "api": "API",
    "id": "ID",
    "url": "URL",
    "jwt": "JWT",
    "gcp": "Google Cloud",
    "github": "GitHub",
    "gitlab": "GitLab",
    "openai": "OpenAI",
    "npm": "npm",
    "pypi": "PyPI",
    "ssh": "SSH",
    "pgp": "PGP",
    "oauth": "OAuth",
    "sas": "SAS",
    "dd": "Datadog",
    "huggingface": "Hugging Face",
    "digitalocean": "DigitalOcean",
    "sendgrid": "SendGrid",
    "assignment": "",
    "phrase": "phrase",
}


# Cyrillic and Greek letters drawn like Latin ones (a small table, after Unicode's
# confusables.txt, so the SDK needs no data package): a client named "сlaude-code" with a
# Cyrillic "с" is "claude-code", never "laude-code". The service folds names itself
# (chalicelib/agent_names.py, docs/agents.md) with the full confusables data; this table only
# keeps the letter instead of dropping it.
# Armenian and Cherokee look-alikes and the Turkish dotless ı too (from confusables.txt): a client
# spelling `helper` with them was `elper` or `hlper`, another agent than the one the person blocked.
_LOOK_ALIKES = str.maketrans(
    "аеорсухіјѕԁԛԝһӏвкмнтАВЕКМНОРСТХІЈЅУ"
    "οαικνρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
    "քցհոռօՕգզՏսՍա"
    "ᏎᏮᎪᏏᏴꮯᏟᏧᎠᎬᏀᏳᏂᎻꭵᎥᎫᏦᏞᎷᏢꮁᎡᏒꮪᏕᏚᎢꮩᏙꮃᎳᏔᎩᎽꮓᏃ"
    "ı",
    "aeopcyxijsdqwhlbkmhtABEKMHOPCTXIJSY"
    "oaikvptuxABEZHIKMNOPTYX"
    "fghnnoOqqSuUw"
    "46AbBcCdDEGGhHiIJKLMPrRRsSSTvVwWWYYzZ"
    "i",
)


def _without_marks(name: str) -> str:
    """`name` without the symbols NFKC spells as words (™ is "TM", ℠ "SM")."""
    return "".join(c for c in name if not _is_mark(c))


def _is_mark(c: str) -> bool:
    spelled = unicodedata.normalize("NFKC", c)
    return unicodedata.category(c).startswith("S") and sum(x.isalpha() for x in spelled) > 1


def _is_disguise(name: str, translated: str) -> bool:
    """A name mixing Latin letters with others, or spelled wholly in look-alikes of Latin ones."""
    return bool(re.search(r"[A-Za-z]", name)) or all(c.isascii() for c in translated if c.isalpha())


def agent_name(client_name: object) -> str:
    """The MCP client's `clientInfo.name` as an agent id: lower-case, only `a-z 0-9 . _ : -`.

    Look-alike letters of other scripts become the Latin letter they imitate, accents are folded
    ("Zéd" → "zed"), every other run of characters becomes one `-`, and a name with nothing left is
    `mcp-client`. Two spellings of one client ("Claude Code", "claude-code") are one agent, so the
    person's per-agent settings hold for both (the service folds further: docs/agents.md).
    """
    if not isinstance(client_name, str):
        return FALLBACK_AGENT
    name = unicodedata.normalize("NFKC", _without_marks(client_name))
    name = name.replace("ß", "ss").replace("ẞ", "SS")
    translated = name.translate(_LOOK_ALIKES)
    if _is_disguise(name, translated):  # one other script, not all look-alikes, is as written
        name = translated
    folded = unicodedata.normalize("NFKD", name)
    ascii_only = folded.encode("ascii", "ignore").decode("ascii")
    if _looks_like_a_key(ascii_only):
        return FALLBACK_AGENT
    name = _NOT_ALLOWED.sub("-", ascii_only.lower()).strip(_EDGES)[:MAX_AGENT_CHARS].strip(_EDGES)
    return name or FALLBACK_AGENT


def _looks_like_a_key(name: str) -> bool:
    """A product's name is never a key: letters and digits that, joined, run to 16 or more with two
    digits or more among them have the shape of an access key, token or JWT however they are spaced.

    Checked here, before lower-casing: the API's detector knows keys by their case (an AWS key id
    lower-cased is not refused, yet upper-casing gives it back), so it cannot catch them afterwards.
    """
    joined = "".join(c for c in name if c.isascii() and c.isalnum())
    return len(joined) >= _KEY_CHARS and sum(c.isdigit() for c in joined) >= 2


def describe_shape(shape: str) -> str:
    """`aws_access_key_id` → "an AWS access key ID"; never more than the shape's own words."""
    words = [_WORDS.get(w, w) for w in re.split(r"[_:\s-]+", shape.lower()) if w]
    phrase = " ".join(w for w in words if w)
    if not phrase or not re.fullmatch(r"[A-Za-z0-9 ]{1,80}", phrase):
        return "a password, key or token"
    return f"{'an' if phrase[0].lower() in 'aeiou' else 'a'} {phrase}"


def refusal_words(reason: str | None) -> str:
    """Why a proposal was refused, as the end of a sentence ("it looked like a GitHub token")."""
    code = reason or ""
    if code.startswith("credential:"):
        return f"it looked like {describe_shape(code.removeprefix('credential:'))}"
    known = _REFUSALS.get(code)
    if known:
        return known
    shown = code if re.fullmatch(r"[a-z0-9_:]{1,64}", code) else "not given"
    return f"of the reason {shown!r}"
