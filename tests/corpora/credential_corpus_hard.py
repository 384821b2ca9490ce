"""Hard benign notes for the corpus's second part: text that reading "as a person sees it" must not
break (scripts, emoji sequences, soft hyphens, NBSP, seed words in prose, digests with context, safe
command lines), and inputs built to make every rule and view work hard (they must stay linear)."""

from __future__ import annotations

import random
from functools import cache

from mnemonic import Mnemonic

from tests.corpora.credential_corpus import HEX, NAMES, Case, _s

SEED = 20_261_201 + 3
PER_CATEGORY = 300
_BIP39 = Mnemonic("english")

# --- hard benign notes ------------------------------------------------------------------------


def _neg_scripts(rng: random.Random) -> str:
    return rng.choice(
        [
            "Напомни купить молоко и хлеб завтра утром.",
            "Встреча с Иваном в 15:00 у метро «Арбатская».",
            "Το ραντεβού είναι την Τρίτη στις 10 π.μ.",
            "Ο κωδικός του γραφείου είναι στο συρτάρι.",
            "موعد الطبيب يوم الثلاثاء الساعة العاشرة",
            "أفضل القهوة بدون سكر",
            "می‌خواهم فردا به کتابخانه بروم",
            "کتاب‌ها را روی میز گذاشتم",
            "خانه‌ی ما نزدیک پارک است",
            "मैं कल दिल्ली जा रहा हूँ",
            "क्‍ष और त्‌र अलग लिखे जाते हैं",
            "मेरा पसंदीदा रंग नीला है",
            "הפגישה נדחתה ליום רביעי",
            "אני אוהב קפה שחור",
            "ฉันชอบกินข้าวผัดกุ้ง",
            "นัดประชุมวันจันทร์เวลาเก้าโมง",
            "会議は明日の１０時から（本社３階）です。",
            "好きな飲み物：緑茶、コーヒー！",
            "我喜欢喝绿茶，不加糖。",
            "周末去北京，住在朋友家（朝阳区）。",
            "회의는 금요일 오후 세 시입니다.",
            "Пароль хранится в менеджере паролей.",
            "Ключ от дачи у соседа.",
            "Кіт на ім'я Барсик любить рибу.",
            "Έλα αύριο στις 8.",
        ]
    ) + rng.choice(["", " ", f" ({rng.randint(1, 28)})"])


def _neg_emoji(rng: random.Random) -> str:
    return rng.choice(
        [
            "👩‍💻 works from home on Fridays",
            "family: 👨‍👩‍👧‍👦",
            "👍🏽 prefers thumbs up replies",
            "🏳️‍🌈 pride parade on Saturday",
            "🧑🏿‍🚀 space museum trip",
            "❤️‍🔥 anniversary dinner",
            "🇯🇵🇩🇪 trip in June",
            "1️⃣ coffee 2️⃣ email 3️⃣ gym",
            "👋🏻👋🏼👋🏽👋🏾👋🏿",
            "🐕‍🦺 guide dog named Rex",
            "🧔🏻‍♂️ beard trim monthly",
            "☕️ no sugar ✌️",
            "🏃‍♀️ 5k on Sunday",
            "🫶🏾 thanks!",
        ]
    )


def _neg_soft_hyphens(rng: random.Random) -> str:
    word = rng.choice(
        [
            "Donau\u00addampf\u00adschiff\u00adfahrts\u00adgesellschaft",
            "Rind\u00adfleisch\u00adetikettierungs\u00adgesetz",
            "Kranken\u00adversicherungs\u00adkarte",
            "Steuer\u00ader\u00adklärung",
            "Haft\u00adpflicht\u00adversicherung",
            "Lebens\u00admittel\u00adunverträglichkeit",
            "Fahr\u00adrad\u00adschloss",
            "Kinder\u00adgarten\u00adplatz",
        ]
    )
    return (
        rng.choice(
            [
                f"Die {word} ist fällig.",
                f"{word} bis Freitag",
                f"Termin wegen {word}: Montag",
                f"Notiz: {word} erneuern ({rng.randint(2025, 2030)})",
            ]
        )
        .encode()
        .decode("unicode_escape")
        .encode("latin-1")
        .decode("utf-8")
    )


def _neg_nbsp(rng: random.Random) -> str:
    n = rng.randint(1, 999)
    return (
        rng.choice(
            [
                f"weighs {n}\u00a0kg",
                f"fridge at {n % 9}\u00a0°C",
                f"run {n}\u00a0km a week",
                f"discount {n % 90}\u00a0%",
                f"{n}\u00a0€ budget",
                f"Le train part à 8\u00a0h\u00a0{n % 60:02d}",
                f"taille 1,{n % 99}\u00a0m",
                f"drink {n}\u00a0ml water",
                f"meeting lasts {n % 90}\u202fmin",
                f"Prix\u00a0: {n}\u00a0€",
            ]
        )
        .encode()
        .decode("unicode_escape")
        .encode("latin-1")
        .decode("utf-8")
    )


_PROSE_SEED_WORDS = [w for w in _BIP39.wordlist if len(w) >= 4]


