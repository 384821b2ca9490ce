"""The rules API Gateway (REST) enforces when it imports the API, which cfn-lint, the SAM translator and moto all skip.

A template that breaks one passes every offline check and is refused at deploy time (the whole API,
with "Errors found during import"). Each rule is written from AWS's documentation:

- one variable path part per parent: a resource's children may hold at most one `{variable}`
  ("A sibling ({entry_id}) of this resource already has a variable path part -- only one is allowed");
- path part characters: `a-zA-Z0-9._-` (and `:`), or a whole `{name}` / `{name+}` ("Resource's path part
  only allow a-zA-Z0-9._- and curly braces at the beginning and the end and an optional plus sign
  before the closing brace");
- a greedy `{proxy+}` only as the last path part ("The greedy path parameter must be at the end of
  the API resource path");
- HTTP methods: GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS and ANY (`x-amazon-apigateway-any-method`);
- the integration timeout: 50 ms to 29 s (REST API quotas); a Lambda behind it that may run longer
  works on after the client got a 504, so its Timeout must stay under it;
- stage names: alphanumerics, hyphens and underscores, at most 128 characters;
- at most 300 resources per API (REST API quotas, the default).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

PATH_PART = re.compile(r"[A-Za-z0-9._:-]+|\{[A-Za-z0-9._-]+\+?\}")
STAGE_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")
METHODS = frozenset({"get", "post", "put", "patch", "delete", "head", "options", "x-amazon-apigateway-any-method"})
NOT_METHODS = frozenset({"parameters", "summary", "description", "servers"})  # allowed path-item keys
MIN_TIMEOUT_MS, MAX_TIMEOUT_MS = 50, 29_000
MAX_RESOURCES = 300


def _is_variable(part: str) -> bool:
    return part.startswith("{") and part.endswith("}")


def path_problems(paths: dict[str, Any]) -> list[str]:
    """Every import rule the OpenAPI `paths` break."""
    problems: list[str] = []
    variables: dict[tuple[str, ...], set[str]] = {}  # parent resource → its variable children
    resources: set[tuple[str, ...]] = set()
    for path, item in paths.items():
        if path == "/":
            parts: list[str] = []
        elif not path.startswith("/") or path.endswith("/") or "//" in path:
            problems.append(f"{path}: a resource path starts with / and has no empty part")
            continue
        else:
            parts = path[1:].split("/")
        for depth, part in enumerate(parts):
            parent = tuple(parts[:depth])
            resources.add((*parent, part))
            if not PATH_PART.fullmatch(part):
                problems.append(
                    f"{path}: path part {part!r} may only use a-zA-Z0-9._:- or be a whole {{name}} / {{name+}}"
                )
            if part.endswith("+}") and depth != len(parts) - 1:
                problems.append(f"{path}: the greedy path part {part} must be the last one")
            if _is_variable(part):
                variables.setdefault(parent, set()).add(part)
        for key in item:
            if key.lower() not in METHODS and key not in NOT_METHODS and not key.startswith("x-"):
                problems.append(f"{path}: {key!r} is not a method API Gateway supports")
            elif key != key.lower() and key.lower() in METHODS:
                problems.append(f"{path}: method {key!r} must be lower case in OpenAPI")
    for parent, names in sorted(variables.items()):
        if len(names) > 1:
            where = "/" + "/".join(parent)
            problems.append(
                f"{where}: only one variable path part is allowed per parent, found {', '.join(sorted(names))}"
            )
    if len(resources) + 1 > MAX_RESOURCES:  # + the root resource
        problems.append(f"{len(resources) + 1} resources: more than the {MAX_RESOURCES} an API may have")
    return problems


def _function_of(uri: Any) -> str | None:
    """The function logical id an integration URI names (`Fn::Sub` with `${APIHandler.Arn}`)."""
    text = json.dumps(uri)
    match = re.search(r"\$\{(\w+)\.Arn\}", text)
    return match.group(1) if match else None


def integration_problems(paths: dict[str, Any], resources: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for path, item in paths.items():
        for method, operation in item.items():
            if method.lower() not in METHODS or not isinstance(operation, dict):
                continue
            integration = operation.get("x-amazon-apigateway-integration") or {}
            timeout_ms = int(integration.get("timeoutInMillis", MAX_TIMEOUT_MS))
            if not MIN_TIMEOUT_MS <= timeout_ms <= MAX_TIMEOUT_MS:
                problems.append(f"{method.upper()} {path}: integration timeout {timeout_ms} ms is outside 50..29000")
            function = _function_of(integration.get("uri"))
            props = (resources.get(function) or {}).get("Properties", {}) if function else {}
            seconds = props.get("Timeout", 3)
            if function and isinstance(seconds, int) and seconds * 1000 >= timeout_ms:
                problems.append(
                    f"{method.upper()} {path}: {function} may run {seconds} s, not under the {timeout_ms} ms integration timeout"
                )
    return problems


def template_problems(template: dict[str, Any]) -> list[str]:
    """Every rule broken by the REST APIs of a SAM template (DefinitionBody) or of its expansion (Body)."""
    resources = template.get("Resources", {})
    problems: list[str] = []
    apis = 0
    for logical_id, resource in resources.items():
        props = resource.get("Properties", {})
        kind = resource.get("Type")
        if kind not in ("AWS::Serverless::Api", "AWS::ApiGateway::RestApi", "AWS::ApiGateway::Stage"):
            continue
        stage = props.get("StageName")
        if isinstance(stage, str) and not STAGE_NAME.fullmatch(stage):
            problems.append(f"{logical_id}: stage name {stage!r} may only use alphanumerics, - and _ (1..128)")
        body = props.get("DefinitionBody") if kind == "AWS::Serverless::Api" else props.get("Body")
        if kind == "AWS::ApiGateway::Stage" or body is None:
            continue
        apis += 1
        paths = body.get("paths", {})
        problems += [f"{logical_id} {p}" for p in path_problems(paths) + integration_problems(paths, resources)]
    if apis == 0:
        problems.append("no REST API with an inline OpenAPI body in the template")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: apigateway_rules.py TEMPLATE.json...", file=sys.stderr)
        return 2
    found = [f"{name}: {p}" for name in argv[1:] for p in template_problems(json.loads(Path(name).read_text()))]
    for problem in found:
        print(problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
