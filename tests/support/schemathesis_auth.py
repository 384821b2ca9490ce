"""Schemathesis hooks (SCHEMATHESIS_HOOKS) that give `st run` each route family's real credentials.

MEMORY_FUZZ_AUTH holds `{"bearer": token}` (user routes) or `{"sigv4": {access_key_id, secret_access_key}}`
(host, worker, operator: the launcher's .local/credentials.json). A SigV4 signature covers the exact
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


@schemathesis.auth()
class FamilyAuth:
    def get(self, case: Any, ctx: Any) -> str:
        return f"Bearer {AUTH['bearer']}" if "bearer" in AUTH else PLACEHOLDER

    def set(self, case: Any, data: str, ctx: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": data}


@schemathesis.hook
def before_call(ctx: Any, case: Any, kwargs: dict[str, Any]) -> None:
    if "sigv4" in AUTH and (case.headers or {}).get("Authorization") == PLACEHOLDER:
        kwargs["auth"] = _SignedBySigV4(AUTH["sigv4"])
