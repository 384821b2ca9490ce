"""Find credential-shaped text so memory can refuse it by kind, never echoing it.

A memory is replayed into every later agent prompt, so a pasted key would leak everywhere.
Each rule is a literal-prefixed regex with bounded (mostly possessive) quantifiers, so a scan is
linear on any input; small Python checks then tell a random secret from a placeholder, a word,
a digest or a reference to a secret kept elsewhere. Only a fixed shape name leaves this module.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from urllib.parse import unquote

__all__ = ["find_credential"]

# --- what random looks like -------------------------------------------------------------------

_MARKERS = ("...", "\u2026", "\u2022\u2022", "****", "redact", "placeholder", "example")
# Words that mark a typed placeholder; a long random string contains short ones by chance.
_PLACEHOLDER_PARTS = _MARKERS + (
    "xxxx", "changeme", "change_me", "dummy", "sample", "your", "insert", "replace", "fixme", "todo", "masked", "here",
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


def _looks_random(s: str, classes: int = 2, max_run: int | None = 5) -> bool:
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


def _is_wordy(s: str) -> bool:
    """True for identifiers and phrases ('MyAppSecretValue', 'PKCS7PrivateKeyTypes'): their letter
    pairs are common English ones; in random text such pairs are a minority."""
    if all(c in _HEX for c in s):
        return False
    pairs = hits = in_words = 0
    for chunk in _CHUNKS.findall(s):
        if len(chunk) < 3:  # two-letter pieces of random mixed case hit common pairs by chance
            continue
        chunk = chunk.lower()
        found = sum(a + b in _BIGRAMS for a, b in zip(chunk, chunk[1:], strict=False))
        pairs, hits = pairs + len(chunk) - 1, hits + found
        if len(chunk) >= 4 and found >= 0.75 * (len(chunk) - 1):
            in_words += len(chunk)
    return (hits >= 8 and hits >= 0.8 * pairs) or in_words >= 0.5 * len(s)


def _b64(s: str, urlsafe: bool = True) -> bytes | None:
    try:
        padded = s + "=" * (-len(s) % 4)
        return base64.urlsafe_b64decode(padded) if urlsafe else base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def _b64_json_header(s: str) -> bool:
    raw = _b64(s)
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


def _is_code_path(v: str) -> bool:
    """`settings.SECRET_KEY`, `config.db.password`: short dotted names with no random part."""
    if not _DOTTED.fullmatch(v):
        return False
    parts = v.split(".")
    if not all(_IDENTIFIER.fullmatch(p) or _is_wordy(p) for p in parts) or any(
        _looks_random(p) and not _is_wordy(p) for p in parts
    ):
        return False  # 'ya29.<random>' is a token, 'aYFDrC1.rcwNwT' a password
    return len(parts) <= 3 or bool(re.search(r"(?:password|passwd|pwd|secret|token|key)s?$", parts[-1].lower()))


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


def _is_reference_or_placeholder(v: str) -> bool:
    low = v.lower()
    norm = re.sub(r"[^a-z0-9]", "", low)
    leet = re.sub(r"[^a-z]", "", low.translate(_LEET))  # 'P@55w0rd!' is 'password'
    if leet in _NOT_PASSWORDS or _WORD_PLACEHOLDER.fullmatch(leet):
        return True
    return (
        bool(_REFERENCE.match(v)) or any(p in v for p in _REFERENCE_PARTS) or (("(" in v or "[" in v) and bool(_CALL.search(v)))
        or _is_code_path(v) or any(p in low for p in _PLACEHOLDER_PARTS) or len(set(v)) == 1
        or norm in _NOT_PASSWORDS or bool(_WORD_PLACEHOLDER.fullmatch(norm))
    )


_FILLER = re.compile(r"(.)\1{5}|01234567|12345678|23456789|abcdefgh", re.I)


# 'password: SHA-256', 'wifi password: WPA2-Personal', 'password: 2FA-enabled' name a technique, not a secret.
_TECH_TERM = re.compile(
    r"(?i)(?:sha|md|wpa|aes|rsa|ecdsa|ed|hmac|pbkdf|argon|scrypt|bcrypt|utf|iso|rfc|tls|ssl|http|oauth|x)"
    r"[-_]?[0-9]+(?:[-_.][a-z0-9]+)*|(?:2fa|mfa|totp|u2f|sso|saml|ldap)(?:[-_][a-z]+)*"
)
_KEY_WORDS_SET = frozenset("password passwd pwd pass secret token key apikey user username".split())
_PASSPHRASE = re.compile(r"[a-z]{2,12}(?:[-_.][a-z]{2,12}){3,9}")


def _password_kinds(v: str) -> int:
    return (
        any(c.islower() for c in v) + any(c.isupper() for c in v[1:]) + any(c.isdigit() for c in v)
        + any(not c.isalnum() for c in v)
    )


def _password_value(v: str) -> bool:
    """A typed password: one token with two kinds of character, or a long passphrase."""
    if not 6 <= len(v) <= 128 or _is_reference_or_placeholder(v) or _FILLER.search(v) or _TECH_TERM.fullmatch(v):
        return False
    if _NUMERIC.fullmatch(v):  # dates, times, counts; but a router's 20-digit key is a password
        return sum(c.isdigit() for c in v) >= 12 and len(set(v)) >= 6
    if len(set(v)) * 4 < len(v):  # a repeated pattern, not a password
        return False
    if "://" in v or v.startswith(("/", "~/", "./", "C:\\")) or v.count("/") >= 2:  # a URL or a path
        return False
    if re.fullmatch(r"[a-z]+(?:[-_.][a-z]+)*", v):  # a passphrase, unless it is an identifier
        return bool(_PASSPHRASE.fullmatch(v)) and not _KEY_WORDS_SET.intersection(re.split(r"[-_.]", v))
    if v.isascii() and v.isalpha():  # 'SecretStr', 'IAmSensitive': a type or a phrase, unless random
        return len(v) >= 12 and _looks_random(v) and not _is_wordy(v)
    return _password_kinds(v) >= 2


def _pathish(v: str) -> bool:
    """'logs/2024/05/01/app', 'key/20220524/us-east-1/s3/aws4_request': dated paths, not base64."""
    parts = v.split("/")
    digits = [p for p in parts if p.isdigit()]
    return len(parts) >= 3 and (len(digits) >= 2 or any(len(p) >= 4 for p in digits))


def _secret_value(v: str) -> bool:
    """A generated secret: long, random, not a path, URL, digest, public key or timestamp."""
    if not 16 <= len(v) <= 1024 or _is_reference_or_placeholder(v) or _NUMERIC.fullmatch(v):
        return False
    if "://" in v or "*" in v or _pathish(v) or v.startswith(_NOT_SECRET_PREFIXES) or re.fullmatch(r"AC[0-9a-f]{32}|0x[0-9a-fA-F]{40}", v):
        return False  # a Twilio account id, an Ethereum address: public
    return _looks_random(v) and not _is_wordy(v)


_NOT_SECRET_PREFIXES = (
    "arn:", "sha1:", "sha256:", "sha512:", "sha256-", "sha384-", "sha512-",
    "pk_live_", "pk_test_", "pk.", "ssh-", "ecdsa-", "AAAA",
)


def _url_password(user: str, pw: str) -> bool:
    """A password in a URL or a basic-auth pair, unless it is a placeholder, a port or the user."""
    if len(pw) < 3 or pw == user or _is_reference_or_placeholder(pw):
        return False
    return not re.match(r"[0-9]{1,5}(?:,|$)", pw)  # host:port, or host:port,host2 of a multi-host URL


# --- prefixed tokens --------------------------------------------------------------------------
_T = "A-Za-z0-9_\\-"


def _tok(head: str, body: str, width: int = 0, left: str = _T, right: str = _T) -> re.Pattern[str]:
    """``HEAD(?<![..]HEAD)BODY``: the left boundary is checked after the literal head so the
    regex keeps its fast literal-prefix search and ``ghp_ghp_ghp_...`` gives one candidate."""
    behind = f"(?<![{left}].{{{width}}})" if width else ""
    return re.compile(f"{head}{behind}{body}(?![{right}])")


# (shape, a piece every match contains, pattern, characters that may not touch the token on the left)
_TOKENS: tuple[tuple[str, str, re.Pattern[str], str], ...] = (
    ("anthropic_api_key", "sk-ant-", _tok("sk-ant-", r"[a-z]{2,8}[0-9]{2}-(?P<b>[A-Za-z0-9_\-]{32,250}+)", 7), _T),
    ("openai_api_key", "sk-", _tok("sk-", r"(?P<p>(?:proj|svcacct|admin|None)-)?(?P<b>[A-Za-z0-9_\-]{20,250}+)", 3), _T),
    ("github_token", "_", _tok("gh[pousr]_", r"(?P<b>[A-Za-z0-9]{36,251}+)", 4), _T),
    ("github_token", "github_pat_", _tok("github_pat_", r"(?P<b>[A-Za-z0-9]{22})_(?P<c>[A-Za-z0-9]{59})", 11), _T),
    ("gitlab_token", "gl", _tok("gl(?:pat|dt|rt|rtr|ptt|oas|cbt|ft|soat|imt|agent)-", r"(?P<b>[A-Za-z0-9_\-]{20,80}+)"), _T),
    ("slack_webhook", "hooks.slack.com/", _tok(r"hooks\.slack\.com/(?:services|workflows|triggers)/",
                                               r"(?P<path>[A-Za-z0-9_/\-]{20,200}+)"), ""),
    ("slack_token", "xox", _tok("xox[abposre]-", r"(?P<path>[A-Za-z0-9\-]{10,250}+)", 5), _T),
    ("slack_token", "xapp-", _tok("xapp-", r"(?P<path>[A-Za-z0-9\-]{30,250}+)", 5), _T),
    ("stripe_secret_key", "k_", _tok("[sr]k_(?:live|test)_", r"(?P<b>[A-Za-z0-9]{20,247}+)", 8), _T),
    ("google_api_key", "AIza", _tok("AIza", r"(?P<b>[A-Za-z0-9_\-]{35})", 4), _T),
    ("huggingface_token", "hf_", _tok("hf_", r"(?P<b>[A-Za-z0-9]{30,40}+)", 3), _T),
    ("npm_token", "npm_", _tok("npm_", r"(?P<b>[A-Za-z0-9]{36})", 4), _T),
    ("pypi_token", "pypi-AgE", _tok("pypi-AgE", r"(?P<b>[A-Za-z0-9_\-]{50,400}+)", 8), _T),
    ("twilio_key", "SK", _tok("SK", r"(?P<b>[0-9a-fA-F]{32})", right="A-Za-z0-9"), "A-Za-z0-9"),
    ("sendgrid_key", "SG.", _tok(r"SG\.", r"(?P<b>[A-Za-z0-9_\-]{22})\.(?P<c>[A-Za-z0-9_\-]{43})", 3), _T),
    ("mailgun_key", "key-", _tok("key-", r"(?P<b>[0-9a-f]{32})", right="A-Za-z0-9"), "A-Za-z0-9"),
    # the newer Mailgun key, <32 hex>-<8 hex>-<8 hex>, found from its first dash
    ("mailgun_key", "-", re.compile(r"-(?<=(?<![A-Za-z0-9_\-])(?P<b>[0-9a-f]{32})-)[0-9a-f]{8}-[0-9a-f]{8}(?![A-Za-z0-9_\-])"), ""),
    ("discord_bot_token", ".", _tok("[MNO]", r"(?P<id>[A-Za-z0-9_\-]{22,26}+)\.[A-Za-z0-9_\-]{6}"
                                                r"\.(?P<c>[A-Za-z0-9_\-]{27,38}+)", 1), _T),
    # <bot id>:<35 characters>, found from its colon
    ("telegram_bot_token", ":", re.compile(r":(?<=[0-9]{5}:)(?P<b>[A-Za-z0-9_\-]{35})(?![A-Za-z0-9_\-])"), ""),
    ("shopify_token", "shp", _tok("shp(?:at|ca|pa|ss)_", r"(?P<b>[a-fA-F0-9]{32})", 6), _T),
    ("digitalocean_token", "_v1_", _tok("do[opr]_v1_", r"(?P<b>[a-f0-9]{64})", 7), _T),
    ("heroku_api_key", "HRKU-", _tok("HRKU-", r"(?P<b>[A-Za-z0-9_\-]{40,80}+)", 5), _T),
    ("private_key", "AGE-SECRET-KEY-1", _tok("AGE-SECRET-KEY-1", r"(?P<b>[0-9A-Z]{58})", 16), _T),
)


# Prefixes that also start ordinary identifiers: hf_AutoModelFor..., npm_config_..., sk-spinner-...
_WORDY_PREFIXES = frozenset({"huggingface_token", "npm_token", "openai_api_key", "slack_token"})


_LEFT_SETS = {left: frozenset(re.findall(f"[{left}]", "".join(map(chr, range(128))))) for *_, left in _TOKENS if left}


def _token_ok(shape: str, m: re.Match[str], text: str, left: str) -> bool:
    if left and m.start() and text[m.start() - 1] in _LEFT_SETS[left]:
        return False
    g = m.groupdict()
    if "path" in g:  # Slack: numeric ids, then one long random part ('xoxo-see-you' is not one)
        parts = [p for p in re.split(r"[-/]", g["path"]) if p]
        longest = max(parts, key=len)
        return (len(parts) >= 2 and len(longest) >= 16 and any(c.isdigit() for c in g["path"])
                and _looks_random(longest, classes=1) and not _is_wordy(longest))
    if shape == "telegram_bot_token":  # 5 to 12 digits of bot id before the colon
        digits = len(text[max(0, m.start() - 13): m.start()]) - len(text[max(0, m.start() - 13): m.start()].rstrip("0123456789"))
        if digits > 12:
            return False
    if shape == "discord_bot_token":  # the first part is a base64 numeric user id
        raw = _b64(m.group(0).split(".")[0])
        if not raw or not raw.isdigit() or not 15 <= len(raw) <= 21:
            return False
    if shape == "openai_api_key":
        if g["b"].startswith("ant-") or (not g["p"] and len(g["b"]) < 32) or _is_wordy(g["b"]):
            return False
    classes = 1 if shape in ("mailgun_key", "twilio_key", "private_key") else 2
    wordy = shape in _WORDY_PREFIXES and any(_is_wordy(v) for k, v in g.items() if k in "bc" and v)
    return not wordy and all(_looks_random(v, classes=classes) for k, v in g.items() if k in "bc" and v)


def _tokens(text: str, low: str) -> str | None:
    for shape, piece, pattern, left in _TOKENS:
        if piece not in text:
            continue
        for m in pattern.finditer(text):
            if _token_ok(shape, m, text, left):
                return shape
    return None


# --- private keys -----------------------------------------------------------------------------
_PEM_HEAD = re.compile(r"-{3,5}BEGIN ?[A-Z0-9 ]{0,24}PRIVATE KEY(?: BLOCK)?-{3,5}")
_GCP_KEY_ID = re.compile(r"""["']private_key_id["']\s{0,4}:\s{0,4}["']([0-9a-fA-F]{40})["']""")
_GCP_PEM = re.compile(r"""["']private_key["']\s{0,4}:\s{0,4}["']-{5}BEGIN[A-Z ]{0,24}-{5}""")
_PUTTY = re.compile(r"Private-Lines: ?[0-9]{1,3}")
_B64_LINE = re.compile(r"[A-Za-z0-9+/=]{0,128}")


