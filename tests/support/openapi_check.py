"""openapi.yaml as a checker: a response's status must be listed for its route and its body must validate.

JSON Schema Draft 2020-12 (the OpenAPI 3.1 dialect); shared by the route, fault, browser and chaos tests.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.support.iam import iam_call

ROOT = Path(__file__).resolve().parents[2]
SPEC_URI = "urn:personal-memory:openapi"


@functools.cache
def spec() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "openapi.yaml").read_text())


@functools.cache
def registry() -> Registry:
    return Registry().with_resource(SPEC_URI, Resource.from_contents(spec(), default_specification=DRAFT202012))


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def check(method: str, path: str, status: int, body: Any, media: str = "application/json") -> None:
    """Fail unless `status` is documented for `method path` and `body` validates against its schema."""
    operation = spec()["paths"][path][method.lower()]
    assert str(status) in operation["responses"], f"{method} {path} answered {status}, which openapi.yaml does not list"
    pointer = f"/paths/{_escape(path)}/{method.lower()}/responses/{status}"
    response = operation["responses"][str(status)]
    if "$ref" in response:
        pointer = response["$ref"].removeprefix("#")
        response = spec()["components"]["responses"][pointer.rsplit("/", 1)[1]]
    if "content" not in response:
        assert body in (None, "", b""), f"{method} {path} {status} has no documented body but sent one"
        return
    assert media in response["content"], f"{method} {path} {status}: {media} is not a documented content type"
    root = {"$ref": f"{SPEC_URI}#{pointer}/content/{_escape(media)}/schema"}
    validator = Draft202012Validator(root, registry=registry(), format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
    assert not errors, f"{method} {path} {status}: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path)) or '<body>'}: {e.message[:200]}" for e in errors
    )


def user(
    api: Any,
    method: str,
    path: str,
    who: str | None,
    body: Any = None,
    *,
    template: str | None = None,
    raw: str | None = None,
) -> Any:
    status, payload = api.call(method, path, who, body, raw=raw)
    check(method, template or path.split("?")[0], status, payload)
    return status, payload


def iam(client: Any, method: str, path: str, arn: str | None, template: str, body: Any = None) -> Any:
    status, payload = iam_call(client, method, path, arn, body)
    check(method, template, status, payload)
    return status, payload
