"""The corpus's second part: credentials disguised as a person would still read them, the shapes
issue 13 added, and the hard benign notes that reading text "as a person sees it" must not break.

- ``evasion_cases()``: every shape of tests/credential_corpus.py and of this module, with its secret
  hidden by zero-width characters, soft hyphens, Cyrillic/Greek look-alike letters, full-width
  forms, a line break or spaces inside it (label = shape, context = the disguise);
- ``new_shape_cases()``: Vault, GCP OAuth, Azure SAS, Mailchimp, Datadog, BIP-39 seed phrases,
  command-line passwords, private keys with odd headers or none, passwords named without the word;
- ``hard_negative_cases()``: scripts, emoji sequences, soft hyphens, NBSP, seed words in prose,
  digests with context, safe command lines.
Seeded like the first part, so every run sees the same texts.
"""

from __future__ import annotations

import random
import re
import string
from functools import cache

from mnemonic import Mnemonic

from tests.credential_corpus import (
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
    fields = (f"sv=20{rng.randint(19, 24)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}&ss=bfqt&srt=sco"
              f"&sp={rng.choice(['r', 'rl', 'rwdlacupx'])}&se=2026-0{rng.randint(1, 9)}-01T00:00:00Z&spr=https&sig={sig}")
    account, container = f"{rng.choice(WORDS)}{rng.randint(1, 99)}", rng.choice(WORDS)
    return rng.choice([f"https://{account}.blob.core.windows.net/{container}/report.csv?{fields}",
                       f"?{fields}", f"BlobEndpoint=https://{account}.blob.core.windows.net/;SharedAccessSignature={fields}"])


_NEW_TOKENS = {  # shape -> (vendor, env name, generator)
    "vault_token": ("Vault", "VAULT_TOKEN", lambda r: r.choice(["hvs.", "hvb.", "hvs.CAESI"]) + _s(r, ALNUM + "_-", r.randint(24, 90))),
    "gcp_oauth_token": ("Google", "GOOGLE_OAUTH_ACCESS_TOKEN", lambda r: "ya29." + _s(r, B64URL, r.randint(60, 160))),
    "mailchimp_key": ("Mailchimp", "MAILCHIMP_API_KEY", lambda r: f"{_s(r, HEX, 32)}-us{r.randint(1, 21)}"),
}
DATADOG_TEMPLATES = {
    "env_api": "DD_API_KEY={a}", "env_app": "DD_APP_KEY={b}", "export_app": "export DD_APPLICATION_KEY={b}",
    "header": "DD-API-KEY: {a}", "header_app": "DD-APPLICATION-KEY: {b}", "prose": "datadog api key: {a}",
    "prose_app": "Datadog app key is {b}", "yaml": "datadog:\n  api_key: {a}\n  site: datadoghq.eu",
    "json": "{{\"datadog_api_key\": \"{a}\"}}", "agent": "DOCKER_CONTENT_TRUST=1 DD_API_KEY={a} bash -c install_script.sh",
}
SEED_TEMPLATES = {
    "bare": "{s}", "labelled": "seed: {s}", "metamask": "My MetaMask recovery phrase: {s}", "numbered": "{numbered}",
    "lines": "{lines}", "commas": "{commas}", "ledger": "Ledger backup — {s}", "french": "Ma phrase de récupération : {s}",
    "fence": "```\n{s}\n```", "note": "wallet words (keep safe!)\n{lines}",
}
COMMAND_TEMPLATES = {
    "sshpass_quoted": "sshpass -p '{p}' ssh {u}@build.example.com", "sshpass_bare": "sshpass -p {a} scp dump.sql {u}@10.0.0.5:/tmp",
    "sshpass_double": "sshpass -p \"{p}\" rsync -av ./site {u}@web:/srv", "mysql": "mysql -u {u} -p{a} prod",
    "mysql_quoted": "mysql -h db -u root -p'{p}' app < schema.sql", "mysqldump": "mysqldump -u root -p{a} --all-databases > all.sql",
    "pgpassword": "PGPASSWORD={a} psql -h db -U {u} app", "pgpassword_quoted": "PGPASSWORD='{p}' pg_dump -h db app > app.sql",
    "mysql_pwd": "MYSQL_PWD={a} mysql -u {u} -e 'show databases'", "redis": "redis-cli -h cache.internal -a {a} ping",
    "curl": "curl -u {u}:{a} https://api.example.com/v1/status", "sentence": "to get in run `sshpass -p '{p}' ssh pi@raspberry`",
}
LOGIN_TEMPLATES = {
    "bank": "login for the bank: {p}", "router": "router login: {p}", "email": "email login for {u}@example.com is {p}",
    "creds": "creds for the NAS: {p}", "sign_in": "sign-in for the school portal: {p}", "credentials": "credentials for the VPN: {p}",
}


def _strong_password(rng: random.Random) -> str:
    return rng.choice(WORDS) + rng.choice(string.digits) + rng.choice(string.ascii_uppercase) + _s(rng, ALNUM, 2) + rng.choice("!#%?*") + str(rng.randint(1, 99))


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
    head = rng.choice(["MIIEpAIBAAKCAQEA", "MIIEowIBAAKCAQEA", "MIIJKAIBAAKCAgEA", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
                       "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg", "MC4CAQAwBQYDK2VwBCIEI", "MHcCAQEEI",
                       "b3BlbnNzaC1rZXktdjEAAAAA", "MIIFHzBJBgkqhkiG9w0BBQ0wPDAbBgkqhkiG9w0BBQww"])
    return _pem_lines(rng, head, rng.randint(3, 12)) if rng.random() < 0.6 else head + _s(rng, B64, rng.randint(60, 400))


BLOB_PLACES = {"bare": "{s}", "intro": "the key from the old server:\n{s}", "fence": "```\n{s}\n```",
               "yaml": "key: |\n  {s_one}", "german": "Schlüssel:\n{s}"}


def _seed_case(rng: random.Random, template: str) -> str:
    words = _BIP39.to_mnemonic(rng.randbytes(rng.choice([16, 32]))).split()
    return template.format(s=" ".join(words), lines="\n".join(words), commas=", ".join(words),
                           numbered=" ".join(f"{i}. {w}" for i, w in enumerate(words, 1)))


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
        return _cases(shape, COMMAND_TEMPLATES, lambda r, t: t.format(
            p=_cli_password(r), a=_s(r, ALNUM, r.randint(8, 20)), u=r.choice(NAMES)), rng, n)
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
    cases += _cases("private_key", {f"no_header_{k}": v for k, v in BLOB_PLACES.items()}, blob(_pem_headless), rng, half)
    cases += _cases("password_assignment", {f"login_{k}": v for k, v in LOGIN_TEMPLATES.items()},
                    lambda r, t: t.format(p=_strong_password(r), u=r.choice(NAMES)), rng, half)
    return tuple(cases)


# --- disguises --------------------------------------------------------------------------------

_LOOKALIKES = {  # Latin letter -> Cyrillic or Greek letters drawn the same
    "a": "а", "c": "с", "e": "е", "i": "і", "j": "ј", "o": "оο", "p": "р", "s": "ѕ", "x": "х", "y": "у",
    "A": "АΑ", "B": "ВΒ", "C": "С", "E": "ЕΕ", "H": "НΗ", "I": "ІΙ", "J": "Ј", "K": "КΚ", "M": "МΜ", "N": "Ν",
    "O": "ОΟ", "P": "РΡ", "S": "Ѕ", "T": "ТΤ", "X": "ХΧ", "Y": "Υ", "Z": "Ζ",
}
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
# Breaks inside a typed password or a seed word change what a person reads; those shapes get the
# character-level disguises only.
_RUN = re.compile(r"\S{6,}")
_NO_BREAKS = frozenset({"password_assignment", "command_line_password", "seed_phrase", "basic_auth"})


def _target(text: str) -> tuple[int, int]:
    """The span of the secret: the longest run without white space, preferring one with a digit."""
    runs = [(m.start(), m.end()) for m in _RUN.finditer(text)]
    with_digit = [r for r in runs if any(c.isdigit() for c in text[r[0]:r[1]])] or runs
    return max(with_digit, key=lambda r: r[1] - r[0])


def _insert(text: str, span: tuple[int, int], chars: list[str], rng: random.Random) -> str:
    a, b = span
    at = sorted(rng.sample(range(a + 1, b), min(len(chars), b - a - 1)), reverse=True)
    for pos, ch in zip(at, chars, strict=False):
        text = text[:pos] + ch + text[pos:]
    return text


def _disguise(kind: str, text: str, rng: random.Random) -> str:
    a, b = span = _target(text)
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
            return text[:a] + " ".join(run[i:i + 4] for i in range(0, len(run), 4)) + text[b:]
        return _insert(text, (a + 2, b - 2), [" "], rng)
    raise KeyError(kind)


DISGUISES = ("zero_width", "soft_hyphen", "homoglyph", "fullwidth", "line_break", "space")


@cache
def evasion_cases() -> tuple[Case, ...]:
    """Each shape's secret disguised ``PER_EVASION`` times per disguise (label shape, context disguise)."""
    rng = random.Random(SEED + 2)
    cases: list[Case] = []
    for shape in ALL_SHAPES:
        base = (_positive_cases_for(shape, rng, 40) if shape in SHAPES else _new_shape_cases_for(shape, rng, 40))
        for kind in DISGUISES:
            if kind in ("line_break", "space") and shape in _NO_BREAKS:
                continue
            for case in rng.sample(base, PER_EVASION):
                cases.append(Case(shape, kind, _disguise(kind, case.text, rng)))
    return tuple(cases)



# --- hard benign notes ------------------------------------------------------------------------

def _neg_scripts(rng: random.Random) -> str:
    return rng.choice([
        "Напомни купить молоко и хлеб завтра утром.", "Встреча с Иваном в 15:00 у метро «Арбатская».",
        "Το ραντεβού είναι την Τρίτη στις 10 π.μ.", "Ο κωδικός του γραφείου είναι στο συρτάρι.",
        "موعد الطبيب يوم الثلاثاء الساعة العاشرة", "أفضل القهوة بدون سكر",
        "می‌خواهم فردا به کتابخانه بروم", "کتاب‌ها را روی میز گذاشتم", "خانه‌ی ما نزدیک پارک است",
        "मैं कल दिल्ली जा रहा हूँ", "क्‍ष और त्‌र अलग लिखे जाते हैं", "मेरा पसंदीदा रंग नीला है",
        "הפגישה נדחתה ליום רביעי", "אני אוהב קפה שחור", "ฉันชอบกินข้าวผัดกุ้ง", "นัดประชุมวันจันทร์เวลาเก้าโมง",
        "会議は明日の１０時から（本社３階）です。", "好きな飲み物：緑茶、コーヒー！", "我喜欢喝绿茶，不加糖。",
        "周末去北京，住在朋友家（朝阳区）。", "회의는 금요일 오후 세 시입니다.", "Пароль хранится в менеджере паролей.",
        "Ключ от дачи у соседа.", "Кіт на ім'я Барсик любить рибу.", "Έλα αύριο στις 8.",
    ]) + rng.choice(["", " ", f" ({rng.randint(1, 28)})"])


def _neg_emoji(rng: random.Random) -> str:
    return rng.choice([
        "👩‍💻 works from home on Fridays", "family: 👨‍👩‍👧‍👦", "👍🏽 prefers thumbs up replies",
        "🏳️‍🌈 pride parade on Saturday", "🧑🏿‍🚀 space museum trip", "❤️‍🔥 anniversary dinner",
        "🇯🇵🇩🇪 trip in June", "1️⃣ coffee 2️⃣ email 3️⃣ gym", "👋🏻👋🏼👋🏽👋🏾👋🏿", "🐕‍🦺 guide dog named Rex",
        "🧔🏻‍♂️ beard trim monthly", "☕️ no sugar ✌️", "🏃‍♀️ 5k on Sunday", "🫶🏾 thanks!",
    ])


def _neg_soft_hyphens(rng: random.Random) -> str:
    word = rng.choice(["Donau\u00addampf\u00adschiff\u00adfahrts\u00adgesellschaft", "Rind\u00adfleisch\u00adetikettierungs\u00adgesetz",
                       "Kranken\u00adversicherungs\u00adkarte", "Steuer\u00ader\u00adklärung", "Haft\u00adpflicht\u00adversicherung",
                       "Lebens\u00admittel\u00adunverträglichkeit", "Fahr\u00adrad\u00adschloss", "Kinder\u00adgarten\u00adplatz"])
    return rng.choice([f"Die {word} ist fällig.", f"{word} bis Freitag", f"Termin wegen {word}: Montag",
                       f"Notiz: {word} erneuern ({rng.randint(2025, 2030)})"]).encode().decode("unicode_escape").encode("latin-1").decode("utf-8")


def _neg_nbsp(rng: random.Random) -> str:
    n = rng.randint(1, 999)
    return rng.choice([f"weighs {n}\u00a0kg", f"fridge at {n % 9}\u00a0°C", f"run {n}\u00a0km a week", f"discount {n % 90}\u00a0%",
                       f"{n}\u00a0€ budget", f"Le train part à 8\u00a0h\u00a0{n % 60:02d}", f"taille 1,{n % 99}\u00a0m",
                       f"drink {n}\u00a0ml water", f"meeting lasts {n % 90}\u202fmin", f"Prix\u00a0: {n}\u00a0€"]
                      ).encode().decode("unicode_escape").encode("latin-1").decode("utf-8")


_PROSE_SEED_WORDS = [w for w in _BIP39.wordlist if len(w) >= 4]


def _neg_seed_prose(rng: random.Random) -> str:
    def w() -> str:
        return rng.choice(_PROSE_SEED_WORDS)
    return rng.choice([
        f"The {w()} and the {w()} went to the {w()} with a {w()} and a {w()}, then to the {w()} near the {w()}.",
        f"Shopping: {w()}, {w()}, {w()} and {w()}; also a {w()} for the {w()}.",
        f"I {w()} the {w()} because it was {w()} and {w()} in the {w()} of the {w()} by the {w()}.",
        f"Trip ideas: visit the {w()} in the morning, the {w()} after lunch, a {w()} at night, then the {w()}.",
        f"My favourite words are {w()} {w()} and {w()} but not {w()} {w()} or {w()}.",
        "Abandon the ability to absorb abstract absurd abuse? Access the accident, then account for it.",
        "seed the lawn in spring, water the garden and the orchard every morning",
    ])


def _neg_hex_context(rng: random.Random) -> str:
    return rng.choice([
        f"sha256 of the backup: {_s(rng, HEX, 64)}", f"md5sum of the ISO is {_s(rng, HEX, 32)}",
        f"commit {_s(rng, HEX, 40)} fixed the login bug", f"request id {_s(rng, HEX, 32)}",
        f"Docker image digest sha256:{_s(rng, HEX, 64)}", f"git tag v1.{rng.randint(0, 20)} at {_s(rng, HEX, 12)}",
        f"trace_id={_s(rng, HEX, 32)} span_id={_s(rng, HEX, 16)}", f"ETag: \"{_s(rng, HEX, 32)}\"",
        f"GPG fingerprint {' '.join(_s(rng, HEX.upper(), 4) for _ in range(10))}", f"order 0x{_s(rng, HEX, 16)} shipped",
    ])


def _neg_safe_commands(rng: random.Random) -> str:
    u = rng.choice(NAMES)
    return rng.choice([
        "mysql -u root -p", f"mysql -u {u} -p -h db.internal app", "mysql -p -u root", f"sshpass -f ~/.ssh/{u}.pw ssh {u}@box",
        "sshpass -e ssh pi@raspberry", "export PGPASSWORD=$(pass show db)", "PGPASSWORD=\"$DB_PASS\" psql -h db app",
        "psql -h db -U app -W", "mysql --defaults-extra-file=~/.my.cnf app", "redis-cli -a \"$REDIS_PASSWORD\" ping",
        "curl -u \"$USER:$TOKEN\" https://api.example.com", f"curl -u {u} https://intranet.example.com (it prompts)",
        "mysqldump -u root -p --all-databases > all.sql", "PGPASSWORD=$(cat /run/secrets/pg) pg_dump app",
        "sshpass -p \"$SSHPASS\" ssh host", "MYSQL_PWD=$(vault kv get -field=pw db) mysql", "ssh -p 2222 deploy@host",
        f"scp -P 2222 backup.tgz {u}@host:/tmp", "mysql -P 3306 -h db -u app -p", "redis-cli -h cache -p 6380 ping",
    ])


HARD_NEGATIVES = {
    "scripts_natural": _neg_scripts, "emoji_sequences": _neg_emoji, "soft_hyphen_german": _neg_soft_hyphens,
    "nbsp_units": _neg_nbsp, "seed_word_prose": _neg_seed_prose, "hex_with_context": _neg_hex_context,
    "safe_command_lines": _neg_safe_commands,
}


@cache
def hard_negative_cases() -> tuple[Case, ...]:
    rng = random.Random(SEED + 3)
    return tuple(Case(name, name, make(rng)) for name, make in HARD_NEGATIVES.items() for _ in range(PER_CATEGORY))


# --- inputs built to be slow: every rule and every view must stay linear on them ----------------

def _noise(seed: int, alphabet: str, n: int = 2000) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


HARD_INPUTS = {  # 2000 characters each
    "zero_width_run": "\u200b" * 2000, "soft_hyphens": "a\u00ad" * 1000, "mixed_script_run": "аa" * 1000,
    "full_width_run": "ａ" * 1000, "spaced_letters": "a " * 1000, "spaced_tokens": "ab1 " * 500,
    "line_tokens": "Ab1\n" * 500, "chunks": "AB12 " * 400, "seed_words": "abandon " * 250,
    "sshpass": "sshpass -p " * 181, "mysql_p": "mysql -p " * 222, "sig_fields": "sv=1&sig=" * 222,
    "pem_bodies": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 62, "urls_split": "https://a\n" * 200,
    "noise": _noise(1, "аaеe ghp_\u200b\n0123456789ABCDEF"),
}


