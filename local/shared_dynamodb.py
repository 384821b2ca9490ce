"""`make run` on a DynamoDB Local that is already running: MEMORY_DYNAMODB_ENDPOINT and MEMORY_TABLE_PREFIX, checked.

Unset, the launcher starts DynamoDB Local of its own (local/dynamodb_local.py) and names its tables as
always (local/stack.py's TABLES). Set, it starts no JVM: it makes its tables on that endpoint, each name
behind the prefix, so several stacks (the tests' stacks on one worker's DynamoDB Local, or a developer's
own DynamoDB Local) never see each other's tables. The endpoint must be plain HTTP on loopback: the
launcher signs with fake keys and its tables hold the stack's data, which never leaves 127.0.0.1.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from chalicelib.config import TableNames

__all__ = ["ENDPOINT_VARIABLE", "PREFIX_VARIABLE", "Refused", "SharedDynamoDB", "from_environment", "prefixed"]

ENDPOINT_VARIABLE = "MEMORY_DYNAMODB_ENDPOINT"
PREFIX_VARIABLE = "MEMORY_TABLE_PREFIX"
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost"})
# DynamoDB's table names: "a-z, A-Z, 0-9, '_', '-', and '.'", 3 to 255 characters
# (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html).
_NAME_CHARACTERS = re.compile(r"[A-Za-z0-9_.-]*")
_NAME_LENGTH = (3, 255)


class Refused(ValueError):
    """A setting the launcher will not start with; the message says which variable and why."""


@dataclass(frozen=True)
class SharedDynamoDB:
    """Where the stack's tables live: `endpoint` None means a DynamoDB Local of the stack's own."""

    endpoint: str | None = None
    prefix: str = ""


def prefixed(names: TableNames, prefix: str) -> TableNames:
    """Every table name behind `prefix` (refused if a name would not be a DynamoDB table name)."""
    renamed = TableNames(**{f.name: prefix + getattr(names, f.name) for f in dataclasses.fields(names)})
    for f in dataclasses.fields(renamed):
        name = getattr(renamed, f.name)
        if not _NAME_CHARACTERS.fullmatch(name):
            raise Refused(f"{PREFIX_VARIABLE}={prefix!r}: a table name holds only A-Z, a-z, 0-9, '_', '-' and '.'")
        if not _NAME_LENGTH[0] <= len(name) <= _NAME_LENGTH[1]:
            raise Refused(
                f"{PREFIX_VARIABLE} is {len(prefix)} characters: the table name {name[:40]}... would be {len(name)}, "
                f"over DynamoDB's {_NAME_LENGTH[1]}"
            )
    return renamed


def check_endpoint(value: str) -> str:
    """`http://127.0.0.1:<port>` or `http://localhost:<port>` (a trailing / allowed), else refused."""
    why = "it must be http://127.0.0.1:<port> or http://localhost:<port> (a DynamoDB Local on this machine)"
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise Refused(f"{ENDPOINT_VARIABLE}={value!r} is not a URL: {why}") from None
    if (
        parts.scheme != "http"
        or parts.hostname not in _LOOPBACK_HOSTS
        or port is None
        or parts.username is not None
        or parts.password is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise Refused(f"{ENDPOINT_VARIABLE}={value!r} is refused: {why}")
    return f"http://{parts.hostname}:{port}"


def from_environment(environ: Mapping[str, str] = os.environ) -> SharedDynamoDB:
    """The two variables, checked (an empty variable counts as unset)."""
    endpoint = environ.get(ENDPOINT_VARIABLE, "")
    prefix = environ.get(PREFIX_VARIABLE, "")
    if not _NAME_CHARACTERS.fullmatch(prefix):
        raise Refused(f"{PREFIX_VARIABLE}={prefix!r}: a table name holds only A-Z, a-z, 0-9, '_', '-' and '.'")
    return SharedDynamoDB(endpoint=check_endpoint(endpoint) if endpoint else None, prefix=prefix)
