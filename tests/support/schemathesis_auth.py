"""Schemathesis hooks (SCHEMATHESIS_HOOKS) that give `st run` each route family's real credentials.

MEMORY_FUZZ_AUTH maps each route family (an operation's tag in openapi.yaml) to its credentials:
`{"user": {"bearer": token}, "host": {"sigv4": {access_key_id, secret_access_key}}, ...}` (the IAM keys
are the launcher's .local/credentials.json). A SigV4 signature covers the exact
request sent, so the auth provider only marks the case (a placeholder `Authorization`, which the
`ignored_auth` check can still remove or replace) and `before_call` signs the prepared request with
botocore, as a real AWS client would.
"""

from __future__ import annotations

import json
import os
from typing import Any

import requests
import schemathesis
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

AUTH = json.loads(os.environ.get("MEMORY_FUZZ_AUTH", "{}"))
PLACEHOLDER = "SigV4 (signed when sent)"


class _SignedBySigV4(requests.auth.AuthBase):
    """Signs the final request (method, URL, body bytes) for execute-api in us-east-1."""

    def __init__(self, keys: dict[str, str]) -> None:
        self._credentials = Credentials(keys["access_key_id"], keys["secret_access_key"])

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        body = request.body.encode() if isinstance(request.body, str) else (request.body or b"")
        headers = {"Content-Type": request.headers["Content-Type"]} if "Content-Type" in request.headers else {}
        signed = AWSRequest(method=request.method, url=request.url, data=body, headers=headers)
        SigV4Auth(self._credentials, "execute-api", "us-east-1").add_auth(signed)
        request.headers["Authorization"] = signed.headers["Authorization"]
        request.headers["X-Amz-Date"] = signed.headers["X-Amz-Date"]
        return request


def _credentials(case: Any) -> dict[str, Any]:
    family = next((tag for tag in case.operation.tags or () if tag in AUTH), None)
    return AUTH[family] if family else {}


@schemathesis.auth()
class FamilyAuth:
    """`get` is cached across cases (schemathesis refreshes it every few minutes), so it returns every
    family's credentials and `set` picks the case's own."""

    def get(self, case: Any, ctx: Any) -> dict[str, Any]:
        return AUTH

    def set(self, case: Any, data: dict[str, Any], ctx: Any) -> None:
        credentials = _credentials(case)
        if "bearer" in credentials:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {credentials['bearer']}"}
        elif "sigv4" in credentials:
            case.headers = {**(case.headers or {}), "Authorization": PLACEHOLDER}


@schemathesis.hook
def before_call(ctx: Any, case: Any, kwargs: dict[str, Any]) -> None:
    credentials = _credentials(case)
    if "sigv4" in credentials and (case.headers or {}).get("Authorization") == PLACEHOLDER:
        kwargs["auth"] = _SignedBySigV4(credentials["sigv4"])
