"""Checks real AWS SigV4 signatures locally, because `chalice local` lets every IAM route through.

API Gateway verifies `execute-api` signatures before the app ever runs; the local server has no such
gate. This module is that gate for `make run`: it recomputes the signature with botocore's own
`SigV4Auth` (never a hand-rolled HMAC chain) over exactly the headers the client said it signed,
and answers with the caller's ARN or a `SignatureRejected` carrying a reason code only.

What the caller must pass is what came over the wire: `path` and `query` are the raw request
target split at the first `?` (still percent-encoded), `body` the raw bytes. botocore's client
canonicalizes the URL it sends exactly as written, so the verifier must see it exactly as written.
Presigned URLs (signature in the query string) are not supported: only the `Authorization` header.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import string
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from botocore.auth import SIGV4_TIMESTAMP, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

__all__ = [
    "REGION",
    "SERVICE",
    "LocalPrincipal",
    "SignatureRejected",
    "generate_principals",
    "read_credentials",
    "verify_request",
    "write_credentials",
]

SERVICE = "execute-api"
REGION = "us-east-1"
ALGORITHM = "AWS4-HMAC-SHA256"
# API Gateway refuses a request whose X-Amz-Date is more than 15 minutes from its clock, either way.
FRESHNESS = timedelta(minutes=15)
ROLES = ("host", "worker", "operator")

# Headers whose value must be covered by the signature whenever they are present: without `host`
# a signature could be replayed against another server, without `x-amz-date` the freshness window
# means nothing, and an unsigned session token could be swapped.
_ALWAYS_SIGNED = ("host", "x-amz-date")
_SIGNED_IF_PRESENT = ("x-amz-security-token", "x-amz-content-sha256")
_SIGNATURE_RE = re.compile(r"[0-9a-f]{64}")
_HEADER_NAME_RE = re.compile(r"[a-z0-9!#$%&'*+.^_`|~-]+")
_KEY_ID_ALPHABET = string.ascii_uppercase + string.digits
_SECRET_ALPHABET = string.ascii_letters + string.digits + "+/"


@dataclass(frozen=True)
class LocalPrincipal:
    """One local IAM identity: the keys a local caller signs with and the ARN the app then sees."""

    access_key_id: str
    secret_access_key: str
    arn: str


class SignatureRejected(Exception):
    """The request carries no acceptable signature; `reason` is a code, never request content.

    Codes: missing, malformed, wrong_scope, unknown_key, stale, unsigned_header, wrong_host,
    mismatch. The local server answers every one of them with 403.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class _Authorization:
    access_key_id: str
    scope_date: str
    region: str
    service: str
    terminator: str
    signed_headers: tuple[str, ...]
    signed_headers_text: str
    signature: str


