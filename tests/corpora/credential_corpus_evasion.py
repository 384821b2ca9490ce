"""The corpus's second part: credentials disguised as a person would still read them, the shapes
issue 13 added, and the hard benign notes that reading text "as a person sees it" must not break.

- ``evasion_cases()``: every shape of tests/corpora/credential_corpus.py and of this module, with its secret
  hidden by zero-width characters, soft hyphens, Cyrillic/Greek look-alike letters, full-width
  forms, a line break or spaces inside it (label = shape, context = the disguise);
- ``new_shape_cases()``: Vault, GCP OAuth, Azure SAS, Mailchimp, Datadog, BIP-39 seed phrases,
  command-line passwords, private keys with odd headers or none, passwords named without the word;
- ``hard_negative_cases()`` and ``HARD_INPUTS`` (tests/corpora/credential_corpus_hard.py, re-exported here):
  the hard benign notes, and inputs built to be slow.
Seeded like the first part, so every run sees the same texts.
"""

from __future__ import annotations

import random
import re
import string
from functools import cache

from mnemonic import Mnemonic

from tests.corpora.credential_corpus import (
    ALNUM,
    B64,
    B64URL,
    CONN_CONTEXTS,
    HEX,
    NAMES,
    SHAPES,
    TOKEN_CONTEXTS,
    WORDS,
    Case,
    _b64,
    _cases,
    _fill,
    _pem_lines,
    _positive_cases_for,
    _s,
)
from tests.corpora.credential_corpus_hard import HARD_INPUTS, HARD_NEGATIVES, hard_negative_cases

__all__ = [
    "ALL_SHAPES",
    "DISGUISES",
    "HARD_INPUTS",
    "HARD_NEGATIVES",
    "NEW_SHAPES",
    "evasion_cases",
    "WORDS_BEFORE_A_KEY",
    "hard_negative_cases",
    "new_shape_cases",
    "worded_split_cases",
]

SEED = 20_261_201
PER_SHAPE = 240
PER_CATEGORY = 300
PER_EVASION = 14  # per shape and disguise

_BIP39 = Mnemonic("english")
CLI_SYMBOLS = "!@#%^*-_=+?.~"


def _cli_password(rng: random.Random) -> str:
    style = rng.randrange(3)
    if style == 0:
        return _s(rng, ALNUM + CLI_SYMBOLS, rng.randint(10, 20))
    if style == 1:
        return rng.choice(WORDS).capitalize() + str(rng.randint(10, 9999)) + rng.choice("!#%?")
    return rng.choice(WORDS) + rng.choice(WORDS) + str(rng.randint(1, 99))


def _sas(rng: random.Random) -> str:
    sig = _b64(rng.randbytes(32)).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    fields = (
        f"sv=20{rng.randint(19, 24)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}&ss=bfqt&srt=sco"
        f"&sp={rng.choice(['r', 'rl', 'rwdlacupx'])}&se=2026-0{rng.randint(1, 9)}-01T00:00:00Z&spr=https&sig={sig}"
    )
    account, container = f"{rng.choice(WORDS)}{rng.randint(1, 99)}", rng.choice(WORDS)
    return rng.choice(
        [
            f"https://{account}.blob.core.windows.net/{container}/report.csv?{fields}",
            f"?{fields}",
            f"BlobEndpoint=https://{account}.blob.core.windows.net/;SharedAccessSignature={fields}",
        ]
    )


