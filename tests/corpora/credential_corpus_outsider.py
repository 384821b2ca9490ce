"""Issue 37 item 19: the categories an outsider's corpus found missed, and benign notes right beside them.

- ``outsider_cases()``: Heroku API keys (a UUID beside the word heroku, also full-width, with zero-width
  characters and line-broken), a username and password written as a pair with no keyword ("my bank login
  is maria / Tr0ub4dor&3"), BIP-39 seed phrases (12 to 24 list words, with or without a valid checksum),
  Vault tokens in the legacy ``s.``/``b.`` forms, generic API keys after a key word, command-line
  passwords (``-p…``, ``--password=``, ``PGPASSWORD=``) and Hugging Face tokens with look-alike letters;
- ``outsider_negative_cases()``: notes that sit beside those rules and hold no secret (Heroku without a
  key, UUIDs of orders, '-p' in a sentence, 'password' as a word, common words in a row, 'key' in
  ordinary senses, a name and a word after a slash).

The formats are those of public rule sets: gitleaks' heroku-api-key (a UUID after 'heroku') and
vault-service-token (``s.`` and 24 base62 characters), detect-secrets' HashiCorp Vault plugin
(``[brs].`` and 24 or more), Heroku's CLI docs (``heroku auth:token``), Hugging Face's ``hf_`` and
34 letters. Every value is random characters from a seeded generator, never a real secret.
"""

from __future__ import annotations

import random
import string
import uuid
from functools import cache

from mnemonic import Mnemonic

from tests.corpora.credential_corpus import ALNUM, B64URL, HEX, NAMES, Case, _s

SEED = 20_261_204
PER_TEMPLATE = 12
_BIP39 = Mnemonic("english")
_FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in string.ascii_letters + string.digits + "_-:="}
# Look-alike letters of other scripts a person reads as Latin (Unicode's confusables): Cyrillic, Greek,
# Armenian, Cherokee, and Latin letters without a decomposition (small capitals, script g, alpha).
_HOMOGLYPHS = {
    "a": "аɑ",
    "c": "сϲ",
    "e": "е",
    "o": "оο",
    "p": "рρ",
    "x": "х",
    "y": "уʏ",
    "h": "һհ",
    "f": "ꬵ",
    "i": "і",
    "g": "ɡ",
    "u": "ᴜ",
    "v": "ᴠν",
    "z": "ᴢ",
    "A": "АΑᎪ",
    "B": "ВΒ",
    "C": "СϹ",
    "E": "ЕΕ",
    "H": "НΗ",
    "K": "КΚ",
    "M": "МΜ",
    "O": "ОΟ",
    "P": "РΡ",
    "T": "ТΤ",
    "X": "ХΧ",
}


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _full_width(text: str) -> str:
    return "".join(_FULL_WIDTH.get(c, c) for c in text)


def _zero_width(rng: random.Random, text: str) -> str:
    at = rng.randint(1, len(text) - 1)
    return text[:at] + rng.choice("\u200b\u200c\u200d\u2060\ufeff") + text[at:]


def _broken(rng: random.Random, text: str) -> str:
    at = rng.randint(2, len(text) - 2)
    return text[:at] + rng.choice(["\n", " \n", "\r\n"]) + text[at:]


# --- Heroku: a UUID is the key only beside the word --------------------------------------------


def _heroku(rng: random.Random, form: str) -> str:
    u = _uuid(rng)
    u = u.upper() if rng.random() < 0.3 else u
    word = rng.choice(["heroku", "Heroku", "HEROKU"])
    words = {
        "plain": word,
        "full_width": _full_width(word),
        "zero_width": _zero_width(rng, word),
        "word_line_broken": _broken(rng, word),
    }.get(form, word)
    key = {"uuid_zero_width": _zero_width(rng, u), "line_broken": _broken(rng, u)}.get(form, u)
    return rng.choice(
        [
            f"{words} {key}",
            f"my {words}: {key}",
            f"{words} token for the deploy script is {key}",
            f"{key} (my {words} API key)",
            f"{key} is the {words} key",
            f"{words} login token {key}",
            f"machine api.{words.lower()}.com\n  login maria@example.com\n  password {key}",
            f"{words} auth:token -> {key}",
            f"{words.upper()}_API_KEY={key}",
            f"{words} — {key}",
            f"new {words} key after the rotation: {key}",
            f"{words} CLI token\n{key}",
        ]
    )


# --- a username and a password written as a pair, no keyword --------------------------------------