def verify_request(
    method: str,
    path: str,
    query: str,
    headers: Mapping[str, str],
    body: bytes,
    principals: Mapping[str, LocalPrincipal],
    now: datetime | None = None,
    host: str | None = None,
) -> str:
    """Return the ARN of the principal that signed this request, or raise `SignatureRejected`.

    `host`, when given, is the Host the server expects; a signature made for another host is
    refused (`wrong_host`). `now` defaults to the current UTC time (a naive value is taken as UTC).
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    raw_authorization = lowered.get("authorization")
    if not raw_authorization or not raw_authorization.strip():
        raise SignatureRejected("missing")
    auth = _parse_authorization(raw_authorization)
    if (auth.region, auth.service, auth.terminator) != (REGION, SERVICE, "aws4_request"):
        raise SignatureRejected("wrong_scope")
    principal = _find_principal(principals, auth.access_key_id)
    amz_date = lowered.get("x-amz-date", "")
    request_time = _parse_amz_date(amz_date)
    if auth.scope_date != amz_date[:8]:
        raise SignatureRejected("wrong_scope")
    _check_signed_headers(auth, lowered)
    if host is not None and lowered["host"].strip().lower() != host.strip().lower():
        raise SignatureRejected("wrong_host")
    _check_freshness(request_time, now)
    _check_payload_hash(auth, lowered, body)
    if not path.startswith("/") or "?" in path or "#" in path:
        raise SignatureRejected("malformed")

    request = AWSRequest(
        method=method.upper(),
        # Only the path and query of this URL are signed; the host comes from the signed header.
        url=f"http://localhost{path}" + (f"?{query}" if query else ""),
        headers={name: lowered[name] for name in auth.signed_headers},
        data=body,
    )
    request.context["timestamp"] = amz_date
    signer = SigV4Auth(Credentials(principal.access_key_id, principal.secret_access_key), SERVICE, REGION)
    # botocore leaves some headers out of any signature (user-agent, connection, ...); a client
    # that signed one of them computed a different canonical request than botocore ever would.
    if signer.signed_headers(signer.headers_to_sign(request)) != auth.signed_headers_text:
        raise SignatureRejected("mismatch")
    canonical_request = signer.canonical_request(request)
    string_to_sign = signer.string_to_sign(request, canonical_request)
    expected = signer.signature(string_to_sign, request)
    if not hmac.compare_digest(expected.encode("ascii"), auth.signature.encode("ascii")):
        raise SignatureRejected("mismatch")
    return principal.arn


def _parse_authorization(value: str) -> _Authorization:
    algorithm, _, rest = value.strip().partition(" ")
    if algorithm != ALGORITHM:
        raise SignatureRejected("malformed")
    fields: dict[str, str] = {}
    for part in rest.split(","):
        name, sep, field_value = part.strip().partition("=")
        if not sep or name in fields:
            raise SignatureRejected("malformed")
        fields[name] = field_value.strip()
    if set(fields) != {"Credential", "SignedHeaders", "Signature"}:
        raise SignatureRejected("malformed")
    scope = fields["Credential"].split("/")
    signed = tuple(fields["SignedHeaders"].split(";"))
    if (
        len(scope) != 5
        or not all(scope)
        or not _SIGNATURE_RE.fullmatch(fields["Signature"])
        or not all(_HEADER_NAME_RE.fullmatch(name) for name in signed)
    ):
        raise SignatureRejected("malformed")
    return _Authorization(
        access_key_id=scope[0],
        scope_date=scope[1],
        region=scope[2],
        service=scope[3],
        terminator=scope[4],
        signed_headers=signed,
        signed_headers_text=fields["SignedHeaders"],
        signature=fields["Signature"],
    )


def _find_principal(principals: Mapping[str, LocalPrincipal], access_key_id: str) -> LocalPrincipal:
    for principal in principals.values():
        if hmac.compare_digest(principal.access_key_id.encode(), access_key_id.encode()):
            return principal
    raise SignatureRejected("unknown_key")


def _parse_amz_date(value: str) -> datetime:
    try:
        parsed = datetime.strptime(value, SIGV4_TIMESTAMP)
    except ValueError:
        raise SignatureRejected("malformed") from None
    return parsed.replace(tzinfo=UTC)


def _check_signed_headers(auth: _Authorization, lowered: Mapping[str, str]) -> None:
    signed = set(auth.signed_headers)
    if any(name not in signed for name in _ALWAYS_SIGNED):
        raise SignatureRejected("unsigned_header")
    if any(name in lowered and name not in signed for name in _SIGNED_IF_PRESENT):
        raise SignatureRejected("unsigned_header")
    if any(name not in lowered for name in signed):
        raise SignatureRejected("malformed")


def _check_freshness(request_time: datetime, now: datetime | None) -> None:
    current = now or datetime.now(UTC)
    if current.tzinfo is None:
        current = current.replace(tzinfo=UTC)
    if abs(current - request_time) > FRESHNESS:
        raise SignatureRejected("stale")


def _check_payload_hash(auth: _Authorization, lowered: Mapping[str, str], body: bytes) -> None:
    # botocore trusts a present X-Amz-Content-SHA256 instead of hashing the body, so a signed
    # header that does not match the body would let the body be swapped under a valid signature.
    if "x-amz-content-sha256" in auth.signed_headers:
        claimed = lowered["x-amz-content-sha256"].strip().lower()
        if not hmac.compare_digest(claimed.encode(), hashlib.sha256(body).hexdigest().encode()):
            raise SignatureRejected("mismatch")


def generate_principals(account_id: str = "000000000000") -> dict[str, LocalPrincipal]:
    """Fresh random keys for the host, worker and operator roles of one local stack."""
    return {
        role: LocalPrincipal(
            access_key_id="AKIA" + "".join(secrets.choice(_KEY_ID_ALPHABET) for _ in range(16)),
            secret_access_key="".join(secrets.choice(_SECRET_ALPHABET) for _ in range(40)),
            arn=f"arn:aws:iam::{account_id}:role/personal-memory-local-{role}",
        )
        for role in ROLES
    }


def write_credentials(path: Path, principals: Mapping[str, LocalPrincipal]) -> None:
    """Write the principals as JSON readable by the owner only (0600), replacing the file whole."""
    path = Path(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    document = {
        role: {
            "access_key_id": p.access_key_id,
            "secret_access_key": p.secret_access_key,
            "arn": p.arn,
        }
        for role, p in principals.items()
    }
    # mkstemp creates the file 0600 from the start, so the secrets are never world-readable,
    # and the rename means a reader never sees half a file.
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2, sort_keys=True)
            handle.write("\n")
        os.chmod(temp_name, 0o600)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def read_credentials(path: Path) -> dict[str, LocalPrincipal]:
    """Read what `write_credentials` wrote; a file of any other shape is a ValueError."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(document, dict):
        raise ValueError("credentials file must hold a JSON object")
    principals: dict[str, LocalPrincipal] = {}
    for role, entry in document.items():
        if not isinstance(entry, dict) or set(entry) != {
            "access_key_id",
            "secret_access_key",
            "arn",
        }:
            raise ValueError(f"credentials entry {role!r} has the wrong fields")
        if not all(isinstance(value, str) and value for value in entry.values()):
            raise ValueError(f"credentials entry {role!r} has an empty or non-text value")
        principals[role] = LocalPrincipal(**entry)
    return principals
