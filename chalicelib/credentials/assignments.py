"""Secrets given by name: `password = ...`, `api_key: ...`, "le mot de passe est ...", `--password X`.

A keyword (in many languages) is found first, then the key around it, a separator and a value;
the value counts only when it looks typed-as-a-password or generated, never a placeholder,
reference, path or the name of another variable.
"""

from __future__ import annotations

import re

from chalicelib.credentials.checks import (
    PASSPHRASE,
    is_wordy,
    looks_random,
    password_kinds,
    password_value,
    secret_value,
)

_PASSWORD_KEYS = (
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "pass",
    "pwd",
    "pw",
    "identified by",
    "mot de passe",
    "passwort",
    "kennwort",
    "contraseña",
    "contrasena",
    "senha",
    "wachtwoord",
    "hasło",
    "haslo",
    "lösenord",
    "salasana",
    "passord",
    "adgangskode",
    "şifre",
    "jelszó",
    "heslo",
    "пароль",
    "パスワード",
    "暗証番号",
    "密码",
    "密碼",
    "비밀번호",
    "wi-fi key",
    "wifi key",
    "wlan key",
    "network key",
    "wpa key",
    "wlan-schlüssel",
    "wlan-schluessel",
    "wlan schlüssel",
    "clé wifi",
    "clé wi-fi",
)
_SECRET_KEYS = (
    "api key",
    "api_key",
    "api-key",
    "apikey",
    "api secret",
    "api_secret",
    "api token",
    "api_token",
    "access key",
    "access_key",
    "access-key",
    "accesskey",
    "secret",
    "token",
    "credential",
    "private key",
    "private_key",
    "privatekey",
    "auth key",
    "auth_key",
    "master key",
    "master_key",
    "signing key",
    "signing_key",
    "encryption key",
    "encryption_key",
    "account key",
    "account_key",
    "app key",
    "app_key",
    "client key",
    "client_key",
    "subscription key",
    "subscription-key",
    "heroku key",
    "heroku_key",
    "clé api",
    "cle api",
    "clé secrète",
    "jeton",
    "api-schlüssel",
    "api schlüssel",
    "geheimschlüssel",
    "clave api",
    "clave de api",
    "clave secreta",
    "chave de api",
    "chave api",
    "chiave api",
    "токен",
    "ключ api",
    "api ключ",
    "api-ключ",
    "секретный ключ",
    "apiキー",
    "api キー",
    "トークン",
    "シークレット",
    "アクセスキー",
    "密钥",
    "令牌",
    "api 키",
    "토큰",
    "application key",
    "application_key",
    "application-key",
    "app-key",
    "key",
)
# 'key' alone names a secret only where the word before it does not make it another kind of key
_OTHER_KEYS = frozenset(
    "primary foreign partition sort hash range object cache s3 row composite unique index lookup registry public pub "
    "host gpg pgp ssh license licence product activation serial idempotency house car door front back spare music "
    "musical minor major dict map sorting join shard routing search only".split()
)
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")


def _words_before_key(text: str, left: int, start: int) -> list[str]:
    """The words of the key's name and the word just before it: 'GPG key', 'ALGOLIA_SEARCH_ONLY_KEY'."""
    return _NOT_WORD.split(text[max(0, left - 20) : start])


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Words that name a password without saying so ("login for the bank: hunter2Xy!9"): a value
# counts only when it is strong (three kinds of character) and not an address.
_LOGIN_KEYS = ("login", "log-in", "logon", "sign-in", "signin", "credentials", "creds")
_KINDS = (("password_assignment", _PASSWORD_KEYS), ("secret_assignment", _SECRET_KEYS), ("login_password", _LOGIN_KEYS))
_KEY_RIGHT = re.compile(r"[A-Za-z0-9_.\-а-яё]{0,40}+")
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|[а-яё]+")
_VERBS = r"is|was|est|ist|es|era|é|è|är|er|lautet|jest|equals|sind|—|–|-"
_SEP = re.compile(
    rf"(?:[ \t]{{1,4}}\([^()\n]{{1,24}}\))?[\"'\])]?[ \t]{{0,4}}(?:=>|->|→|[:=：]{{1,2}}|(?<=[ \t])(?:{_VERBS})[ \t]|は|是|为|為|는|은)[ \t]{{0,4}}"
)
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
    ("datadog", "datadog_key"),
    ("dd_api_key", "datadog_key"),
    ("dd_app_key", "datadog_key"),
    ("dd-api-key", "datadog_key"),
    ("dd_application_key", "datadog_key"),
    ("dd-application-key", "datadog_key"),
    ("heroku", "heroku_api_key"),
    ("twilio", "twilio_key"),
    ("mailgun", "mailgun_key"),
    ("sendgrid", "sendgrid_key"),
    ("openai", "openai_api_key"),
    ("anthropic", "anthropic_api_key"),
    ("stripe", "stripe_secret_key"),
    ("slack", "slack_token"),
    ("github", "github_token"),
    ("gitlab", "gitlab_token"),
    ("digitalocean", "digitalocean_token"),
    ("shopify", "shopify_token"),
    ("discord", "discord_bot_token"),
    ("telegram", "telegram_bot_token"),
    ("huggingface", "huggingface_token"),
    ("hugging face", "huggingface_token"),
    ("hf_", "huggingface_token"),
    ("npm", "npm_token"),
    ("pypi", "pypi_token"),
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
    if len(key) > 48 or (len(key) >= 12 and any(c.isdigit() for c in key) and looks_random(key) and not is_wordy(key)):
        return False  # a keyword inside a random run ('...4PwY5ZW2nu...') names nothing
    words = [w.lower() for w in _KEY_WORDS.findall(key)]
    return not (_SKIP_ANY.intersection(words) or (words and words[-1] in _SKIP_LAST))