_NEW_TOKENS = {  # shape -> (vendor, env name, generator)
    "vault_token": (
        "Vault",
        "VAULT_TOKEN",
        lambda r: r.choice(["hvs.", "hvb.", "hvs.CAESI"]) + _s(r, ALNUM + "_-", r.randint(24, 90)),
    ),
    "gcp_oauth_token": ("Google", "GOOGLE_OAUTH_ACCESS_TOKEN", lambda r: "ya29." + _s(r, B64URL, r.randint(60, 160))),
    "mailchimp_key": ("Mailchimp", "MAILCHIMP_API_KEY", lambda r: f"{_s(r, HEX, 32)}-us{r.randint(1, 21)}"),
}
DATADOG_TEMPLATES = {
    "env_api": "DD_API_KEY={a}",
    "env_app": "DD_APP_KEY={b}",
    "export_app": "export DD_APPLICATION_KEY={b}",
    "header": "DD-API-KEY: {a}",
    "header_app": "DD-APPLICATION-KEY: {b}",
    "prose": "datadog api key: {a}",
    "prose_app": "Datadog app key is {b}",
    "yaml": "datadog:\n  api_key: {a}\n  site: datadoghq.eu",
    "json": '{{"datadog_api_key": "{a}"}}',
    "agent": "DOCKER_CONTENT_TRUST=1 DD_API_KEY={a} bash -c install_script.sh",
}
SEED_TEMPLATES = {
    "bare": "{s}",
    "labelled": "seed: {s}",
    "metamask": "My MetaMask recovery phrase: {s}",
    "numbered": "{numbered}",
    "lines": "{lines}",
    "commas": "{commas}",
    "ledger": "Ledger backup — {s}",
    "french": "Ma phrase de récupération : {s}",
    "fence": "```\n{s}\n```",
    "note": "wallet words (keep safe!)\n{lines}",
}
COMMAND_TEMPLATES = {
    "sshpass_quoted": "sshpass -p '{p}' ssh {u}@build.example.com",
    "sshpass_bare": "sshpass -p {a} scp dump.sql {u}@10.0.0.5:/tmp",
    "sshpass_double": 'sshpass -p "{p}" rsync -av ./site {u}@web:/srv',
    "mysql": "mysql -u {u} -p{a} prod",
    "mysql_quoted": "mysql -h db -u root -p'{p}' app < schema.sql",
    "mysqldump": "mysqldump -u root -p{a} --all-databases > all.sql",
    "pgpassword": "PGPASSWORD={a} psql -h db -U {u} app",
    "pgpassword_quoted": "PGPASSWORD='{p}' pg_dump -h db app > app.sql",
    "mysql_pwd": "MYSQL_PWD={a} mysql -u {u} -e 'show databases'",
    "redis": "redis-cli -h cache.internal -a {a} ping",
    "curl": "curl -u {u}:{a} https://api.example.com/v1/status",
    "sentence": "to get in run `sshpass -p '{p}' ssh pi@raspberry`",
}
LOGIN_TEMPLATES = {
    "bank": "login for the bank: {p}",
    "router": "router login: {p}",
    "email": "email login for {u}@example.com is {p}",
    "creds": "creds for the NAS: {p}",
    "sign_in": "sign-in for the school portal: {p}",
    "credentials": "credentials for the VPN: {p}",
}


def _strong_password(rng: random.Random) -> str:
    return (
        rng.choice(WORDS)
        + rng.choice(string.digits)
        + rng.choice(string.ascii_uppercase)
        + _s(rng, ALNUM, 2)
        + rng.choice("!#%?*")
        + str(rng.randint(1, 99))
    )


def _pem_odd(rng: random.Random) -> str:
    label = rng.choice(["rsa private key", "RSA Private Key", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "ec private key"])
    if rng.random() < 0.5:
        label = label.replace(" ", "  ")
    dash = rng.choice(["-----", "----", "---"])
    pad = rng.choice(["", " "])
    begin = rng.choice(["BEGIN", "begin", "Begin"])
    head = rng.choice(["MIIEpAIBAAKCAQEA", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "b3BlbnNzaC1rZXktdjEAAAAA", "MHcCAQEEI"])
    return f"{dash}{pad}{begin} {label}{pad}{dash}\n{_pem_lines(rng, head, rng.randint(4, 12))}\n{dash}{pad}END {label}{pad}{dash}"


def _pem_headless(rng: random.Random) -> str:
    head = rng.choice(
        [
            "MIIEpAIBAAKCAQEA",
            "MIIEowIBAAKCAQEA",
            "MIIJKAIBAAKCAgEA",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
            "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg",
            "MC4CAQAwBQYDK2VwBCIEI",
            "MHcCAQEEI",
            "b3BlbnNzaC1rZXktdjEAAAAA",
            "MIIFHzBJBgkqhkiG9w0BBQ0wPDAbBgkqhkiG9w0BBQww",
        ]
    )
    return (
        _pem_lines(rng, head, rng.randint(3, 12)) if rng.random() < 0.6 else head + _s(rng, B64, rng.randint(60, 400))
    )


