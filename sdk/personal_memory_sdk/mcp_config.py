"""The MCP server's configuration, read once at start from flags and the environment.

Every missing or malformed piece is a `ConfigError` whose message says what is missing and how to
give it; `main` prints that line and exits, so a desktop client's log shows a sentence, never a
stack trace. Secrets are never part of a message.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from botocore.credentials import Credentials

from .credentials import Role, load_credentials_file
from .errors import CredentialsFileError
from .mcp_words import agent_name
from .transport import DEFAULT_REGION

__all__ = ["ENV", "ConfigError", "McpConfig", "load_config", "parser"]

# The contract's user id shape (a token's `sub`, chalicelib/identifiers.py USER_ID_PATTERN).
_USER_ID = re.compile(r"[A-Za-z0-9._:@|+\-]{1,128}")
_DEFAULT_OUTCOME_WAIT = 3.0
_REGION = re.compile(r"[a-z]{2}(-[a-z0-9]+){1,4}")

ENV = {
    "base_url": "PERSONAL_MEMORY_URL",
    "token": "PERSONAL_MEMORY_TOKEN",
    "user_id": "PERSONAL_MEMORY_USER",
    "credentials_file": "PERSONAL_MEMORY_CREDENTIALS_FILE",
    "host_profile": "PERSONAL_MEMORY_HOST_PROFILE",
    "worker_profile": "PERSONAL_MEMORY_WORKER_PROFILE",
    "region": "PERSONAL_MEMORY_REGION",
    "trusted_clients": "PERSONAL_MEMORY_TRUSTED_CLIENTS",
    "outcome_wait": "PERSONAL_MEMORY_OUTCOME_WAIT",
}


class ConfigError(Exception):
    """A piece of configuration is missing or wrong; the message says which and how to fix it."""


@dataclass(frozen=True, slots=True)
class McpConfig:
    """Everything the server needs, checked."""

    base_url: str
    user_id: str | None  # None with a connection token: the token names its person
    host: Credentials | None = field(repr=False)
    worker: Credentials | None = field(repr=False)
    region: str = DEFAULT_REGION
    trusted_clients: frozenset[str] = frozenset()
    outcome_wait: float = _DEFAULT_OUTCOME_WAIT
    token: str | None = field(default=None, repr=False)  # a person's connection token (pmc_...)

    def trusts(self, agent: str) -> bool:
        return agent in self.trusted_clients


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="personal-memory-mcp",
        description="An MCP server (stdio) that gives an MCP client the person's shared notes "
        "and lets it suggest new ones for the person to review. Every flag can also be set "
        "in the environment (shown in brackets).",
    )
    cli.add_argument("--base-url", help=f"the API's address [{ENV['base_url']}]")
    cli.add_argument(
        "--token",
        help="a connection token made on the Agents tab of your memory page (pmc_...): your own "
        f"client's way in, no AWS role needed [{ENV['token']}]. Without it the server runs in "
        "the trusted-host mode below (host and worker roles, for a runtime serving many users).",
    )
    cli.add_argument(
        "--user", dest="user_id", help=f"whose memory (trusted-host mode) [{ENV['user_id']}]"
    )
    cli.add_argument(
        "--credentials-file",
        help="the local stack's .local/credentials.json (make run): host and worker keys "
        f"[{ENV['credentials_file']}]",
    )
    cli.add_argument("--host-profile", help=f"AWS profile of the host role [{ENV['host_profile']}]")
    cli.add_argument(
        "--worker-profile", help=f"AWS profile of the worker role [{ENV['worker_profile']}]"
    )
    cli.add_argument("--region", help=f"SigV4 region, default {DEFAULT_REGION} [{ENV['region']}]")
    cli.add_argument(
        "--trust-client",
        dest="trusted_clients",
        action="append",
        metavar="NAME",
        help="an MCP client whose sessions are NOT marked untrusted (repeatable; comma-separated "
        f"in [{ENV['trusted_clients']}]). Trust only a client that never reads outside content.",
    )
    cli.add_argument(
        "--outcome-wait",
        type=float,
        help=f"seconds a suggestion waits for its outcome, default {_DEFAULT_OUTCOME_WAIT:g} "
        f"[{ENV['outcome_wait']}]",
    )
    return cli


def load_config(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> McpConfig:
    """Flags first, then the environment; a ConfigError names the first missing piece."""
    env = os.environ if environ is None else environ
    args = vars(parser().parse_args(argv))

    def pick(name: str) -> str | None:
        value = args.get(name)
        if value is None:
            value = env.get(ENV[name]) or None
        return value.strip() if isinstance(value, str) else value

    base_url = _base_url(pick("base_url"))
    token = pick("token")
    if token:
        return _connection_config(base_url, token, args, env)
    user_id = _user_id(pick("user_id"))
    region = pick("region") or DEFAULT_REGION
    if not _REGION.fullmatch(region):
        raise ConfigError("--region must be an AWS region name, e.g. eu-west-1")
    host, worker = _credentials(pick("credentials_file"), pick, env)
    return McpConfig(
        base_url=base_url,
        user_id=user_id,
        host=host,
        worker=worker,
        region=region,
        trusted_clients=_trusted(args.get("trusted_clients"), env.get(ENV["trusted_clients"])),
        outcome_wait=_outcome_wait(args.get("outcome_wait"), env.get(ENV["outcome_wait"])),
    )


_HOST_MODE_FLAGS = {
    "user_id": "--user",
    "credentials_file": "--credentials-file",
    "host_profile": "--host-profile",
    "worker_profile": "--worker-profile",
    "trusted_clients": "--trust-client",
}


def _connection_config(
    base_url: str, token: str, args: Mapping[str, object], env: Mapping[str, str]
) -> McpConfig:
    """A person's own client: the token names the person and the agent; no role, no trust list."""
    if not re.fullmatch(r"pmc_[A-Za-z0-9_\-]{20,200}", token):
        raise ConfigError(
            "--token must be a connection token (pmc_...) as the Agents tab of your memory page "
            "shows it"
        )
    given = [flag for name, flag in _HOST_MODE_FLAGS.items() if args.get(name)]
    if given:
        raise ConfigError(
            f"--token cannot be combined with {', '.join(given)}: a connection names its person "
            "and agent, and whether it is trusted is set on the memory page"
        )
    wait = args.get("outcome_wait")
    return McpConfig(
        base_url=base_url,
        user_id=None,
        host=None,
        worker=None,
        token=token,
        outcome_wait=_outcome_wait(
            wait if isinstance(wait, float) else None, env.get(ENV["outcome_wait"])
        ),
    )