def _pem_body_random(text: str, start: int) -> bool:
    """The lines after a PEM header hold base64 that looks random (not '...' or '<your key>')."""
    window = text[start: start + 700].replace("\\r", "").replace("\\n", "\n")
    body = ""
    for line in window.split("\n"):
        s = line.strip().strip("\"',")
        if not s or (":" in s and not body):  # blank lines; Proc-Type, DEK-Info, Version headers
            continue
        if s.startswith("---"):
            break
        chunk = _B64_LINE.match(s).group(0)  # type: ignore[union-attr]
        body += chunk
        if len(chunk) < len(s) or len(body) >= 64:
            break
    return len(body) >= 40 and _looks_random(body[:128], max_run=None)


def _private_keys(text: str, low: str) -> str | None:
    if "private_key" in text and ("service_account" in text or "gserviceaccount" in text):
        m = _GCP_KEY_ID.search(text)
        if m and _looks_random(m.group(1), classes=2):
            return "gcp_service_account"
        m = _GCP_PEM.search(text)
        if m and _pem_body_random(text, m.end()):
            return "gcp_service_account"
    if "PRIVATE KEY" in text:
        for m in _PEM_HEAD.finditer(text):
            if _pem_body_random(text, m.end()):
                return "private_key"
    m = _PUTTY.search(text) if "PuTTY-User-Key-File-" in text else None
    if m and _pem_body_random(text, m.end()):
        return "private_key"
    return None


