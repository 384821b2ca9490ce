"""Schemathesis, as its own CLI runs it, against the real local HTTP server: every route family runs clean.

One `st run openapi.yaml` over every route family (user, host, worker, operator), each operation with its
family's real credentials: a user's bearer token from the launcher's /dev/token, or a SigV4 signature
with the keys in the stack's credentials file (tests/support/schemathesis_auth.py signs each request as
sent). Every phase runs (coverage: boundary values and undeclared methods such as TRACE; fuzzing: valid
and invalid data; stateful: sequences through the spec's links) with every check, derandomized, so each
run sends the same requests and a failure reproduces (`st replay` or the printed curl). The one check
the IAM routes skip, and why, is in tests/http/schemathesis.toml.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import schemathesis
import yaml

ROOT = Path(__file__).resolve().parents[2]
SPEC_PATH = ROOT / "openapi.yaml"
CONFIG = Path(__file__).with_name("schemathesis.toml")
FAMILIES = ("user", "host", "worker", "operator", "agent", "oauth")
EXAMPLES_PER_OPERATION = 3  # the fuzzing phase's; coverage and stateful size themselves (~630 cases in all)


def _operations_by_family() -> dict[str, set[str]]:
    """'METHOD /path' of every operation in the spec, by its tag."""
    paths = yaml.safe_load(SPEC_PATH.read_text())["paths"]
    found: dict[str, set[str]] = {}
    for path, item in paths.items():
        for method, operation in item.items():
            if isinstance(operation, dict):
                for tag in operation.get("tags", ()):
                    found.setdefault(tag, set()).add(f"{method.upper()} {path}")
    return found


@pytest.fixture(scope="module")
def schema() -> Any:
    return schemathesis.openapi.from_path(str(SPEC_PATH))


@pytest.fixture(scope="module")
def fuzz_user(live: Any) -> dict[str, str]:
    """A fresh user with memory on, so adds and lists do real work."""
    token = live.token(f"fuzz-{uuid.uuid4().hex[:8]}")
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    return {"Authorization": f"Bearer {token}"}


def test_every_app_route_is_in_a_fuzzed_family() -> None:
    """The families come from the spec's tags: a route left untagged would silently escape the fuzzer."""
    from app import app

    by_family = _operations_by_family()
    fuzzed = set().union(*(by_family[family] for family in FAMILIES))
    served = ("/v1/", "/mcp", "/.well-known/", "/oauth/")  # the API, remote MCP, its metadata and OAuth (not the page)
    api_routes = {
        f"{method} {path}" for path, methods in app.routes.items() for method in methods if path.startswith(served)
    }
    assert api_routes == fuzzed and all(by_family[family] for family in FAMILIES)


def test_schemathesis_runs_clean_on_every_route_family(live: Any, fuzz_user: dict[str, str], tmp_path: Path) -> None:
    keys = live.credentials()
    user_token = fuzz_user["Authorization"].removeprefix("Bearer ")
    status, made, _ = live.request("POST", "/v1/connections", token=user_token, body={"agent": "fuzzer"})
    assert status == 201, made
    auth: dict[str, Any] = {"user": {"bearer": user_token}, "agent": {"bearer": made["token"]}}
    for family in ("host", "worker", "operator"):
        auth[family] = {"sigv4": {name: keys[family][name] for name in ("access_key_id", "secret_access_key")}}
    command = [
        str(Path(sys.executable).with_name("st")),
        "--no-color",
        "--config-file",
        str(CONFIG),
        "run",
        str(SPEC_PATH),
        "--url",
        live.url,
        "--include-tag-regex",
        f"^({'|'.join(FAMILIES)})$",
        "--generation-deterministic",
        "--max-examples",
        str(EXAMPLES_PER_OPERATION),
        "--workers",
        "1",
        "--request-timeout",
        "30",
    ]
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    env.update(
        {
            "SCHEMATHESIS_HOOKS": "tests.support.schemathesis_auth",
            "MEMORY_FUZZ_AUTH": json.dumps(auth),
            "PYTHONPATH": str(ROOT),
        }
    )
    # Run from a scratch directory: schemathesis keeps its crash cache (.schemathesis/) in the working directory.
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-8000:]
    operations = re.search(r"Tested: (\d+)", output)
    tally = re.search(r"(\d+) generated, (\d+) passed", output)
    assert operations is not None and tally is not None, output[-2000:]
    expected = sum(len(_operations_by_family()[family]) for family in FAMILIES)
    generated, passed = map(int, tally.groups())
    assert int(operations[1]) == expected and generated == passed >= 20 * expected, output[-2000:]
    print(f"schemathesis: {expected} operations, {generated} cases", *re.findall(r"Missing test data.*", output))


# Inputs schemathesis does not produce (it draws ASCII digits, valid Unicode and shallow JSON), aimed
# at the parsing edges. Each once answered 500 or a non-contract body (superscript digits, lone
# surrogates, deep nesting, a text/plain Content-Type); now each is a contract answer.


HOSTILE = [
    pytest.param("GET", "/v1/memory/journal?limit=%C2%B2", {}, id="superscript-digit-limit"),
    pytest.param("GET", "/v1/memory/journal?limit=-1", {}, id="negative-limit"),
    pytest.param("GET", "/v1/memory/journal?cursor=%FF%FE", {}, id="garbage-cursor"),
    pytest.param("POST", "/v1/memory", {"raw": b'{"text": "\\ud800"}'}, id="lone-surrogate-add"),
    pytest.param("PATCH", "/v1/memory/0", {"raw": b'{"text": "\\udfff"}'}, id="lone-surrogate-edit"),
    pytest.param("POST", "/v1/memory", {"raw": b"[" * 100_000}, id="deep-json"),
    pytest.param("POST", "/v1/memory", {"raw": b"\xff\xfe"}, id="not-utf8"),
    pytest.param("POST", "/v1/memory", {"raw": b'{"text": "x", "expires_in_days": 1e400}'}, id="infinite-number"),
    pytest.param("POST", "/v1/memory", {"body": {"text": "x", "expires_in_days": 10**30}}, id="huge-integer"),
    pytest.param("DELETE", "/v1/memory/" + "a" * 3000, {}, id="long-id"),
    pytest.param("GET", "/v1/memory", {"headers": {"Content-Type": "text/plain"}}, id="text-content-type"),
]


@pytest.mark.parametrize(("method", "path", "request_kwargs"), HOSTILE)
def test_hostile_input_gets_a_contract_answer(
    method: str, path: str, request_kwargs: dict[str, Any], schema: Any, live: Any, fuzz_user: dict[str, str]
) -> None:
    token = fuzz_user["Authorization"].removeprefix("Bearer ")
    status, body, _ = live.request(method, path, token=token, **request_kwargs)
    assert status < 500, (status, body)
    route = path.split("?")[0]
    operation = next(
        (
            op
            for label in sorted(_operations_by_family()["user"])
            if (op := schema.find_operation_by_label(label))
            and op.method.upper() == method
            and _matches(op.path, route)
        ),
        None,
    )
    assert operation is not None, f"{method} {route} answered {status}: no such operation in openapi.yaml"
    assert str(status) in operation.definition.raw["responses"], (status, body)
    if status >= 400:
        assert (
            isinstance(body, dict)
            and set(body) <= {"code", "message", "field", "shape"}
            and {"code", "message"} <= set(body)
        ), body


def _matches(template: str, path: str) -> bool:
    parts, actual = template.strip("/").split("/"), path.strip("/").split("/")
    return len(parts) == len(actual) and all(p.startswith("{") or p == a for p, a in zip(parts, actual, strict=True))