BLOB_PLACES = {
    "bare": "{s}",
    "intro": "the key from the old server:\n{s}",
    "fence": "```\n{s}\n```",
    "yaml": "key: |\n  {s_one}",
    "german": "Schlüssel:\n{s}",
}


def _seed_case(rng: random.Random, template: str) -> str:
    words = _BIP39.to_mnemonic(rng.randbytes(rng.choice([16, 32]))).split()
    return template.format(
        s=" ".join(words),
        lines="\n".join(words),
        commas=", ".join(words),
        numbered=" ".join(f"{i}. {w}" for i, w in enumerate(words, 1)),
    )


def _new_shape_cases_for(shape: str, rng: random.Random, n: int) -> list[Case]:
    if shape in _NEW_TOKENS:
        vendor, env, gen = _NEW_TOKENS[shape]
        return _cases(shape, TOKEN_CONTEXTS, lambda r, t: _fill(t, gen(r), vendor, env), rng, n)
    if shape == "azure_sas_token":
        return _cases(shape, CONN_CONTEXTS, lambda r, t: _fill(t, _sas(r), "Azure", "AZURE_STORAGE_SAS_URL"), rng, n)
    if shape == "datadog_key":
        return _cases(shape, DATADOG_TEMPLATES, lambda r, t: t.format(a=_s(r, HEX, 32), b=_s(r, HEX, 40)), rng, n)
    if shape == "seed_phrase":
        return _cases(shape, SEED_TEMPLATES, _seed_case, rng, n)
    if shape == "command_line_password":
        return _cases(
            shape,
            COMMAND_TEMPLATES,
            lambda r, t: t.format(p=_cli_password(r), a=_s(r, ALNUM, r.randint(8, 20)), u=r.choice(NAMES)),
            rng,
            n,
        )
    raise KeyError(shape)


NEW_SHAPES = (*_NEW_TOKENS, "azure_sas_token", "datadog_key", "seed_phrase", "command_line_password")
ALL_SHAPES = (*SHAPES, *NEW_SHAPES)


@cache
def new_shape_cases() -> tuple[Case, ...]:
    """The new shapes, plus the old shapes' new variants (label = shape, context names the variant)."""
    rng = random.Random(SEED)
    cases = [case for shape in NEW_SHAPES for case in _new_shape_cases_for(shape, rng, PER_SHAPE)]
    half = PER_SHAPE // 2

    def blob(make: object) -> object:
        return lambda r, t: t.format(s=make(r), s_one=make(r).replace("\n", "\n  "))  # type: ignore[operator]

    cases += _cases("private_key", {f"odd_header_{k}": v for k, v in BLOB_PLACES.items()}, blob(_pem_odd), rng, half)
    cases += _cases(
        "private_key", {f"no_header_{k}": v for k, v in BLOB_PLACES.items()}, blob(_pem_headless), rng, half
    )
    cases += _cases(
        "password_assignment",
        {f"login_{k}": v for k, v in LOGIN_TEMPLATES.items()},
        lambda r, t: t.format(p=_strong_password(r), u=r.choice(NAMES)),
        rng,
        half,
    )
    return tuple(cases)


# --- disguises --------------------------------------------------------------------------------

_LOOKALIKES = {  # Latin letter -> Cyrillic or Greek letters drawn the same
    "a": "а",
    "c": "с",
    "e": "е",
    "i": "і",
    "j": "ј",
    "o": "оο",
    "p": "р",
    "s": "ѕ",
    "x": "х",
    "y": "у",
    "A": "АΑ",
    "B": "ВΒ",
    "C": "С",
    "E": "ЕΕ",
    "H": "НΗ",
    "I": "ІΙ",
    "J": "Ј",
    "K": "КΚ",
    "M": "МΜ",
    "N": "Ν",
    "O": "ОΟ",
    "P": "РΡ",
    "S": "Ѕ",
    "T": "ТΤ",
    "X": "ХΧ",
    "Y": "Υ",
    "Z": "Ζ",
}
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
# Breaks inside a typed password or a seed word change what a person reads; those shapes get the
# character-level disguises only.
_RUN = re.compile(r"\S{6,}")
_NO_BREAKS = frozenset({"password_assignment", "command_line_password", "seed_phrase"})