# --- JWTs -------------------------------------------------------------------------------------
_JWT = re.compile(r"eyJ(?<![A-Za-z0-9_\-]eyJ)(?P<h>[A-Za-z0-9_\-]{6,2048}+)\.[A-Za-z0-9_\-]{2,4096}+\."
                  r"(?P<s>[A-Za-z0-9_\-]{16,2048}+)(?![A-Za-z0-9_\-])")


def _jwt(text: str, low: str) -> str | None:
    for m in _JWT.finditer(text):
        if _b64_json_header("eyJ" + m.group("h")) and _looks_random(m.group("s"), max_run=None):
            return "jwt"
    return None


# --- AWS --------------------------------------------------------------------------------------
_AWS_ID = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)(?<![A-Za-z0-9]....)(?P<b>[A-Z2-7]{16})(?![A-Za-z0-9])")
# Maximal base64 runs (a charset-led regex keeps sre's fast scan); exactly 40 long is the candidate.
_B64_RUN = re.compile(r"[A-Za-z0-9/+]{40,}+")
_AWS_CONTEXT = re.compile(r"(?<![a-z])aws|secret_?access_?key|secret access key|amazon")


def _aws_context(low: str, start: int = 0, end: int | None = None) -> bool:
    window = low[start:end]
    return ("aws" in window or "secret" in window or "amazon" in window) and bool(_AWS_CONTEXT.search(window))


