"""Configuration read once from the environment into a frozen dataclass; a missing value fails loudly."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache


class ConfigError(RuntimeError):
    """A required setting is missing or malformed: the function cannot serve anything safely."""


@dataclass(frozen=True)
class TableNames:
    entries: str
    proposals: str
    journal: str
    sessions: str
    events: str
    keys: str = "memory-keys"  # the users' wrapped data keys (chalicelib/storage/keys.py)


@dataclass(frozen=True)
class JwtSettings:
    issuer: str
    audience: str
    jwks_url: str | None
    jwks_inline: Mapping[str, object] | None


# Where OAuth clients may send a person back (redirect URIs, exact; docs/oauth.md): the hosts of the clients people
# use, and the loopback addresses native clients listen on (RFC 8252). A stage setting: OAUTH_REDIRECT_HOSTS.
DEFAULT_REDIRECT_HOSTS = "claude.ai,claude.com,chatgpt.com,127.0.0.1,localhost"
# Client names kept to the hosts of the web client that carries them (chalicelib/oauth/names.py): `Name=host host`
# pairs, `;`-separated. A stage setting: OAUTH_RESERVED_NAMES.
DEFAULT_RESERVED_NAMES = "Claude=claude.ai claude.com;ChatGPT=chatgpt.com openai.com"


def reserved_names(value: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """`Claude=claude.ai claude.com;ChatGPT=chatgpt.com` as (name, hosts) pairs; a pair without hosts is refused."""
    found: dict[str, frozenset[str]] = {}
    for pair in value.split(";"):
        if not pair.strip():
            continue
        name, _, hosts = pair.partition("=")
        if not name.strip() or not hosts.split():
            raise ConfigError("OAUTH_RESERVED_NAMES pairs are Name=host host")
        found[name.strip()] = frozenset(hosts.split())
    return tuple(found.items())


@dataclass(frozen=True)
class OAuthSettings:
    redirect_hosts: frozenset[str] = frozenset(DEFAULT_REDIRECT_HOSTS.split(","))
    # Hosts whose client metadata documents may be fetched over plain http: the local stack's tests only ("127.0.0.1").
    insecure_metadata_hosts: frozenset[str] = frozenset()
    # A CA file trusted for https metadata documents on those hosts only: the local stack's tests, which serve one
    # over https on 127.0.0.1 with a certificate they made ("" everywhere else: the system's CAs, as for any host).
    metadata_ca_file: str = ""
    reserved_names: tuple[tuple[str, frozenset[str]], ...] = reserved_names(DEFAULT_RESERVED_NAMES)


@dataclass(frozen=True)
class Settings:
    tables: TableNames
    jwt: JwtSettings
    host_arns: frozenset[str]
    worker_arns: frozenset[str]
    operator_arns: frozenset[str]
    page: Mapping[str, str]
    kms_key_id: str = ""  # the customer-managed KMS key (id, ARN or alias) that wraps every data key
    log_pseudonym_key: bytes = b""  # keys the users' pseudonyms in the logs (chalicelib/logs.py); a stage secret
    oauth: OAuthSettings = OAuthSettings()


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigError(f"missing required setting {name}")
    return value


def _arn_list(env: Mapping[str, str], name: str) -> frozenset[str]:
    return _names(env.get(name, ""))


def _names(value: str) -> frozenset[str]:
    """A comma-separated stage setting as a set (blanks dropped)."""
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def _page_settings(env: Mapping[str, str]) -> dict[str, str]:
    """How the web page signs people in: the local launcher's dev token, or an OIDC hosted UI."""
    if env.get("MEMORY_DEV_SIGN_IN") == "1":
        return {"sign_in": "dev"}
    keys = ("authorize_url", "token_url", "client_id", "redirect_uri", "scope")
    page = {"sign_in": "oidc"}
    page.update({key: env.get("OIDC_" + key.upper(), "") for key in keys})
    return page


MIN_PSEUDONYM_KEY_CHARS = 32  # `make deploy` makes 43 (secrets.token_urlsafe(32): 256 random bits)


def _pseudonym_key(env: Mapping[str, str]) -> bytes:
    """The log pseudonyms' HMAC key: a stage secret (the template's NoEcho `LogPseudonymKey`), never in the code."""
    value = _required(env, "LOG_PSEUDONYM_KEY")
    if len(value) < MIN_PSEUDONYM_KEY_CHARS:
        raise ConfigError(f"LOG_PSEUDONYM_KEY must hold at least {MIN_PSEUDONYM_KEY_CHARS} characters")
    return value.encode()


def load_settings(env: Mapping[str, str]) -> Settings:
    """Build the settings from an environment mapping (os.environ in production, a dict in tests)."""
    jwks_inline_text = env.get("JWT_JWKS", "").strip()
    jwks_url = env.get("JWT_JWKS_URL", "").strip() or None
    if not jwks_inline_text and not jwks_url:
        raise ConfigError("missing required setting JWT_JWKS_URL or JWT_JWKS")
    try:
        jwks_inline = json.loads(jwks_inline_text) if jwks_inline_text else None
    except ValueError as exc:
        raise ConfigError("JWT_JWKS is not valid JSON") from exc
    return Settings(
        tables=TableNames(
            entries=_required(env, "ENTRIES_TABLE"),
            proposals=_required(env, "PROPOSALS_TABLE"),
            journal=_required(env, "JOURNAL_TABLE"),
            sessions=_required(env, "SESSIONS_TABLE"),
            events=_required(env, "EVENTS_TABLE"),
            keys=_required(env, "KEYS_TABLE"),
        ),
        jwt=JwtSettings(
            issuer=_required(env, "JWT_ISSUER"),
            audience=_required(env, "JWT_AUDIENCE"),
            jwks_url=jwks_url,
            jwks_inline=jwks_inline,
        ),
        host_arns=_arn_list(env, "HOST_ROLE_ARNS"),
        worker_arns=_arn_list(env, "WORKER_ROLE_ARNS"),
        operator_arns=_arn_list(env, "OPERATOR_ROLE_ARNS"),
        page=_page_settings(env),
        kms_key_id=_required(env, "KMS_KEY_ID"),
        log_pseudonym_key=_pseudonym_key(env),
        oauth=OAuthSettings(
            redirect_hosts=_names(env.get("OAUTH_REDIRECT_HOSTS") or DEFAULT_REDIRECT_HOSTS),
            insecure_metadata_hosts=_names(env.get("OAUTH_INSECURE_METADATA_HOSTS", "")),
            metadata_ca_file=env.get("OAUTH_METADATA_CA_FILE", "").strip(),
            reserved_names=reserved_names(env.get("OAUTH_RESERVED_NAMES") or DEFAULT_RESERVED_NAMES),
        ),
    )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read on first use (never at import time)."""
    return load_settings(os.environ)


def reset_settings() -> None:
    """Forget the cached settings (tests and the local launcher change the environment)."""
    get_settings.cache_clear()