def _target(text: str) -> tuple[int, int]:
    """The span of the secret: the longest run without white space, preferring one with a digit."""
    runs = [(m.start(), m.end()) for m in _RUN.finditer(text)]
    with_digit = [r for r in runs if any(c.isdigit() for c in text[r[0] : r[1]])] or runs
    return max(with_digit, key=lambda r: r[1] - r[0])


def _insert(text: str, span: tuple[int, int], chars: list[str], rng: random.Random) -> str:
    a, b = span
    at = sorted(rng.sample(range(a + 1, b), min(len(chars), b - a - 1)), reverse=True)
    for pos, ch in zip(at, chars, strict=False):
        text = text[:pos] + ch + text[pos:]
    return text


def _disguise(kind: str, text: str, rng: random.Random) -> str:
    a, b = span = _target(text)
    return _disguised_run(kind, text, span, rng)


def _disguised_run(kind: str, text: str, span: tuple[int, int], rng: random.Random) -> str:
    a, b = span
    run = text[a:b]
    if kind == "zero_width":
        return _insert(text, span, [rng.choice(_ZERO_WIDTH) for _ in range(rng.randint(1, 3))], rng)
    if kind == "soft_hyphen":
        return _insert(text, span, ["\u00ad"] * rng.randint(1, 3), rng)
    if kind == "homoglyph":
        spots = [i for i, c in enumerate(run) if c in _LOOKALIKES]
        chosen = set(rng.sample(spots, min(len(spots), rng.randint(1, 4))))
        run = "".join(rng.choice(_LOOKALIKES[c]) if i in chosen else c for i, c in enumerate(run))
        return text[:a] + run + text[b:]
    if kind == "fullwidth":
        run = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in run)
        return text[:a] + run + text[b:]
    if kind == "line_break":
        return _insert(text, (a + 2, b - 2), ["\n"], rng)
    if kind == "space":
        if rng.random() < 0.5 and b - a <= 72:
            return text[:a] + " ".join(run[i : i + 4] for i in range(0, len(run), 4)) + text[b:]
        return _insert(text, (a + 2, b - 2), [" "], rng)
    raise KeyError(kind)


DISGUISES = ("zero_width", "soft_hyphen", "homoglyph", "fullwidth", "line_break", "space")


# Where the token starts in a disguised run: after its opening quotes or brackets.
_LEAD = re.compile(r"""[\"'`(\[{<]*""")


@cache
def _evasions() -> tuple[tuple[Case, int, str], ...]:
    """Each disguised case, where its token starts, and the token as it was before the disguise."""
    rng = random.Random(SEED + 2)
    cases: list[tuple[Case, int, str]] = []
    for shape in ALL_SHAPES:
        base = _positive_cases_for(shape, rng, 40) if shape in SHAPES else _new_shape_cases_for(shape, rng, 40)
        for kind in DISGUISES:
            if kind in ("line_break", "space") and shape in _NO_BREAKS:
                continue
            for case in rng.sample(base, PER_EVASION):
                a, b = span = _target(case.text)
                lead = _LEAD.match(case.text, a).end()  # type: ignore[union-attr]
                disguised = _disguised_run(kind, case.text, span, rng)
                at = lead if disguised[a:lead] == case.text[a:lead] else a
                cases.append((Case(shape, kind, disguised), at, case.text[at:b]))
    return tuple(cases)


def evasion_cases() -> tuple[Case, ...]:
    """Each shape's secret disguised ``PER_EVASION`` times per disguise (label shape, context disguise)."""
    return tuple(case for case, _, _ in _evasions())


# Issue 21: what people write just before a key. A short word glued onto a split token's cut end hid it.
WORDS_BEFORE_A_KEY = ("key", "my key", "aws key", "token", "bot", "pass", "the", "is", ":")


@cache
def worded_split_cases() -> tuple[tuple[Case, str], ...]:
    """Every spaced or line-broken token of ``evasion_cases`` with each of ``WORDS_BEFORE_A_KEY`` and a
    space put just before it (label shape, context 'disguise|word'), beside the token as typed whole."""
    return tuple(
        (Case(case.label, f"{case.context}|{word}", f"{case.text[:at]}{word} {case.text[at:]}"), token)
        for case, at, token in _evasions()
        if case.context in ("line_break", "space")
        for word in WORDS_BEFORE_A_KEY
    )
