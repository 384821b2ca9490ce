"""Shared checks that tell a random secret from a word, a placeholder, a reference or a digest.

Every rule in this package finds a candidate by its shape, then asks these checks whether the
candidate was generated (random, several kinds of character) or typed (identifiers, phrases,
placeholders such as '<your-key>' or '********', references such as '${VAR}' or os.environ[...]).
"""

from __future__ import annotations

import base64
import binascii
import json
import re

# --- what random looks like -------------------------------------------------------------------

_MARKERS = ("...", "\u2026", "\u2022\u2022", "****", "redact", "placeholder", "example")
# Words that mark a typed placeholder; a long random string contains short ones by chance.
_PLACEHOLDER_PARTS = _MARKERS + (
    "xxxx",
    "changeme",
    "change_me",
    "dummy",
    "sample",
    "your",
    "insert",
    "replace",
    "fixme",
    "todo",
    "masked",
    "here",
)
# Frequent English letter pairs: identifiers and phrases are made of them, random strings are not.
_BIGRAMS = frozenset(
    "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co "
    "me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us "
    "ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa "
    "im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex ke "
    "fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa ef cu rn sc gi da yo cr cl du "
    "ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck ew mu br bi pt ak pu "
    "ui rg ib tl ny ki rk ys ob".split()
)
_CHUNKS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_HEX = frozenset("0123456789abcdefABCDEF-")


