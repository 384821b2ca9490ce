"""Reads the local stack's credentials file, so hosts and workers can sign without AWS accounts.

`make run` writes `.local/credentials.json` as
`{"host"|"worker"|"operator": {"access_key_id", "secret_access_key", "arn"}}`. Errors name the
file, the role and the field, never a value: these are secrets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .errors import CredentialsFileError

__all__ = ["ROLES", "CallerCredentials", "Role", "load_credentials_file"]

Role = Literal["host", "worker", "operator"]
ROLES: tuple[Role, ...] = ("host", "worker", "operator")


@dataclass(frozen=True, slots=True)
class CallerCredentials:
    """One IAM principal's keys; the secrets stay out of `repr` so they cannot be logged."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    arn: str | None = None
    session_token: str | None = field(default=None, repr=False)


def load_credentials_file(path: str | Path, role: Role) -> CallerCredentials:
    """Return the keys for `role` from a local credentials file."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    where = Path(path)
    try:
        document = json.loads(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CredentialsFileError(f"cannot read {where}: {type(exc).__name__}") from None
    except ValueError:
        raise CredentialsFileError(f"{where} is not valid JSON") from None
    entry = document.get(role) if isinstance(document, dict) else None
    if not isinstance(entry, dict):
        raise CredentialsFileError(f"{where} has no {role!r} credentials")
    values: dict[str, str] = {}
    for name in ("access_key_id", "secret_access_key"):
        value = entry.get(name)
        if not isinstance(value, str) or not value:
            raise CredentialsFileError(f"{where}: {role}.{name} is missing or not a string")
        values[name] = value
    arn = entry.get("arn")
    token = entry.get("session_token")
    return CallerCredentials(
        access_key_id=values["access_key_id"],
        secret_access_key=values["secret_access_key"],
        arn=arn if isinstance(arn, str) else None,
        session_token=token if isinstance(token, str) else None,
    )
