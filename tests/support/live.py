"""The real local stack (`make run`'s launcher) in a subprocess, for tests about HTTP: one per test session."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveStack:
    url: str
    credentials_file: Path
    process: subprocess.Popen[bytes]
    log_file: Path

    def request(self, method: str, path: str, *, token: str | None = None, body: Any = None, raw: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
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
        return self.log_file.read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start_live_stack(workdir: Path) -> LiveStack:
    port = free_port()
    credentials = workdir / "credentials.json"
    log_file = workdir / "stack.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"PORT": str(port), "MEMORY_CREDENTIALS_FILE": str(credentials), "PYTHONUNBUFFERED": "1"})
    with log_file.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "local.run"], cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    stack = LiveStack(f"http://127.0.0.1:{port}", credentials, process, log_file)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the local stack exited:\n" + stack.logs())
        try:
            stack.request("GET", "/page-config")
            if credentials.exists():
                return stack
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.2)
    stack.stop()
    raise RuntimeError("the local stack did not start in 60 s:\n" + stack.logs())