def _assignment_at(
    text: str, low: str, start: int, end: int, kind: str, memo: dict[tuple[str, str, bool, bool], bool]
) -> str | None:
    kw = text[start:end]
    before = text[start - 1] if start else " "
    if _glued(kw, before, text[end : end + 1] or " "):
        return None
    if kw.lower() == "pass" and before == " " and start >= 2 and text[start - 2].isalpha():
        return None  # "boarding pass", "ski pass"
    right = _KEY_RIGHT.match(text, end).end()  # type: ignore[union-attr]
    sep = _SEP.match(text, right) or _SEP_FOR.match(text, right) or _SEP_NAMED.match(text, right)
    left = start
    while left > 0 and start - left < 40 and _key_char(text[left - 1]):
        left -= 1
    strict = False
    bare_key = kw.lower() == "key" and left == start
    if kw.lower() == "key" and _OTHER_KEYS.intersection(w.lower() for w in _words_before_key(text, left, start)):
        return None  # 'primary key: …', 'GPG key …', 'house key'
    if sep is None and (
        text.startswith("-", left) or kind == "secret_assignment" or (kind == "password_assignment" and len(kw) > 4)
    ):
        # 'API key 8f2b…', 'access token Xk9m…': a generated value after the words, with no separator
        # `--password VALUE`, `WITH PASSWORD 'VALUE'`, .netrc's `password VALUE`: only a strong value counts
        sep, strict = _SEP_CLI.match(text, right), not text.startswith("-", left)
    value = _VALUE.match(text, sep.end()) if sep else None
    shortest = 16 if strict and kind == "secret_assignment" else 6  # a generated secret is 16 or more
    if (
        value is None
        or len(value.group(1)) < shortest
        or (bare_key and _UUID.fullmatch(value.group(1).rstrip(".,;:)")))
    ):
        return None  # after 'key' alone a UUID is an id (cache, idempotency, object), not a secret
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
    if kind != "secret_assignment":
        return "password_assignment"
    window = low[max(0, left - 40) : value.start()]
    return next((shape for vendor, shape in _VENDORS if vendor in window), kind)


def _value_is_secret(kind: str, v: str, raw: str, strict: bool, quoted: bool) -> bool:
    if kind == "secret_assignment":
        return secret_value(v)
    if kind == "login_password":
        return password_value(v) and password_kinds(raw) >= 3 and "@" not in v and "/" not in v
    if not password_value(v):
        return False
    if not strict or quoted:
        return True
    # a bare `password VALUE`: a strong value that is not a flag or another assignment
    strong = password_kinds(raw) >= 3 or bool(PASSPHRASE.fullmatch(v))
    return strong and not v.startswith("-") and "=" not in v


def _anchor(key: str) -> str:
    return next((a for a in ("pass", "pw", "secret", "token", "key", "credential") if a in key), key)


# Every keyword grouped under a short piece of it: most notes contain none and skip the group.
_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = tuple(
    (kind, anchor, tuple(sorted((k for k in keys if _anchor(k) == anchor), key=len, reverse=True)))
    for kind, keys in _KINDS
    for anchor in dict.fromkeys(_anchor(k) for k in keys)
)


def find_assignment(text: str, low: str) -> str | None:
    """A password or secret keyword bound to a value that looks like a real one."""
    memo: dict[tuple[str, str, bool, bool], bool] = {}  # per call only: text never outlives the call
    for kind, anchor, keys in _GROUPS:
        if anchor not in low:
            continue
        done: set[int] = set()  # 'pass' where 'password' was already read
        ends: set[int] = set()  # 'key' that ends 'api key', 'access key'… already read as a word
        for key in keys:
            at = low.find(key)
            while at >= 0:
                if at not in done and not (key == "key" and at + 3 in ends):
                    done.add(at)
                    if key != "key" and not _glued(
                        text[at : at + len(key)],
                        text[at - 1] if at else " ",
                        text[at + len(key) : at + len(key) + 1] or " ",
                    ):
                        ends.add(at + len(key))
                    shape = _assignment_at(text, low, at, at + len(key), kind, memo)
                    if shape:
                        return shape
                at = low.find(key, at + 1)
    return None