def _aws_secret_like(s: str) -> bool:
    return not _pathish(s) and _looks_random(s, classes=3) and not _is_wordy(s)


def _inside_pem(text: str, at: int) -> bool:
    begin = text.rfind("-----BEGIN", 0, at)
    return begin >= 0 and text.rfind("-----END", 0, at) < begin


def _aws(text: str, low: str) -> str | None:
    key_id = any(_looks_random(m.group("b"), classes=1) for m in _AWS_ID.finditer(text))
    if key_id or _aws_context(low):
        for m in _B64_RUN.finditer(text):
            a, b = m.span()
            # AWS secrets are standard base64: 40 characters of a base64url, dotted or padded string are not one.
            if b - a != 40 or (a and text[a - 1] in "_-.") or text[b:b + 1] in ("=", "_", "-"):
                continue
            near = key_id or _aws_context(low, max(0, a - 200), b + 100)
            if near and _aws_secret_like(m.group(0)) and not _inside_pem(text, a):
                return "aws_secret_access_key"
    return "aws_access_key_id" if key_id else None


# --- Azure ------------------------------------------------------------------------------------
_AZURE = re.compile(r"(?i)(?:accountkey|sharedaccesskey)\s{0,3}=\s{0,3}([A-Za-z0-9+/]{20,200}+)={0,2}")


