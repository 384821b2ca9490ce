"""The chaos run's plumbing: JSON over HTTP (bearer tokens, SigV4), captured output, recorded backoffs."""

from __future__ import annotations

import io
import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any


@dataclass
class Call:
    method: str
    path: str
    template: str
    status: int
    body: Any
    retry_after: str | None


class Http:
    """JSON over HTTP to the local server: bearer tokens for users, SigV4 for IAM callers."""

    def __init__(self, url: str, principals: dict[str, Any], mint: Any) -> None:
        self.url, self.principals, self.mint = url, principals, mint
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    def user(self, method: str, path: str, template: str, user: str, body: Any = None) -> Call:
        return self._send(method, path, template, body, {"Authorization": f"Bearer {self.mint(user)}"})

    def iam(self, method: str, path: str, template: str, caller: str, body: Any = None) -> Call:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        data = json.dumps(body).encode() if body is not None else b""
        request = AWSRequest(
            method=method, url=self.url + path, data=data, headers={"Content-Type": "application/json"}
        )
        keys = self.principals[caller]
        SigV4Auth(Credentials(keys.access_key_id, keys.secret_access_key), "execute-api", "us-east-1").add_auth(request)
        return self._send(method, path, template, body, dict(request.headers.items()), data=data)

    def _send(
        self, method: str, path: str, template: str, body: Any, headers: dict[str, str], data: bytes | None = None
    ) -> Call:
        payload = data if data is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(
            self.url + path,
            data=payload or None,
            method=method,
            headers={"Content-Type": "application/json", **headers},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, raw, got = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, raw, got = error.code, error.read(), error.headers
        call = Call(method, path, template, status, json.loads(raw) if raw else None, got.get("Retry-After"))
        with self._lock:
            self.calls.append(call)
        return call


class Tee(io.TextIOBase):
    """stdout/stderr of this process, also kept in memory so the checks can read every log line."""

    def __init__(self, target: Any) -> None:
        self.target, self.buffer_text = target, io.StringIO()
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            self.buffer_text.write(text)
        return len(text)

    def flush(self) -> None:
        return None


class Backoff:
    """botocore's and our retry sleeps, recorded and shortened: the answers do not depend on how long they wait."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.count = 0

    def sleep(self, seconds: float) -> None:
        self.seconds += seconds
        self.count += 1
        time.sleep(min(seconds, 0.002))