def _neg_seed_prose(rng: random.Random) -> str:
    def w() -> str:
        return rng.choice(_PROSE_SEED_WORDS)

    return rng.choice(
        [
            f"The {w()} and the {w()} went to the {w()} with a {w()} and a {w()}, then to the {w()} near the {w()}.",
            f"Shopping: {w()}, {w()}, {w()} and {w()}; also a {w()} for the {w()}.",
            f"I {w()} the {w()} because it was {w()} and {w()} in the {w()} of the {w()} by the {w()}.",
            f"Trip ideas: visit the {w()} in the morning, the {w()} after lunch, a {w()} at night, then the {w()}.",
            f"My favourite words are {w()} {w()} and {w()} but not {w()} {w()} or {w()}.",
            "Abandon the ability to absorb abstract absurd abuse? Access the accident, then account for it.",
            "seed the lawn in spring, water the garden and the orchard every morning",
        ]
    )


def _neg_hex_context(rng: random.Random) -> str:
    return rng.choice(
        [
            f"sha256 of the backup: {_s(rng, HEX, 64)}",
            f"md5sum of the ISO is {_s(rng, HEX, 32)}",
            f"commit {_s(rng, HEX, 40)} fixed the login bug",
            f"request id {_s(rng, HEX, 32)}",
            f"Docker image digest sha256:{_s(rng, HEX, 64)}",
            f"git tag v1.{rng.randint(0, 20)} at {_s(rng, HEX, 12)}",
            f"trace_id={_s(rng, HEX, 32)} span_id={_s(rng, HEX, 16)}",
            f'ETag: "{_s(rng, HEX, 32)}"',
            f"GPG fingerprint {' '.join(_s(rng, HEX.upper(), 4) for _ in range(10))}",
            f"order 0x{_s(rng, HEX, 16)} shipped",
        ]
    )


def _neg_safe_commands(rng: random.Random) -> str:
    u = rng.choice(NAMES)
    return rng.choice(
        [
            "mysql -u root -p",
            f"mysql -u {u} -p -h db.internal app",
            "mysql -p -u root",
            f"sshpass -f ~/.ssh/{u}.pw ssh {u}@box",
            "sshpass -e ssh pi@raspberry",
            "export PGPASSWORD=$(pass show db)",
            'PGPASSWORD="$DB_PASS" psql -h db app',
            "psql -h db -U app -W",
            "mysql --defaults-extra-file=~/.my.cnf app",
            'redis-cli -a "$REDIS_PASSWORD" ping',
            'curl -u "$USER:$TOKEN" https://api.example.com',
            f"curl -u {u} https://intranet.example.com (it prompts)",
            "mysqldump -u root -p --all-databases > all.sql",
            "PGPASSWORD=$(cat /run/secrets/pg) pg_dump app",
            'sshpass -p "$SSHPASS" ssh host',
            "MYSQL_PWD=$(vault kv get -field=pw db) mysql",
            "ssh -p 2222 deploy@host",
            f"scp -P 2222 backup.tgz {u}@host:/tmp",
            "mysql -P 3306 -h db -u app -p",
            "redis-cli -h cache -p 6380 ping",
        ]
    )


HARD_NEGATIVES = {
    "scripts_natural": _neg_scripts,
    "emoji_sequences": _neg_emoji,
    "soft_hyphen_german": _neg_soft_hyphens,
    "nbsp_units": _neg_nbsp,
    "seed_word_prose": _neg_seed_prose,
    "hex_with_context": _neg_hex_context,
    "safe_command_lines": _neg_safe_commands,
}


@cache
def hard_negative_cases() -> tuple[Case, ...]:
    rng = random.Random(SEED)
    return tuple(Case(name, name, make(rng)) for name, make in HARD_NEGATIVES.items() for _ in range(PER_CATEGORY))


# --- inputs built to be slow: every rule and every view must stay linear on them ----------------


def _noise(seed: int, alphabet: str, n: int = 2000) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


HARD_INPUTS = {  # 2000 characters each
    "zero_width_run": "\u200b" * 2000,
    "soft_hyphens": "a\u00ad" * 1000,
    "mixed_script_run": "аa" * 1000,
    "full_width_run": "ａ" * 1000,
    "spaced_letters": "a " * 1000,
    "spaced_tokens": "ab1 " * 500,
    "line_tokens": "Ab1\n" * 500,
    "chunks": "AB12 " * 400,
    "seed_words": "abandon " * 250,
    "sshpass": "sshpass -p " * 181,
    "mysql_p": "mysql -p " * 222,
    "sig_fields": "sv=1&sig=" * 222,
    "pem_bodies": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 62,
    "urls_split": "https://a\n" * 200,
    "noise": _noise(1, "аaеe ghp_\u200b\n0123456789ABCDEF"),
    # issue 21: the decoded views and the readings of a word beside a split token
    "percent_run": "%41" * 666,
    "entities": "&#65;" * 400,
    "named_entities": "&amp;" * 400,
    "escapes": "\\u0041" * 333,
    "nested_percent": "%2541" * 400,
    "grouped_dots": "key ab1." * 250,
    "grouped_bars": "token ab|" * 222,
    "words_before_groups": "key AB12 CD34 EF56 " * 105,
    "words_before_breaks": "my key ghp_aB3d\n" * 125,
    "mixed_encodings": "&#37;41%26%2365;\\u0025" * 80,
}