def _azure(text: str, low: str) -> str | None:
    if "accountkey" in low or "sharedaccesskey" in low:
        for m in _AZURE.finditer(text):
            if _looks_random(m.group(1), max_run=None):
                return "azure_connection_string"
    return None


# --- URLs with a password ---------------------------------------------------------------------
_USERINFO = re.compile(r"//(?P<user>[^\s:/?#@\"'<>\[\]]{0,128}+):(?P<pw>[^\s/?@\"'<>]{1,256}+)@[A-Za-z0-9\[]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,24}$")
_DB_SCHEMES = frozenset(
    "postgres postgresql postgis mysql mysql2 mysqlx mariadb mongodb redis rediss amqp amqps mssql "
    "sqlserver oracle cockroachdb clickhouse couchdb couchbase neo4j bolt cassandra memcached "
    "snowflake db2 odbc influxdb timescale".split()
)


def _urls(text: str, low: str) -> str | None:
    if "://" not in text or "@" not in text:
        return None
    at = text.find("://")
    while at >= 0:  # from each '://', read the userinfo forwards and the scheme backwards
        m = _USERINFO.match(text, at + 1)
        user, pw = (m.group("user"), unquote(m.group("pw"))) if m else ("", "")
        if m and _url_password(user, pw) and (user or ":" not in pw):  # cvs://:pserver:anoncvs@host is a method
            scheme = _SCHEME.search(text, max(0, at - 25), at)
            name = scheme.group(0).lower().split("+")[0] if scheme else ""
            return "database_url" if name in _DB_SCHEMES else "url_password"
        at = text.find("://", at + 3)
    return None


