"""The real local stack (`make run`'s launcher) in a subprocess, for tests about HTTP: one per test session.

Every stack a test starts keeps its tables on the test process's DynamoDB Local (tests/support/ddb_local.py)
behind a prefix of its own, and starts no JVM; `own_dynamodb=True` gives it one of its own (a test about that).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local.process import LocalProcess, start_local_stack
from local.shared_dynamodb import SharedDynamoDB
from tests.support import ddb_local

ROOT = Path(__file__).resolve().parents[2]
# How long the tests wait for the stack's stream pump to handle an event (a conditional wait: on 2 shared,
# loaded cores this has taken well over the 20-30 s the tests used to allow alone).
STREAM_DEADLINE_S = 60.0


@dataclass
class LiveStack:
    """A started local stack (local/process.py) with the small HTTP helpers the tests use."""

    process: LocalProcess
    dynamodb: SharedDynamoDB | None = field(default=None)  # None: the stack's own DynamoDB Local

    @property
    def url(self) -> str:
        return self.process.url

    @property
    def credentials_file(self) -> Path:
        return self.process.credentials_file

    def request(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        body: Any = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any, dict[str, str]]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, payload, got = response.status, response.read(), dict(response.headers)
        except urllib.error.HTTPError as error:
            status, payload, got = error.code, error.read(), dict(error.headers)
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload.decode(errors="replace")
        return status, parsed, got

    def token(self, user_id: str) -> str:
        status, body, _ = self.request("POST", "/dev/token", body={"user_id": user_id})
        assert status == 200, body
        return str(body["token"])

    def credentials(self) -> dict[str, dict[str, str]]:
        return json.loads(self.credentials_file.read_text())

    def logs(self) -> str:
        return self.process.log_file.read_text(errors="replace")

    def stop(self) -> None:
        self.process.stop()
        if self.dynamodb is not None and self.dynamodb.endpoint is not None:
            ddb_local.drop_stack_tables(self.dynamodb.endpoint, self.dynamodb.prefix)


def start_live_stack(workdir: Path, *, own_dynamodb: bool = False) -> LiveStack:
    """Start `make run`'s launcher; its tables on this process's DynamoDB Local, unless `own_dynamodb`.

    Call it from the main thread: the first stack of a process may start that DynamoDB Local.
    """
    if own_dynamodb:
        return LiveStack(start_local_stack(workdir))
    target = SharedDynamoDB(endpoint=ddb_local.shared().endpoint, prefix=ddb_local.stack_prefix())
    return LiveStack(start_local_stack(workdir, dynamodb=target), target)
