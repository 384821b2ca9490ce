"""`make smoke BASE_URL=...`: the user, agent and operator story against a deployed stage (or `make run`), step by step.

Who signs what:
- the user: `--token` (a bearer token from the identity provider, or `TOKEN`), or else the local
  launcher's `POST /dev/token` (only `make run` answers it);
- host, worker, operator: SigV4 (service `execute-api`) with `--credentials FILE` (the local
  launcher's `.local/credentials.json` shape), or `--host-role-arn`/`--worker-role-arn`/
  `--operator-role-arn` (assumed with STS), or else the caller's own AWS credentials for all three.
  Against the local stack (a loopback base URL) with none of these, the launcher's own keys file:
  `MEMORY_CREDENTIALS_FILE` where `make run` was told to write it there, else `.local/credentials.json`.

Each step prints one line (method, route, status, what it checked); the first failure stops the
run with exit 1. The entry it creates is forgotten at the end (the user's forget-all). Texts are
synthetic; nothing the run prints is a secret.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import secrets
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

STREAM_WAIT_SECONDS = 90.0
ROOT = Path(__file__).resolve().parent.parent
LAUNCHER_CREDENTIALS = ROOT / ".local" / "credentials.json"  # where `make run` writes its keys (local/stack.py)
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


class SmokeFailed(Exception):
    pass


class Stage:
    """The stage under test: plain, bearer and SigV4 requests, each printed as a step."""

    def __init__(self, base_url: str, region: str, out: Callable[[str], None] = print) -> None:
        self.base_url = base_url.rstrip("/")
        self.region = region
        self.out = out
        self.signers: dict[str, Any] = {}
        self.token = ""

    def call(
        self, method: str, path: str, body: Any = None, *, who: str = "anyone", raw: bool = False
    ) -> tuple[int, Any]:
        url = self.base_url + path
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if who == "user":
            headers["Authorization"] = f"Bearer {self.token}"
        elif who in self.signers:
            from botocore.auth import SigV4Auth
            from botocore.awsrequest import AWSRequest

            signed = AWSRequest(method=method, url=url, data=data or b"", headers=headers)
            SigV4Auth(self.signers[who], "execute-api", self.region).add_auth(signed)
            headers = dict(signed.headers.items())
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, payload = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, payload = error.code, error.read()
        if raw:
            return status, payload
        try:
            return status, json.loads(payload) if payload else None
        except ValueError:
            return status, None

    def step(
        self,
        label: str,
        method: str,
        path: str,
        expect: int,
        body: Any = None,
        *,
        who: str = "anyone",
        check: Callable[[Any], str | None] | None = None,
        raw: bool = False,
    ) -> Any:
        """One request; `check` returns a problem (or None). Prints `ok`/`FAILED` with the route and status."""
        status, answer = self.call(method, path, body, who=who, raw=raw)
        problem = (
            f"expected {expect}, got {status} {_code(answer)}"
            if status != expect
            else (check(answer) if check else None)
        )
        route = re.sub(r"([?&]user_id=)[^&]*", r"\1…", path)
        self.out(f"{'ok' if not problem else 'FAILED':6} {who:8} {method:6} {route} → {status}  {label}")
        if problem:
            raise SmokeFailed(f"{label}: {problem}")
        return answer


def _code(answer: Any) -> str:
    return str(answer.get("code", "")) if isinstance(answer, dict) else ""


def region_of(base_url: str) -> str:
    """execute-api URLs name their Region; anything else (make run) signs for us-east-1, as the local stack checks."""
    found = re.search(r"\.execute-api\.([a-z0-9-]+)\.amazonaws\.com", base_url)
    return found.group(1) if found else "us-east-1"


def token_subject(token: str) -> str:
    """The `sub` of a JWT, read (not verified: the stage verifies it) to name the user to the operator."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return str(claims["sub"])
    except (IndexError, KeyError, ValueError) as exc:
        raise SmokeFailed("the token is not a JWT with a sub claim") from exc


def launcher_credentials(base_url: str, environ: Mapping[str, str]) -> str:
    """The keys file `make run` wrote, when `base_url` is the local stack (a loopback address); "" for a stage."""
    if urlsplit(base_url).hostname not in LOOPBACK:
        return ""
    path = environ.get("MEMORY_CREDENTIALS_FILE") or str(LAUNCHER_CREDENTIALS)
    if not Path(path).is_file():
        raise SmokeFailed(f"no local stack keys at {path}: start `make run` first, or give CREDENTIALS=FILE")
    return path


def credentials_for(args: argparse.Namespace) -> dict[str, Any]:
    from botocore.credentials import Credentials

    if args.credentials:
        document = json.loads(open(args.credentials, encoding="utf-8").read())
        return {
            role: Credentials(
                document[role]["access_key_id"],
                document[role]["secret_access_key"],
                document[role].get("session_token"),
            )
            for role in ("host", "worker", "operator")
        }
    import boto3

    session = boto3.Session()
    own = session.get_credentials()
    if own is None:
        raise SmokeFailed("no AWS credentials for the IAM routes: give --credentials or configure the AWS CLI")
    signers = {}
    for role in ("host", "worker", "operator"):
        arn = getattr(args, f"{role}_role_arn")
        if not arn:
            signers[role] = own.get_frozen_credentials()
            continue
        assumed = session.client("sts").assume_role(RoleArn=arn, RoleSessionName=f"memory-smoke-{role}")["Credentials"]
        signers[role] = Credentials(assumed["AccessKeyId"], assumed["SecretAccessKey"], assumed["SessionToken"])
    return signers