# --- Authorization headers --------------------------------------------------------------------
_BEARER = re.compile(r"(?i)(?<![a-z])bearer(?:[ \t]{1,4}token)?[ \t]{0,4}[:=]?[ \t]{1,4}([A-Za-z0-9\-._~+/]{8,1024}+=*)")
_AUTH = re.compile(r"(?i)authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?:(basic)|token|apikey)?"
                   r"[ \t]{0,4}([A-Za-z0-9\-._~+/]{8,1024}+=*)")


_SCHEME_WORD = re.compile(r"[ \t]+[A-Za-z]")  # 'AWS4-HMAC-SHA256 Credential=...': a scheme name, not a token


def _headers(text: str, low: str) -> str | None:
    if "bearer" in low:
        for m in _BEARER.finditer(text):
            if _secret_value(m.group(1)):
                return "bearer_token"
    if "authorization" in low:
        for m in _AUTH.finditer(text):
            value = m.group(2)
            if m.group(1):
                raw = _b64(value, urlsafe=False)
                pair = raw.decode("utf-8", "replace") if raw else ""
                if pair.isprintable() and ":" in pair and _url_password(*pair.split(":", 1)):
                    return "basic_auth"
            elif _secret_value(value) and not _SCHEME_WORD.match(text, m.end()):
                return "bearer_token"
    return None


# --- assignments: `password = ...`, `api_key: ...`, "le mot de passe est ..." -----------------
_PASSWORD_KEYS = (
    "password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw", "identified by", "mot de passe", "passwort",
    "kennwort", "contraseña", "contrasena", "senha", "wachtwoord", "hasło", "haslo", "lösenord",
    "salasana", "passord", "adgangskode", "şifre", "jelszó", "heslo", "пароль", "パスワード",
    "暗証番号", "密码", "密碼", "비밀번호", "wi-fi key", "wifi key", "wlan key", "network key", "wpa key",
    "wlan-schlüssel", "wlan-schluessel", "wlan schlüssel", "clé wifi", "clé wi-fi",
)
_SECRET_KEYS = (
    "api key", "api_key", "api-key", "apikey", "api secret", "api_secret", "api token", "api_token",
    "access key", "access_key", "access-key", "accesskey", "secret", "token", "credential",
    "private key", "private_key", "privatekey", "auth key", "auth_key", "master key", "master_key",
    "signing key", "signing_key", "encryption key", "encryption_key", "account key", "account_key",
    "app key", "app_key", "client key", "client_key", "subscription key", "subscription-key",
    "heroku key", "heroku_key", "clé api", "cle api", "clé secrète", "jeton", "api-schlüssel",
    "api schlüssel", "geheimschlüssel", "clave api", "clave de api", "clave secreta", "chave de api",
    "chave api", "chiave api", "токен", "ключ api", "api ключ", "api-ключ", "секретный ключ",
    "apiキー", "api キー", "トークン", "シークレット", "アクセスキー", "密钥", "令牌", "api 키", "토큰",
)
_KINDS = (("password_assignment", _PASSWORD_KEYS), ("secret_assignment", _SECRET_KEYS))
_KEY_RIGHT = re.compile(r"[A-Za-z0-9_.\-а-яё]{0,40}+")
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|[а-яё]+")
_VERBS = r"is|was|est|ist|es|era|é|è|är|er|lautet|jest|equals|sind|—|–|-"
_SEP = re.compile(rf"[\"'\])]?[ \t]{{0,4}}(?:=>|->|→|[:=：]{{1,2}}|(?<=[ \t])(?:{_VERBS})[ \t]|は|是|为|為|는|은)[ \t]{{0,4}}")
_SEP_FOR = re.compile(  # "password for the NAS: ...", "mot de passe du wifi est ..."
    r"[ \t]{1,4}(?:for|to|of|on|at|in|de|du|des|del|della|da|do|für|vom|von|zum|zur|от|для|на)[ \t]{1,4}"
    rf"(?:[^\s:=：,;!?]{{1,24}}[ \t]{{1,4}}){{0,4}}?[^\s:=：,;!?]{{1,24}}"
    rf"(?:[ \t]{{0,4}}[:=：][ \t]{{0,4}}|[ \t]{{1,4}}(?:{_VERBS})[ \t]{{1,4}})",
    re.I,
)
_SEP_NAMED = re.compile(r"[ \t]{1,4}[A-Z][A-Za-z0-9.\-]{1,24}[ \t]{0,4}[:=：][ \t]{0,4}")  # "clé API Heroku : ..."
_SEP_CLI = re.compile(r"[ \t]{1,4}")  # --password VALUE
_VALUE = re.compile(r"(?:[\"'`「『“«]|&quot;)?[ \t]?([^\s\"'`<>]{1,256}+)")
# Public keys, and tokens that page, version or verify rather than grant: next_token, update_token...
_SKIP_ANY = frozenset(
    "public publishable pub next page pagination continuation sync update idempotency verification cancel".split()
)
_SKIP_LAST = frozenset(
    "id ids url uri urls endpoint path file filename dir name names type length len size ttl expiry "
    "expires expiration expire lifetime count limit limits header prefix suffix format hint policy "
    "rotation region arn version env var ref hash hashed digest fingerprint salt enabled required min "
    "max timeout manager field label placeholder input store provider mode scope scopes source "
    "location yaml yml json txt md toml ini cfg conf pem template usage used budget strength rule rules "
    "validation regex pattern reset changed updated date time created age days number kind address "
    "py js ts go rs java rb sh h c cc cpp html css xml csv log bak".split()
)
_VENDORS = (
    ("heroku", "heroku_api_key"), ("twilio", "twilio_key"), ("mailgun", "mailgun_key"),
    ("sendgrid", "sendgrid_key"), ("openai", "openai_api_key"), ("anthropic", "anthropic_api_key"),
    ("stripe", "stripe_secret_key"), ("slack", "slack_token"), ("github", "github_token"),
    ("gitlab", "gitlab_token"), ("digitalocean", "digitalocean_token"), ("shopify", "shopify_token"),
    ("discord", "discord_bot_token"), ("telegram", "telegram_bot_token"),
    ("huggingface", "huggingface_token"), ("hugging face", "huggingface_token"), ("hf_", "huggingface_token"),
    ("npm", "npm_token"), ("pypi", "pypi_token"),
)


