"""Credential refusal: every shape is caught in every context, benign notes pass, nothing hangs.

Figures come from the seeded corpus in tests/corpora/credential_corpus.py; bench/credentials_bench.py
prints the same figures (and timings, which are never asserted here).
"""

from __future__ import annotations

import random
import string
from collections import defaultdict
from functools import cache

import pytest

from chalicelib.credentials import find_credential
from tests.corpora.credential_corpus import SHAPES, Case, negative_cases, positive_cases


@cache
def _verdicts() -> dict[str, str | None]:
    return {case.text: find_credential(case.text) for case in (*positive_cases(), *negative_cases())}


def _groups(cases: tuple[Case, ...]) -> dict[tuple[str, str], list[Case]]:
    groups: dict[tuple[str, str], list[Case]] = defaultdict(list)
    for case in cases:
        groups[(case.label, case.context)].append(case)
    return groups


POSITIVE_GROUPS = _groups(positive_cases())
NEGATIVE_CATEGORIES = sorted({case.label for case in negative_cases()})


# --- recall -------------------------------------------------------------------------------


@pytest.mark.parametrize(("shape", "context"), sorted(POSITIVE_GROUPS), ids=lambda v: str(v))
def test_credential_is_refused_and_named_in_context(shape: str, context: str) -> None:
    cases = POSITIVE_GROUPS[(shape, context)]
    verdicts = [_verdicts()[case.text] for case in cases]
    caught = [v for v in verdicts if v is not None]
    assert len(caught) >= 0.8 * len(cases), f"{shape} in {context}: {len(caught)}/{len(cases)} caught"
    assert all(v == shape for v in caught), f"{shape} in {context} named {sorted(set(caught))}"


@pytest.mark.parametrize("shape", SHAPES)
def test_each_shape_has_high_recall(shape: str) -> None:
    cases = [case for case in positive_cases() if case.label == shape]
    caught = sum(_verdicts()[case.text] is not None for case in cases)
    assert len(cases) >= 200
    assert caught / len(cases) >= 0.95


def test_overall_recall_is_at_least_97_percent() -> None:
    cases = positive_cases()
    assert sum(_verdicts()[case.text] is not None for case in cases) / len(cases) >= 0.97


# --- false alarms -------------------------------------------------------------------------


@pytest.mark.parametrize("category", NEGATIVE_CATEGORIES)
def test_benign_category_passes(category: str) -> None:
    cases = [case for case in negative_cases() if case.label == category]
    refused = [case.text for case in cases if _verdicts()[case.text] is not None]
    assert len(cases) >= 200
    assert len(refused) <= 0.01 * len(cases), refused[:5]


def test_overall_false_positive_rate_is_at_most_1_percent() -> None:
    cases = negative_cases()
    assert sum(_verdicts()[case.text] is not None for case in cases) / len(cases) <= 0.01


HARD_NEGATIVES = {
    "talk_about_tokens": "Rotate the GitHub token every 90 days; classic ones start with ghp_.",
    "talk_about_akia": "AWS long-term access key ids begin with AKIA, temporary ones with ASIA.",
    "angle_placeholder": "OPENAI_API_KEY=<your-api-key>",
    "x_placeholder": "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "ellipsis_placeholder": "token: ghp_xxxxxxxx…",
    "stars": "password: ********",
    "env_var": "password: ${DB_PASSWORD}",
    "redacted": "api_key = sk-...REDACTED",
    "aws_docs_example": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "os_environ": 'client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])',
    "actions_secret": "token: ${{ secrets.NPM_TOKEN }}",
    "getpass": "password = getpass()",
    "ssh_public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq3bY0Tq9tN3vR8jW2kF5pL7xZ1cV4bN6mQ8sD0fG2h me@laptop",
    "certificate": "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
    "publishable_key": "STRIPE_PUBLISHABLE_KEY=pk_live_51HqLyjWDarjtT1zdp7dcXyZ",
    "sentry_dsn": "SENTRY_DSN=https://5f1e0c6a2b3d4e5f6a7b8c9d0e1f2a3b@o123456.ingest.sentry.io/7654321",
    "sri_integrity": '"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="',
    "docker_digest": "image: ghcr.io/acme/api@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit_sha": "Fixed in 3f2a9c1b7d4e6f8a0b2c4d6e8f0a1b3c5d7e9f1a, reverted on AWS later.",
    "uuid": "request id 123e4567-e89b-42d3-a456-426614174000",
    "arn": "arn:aws:iam::123456789012:role/service-role/DeploymentPipelineExecutionRole",
    "account_id": "AWS account 123456789012",
    "url_user_no_password": "git clone https://alice@github.com/acme/app.git",
    "email": "write to alice.smith+aws@example.com",
    "phone": "call +44 20 7946 0958 after 6pm",
    "scripts": "مرحبا بالعالم · שלום עולם · नमस्ते दुनिया · 你好世界 · Привет, мир",
    "emoji": "🎉🎂 party at 7! 👩‍💻🇯🇵",
    "dark_mode": "prefers dark mode",
    "peanuts": "allergic to peanuts",
}


