"""`make package`'s outside checks: checkov on the deployable template, parliament on every IAM and key policy.

Both tools come from requirements-checks.txt in a venv of their own (.venv-checks: checkov pins
versions the app's dev tools do not share). Every finding either fails the build or is listed in
infra/check_skips.json with the reason it does not apply; a listed skip that no longer matches
anything fails too, so the list only ever holds what is still true.

usage: security_checks.py CLOUDFORMATION.json [SKIPS.json]
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SKIPS = Path(__file__).resolve().parent / "check_skips.json"
# Placeholders for what CloudFormation fills in at deploy time (parliament reads ARNs, not functions).
PSEUDO = {
    "AWS::Region": "us-east-1",
    "AWS::AccountId": "123456789012",
    "AWS::Partition": "aws",
    "AWS::StackName": "personal-memory",
    "AWS::URLSuffix": "amazonaws.com",
}
ARN_OF_TYPE = {
    "AWS::DynamoDB::Table": "arn:aws:dynamodb:us-east-1:123456789012:table/{id}",
    "AWS::SQS::Queue": "arn:aws:sqs:us-east-1:123456789012:{id}",
    "AWS::Logs::LogGroup": "arn:aws:logs:us-east-1:123456789012:log-group:{id}:*",
    "AWS::KMS::Key": "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000",
    "AWS::IAM::Role": "arn:aws:iam::123456789012:role/{id}",
    "AWS::Lambda::Function": "arn:aws:lambda:us-east-1:123456789012:function:{id}",
}


def resolve(value: Any, resources: dict[str, Any]) -> Any:
    """The template's intrinsic functions replaced by plausible values of the shape IAM will see."""
    if isinstance(value, list):
        return [resolve(v, resources) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"Ref"}:
        return PSEUDO.get(value["Ref"], value["Ref"])
    if set(value) == {"Fn::GetAtt"}:
        target = value["Fn::GetAtt"]
        logical_id, attribute = target.split(".", 1) if isinstance(target, str) else target
        arn = ARN_OF_TYPE.get(resources.get(logical_id, {}).get("Type", ""), "arn:aws:unknown:::{id}").format(
            id=logical_id
        )
        # A real stream label is a timestamp with colons, which parliament's ARN matcher splits on.
        return arn + "/stream/2026-01-01T00.00.00.000" if attribute == "StreamArn" else arn
    if set(value) == {"Fn::Sub"}:
        text = value["Fn::Sub"] if isinstance(value["Fn::Sub"], str) else value["Fn::Sub"][0]

        def name(found: re.Match[str]) -> str:  # `${Table.Arn}` is a GetAtt, `${AWS::Region}` a pseudo parameter
            inner = found.group(1)
            if "." in inner and not inner.startswith("AWS::"):
                return str(resolve({"Fn::GetAtt": inner}, resources))
            return PSEUDO.get(inner, inner)

        return re.sub(r"\$\{([^}]+)\}", name, text)
    if set(value) == {"Fn::If"}:
        return resolve(value["Fn::If"][1], resources)
    return {k: resolve(v, resources) for k, v in value.items()}


def policies(template: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every permissions policy in the template: each role's, the key policy, any resource's PolicyDocument.

    Trust policies are left to checkov: parliament reads permission policies, and a trust policy has
    no Resource by design (parliament calls every one MALFORMED).
    """
    resources = template.get("Resources", {})
    for logical_id, resource in sorted(resources.items()):
        props = resource.get("Properties", {})
        if resource.get("Type") == "AWS::IAM::Role":  # its trust policy has no Resource: checkov reads those
            for policy in props.get("Policies", []):
                yield f"{logical_id}.Policies.{policy['PolicyName']}", resolve(policy["PolicyDocument"], resources)
        elif resource.get("Type") == "AWS::KMS::Key":
            yield f"{logical_id}.KeyPolicy", resolve(props["KeyPolicy"], resources)
        elif "PolicyDocument" in props:
            yield f"{logical_id}.PolicyDocument", resolve(props["PolicyDocument"], resources)


def parliament_findings(template: dict[str, Any]) -> list[tuple[str, str]]:
    from parliament import analyze_policy_string

    found = []
    for where, document in policies(template):
        analyzed = analyze_policy_string(
            json.dumps(document), ignore_private_auditors=True, include_community_auditors=True
        )
        found += [(f"{finding.issue}", where) for finding in analyzed.findings]
    return found


def checkov_findings(template_path: Path) -> list[tuple[str, str]]:
    checkov = Path(sys.executable).parent / "checkov"
    run = subprocess.run(
        [
            str(checkov),
            "-f",
            str(template_path),
            "--framework",
            "cloudformation",
            "-o",
            "json",
            "--quiet",
            "--compact",
            "--skip-download",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode not in (0, 1) or not run.stdout.strip():
        raise SystemExit(f"checkov failed to run: {run.stderr[-2000:]}")
    report = json.loads(run.stdout)
    reports = report if isinstance(report, list) else [report]
    return [
        (check["check_id"], check["resource"])
        for r in reports
        for check in r.get("results", {}).get("failed_checks", [])
    ]


def compare(tool: str, found: list[tuple[str, str]], skips: dict[str, str]) -> list[str]:
    """Problems: findings no skip explains, and skips nothing needs any more."""
    problems = [
        f"{tool}: {check} on {where} (fix it, or list it in {SKIPS.name} with its reason)"
        for check, where in sorted(set(found))
        if check not in skips
    ]
    problems += [
        f"{tool}: {check} is skipped but no longer found: remove it from {SKIPS.name}"
        for check in sorted(set(skips) - {check for check, _ in found})
    ]
    return problems


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    template_path = Path(argv[1])
    skips = json.loads(Path(argv[2] if len(argv) == 3 else SKIPS).read_text())
    template = json.loads(template_path.read_text())
    checkov = checkov_findings(template_path)
    parliament = parliament_findings(template)
    problems = compare("checkov", checkov, skips["checkov"]) + compare("parliament", parliament, skips["parliament"])
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(
        f"checkov: {len(set(checkov))} findings, each skipped with its reason ({len(skips['checkov'])} skips); "
        f"parliament: {len(list(policies(template)))} policies, {len(set(parliament))} findings skipped with reasons"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