def _strong_password(rng: random.Random) -> str:
    word = rng.choice(
        ["Tr0ub4dor", "Maria", "Summer", "Kitten", "Dragon", "Blue", "Coffee", "Orange", "Winter", "Ocean"]
    )
    leet = word + str(rng.randint(10, 99)) + rng.choice("!&#$%*?@")
    rand = _s(rng, string.ascii_letters, 5) + str(rng.randint(100, 999)) + rng.choice("!&#$%*?@") + _s(rng, ALNUM, 3)
    return rng.choice([leet, rand, "Tr0ub4dor&3", rand[::-1]])


def _pair(rng: random.Random) -> str:
    user = rng.choice(
        [rng.choice(NAMES), rng.choice(NAMES) + str(rng.randint(1, 99)), f"{rng.choice(NAMES)}.k@example.com"]
    )
    p = _strong_password(rng)
    place = rng.choice(
        [
            "bank",
            "Chase",
            "netflix",
            "Netflix",
            "gmail",
            "paypal",
            "amazon",
            "router",
            "wifi portal",
            "school portal",
            "insurance site",
            "ebay",
            "the gym app",
            "Steam",
            "PSN",
        ]
    )
    return rng.choice(
        [
            f"my {place} login is {user} / {p}",
            f"{place}: {user} / {p}",
            f"{place} {user} {p}",
            f"{place} — username {user}, {p}",
            f"{place} account {user} / {p}",
            f"{place}: {user}:{p}",
            f"{place} user {user} pass {p}",
            f"the login for my {place} is {user} and {p}",
            f"{place}\n{user}\n{p}",
            f"{place} | {user} | {p}",
            f"{user} / {p} for the {place}",
            f"Note to self — {place}: {user} / {p}",
        ]
    )


# --- BIP-39 seed phrases --------------------------------------------------------------------------