@pytest.mark.parametrize("name", sorted(HARD_NEGATIVES))
def test_hard_negative_passes(name: str) -> None:
    assert find_credential(HARD_NEGATIVES[name]) is None


# --- what the refusal says ----------------------------------------------------------------


def test_refusal_is_only_a_fixed_shape_name_never_part_of_the_text() -> None:
    names = {v for v in _verdicts().values() if v is not None}
    assert names <= set(SHAPES)


def test_corpus_is_reproducible() -> None:
    assert positive_cases.__wrapped__() == positive_cases()  # type: ignore[attr-defined]
    assert negative_cases.__wrapped__() == negative_cases()  # type: ignore[attr-defined]


# Tails of secrets published in documentation (AWS, jwt.io, Stripe, Azurite): the corpus is random, never these.
PUBLISHED_EXAMPLES = (
    "EXAMPLE",
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "4eC39HqLyjWDarjtT1zdp7dc",
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq",
)


def test_corpus_holds_no_published_example_secret() -> None:
    texts = [case.text for case in positive_cases()]
    assert not any(example in text for text in texts for example in PUBLISHED_EXAMPLES)


# --- adversarial inputs: they must return (correctness only; timings live in the bench) ----


def _noise(seed: int, alphabet: str, n: int = 2000) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


NOTHING_TO_FIND = {
    "a_run": "a" * 2000,
    "upper_run": "A" * 2000,
    "zero_run": "0" * 2000,
    "equals_run": "=" * 2000,
    "colon_run": ":" * 2000,
    "at_run": "@" * 2000,
    "slash_run": "/" * 2000,
    "dash_run": "-" * 2000,
    "dot_run": "." * 2000,
    "space_run": " " * 2000,
    "newline_run": "\n" * 2000,
    "escaped_newlines": "\\n" * 1000,
    "brackets": "[" * 1000 + "{" * 1000,
    "ghp_repeated": "ghp_" * 500,
    "akia_repeated": "AKIA" * 500,
    "sk_repeated": "sk-" * 666,
    "eyj_repeated": "eyJ" * 666,
    "xoxb_repeated": "xoxb-" * 400,
    "pem_headers": "-----BEGIN PRIVATE KEY-----" * 74,
    "password_equals": "password=" * 222,
    "password_long_value": "password: " + "a" * 1990,
    "scheme_runs": "://" * 666,
    "colon_pairs": "a:" * 1000,
    "at_pairs": "a@" * 1000,
    "half_urls": "http://a:" * 222,
    "db_url_no_host": "postgres://u:" + "p" * 1987,
    "telegram_like": "1234567890:" + "A" * 1989,
    "discord_like": ("M" * 24 + ".") * 80,
    "bearer_words": "Bearer " * 285,
    "anthropic_filler": "sk-ant-api03-" + "A" * 1987,
    "accents": "é" * 1000,
    "emoji": "😀" * 500,
    "password_is": "password is " * 166,
    "api_key_filler": "api_key=" + "x" * 1992,
    "aws_words": "aws " * 500,
    "long_scheme": "a" * 1000 + "://" + "b" * 997,
    "begin_dashes": "-" * 1000 + "BEGIN" * 200,
    "hex_run": "0123456789abcdef" * 125,
    "digits_colons": "12345:" * 333,
    "bytes_of_words": "the token is " * 154,
}


@pytest.mark.parametrize("name", sorted(NOTHING_TO_FIND))
def test_adversarial_input_returns_none(name: str) -> None:
    text = NOTHING_TO_FIND[name]
    assert len(text.encode()) >= 1990
    assert find_credential(text) is None


NEAR_MISSES = {
    "ghp_too_short": "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3f",  # 35 characters, one short
    "ghp_wrong_case": "GHP_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG",
    "ghx_prefix": "ghx_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG",
    "akia_too_short": "AKIA" + "QW3RT5YU7IOPAS2DF",
    "aiza_too_short": "AIza" + "Sy3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3",
    "glpat_too_short": "glpat-" + "aB3dE5gH7jK9mN1pQ3s",
    "stripe_too_short": "sk_live_" + "aB3dE5gH7jK9mN1pQ3s",
    "npm_too_short": "npm_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3f",
    "sendgrid_too_short": "SG." + "aB3dE5gH7jK9mN1pQ3sT5" + "." + "vW7yZ9bC1dE3fGhJ5kL7mN9pQ1rS3tU5vW7xY9zA1b",
    "hf_too_short": "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDe"[:29],
    "jwt_two_parts": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    "pem_header_only": "paste the -----BEGIN OPENSSH PRIVATE KEY----- block into the CI secret",
}


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_miss_prefix_is_not_refused(name: str) -> None:
    assert find_credential(NEAR_MISSES[name]) is None


@pytest.mark.parametrize("seed", range(8))
def test_random_2000_byte_noise_returns(seed: int) -> None:
    alphabets = [
        string.printable,
        string.ascii_letters + string.digits + "+/=",
        "aA0_-.:/@=\"' \n",
        "ghp_sk-AKIAeyJxoxb:/@=.",
        "пароль密码🔑é" + string.ascii_letters,
    ]
    for alphabet in alphabets:
        assert find_credential(_noise(seed, alphabet)) in (None, *SHAPES)