_ARN = re.compile(r"arn:[a-z0-9\-]+:[^\s\"']*$")
_MEETING = re.compile(r"(?:zoom\.us|zoom\.com|webex\.com|gotomeeting\.com|whereby\.com)/[^\s]{0,200}$")


def _key_char(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c in "_.-")


_ASCII_PREFIX = re.compile(r"[\x00-\x7f]*")
# A value that holds another key and separator ('password=password=...') is a repeated key, not a value.
_KEYS_IN_VALUE = re.compile(r"(?<![a-z])(?:pass(?:word|wd)?|pwd|pw|secret|token|key)[=:]")


def _clean(value: str) -> str:
    if "\u2026" in value or "\u2022" in value:  # 'sk-proj-…', '••••': shown, not given
        return ""
    # "...です", "...。": the value ends where the sentence's script resumes
    value = _ASCII_PREFIX.match(value).group(0)  # type: ignore[union-attr]
    return value.rstrip(".,;:!?)]}>'\"")


def _glued(kw: str, before: str, after: str) -> bool:
    """'bypass', 'compass', 'passwords', 'tokenizer' are other words; 'dbPassword', 'PGPASSWORD' are keys."""
    b, a = before.isascii() and before.isalpha(), after.isascii() and after.isalpha()
    if (b and not kw[0].isupper()) or (a and not (kw[-1].islower() and after.isupper())):
        return True
    return kw.isascii() and len(kw) <= 4 and (a or b)  # 'pw', 'pwd', 'pass' inside other words or random text


def _key_names_a_secret(key: str) -> bool:
    if len(key) > 48 or (len(key) >= 12 and any(c.isdigit() for c in key) and _looks_random(key) and not _is_wordy(key)):
        return False  # a keyword inside a random run ('...4PwY5ZW2nu...') names nothing
    words = [w.lower() for w in _KEY_WORDS.findall(key)]
    return not (_SKIP_ANY.intersection(words) or (words and words[-1] in _SKIP_LAST))