def story(stage: Stage, user: str, wait: float = STREAM_WAIT_SECONDS) -> None:
    """Sign in, keep an entry, a host reads it for an agent session, a worker proposes, the user accepts, an operator forgets."""
    nonce = secrets.token_hex(4)
    session_id = f"smoke-{nonce}"
    entry_text, proposal_text = f"smoke test {nonce}: prefers green tea", f"smoke test {nonce}: walks at noon"
    stage.step("the Memory page", "GET", "/", 200, raw=True)
    stage.step("memory on", "PUT", "/v1/memory/settings", 200, {"enabled": True}, who="user")
    entry = stage.step(
        "an entry kept",
        "POST",
        "/v1/memory",
        201,
        {"text": entry_text, "kind": "preference"},
        who="user",
        check=lambda a: None if a.get("text") == entry_text else "the entry's text came back changed",
    )
    stage.step(
        "a session registered",
        "PUT",
        f"/v1/sessions/{session_id}",
        200,
        {"user_id": user, "thread_id": f"thread-{nonce}", "agent": "smoke-agent", "manifest": {"memory": True}},
        who="host",
    )
    stage.step(
        "the session's memory holds the entry",
        "GET",
        f"/v1/sessions/{session_id}/memory",
        200,
        who="host",
        check=lambda a: None if entry_text in [i.get("text") for i in a.get("items", [])] else "entry missing",
    )
    stage.step(
        "an agent proposes",
        "POST",
        f"/v1/sessions/{session_id}/events",
        202,
        {"events": [{"id": f"e-{nonce}", "type": "memory.propose", "text": proposal_text, "kind": "fact"}]},
        who="worker",
    )
    proposal = _wait_for_proposal(stage, proposal_text, wait)
    stage.step(
        "the proposal accepted",
        "POST",
        f"/v1/memory/{proposal['id']}/accept",
        201,
        who="user",
        check=lambda a: None if a.get("origin") == "agent" else "the accepted entry lost its origin",
    )
    stage.step("the worker sees the outcome", "GET", f"/v1/sessions/{session_id}/events", 200, who="worker")
    stage.step(
        "an operator reads the user's memory",
        "GET",
        f"/v1/operator/memory?user_id={user}",
        200,
        who="operator",
        check=lambda a: None if len(a.get("items", [])) >= 2 else "the operator sees fewer than two entries",
    )
    stage.step(
        "an operator forgets one entry",
        "DELETE",
        f"/v1/operator/memory/{entry['id']}?user_id={user}",
        204,
        who="operator",
        raw=True,
    )
    stage.step(
        "the user's journal shows the operator's access",
        "GET",
        "/v1/memory/journal",
        200,
        who="user",
        check=lambda a: None if "keep.memory.operator_access" in json.dumps(a) else "no operator_access row",
    )
    stage.step(
        "the user forgets everything",
        "DELETE",
        "/v1/memory",
        200,
        who="user",
        check=lambda a: None if a.get("deleted", 0) >= 1 else "nothing was deleted",
    )
    stage.step(
        "nothing is left",
        "GET",
        "/v1/memory",
        200,
        who="user",
        check=lambda a: None if not a.get("items") and not a.get("proposals") else "entries are still listed",
    )


def _wait_for_proposal(stage: Stage, text: str, wait: float) -> dict[str, Any]:
    """The stream consumer makes the proposal: poll the inbox (quietly) until it arrives."""
    deadline = time.monotonic() + wait
    while True:
        status, inbox = stage.call("GET", "/v1/inbox", who="user")
        waiting = (
            [p for p in (inbox or {}).get("memory_proposals", []) if p.get("text") == text] if status == 200 else []
        )
        if waiting or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    stage.out(
        f"{'ok' if waiting else 'FAILED':6} {'user':8} GET    /v1/inbox → {status}  the proposal arrived through the stream"
    )
    if not waiting:
        raise SmokeFailed(f"no proposal in the inbox after {wait:.0f} s (is the stream consumer running?)")
    return waiting[0]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, help="the stage's URL (EndpointURL), or http://127.0.0.1:8000")
    parser.add_argument("--token", default="", help="a user's bearer token (else the local launcher's /dev/token)")
    parser.add_argument(
        "--credentials",
        default="",
        help="host/worker/operator keys file (default for a loopback URL: the launcher's .local/credentials.json)",
    )
    for role in ("host", "worker", "operator"):
        parser.add_argument(f"--{role}-role-arn", default="", help=f"assume this role for the {role} calls")
    parser.add_argument(
        "--region", default="", help="SigV4 Region (default: read from an execute-api URL, else us-east-1)"
    )
    parser.add_argument("--user-id", default="", help="the local sign-in's user (default: a fresh smoke-<hex>)")
    parser.add_argument("--wait", type=float, default=STREAM_WAIT_SECONDS, help="seconds to wait for the stream")
    args = parser.parse_args(argv)
    if not args.base_url:
        parser.error("BASE_URL is required: make smoke BASE_URL=<EndpointURL>")
    stage = Stage(args.base_url, args.region or region_of(args.base_url))
    print(f"smoke: {stage.base_url} (SigV4 region {stage.region})")
    try:
        if args.token:
            stage.token, user = args.token, token_subject(args.token)
        else:
            user = args.user_id or f"smoke-{secrets.token_hex(4)}"
            stage.token = stage.step("signed in (local /dev/token)", "POST", "/dev/token", 200, {"user_id": user})[
                "token"
            ]
        if not (args.credentials or any(getattr(args, f"{r}_role_arn") for r in ("host", "worker", "operator"))):
            args.credentials = launcher_credentials(stage.base_url, os.environ)
            if args.credentials:
                print(f"smoke: the local stack's keys ({args.credentials})")
        stage.signers = credentials_for(args)
        story(stage, user, args.wait)
    except SmokeFailed as failed:
        print(f"smoke FAILED: {failed}")
        return 1
    print("smoke: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
