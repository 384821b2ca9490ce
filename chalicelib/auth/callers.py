"""IAM callers: which configured list (host, worker, operator) the request's principal belongs to. Deny by default.

API Gateway checks the SigV4 signature; Chalice's local gateway does not, so the app itself checks the
caller's ARN from `requestContext.identity` on every IAM route.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from chalicelib.config import Settings
from chalicelib.errors import Forbidden

HOST, WORKER, OPERATOR = "host", "worker", "operator"

_ASSUMED_ROLE = re.compile(r"^arn:(aws[\w-]*):sts::(\d{12}):assumed-role/([\w+=,.@-]+)/[\w+=,.@-]+$")
_ROLE = re.compile(r"^arn:(aws[\w-]*):iam::(\d{12}):role/(?:[\w+=,.@/-]*/)?([\w+=,.@-]+)$")


def principal_key(arn: str) -> str:
    """A comparable name for a principal: a role and the sessions assumed from it share one key."""
    for pattern in (_ASSUMED_ROLE, _ROLE):
        match = pattern.match(arn)
        if match:
            partition, account, role = match.groups()
            return f"{partition}:{account}:role/{role}"
    return arn


def caller_arn(request_context: Mapping[str, Any]) -> str | None:
    identity = request_context.get("identity") or {}
    arn = identity.get("userArn")
    return arn if isinstance(arn, str) and arn.startswith("arn:") else None


def require(settings: Settings, request_context: Mapping[str, Any], kind: str) -> str:
    """The caller's ARN if it is in the list for `kind`; Forbidden for anyone else (no identity included)."""
    allowed = {HOST: settings.host_arns, WORKER: settings.worker_arns, OPERATOR: settings.operator_arns}[kind]
    arn = caller_arn(request_context)
    if arn is None or principal_key(arn) not in {principal_key(a) for a in allowed}:
        raise Forbidden()
    return arn
