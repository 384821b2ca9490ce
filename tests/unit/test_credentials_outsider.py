"""Issue 37 item 19: the categories an outsider's corpus found missed are refused, and the benign notes beside
them are not. Figures (recall, false alarms, cost) are the bench's (bench/credentials_outsider.py)."""

from __future__ import annotations

from collections import defaultdict

import pytest

from chalicelib.credentials import find_credential
from tests.corpora.credential_corpus_outsider import NEGATIVES, outsider_cases, outsider_negative_cases

UUID = "9f3c2a1e-7b4d-4c8a-b2e1-5d6f7a8b9c0d"
SEED_WORDS = "abandon again announce assume barely blame bridge call celery claim comic cream"  # checksum fails
HF = "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"


def _by_context() -> dict[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for case in outsider_cases():
        groups[case.context].append(case.text)
    return groups


@pytest.mark.parametrize("context", sorted(_by_context()))
def test_every_outsider_category_is_refused(context: str) -> None:
    missed = [t for t in _by_context()[context] if find_credential(t) is None]
    assert not missed, f"{len(missed)} of {len(_by_context()[context])} missed"


@pytest.mark.parametrize("category", sorted(NEGATIVES))
def test_benign_notes_beside_the_new_rules_pass(category: str) -> None:
    flagged = [c.text for c in outsider_negative_cases() if c.label == category and find_credential(c.text)]
    assert not flagged


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        (f"heroku {UUID}", "heroku_api_key"),
        (f"{UUID} is my heroku key", "heroku_api_key"),
        (f"ｈｅｒｏｋｕ key {UUID}", "heroku_api_key"),
        (f"her\u200boku {UUID}", "heroku_api_key"),
        (f"hero\nku api key {UUID}", "heroku_api_key"),
        (f"heroku key {UUID[:18]} \n{UUID[18:]}", "heroku_api_key"),
        ("my bank login is maria / Tr0ub4dor&3", "username_password"),
        ("netflix: maria:Tr0ub4dor&3", "username_password"),
        (SEED_WORDS, "seed_phrase"),
        ("-".join(SEED_WORDS.split()), "seed_phrase"),
        ("s.Ga4VHWcQdwP8xZrXWPLUJkq3", "vault_token"),
        ("vault login s.Ga4VHWcQdwP8xZrXWPLUJkq3", "vault_token"),
        ("b.AAAAAQKsO4LNMO7xG2wXOUY2Z8KvWx0Lw9Fnd4bnQhgEtVkNdDIm", "vault_token"),
        ("API key 8f2b9c4d1e7a6f3b5c9d2e8a4f1b7c3d", "secret_assignment"),
        ("openweather key 8f2b9c4d1e7a6f3b5c9d2e8a4f1b7c3d", "secret_assignment"),
        ("api key (prod) = 8f2b9c4d1e7a6f3b5c9d2e8a4f1b7c3d", "secret_assignment"),
        ("docker login -u me -p Tr0ub4dor3", "command_line_password"),
        ("sqlcmd -S db -U sa -P Tr0ub4dor3", "command_line_password"),
        ("mytool --password='correct horse battery'", "command_line_password"),
        ("openssl pkcs12 -passin pass:Tr0ub4dor3 -in a.p12", "command_line_password"),
        (HF.replace("a", "ɑ"), "huggingface_token"),
        (HF.replace("u", "ᴜ"), "huggingface_token"),
        (HF.replace("C", "Ϲ"), "huggingface_token"),
    ],
)
def test_each_missed_category_is_refused_by_its_shape(text: str, shape: str) -> None:
    assert find_credential(text) == shape


@pytest.mark.parametrize(
    "text",
    [
        f"Order {UUID} arrives Tuesday.",
        f"Heroku app id: {UUID}",
        f"curl https://api.heroku.com/apps/{UUID}/builds",
        f"order {UUID} shipped. Heroku was down all day",
        "Deployed the blog to Heroku today.",
        "I like to walk the dog and read a book in the morning before work.",
        "milk bread butter cheese coffee sugar salt pepper oil rice beans lemon",
        "Apple Banana Orange Grape Lemon Cherry Coffee Butter Cheese Bread Sugar Salt",
        "milk, eggs, bread, butter, cheese, apples, coffee, rice, pasta, tomatoes, onions, lemon",
        "mkdir -p ~/notes",
        "ssh -p 2222 pi@home",
        "docker run -p 8080:80 nginx",
        "mysql -u root -p",
        "The wifi password is on the fridge.",
        "Bank login: maria / password in my head",
        "Chase: Monday / Thursday visits",
        "primary key: 8f2b9c4d1e7a6f3b5c9d2e8a4f1b7c3d",
        f"idempotency key {UUID}",
        "House key is under the blue pot.",
        "e.g. the U.S. office; s.t. means such that",
        "Kullanıcı adı ve şifre defterde yazıyor.",
    ],
)
def test_benign_notes_near_each_rule_pass(text: str) -> None:
    assert find_credential(text) is None
