"""SigV4-signed requests to the local server, made the way a real AWS client makes them (botocore)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def signed_request(
    url: str, method: str, path: str, creds: dict[str, str], body: Any = None, *, tamper: bool = False
) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else b""
    aws_request = AWSRequest(method=method, url=url + path, data=data, headers={"Content-Type": "application/json"})
    SigV4Auth(Credentials(creds["access_key_id"], creds["secret_access_key"]), "execute-api", "us-east-1").add_auth(
        aws_request
    )
    headers = dict(aws_request.headers.items())
    if tamper:
        data = data + b" "
    request = urllib.request.Request(url + path, data=data or None, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, payload = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, payload = error.code, error.read()
    return status, (json.loads(payload) if payload else None)
