"""Helpers for the SDK tests: a recording HTTP server on 127.0.0.1 and a SigV4 checker.

A plainly named module (not conftest) so test modules can import it whatever other conftest.py
files the suite loads.
"""

from __future__ import annotations

import hmac
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ACCESS_KEY = "AKIDSDKTESTHOST"
SECRET_KEY = "sdk-test-secret-host"

_AUTH = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request, SignedHeaders=(?P<signed>[a-z0-9;-]+), "
    r"Signature=(?P<signature>[0-9a-f]{64})"
)


@dataclass
class Recorded:
    """One request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    """What the server answers next; `drop` closes the connection without any response."""

    status: int = 200
    body: Any = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False


class RecordingServer:
    """Records every request; answers from a script, then with the default reply."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.script: list[Reply] = []
        self.default = Reply()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {name.lower(): value for name, value in self.headers.items()}
                owner.requests.append(Recorded(self.command, self.path, headers, body))
                reply = owner.script.pop(0) if owner.script else owner.default
                if reply.drop:
                    self.close_connection = True
                    return
                payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body)
                data = payload.encode() if isinstance(payload, str) else payload
                self.send_response(reply.status)
                for name, value in {"Content-Type": "application/json", **reply.headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = _handle

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def reply(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def __enter__(self) -> RecordingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def sigv4_verifies(request: Recorded, access_key: str, secret_key: str, region: str = "us-east-1") -> bool:
    """Recompute the request's SigV4 signature with botocore from what the server received."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    match = _AUTH.fullmatch(request.headers.get("authorization", ""))
    if match is None or match["key"] != access_key:
        return False
    signed = match["signed"].split(";")
    if "host" not in signed or "x-amz-date" not in signed:
        return False
    headers = {name: request.headers[name] for name in signed}
    url = f"http://{request.headers['host']}{request.path}"
    rebuilt = AWSRequest(method=request.method, url=url, data=request.body, headers=headers)
    rebuilt.context["timestamp"] = request.headers["x-amz-date"]
    signer = SigV4Auth(Credentials(access_key, secret_key), match["service"], match["region"])
    if (match["service"], match["region"]) != ("execute-api", region):
        return False
    string_to_sign = signer.string_to_sign(rebuilt, signer.canonical_request(rebuilt))
    expected = signer.signature(string_to_sign, rebuilt)
    return hmac.compare_digest(expected, match["signature"])