def _assignment_at(
    text: str, low: str, start: int, end: int, kind: str, memo: dict[tuple[str, str, bool, bool], bool]
) -> str | None:
    kw = text[start:end]
    before = text[start - 1] if start else " "
    if _glued(kw, before, text[end:end + 1] or " "):
        return None
    if kw.lower() == "pass" and before == " " and start >= 2 and text[start - 2].isalpha():
        return None  # "boarding pass", "ski pass"
    right = _KEY_RIGHT.match(text, end).end()  # type: ignore[union-attr]
    sep = _SEP.match(text, right) or _SEP_FOR.match(text, right) or _SEP_NAMED.match(text, right)
    left = start
    while left > 0 and start - left < 40 and _key_char(text[left - 1]):
        left -= 1
    strict = False
    if sep is None and (text.startswith("-", left) or (kind == "password_assignment" and len(kw) > 4)):
        # `--password VALUE`, `WITH PASSWORD 'VALUE'`, .netrc's `password VALUE`: only a strong value counts
        sep, strict = _SEP_CLI.match(text, right), not text.startswith("-", left)
    value = _VALUE.match(text, sep.end()) if sep else None
    if value is None or len(value.group(1)) < 6:
        return None
    if _KEYS_IN_VALUE.search(low, value.start(1), value.end(1)) or not _key_names_a_secret(text[left:right]):
        return None
    if before in "?&" and _MEETING.search(text, max(0, start - 200), start):
        return None  # a meeting link's passcode is made to be shared with the invite
    if before == ":" and _ARN.search(low, max(0, start - 120), start):
        return None  # arn:aws:secretsmanager:...:secret:NAME names a secret; it does not hold one
    v = _clean(value.group(1))
    if len(v) > right - left and v.lower().endswith("." + low[left:right]):
        return None  # `Pass = ASLLexer.PASS`, `key = module.key`: a name bound to the same name
    quoted = value.group(0)[:1] in "\"'`"
    memo_key = (kind, value.group(1), strict, quoted)
    verdict = memo.get(memo_key)
    if verdict is None:
        raw = _ASCII_PREFIX.match(value.group(1)).group(0)  # type: ignore[union-attr]
        verdict = memo[memo_key] = _value_is_secret(kind, v, raw, strict, quoted)
    if not verdict:
        return None
    if kind == "password_assignment":
        return kind
    window = low[max(0, left - 40): value.start()]
    return next((shape for vendor, shape in _VENDORS if vendor in window), kind)


def _value_is_secret(kind: str, v: str, raw: str, strict: bool, quoted: bool) -> bool:
    if kind != "password_assignment":
        return _secret_value(v)
    if not _password_value(v):
        return False
    if not strict or quoted:
        return True
    # a bare `password VALUE`: a strong value that is not a flag or another assignment
    strong = _password_kinds(raw) >= 3 or bool(_PASSPHRASE.fullmatch(v))
    return strong and not v.startswith("-") and "=" not in v


def _anchor(key: str) -> str:
    return next((a for a in ("pass", "pw", "secret", "token", "key", "credential") if a in key), key)


# Every keyword grouped under a short piece of it: most notes contain none and skip the group.
_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = tuple(
    (kind, anchor, tuple(sorted((k for k in keys if _anchor(k) == anchor), key=len, reverse=True)))
    for kind, keys in _KINDS for anchor in dict.fromkeys(_anchor(k) for k in keys)
)


def _assignments(text: str, low: str) -> str | None:
    memo: dict[tuple[str, str, bool, bool], bool] = {}  # per call only: text never outlives the call
    for kind, anchor, keys in _GROUPS:
        if anchor not in low:
            continue
        done: set[int] = set()  # 'pass' where 'password' was already read
        for key in keys:
            at = low.find(key)
            while at >= 0:
                if at not in done:
                    done.add(at)
                    shape = _assignment_at(text, low, at, at + len(key), kind, memo)
                    if shape:
                        return shape
                at = low.find(key, at + 1)
    return None


_DETECTORS: tuple[Callable[[str, str], str | None], ...] = (
    _private_keys, _tokens, _jwt, _aws, _azure, _urls, _headers, _assignments,
)


def _lower_same_length(text: str) -> str:
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)  # 'İ' lowers to two


def find_credential(text: str) -> str | None:
    """Return the snake_case name of the first credential shape in ``text``, or None.

    The name is one of a fixed set of labels (``github_token``, ``private_key``...); nothing of
    the text itself is ever returned.
    """
    if not text:
        return None
    low = _lower_same_length(text)
    for detect in _DETECTORS:
        shape = detect(text, low)
        if shape:
            return shape
    return None