def _base_url(value: str | None) -> str:
    if not value:
        raise ConfigError(
            f"no API address: pass --base-url URL or set {ENV['base_url']} "
            "(http://127.0.0.1:8000 for make run)"
        )
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.query
        or parts.fragment
    ):
        raise ConfigError(
            "--base-url must be an http(s) address with no query, e.g. https://api.example.com"
        )
    if parts.username is not None or parts.password is not None:
        # Never echoed: a password in the address would be in every error the tools give.
        raise ConfigError(
            "--base-url must not hold a user name or password: the server signs its requests "
            "with the host and worker keys"
        )
    return value.rstrip("/")


def _user_id(value: str | None) -> str:
    if not value:
        raise ConfigError(
            f"no user: pass --user USER_ID or set {ENV['user_id']} (the sign-in's subject, "
            "e.g. alice for make run)"
        )
    if not _USER_ID.fullmatch(value) or not value.strip("."):  # only dots: the service refuses it
        raise ConfigError(
            "--user must be 1 to 128 letters, digits or . _ : @ | + -, "
            "not only dots (a sign-in subject)"
        )
    return value


def _credentials(
    file: str | None, pick: Callable[[str], str | None], env: Mapping[str, str]
) -> tuple[Credentials, Credentials]:
    """From the local credentials file when named; otherwise a profile, or the environment."""
    if file:
        return _from_file(Path(file), "host"), _from_file(Path(file), "worker")
    return (
        _from_profile_or_env("host", pick("host_profile"), env),
        _from_profile_or_env("worker", pick("worker_profile"), env),
    )


def _from_file(path: Path, role: Role) -> Credentials:
    try:
        keys = load_credentials_file(path.expanduser(), role)
    except CredentialsFileError as exc:
        raise ConfigError(
            f"{role} credentials: {exc} (make run writes .local/credentials.json)"
        ) from None
    return Credentials(keys.access_key_id, keys.secret_access_key, keys.session_token)


def _from_profile_or_env(role: Role, profile: str | None, env: Mapping[str, str]) -> Credentials:
    flag = f"--{role}-profile"
    if profile:
        import botocore.exceptions
        import botocore.session

        try:
            found = botocore.session.Session(profile=profile).get_credentials()
        except botocore.exceptions.ProfileNotFound:
            raise ConfigError(
                f"{role} credentials: AWS profile {profile!r} ({flag}) does not exist"
            ) from None
        except botocore.exceptions.BotoCoreError as exc:
            raise ConfigError(
                f"{role} credentials: profile {profile!r}: {type(exc).__name__}"
            ) from None
        if found is None:
            raise ConfigError(f"{role} credentials: AWS profile {profile!r} ({flag}) has no keys")
        return found
    key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if key and secret:
        return Credentials(key, secret, env.get("AWS_SESSION_TOKEN") or None)
    raise ConfigError(
        f"no {role} credentials: pass {flag} NAME (or set {ENV[f'{role}_profile']}), set "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or pass --credentials-file "
        ".local/credentials.json for make run"
    )


def _trusted(flags: Sequence[str] | None, env_value: str | None) -> frozenset[str]:
    names = [*(flags or ()), *((env_value or "").split(",") if not flags else ())]
    return frozenset(agent_name(name) for part in names for name in part.split(",") if name.strip())


def _outcome_wait(flag: float | None, env_value: str | None) -> float:
    value: float | str | None = flag if flag is not None else env_value
    if value is None or value == "":
        return _DEFAULT_OUTCOME_WAIT
    try:
        seconds = float(value)
    except ValueError:
        raise ConfigError(f"{ENV['outcome_wait']} must be a number of seconds") from None
    if not 0 <= seconds <= 30:
        raise ConfigError("--outcome-wait must be 0 to 30 seconds")
    return seconds