def looks_random(s: str, classes: int = 2, max_run: int | None = 5) -> bool:
    """Many distinct characters of several kinds, no long runs or counting: not typed by hand."""
    n, low = len(s), s.lower()
    parts = _PLACEHOLDER_PARTS if n <= 64 else _MARKERS
    if n < 8 or any(p in low for p in parts) or len(set(low)) < min(8, max(4, n // 3)):
        return False
    kinds = any(c.islower() for c in s) + any(c.isupper() for c in s) + any(c.isdigit() for c in s)
    if kinds < classes:
        return False
    run = ascending = climb = 0
    for a, b in zip(low, low[1:], strict=False):
        run = run + 1 if a == b else 0
        if max_run is not None and run >= max_run:
            return False
        climb = climb + 1 if ord(b) - ord(a) == 1 else 0
        if climb >= 5:  # 'abcdef', '123456'
            return False
        ascending += climb > 0
    return ascending * 3 < n


def is_wordy(s: str) -> bool:
    """True for identifiers and phrases ('MyAppSecretValue', 'PKCS7PrivateKeyTypes'): their letter
    pairs are common English ones; in random text such pairs are a minority."""
    if all(c in _HEX for c in s):
        return False
    pairs = hits = in_words = covered = 0
    for chunk in _CHUNKS.findall(s):
        if len(chunk) < 3:  # two-letter pieces of random mixed case hit common pairs by chance
            continue
        chunk = chunk.lower()
        found = sum(a + b in _BIGRAMS for a, b in zip(chunk, chunk[1:], strict=False))
        pairs, hits, covered = pairs + len(chunk) - 1, hits + found, covered + len(chunk)
        if len(chunk) >= 4 and found >= 0.75 * (len(chunk) - 1):
            in_words += len(chunk)
    # the pairs must be read over most of the string: 'prod_Roplne4oMkHneMwS4PH…' has two words, then random
    return (hits >= 8 and hits >= 0.8 * pairs and 2 * covered >= len(s)) or in_words >= 0.5 * len(s)


def b64_decode(s: str, urlsafe: bool = True) -> bytes | None:
    """The bytes behind base64 (padding restored), or None when it is not base64."""
    try:
        padded = s + "=" * (-len(s) % 4)
        return base64.urlsafe_b64decode(padded) if urlsafe else base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def b64_json_header(s: str) -> bool:
    """A JWT header: base64url of a JSON object that names its algorithm."""
    raw = b64_decode(s)
    try:
        header = json.loads(raw) if raw else None
    except ValueError:
        return False
    return isinstance(header, dict) and "alg" in header


# --- what a value that is not a secret looks like ---------------------------------------------

# Values that point at a secret kept elsewhere: $VAR, ${VAR}, $(cmd), %(name)s, {{ var }}, <...>,
# [REDACTED], (see vault), !vault, *alias, @Microsoft.KeyVault(...), os.environ[...], ENC[...].
_REFERENCE = re.compile(
    r"\$(?:\{|\(|[A-Za-z_][A-Za-z0-9_]*$)|%(?:\(|s$|[A-Za-z_][A-Za-z0-9_]*%$)|\{|<|\["
    r"|\(|![A-Za-z]+$|[&*][a-z_][a-z0-9_\-]*$|@Microsoft\."
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$",
    re.S,
)
_REFERENCE_PARTS = ("${", "{{", "}}", "environ", "getenv", "process.env", "secrets.", "vault:", "ENV[", "ENC[", "::")
_CALL = re.compile(r"[A-Za-z0-9_\]][(\[]")  # getpass(), os.getenv(...), auth[2], pw[:-1]
# snake_case, UPPER_CASE, camelCase, PascalCase: how names are written, unlike random characters
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*|[A-Z_][A-Z0-9_]*|[a-z]+(?:[A-Z][a-z0-9]+)+|(?:[A-Z][a-z0-9]+)+")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_NAMES_A_SECRET = re.compile(r"(?:password|passwd|pwd|secret|token|key)s?$")


def _is_code_path(v: str) -> bool:
    """`settings.SECRET_KEY`, `config.db.password`: short dotted names with no random part."""
    if not _DOTTED.fullmatch(v):
        return False
    parts = v.split(".")
    if not all(_IDENTIFIER.fullmatch(p) or is_wordy(p) for p in parts) or any(
        looks_random(p) and not is_wordy(p) for p in parts
    ):
        return False  # 'ya29.<random>' is a token, 'aYFDrC1.rcwNwT' a password
    return len(parts) <= 3 or bool(_NAMES_A_SECRET.search(parts[-1].lower()))


_WORD_PLACEHOLDER = re.compile(
    r"(?:my|your|the|some|a|db|new|old|strong|secure|super|secret|example|sample|dummy|test|default)*"
    r"(?:password|passwd|pass|pwd|secret|passphrase|token|key|apikey|value|changeme|admin|test|demo|guest|user|root"
    r"|qwerty|letmein|welcome|foobar|foo|bar)(?:here|goeshere|[0-9]{0,8})"
)
_NOT_PASSWORDS = frozenset(
    "secret changeme example test testing admin root guest user username postgres mysql redis mongo "
    "rabbitmq default none null nil empty blank required optional hidden redacted removed omitted unset "
    "notset string str text true false yes no todo tbd same unknown 1password onepassword bitwarden "
    "lastpass keepass keepassxc dashlane keychain vault protonpass".split()
)
_NUMERIC = re.compile(r"[0-9\-/:.+() TZ]+")


_LEET = str.maketrans("0134578@$!", "oieastbasi")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")
_NOT_LETTER = re.compile(r"[^a-z]")


def is_reference_or_placeholder(v: str) -> bool:
    low = v.lower()
    norm = _NOT_ALNUM.sub("", low)
    leet = _NOT_LETTER.sub("", low.translate(_LEET))  # 'P@55w0rd!' is 'password'
    if leet in _NOT_PASSWORDS or _WORD_PLACEHOLDER.fullmatch(leet):
        return True
    return (
        bool(_REFERENCE.match(v))
        or any(p in v for p in _REFERENCE_PARTS)
        or (("(" in v or "[" in v) and bool(_CALL.search(v)))
        or _is_code_path(v)
        or any(p in low for p in _PLACEHOLDER_PARTS)
        or len(set(v)) == 1
        or norm in _NOT_PASSWORDS
        or bool(_WORD_PLACEHOLDER.fullmatch(norm))
    )


_FILLER = re.compile(r"(.)\1{5}|01234567|12345678|23456789|abcdefgh", re.I)


# 'password: SHA-256', 'wifi password: WPA2-Personal', 'password: 2FA-enabled' name a technique, not a secret.
_TECH_TERM = re.compile(
    r"(?i)(?:sha|md|wpa|aes|rsa|ecdsa|ed|hmac|pbkdf|argon|scrypt|bcrypt|utf|iso|rfc|tls|ssl|http|oauth|x)"
    r"[-_]?[0-9]+(?:[-_.][a-z0-9]+)*|(?:2fa|mfa|totp|u2f|sso|saml|ldap)(?:[-_][a-z]+)*"
)
_KEY_WORDS_SET = frozenset("password passwd pwd pass secret token key apikey user username".split())
PASSPHRASE = re.compile(r"[a-z]{2,12}(?:[-_.][a-z]{2,12}){3,9}")
_LOWER_WORDS = re.compile(r"[a-z]+(?:[-_.][a-z]+)*")
_WORD_SEPARATOR = re.compile(r"[-_.]")


def password_kinds(v: str) -> int:
    return (
        any(c.islower() for c in v)
        + any(c.isupper() for c in v[1:])
        + any(c.isdigit() for c in v)
        + any(not c.isalnum() for c in v)
    )


def password_value(v: str) -> bool:
    """A typed password: one token with two kinds of character, or a long passphrase."""
    if not 6 <= len(v) <= 128 or is_reference_or_placeholder(v) or _FILLER.search(v) or _TECH_TERM.fullmatch(v):
        return False
    if _NUMERIC.fullmatch(v):  # dates, times, counts; but a router's 20-digit key is a password
        return sum(c.isdigit() for c in v) >= 12 and len(set(v)) >= 6
    if len(set(v)) * 4 < len(v):  # a repeated pattern, not a password
        return False
    if "://" in v or v.startswith(("/", "~/", "./", "C:\\")) or v.count("/") >= 2:  # a URL or a path
        return False
    if _LOWER_WORDS.fullmatch(v):  # a passphrase, unless it is an identifier
        return bool(PASSPHRASE.fullmatch(v)) and not _KEY_WORDS_SET.intersection(_WORD_SEPARATOR.split(v))
    if v.isascii() and v.isalpha():  # 'SecretStr', 'IAmSensitive': a type or a phrase, unless random
        return len(v) >= 12 and looks_random(v) and not is_wordy(v)
    return password_kinds(v) >= 2


def pathish(v: str) -> bool:
    """'logs/2024/05/01/app', 'key/20220524/us-east-1/s3/aws4_request': dated paths, not base64."""
    parts = v.split("/")
    digits = [p for p in parts if p.isdigit()]
    return len(parts) >= 3 and (len(digits) >= 2 or any(len(p) >= 4 for p in digits))


_NOT_SECRET_PREFIXES = (
    "arn:",
    "sha1:",
    "sha256:",
    "sha512:",
    "sha256-",
    "sha384-",
    "sha512-",
    "pk_live_",
    "pk_test_",
    "pk.",
    "ssh-",
    "ecdsa-",
    "AAAA",
)
_PUBLIC_IDS = re.compile(r"AC[0-9a-f]{32}|0x[0-9a-fA-F]{40}")


def secret_value(v: str) -> bool:
    """A generated secret: long, random, not a path, URL, digest, public key or timestamp."""
    if not 16 <= len(v) <= 1024 or is_reference_or_placeholder(v) or _NUMERIC.fullmatch(v):
        return False
    if "://" in v or "*" in v or pathish(v) or v.startswith(_NOT_SECRET_PREFIXES) or _PUBLIC_IDS.fullmatch(v):
        return False  # a Twilio account id, an Ethereum address: public
    return looks_random(v) and not is_wordy(v)


_PORT = re.compile(r"[0-9]{1,5}(?:,|$)")


def url_password(user: str, pw: str) -> bool:
    """A password in a URL or a basic-auth pair, unless it is a placeholder, a port or the user."""
    if len(pw) < 3 or pw == user or is_reference_or_placeholder(pw):
        return False
    return not _PORT.match(pw)  # host:port, or host:port,host2 of a multi-host URL
