"""Schemathesis against the real local HTTP server: no user route may answer 5xx or outside openapi.yaml.

Each user operation gets a fixed number of generated requests, valid ones (positive) and ones that
break the schema (negative), derandomized so every run sends the same requests and a failure
reproduces. Requests carry a real user token from the launcher's /dev/token.
"""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

ROOT = Path(__file__).resolve().parents[2]
SPEC_PATH = ROOT / "openapi.yaml"
EXAMPLES_PER_OPERATION = 30
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def _user_operations() -> dict[str, bool]:
    """'METHOD /path' of every operation tagged `user` in the spec → whether it takes a body or a query.

    Only those can be fuzzed negatively: the token is fixed, and an empty path id cannot reach the route.
    """
    paths = yaml.safe_load(SPEC_PATH.read_text())["paths"]
    return {
        f"{method.upper()} {path}": "requestBody" in operation or any(p.get("in") == "query" for p in operation.get("parameters", []))
        for path, item in sorted(paths.items())
        for method, operation in item.items()
        if isinstance(operation, dict) and "user" in operation.get("tags", ())
    }


USER_OPERATIONS = _user_operations()
CASES = [(label, GenerationMode.POSITIVE) for label in USER_OPERATIONS] + [
    (label, GenerationMode.NEGATIVE) for label, has_input in USER_OPERATIONS.items() if has_input
]


@pytest.fixture(scope="module")
def schema() -> Any:
    return schemathesis.openapi.from_path(str(SPEC_PATH))


@pytest.fixture(scope="module")
def fuzz_user(live: Any) -> dict[str, str]:
    """A fresh user with memory on, so adds and lists do real work."""
    token = live.token(f"fuzz-{uuid.uuid4().hex[:8]}")
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    return {"Authorization": f"Bearer {token}"}


def _strategy(operation: Any, mode: GenerationMode, live: Any, headers: dict[str, str]) -> Any:
    """Generated requests; for routes on one entry, half of them aim at entries that really exist."""
    strategy = operation.as_strategy(generation_mode=mode, headers=headers)
    if "/v1/memory/{id}" not in operation.path or not mode.is_positive:
        return strategy
    token = headers["Authorization"].removeprefix("Bearer ")
    live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})
    ids = []
    for text in ("Prefers tea", "Walks at noon", "Reads before bed"):
        status, entry, _ = live.request("POST", "/v1/memory", token=token, body={"text": text, "expires_in_days": 9})
        assert status == 201, entry
        ids.append(entry["id"])
    aimed = [operation.as_strategy(generation_mode=mode, headers=headers, path_parameters={"id": i}) for i in ids]
    return st.one_of(strategy, *aimed)


def test_every_user_route_is_fuzzed() -> None:
    """The list comes from the spec's tags: a user route left untagged would silently escape the fuzzer."""
    from app import app

    user_routes = {
        f"{method} {path}"
        for path, methods in app.routes.items()
        for method, entry in methods.items()
        if getattr(entry.authorizer, "name", None) == "user_token"
    }
    assert set(USER_OPERATIONS) == user_routes and len(user_routes) == 14  # 11 + the three agent routes (issue 23)


@pytest.mark.parametrize(("label", "mode"), CASES, ids=[f"{label} {mode}" for label, mode in CASES])
def test_user_route_never_fails_or_leaves_the_spec(label: str, mode: GenerationMode, schema: Any, live: Any, fuzz_user: dict[str, str]) -> None:
    operation = schema.find_operation_by_label(label)
    assert operation is not None, label

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=_strategy(operation, mode, live, fuzz_user))
    def fuzz(case: Any) -> None:
        case.call_and_validate(base_url=live.url, checks=CHECKS, timeout=30)

    fuzz()


# Inputs the generators above do not produce (they draw ASCII digits, valid Unicode and shallow
# JSON), aimed at the parsing edges. Each once answered 500 or a non-contract body (superscript
# digits, lone surrogates, deep nesting, a text/plain Content-Type); now each is a contract answer.


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
def test_hostile_input_gets_a_contract_answer(method: str, path: str, request_kwargs: dict[str, Any], schema: Any, live: Any, fuzz_user: dict[str, str]) -> None:
    token = fuzz_user["Authorization"].removeprefix("Bearer ")
    status, body, _ = live.request(method, path, token=token, **request_kwargs)
    assert status < 500, (status, body)
    route = path.split("?")[0]
    operation = next(
        (op for label in USER_OPERATIONS if (op := schema.find_operation_by_label(label)) and op.method.upper() == method and _matches(op.path, route)),
        None,
    )
    assert operation is not None, f"{method} {route} answered {status}: no such operation in openapi.yaml"
    assert str(status) in operation.definition.raw["responses"], (status, body)
    if status >= 400:
        assert isinstance(body, dict) and set(body) <= {"code", "message", "field", "shape"} and {"code", "message"} <= set(body), body


def _matches(template: str, path: str) -> bool:
    parts, actual = template.strip("/").split("/"), path.strip("/").split("/")
    return len(parts) == len(actual) and all(p.startswith("{") or p == a for p, a in zip(parts, actual, strict=True))
