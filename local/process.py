"""`python -m local.run` in a subprocess on a free 127.0.0.1 port: what the demo and the HTTP tests start."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from local.shared_dynamodb import ENDPOINT_VARIABLE, PREFIX_VARIABLE, SharedDynamoDB

ROOT = Path(__file__).resolve().parent.parent
_SHARED = frozenset({ENDPOINT_VARIABLE, PREFIX_VARIABLE})
STACK_START_SECONDS = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_child(process: subprocess.Popen[bytes]) -> None:
    """Ask a child to end (SIGTERM), and end it (SIGKILL) if it has not within 10 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class LocalProcess:
    """`python -m local.run` running in a subprocess: its URL, its credentials file and its log."""

    url: str
    credentials_file: Path
    log_file: Path
    process: subprocess.Popen[bytes] = field(repr=False)

    def log_tail(self, lines: int = 20) -> str:
        text = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        stop_child(self.process)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/page-config", timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def start_local_stack(workdir: Path, *, dynamodb: SharedDynamoDB | None = None) -> LocalProcess:
    """Start a fresh stack (its own moto, tables and keys) and wait until it answers and wrote its keys.

    Its DynamoDB Local is its own, or the one `dynamodb` names, its tables behind `dynamodb.prefix`
    (local/shared_dynamodb.py); the caller's MEMORY_DYNAMODB_ENDPOINT and MEMORY_TABLE_PREFIX are not passed on.

    The launcher binds a port of its own choosing (PORT=0) and names it in stack.json: a port picked here
    and freed for the child to bind could be taken meanwhile (by another stack starting at once, or by
    the child's own moto server, which also binds an ephemeral port), and the stack would fail to start.
    """
    credentials = workdir / "credentials.json"
    log_file = workdir / "stack.log"
    stack_file = workdir / "stack.json"
    stack_file.unlink(missing_ok=True)  # the URL is read from the one this launch writes
    # Our AWS_* variables must not leak in: the launcher points boto3 at its own moto.
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_") and key not in _SHARED}
    if dynamodb is not None and dynamodb.endpoint is not None:
        env.update({ENDPOINT_VARIABLE: dynamodb.endpoint, PREFIX_VARIABLE: dynamodb.prefix})
    env.update({"PORT": "0", "MEMORY_CREDENTIALS_FILE": str(credentials), "PYTHONUNBUFFERED": "1"})
    with log_file.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "local.run"], cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    stack = LocalProcess("", credentials, log_file, process)
    deadline = time.monotonic() + STACK_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the local stack exited while starting:\n" + stack.log_tail())
        # stack.json is the launcher's last file (local/stack.py): once it is there, everything is.
        url = _api_url(stack_file)
        if url and credentials.exists() and _answers(url):
            stack.url = url
            return stack
        time.sleep(0.2)
    stack.stop()
    raise RuntimeError(f"the local stack did not answer within {STACK_START_SECONDS:.0f} s:\n" + stack.log_tail())


def _api_url(stack_file: Path) -> str:
    """The API's URL from the launcher's stack.json ("" until it is written; it is renamed into place whole)."""
    try:
        return str(json.loads(stack_file.read_text())["api"])
    except (OSError, ValueError, KeyError):
        return ""