def _seed(rng: random.Random, form: str) -> str:
    n = rng.choice([12, 15, 18, 21, 24])
    if form == "valid":
        words = _BIP39.to_mnemonic(bytes(rng.getrandbits(8) for _ in range(n * 4 // 3))).split()
    else:  # any list words: the checksum is not what a person checks
        words = [rng.choice(_BIP39.wordlist) for _ in range(n)]
    return rng.choice(
        [
            " ".join(words),
            "\n".join(words),
            "-".join(words),
            " ".join(words).upper(),
            " ".join(f"{i}. {w}" for i, w in enumerate(words, 1)),
            "  ".join(words),
            "\n".join(f"{i}) {w}" for i, w in enumerate(words, 1)),
            " ".join(words[:6]) + "\n" + " ".join(words[6:]),
        ]
    )


# --- HashiCorp Vault's legacy token forms -----------------------------------------------------------


def _vault(rng: random.Random) -> str:
    service = "s." + _s(rng, ALNUM, 24)
    batch = "b.AAAAAQ" + _s(rng, B64URL, rng.randint(80, 140))
    t = rng.choice([service, service, batch])
    return rng.choice(
        [
            t,
            f"vault token {t}",
            f"vault login {t}",
            f"VAULT_TOKEN={t} vault kv get secret/app",
            f"root token: {t}",
            f"X-Vault-Token: {t}",
            f"export VAULT_TOKEN={t}",
            f"token {t}",
            f"{t} (vault, expires Friday)",
            f"the unseal gave me {t}",
        ]
    )


# --- generic API keys after a key word ---------------------------------------------------------------


def _generic(rng: random.Random) -> str:
    v = rng.choice([_s(rng, HEX, 32), _s(rng, ALNUM, rng.randint(24, 40)), _s(rng, HEX, 40), _s(rng, B64URL, 32)])
    svc = rng.choice(["weather", "openweather", "maps", "newsapi", "mapbox", "sms", "geocoding", "CRM", "analytics"])
    return rng.choice(
        [
            f"key: {v}",
            f"API key {v}",
            f"{svc} key {v}",
            f"{svc} api key (prod) = {v}",
            f"access token {v}",
            f"the key for the {svc} api: {v}",
            f"my {svc} key is {v}",
            f"client secret {v}",
            f"{svc} token {v}",
            f"X-API-Key: {v}",
            f"apikey {v}",
            f"key={v}",
        ]
    )


# --- passwords given on a command line ---------------------------------------------------------------


def _command(rng: random.Random) -> str:
    p = _strong_password(rng).replace("$", "#").replace("&", "#")  # as a person types it unquoted in a shell
    u = rng.choice(NAMES)
    return rng.choice(
        [
            f"mongo -u {u} -p {p} --authenticationDatabase admin",
            f"mongosh -u {u} -p '{p}' db.example.com",
            f"docker login -u {u} -p {p} registry.example.com",
            f"sqlcmd -S db -U sa -P {p}",
            f"az login -u {u}@example.com -p {p}",
            f"mysql -u{u} -p{p} app",
            f"mytool --password='{p} {p[:3]}'",
            f"pg_dump --dbname=app --password={p}",
            f"PGPASSWORD={p} pg_dump -h db app",
            f"PGPASSWORD='{p}'",
            f"smbclient //srv/share -U {u}%{p}",
            f"openssl pkcs12 -passin pass:{p} -in a.p12",
            f"keytool -list -keystore k.jks -storepass {p}",
            f"helm registry login r.example.com -u {u} -p {p}",
            f"wget --user={u} --password={p} https://files.example.com/a.zip",
            f"cf login -u {u} -p {p}",
            f"oc login -u {u} -p {p} https://api.example.com:6443",
            f"ldapsearch -D cn=admin -w {p} -b dc=example",
        ]
    )


# --- Hugging Face tokens with look-alike letters -------------------------------------------------------


def _hf(rng: random.Random) -> str:
    token = list("hf_" + _s(rng, string.ascii_letters, 34))
    spots = [i for i, c in enumerate(token) if c in _HOMOGLYPHS]
    for i in rng.sample(spots, min(len(spots), rng.randint(1, 4))):
        token[i] = rng.choice(_HOMOGLYPHS[token[i]])
    t = "".join(token)
    return rng.choice(
        [
            t,
            f"HF token: {t}",
            f"huggingface-cli login --token {t}",
            f"my hugging face token is {t}",
            f"HF_TOKEN={t}",
            f"token {t} (read only)",
        ]
    )


def _cases(rng: random.Random) -> list[Case]:
    out: list[Case] = []
    for form in ("plain", "full_width", "zero_width", "word_line_broken", "uuid_zero_width", "line_broken"):
        out += [Case("heroku_api_key", f"heroku_{form}", _heroku(rng, form)) for _ in range(PER_TEMPLATE * 4)]
    out += [Case("username_password", "note_pair", _pair(rng)) for _ in range(PER_TEMPLATE * 12)]
    for form in ("valid", "any_list_words"):
        out += [Case("seed_phrase", f"seed_{form}", _seed(rng, form)) for _ in range(PER_TEMPLATE * 8)]
    out += [Case("vault_token", "vault_legacy", _vault(rng)) for _ in range(PER_TEMPLATE * 10)]
    out += [Case("secret_assignment", "generic_api_key", _generic(rng)) for _ in range(PER_TEMPLATE * 12)]
    out += [Case("command_line_password", "command_line", _command(rng)) for _ in range(PER_TEMPLATE * 18)]
    out += [Case("huggingface_token", "hf_homoglyph", _hf(rng)) for _ in range(PER_TEMPLATE * 10)]
    return out


@cache
def outsider_cases() -> tuple[Case, ...]:
    """Credentials in the categories item 19 names; ``label`` is the shape, ``context`` the category."""
    return tuple(_cases(random.Random(SEED)))


# --- benign notes beside those rules -----------------------------------------------------------------


def _neg_heroku(rng: random.Random) -> str:
    app = f"{rng.choice(['shop', 'blog', 'api'])}-{rng.choice(['red', 'blue'])}-{rng.randint(1000, 9999)}"
    return rng.choice(
        [
            "Deployed the blog to Heroku today, finally.",
            f"Heroku app {app} sleeps after 30 minutes.",
            "Remember to cancel the Heroku hobby plan before March.",
            "heroku logs --tail shows the crash",
            "Heroku keys live in the password manager, not here.",
            "heroku auth:token prints the API key",
            f"Heroku app id: {_uuid(rng)}",
            f"Heroku release {_uuid(rng)} rolled back",
            f"heroku dyno id {_uuid(rng)}",
            f"Moved from Heroku to Fly; order {_uuid(rng)} for the new domain",
            "Set HEROKU_API_KEY in the CI settings.",
            f"curl https://api.heroku.com/apps/{_uuid(rng)}/builds",
            f"Heroku build {_uuid(rng)} failed on npm install",
        ]
    )


def _neg_uuid(rng: random.Random) -> str:
    u = _uuid(rng)
    return rng.choice(
        [
            f"Order {u} arrives Tuesday.",
            f"order number {u}",
            f"Amazon order {u.upper()} was refunded",
            f"invoice {u} paid",
            f"ticket {u} about the broken heater",
            f"booking reference {u}",
            f"The tracking id is {u}",
            f"device {u} is the old laptop",
            f"{u} — the photo album's share id",
        ]
    )


def _neg_dash_p(rng: random.Random) -> str:
    return rng.choice(
        [
            "mkdir -p ~/notes/2025 then copy the files",
            "use cp -p to keep the timestamps",
            "ssh -p 2222 pi@home",
            "the -p flag makes mkdir quiet",
            "grep -p is not a thing on Linux",
            "python -p prints nothing useful",
            "Prices went up 5%-p.a. this year",
            "Call Anna re: the e-p-i-c trip",
            "Note: -p means port for ssh, password for mysql",
            "mysql -u root -p (it prompts)",
            "docker run -p 8080:80 nginx",
            "redis-cli -p 6380 ping",
            "sqlcmd -S db -U sa (no -P: it prompts)",
            "mongo -u admin -p (then type it)",
            "tar -cpzf backup.tgz ~/docs",
        ]
    )


def _neg_password_word(rng: random.Random) -> str:
    return rng.choice(
        [
            "password",
            "Password?",
            "Reset the bank password tomorrow.",
            "The wifi password is on the fridge.",
            "Forgot my password again, used the reset link.",
            "password manager: Bitwarden",
            "Use --password-stdin, never --password on the command line.",
            "PGPASSWORD is read by psql",
            "Ask Maria for the password, she has it.",
            "password: (in 1Password)",
            "my login is maria (password in the vault)",
            "Bank login: maria / password in my head",
            "Gym login is my email / usual one",
        ]
    )


def _neg_common_words(rng: random.Random) -> str:
    return rng.choice(
        [
            "I like to walk the dog and read a book in the morning before work.",
            "milk eggs bread butter cheese apples bananas coffee tea rice pasta tomatoes onions",
            "Milk, bread, butter, cheese, coffee, sugar, salt, pepper, oil, rice, beans, lemon",
            "The woods are lovely, dark and deep, but I have promises to keep, and miles to go before I sleep.",
            "Shall I compare thee to a summer's day? Thou art more lovely and more temperate.",
            "Plan: gym, work, lunch, call mum, pay rent, buy milk, clean the kitchen, read, sleep",
            "apple banana orange grape lemon cherry melon peach mango kiwi",
            "Colours I like: blue green red orange purple yellow black white pink brown",
            "Weekend: hike the hill, picnic by the lake, dinner with friends, movie night, sleep in",
            "Packing: shirt, jacket, shoe, sock, hat, glove, towel, soap, brush, charger, ticket, passport",
            "Our garden has a tree, a pond, a bench, a fence and a little house for the birds.",
            "Today: coffee, email, meeting, lunch, review, code, test, deploy, dinner, gym, sleep.",
        ]
    )


def _neg_key_word(rng: random.Random) -> str:
    return rng.choice(
        [
            "House key is under the blue pot.",
            "The key to good bread is time.",
            "Song is in the key of F sharp minor.",
            f"primary key: {_s(rng, HEX, 32)}",
            f"S3 object key 2025/01/{rng.randint(10, 28)}/photos/beach.jpg",
            f"idempotency key {_uuid(rng)}",
            f"GPG key fingerprint {_s(rng, HEX.upper(), 40)}",
            "key takeaways: sleep more, walk daily",
            f"cache key {_uuid(rng)}",
            "API key rotation is due in May",
            f"public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_s(rng, ALNUM, 43)} maria@laptop",
            "access token expires after 3600 seconds",
            "Key: Value pairs go in the YAML",
            f"license key sent to {rng.choice(NAMES)}",
        ]
    )


def _neg_slash(rng: random.Random) -> str:
    return rng.choice(
        [
            "Chase: Monday / Thursday visits",
            "bank: maria / joint account",
            "split 50/50 with Sam",
            "router: living room / upstairs",
            "Netflix / Hulu / Disney+ cancel two",
            "gmail maria.k@example.com forwards to work",
            "login: maria (work laptop)",
            "school portal maria / Year 5",
            "Steam: maria / library of 200 games",
            "s.t. means such that",
            "e.g. the U.S. office; i.e. NYC",
            "PSN: maria / PS5 in the den",
        ]
    )


NEGATIVES = {
    "heroku_without_key": _neg_heroku,
    "uuid_order_numbers": _neg_uuid,
    "dash_p_sentences": _neg_dash_p,
    "password_word_no_value": _neg_password_word,
    "common_word_notes": _neg_common_words,
    "key_word_no_secret": _neg_key_word,
    "name_slash_word": _neg_slash,
}


@cache
def outsider_negative_cases() -> tuple[Case, ...]:
    rng = random.Random(SEED + 1)
    return tuple(Case(name, name, make(rng)) for name, make in NEGATIVES.items() for _ in range(120))
