"""`make deploy`, offline: the AWS CLI commands it would run, the template size rule, every parameter reachable.

AWS's documentation, quoted:
- CloudFormation API reference, CreateStack / CreateChangeSet, `TemplateBody`: "Structure containing
  the template body with a minimum length of 1 byte and a maximum length of 51,200 bytes." Larger
  templates go by `TemplateURL` (S3): `aws cloudformation deploy` uploads the template itself only
  when given `--s3-bucket`, and refuses a larger one without it.
- CloudFormation guide, "CloudFormation template Rules syntax": "The Rules section is an optional part
  of a CloudFormation template that enables custom validation logic. When included, this section
  contains rule functions that validate parameter values before CloudFormation creates or updates any
  resources." — so a page that could sign nobody in fails the deploy before anything is created.
- Lambda guide, "Configuring reserved concurrency": reserving concurrency takes it from the account's
  unreserved pool, which Lambda keeps at 100 at least; a new account's quota can be lower than that,
  so reserving by default would fail a first deploy. The three functions' reservations are parameters.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from infra import compose_template, security_checks
from scripts import deploy
from tests.support.package import Package

ROOT = Path(__file__).resolve().parents[2]
IDP = {
    "JWT_ISSUER": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC",
    "JWT_AUDIENCE": "client123",
    "JWT_JWKS_URL": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC/.well-known/jwks.json",
}
PAGE = {
    "OIDC_AUTHORIZE_URL": "https://d.auth.eu-west-1.amazoncognito.com/oauth2/authorize",
    "OIDC_TOKEN_URL": "https://d.auth.eu-west-1.amazoncognito.com/oauth2/token",
    "OIDC_CLIENT_ID": "client123",
}
ENDPOINT = "https://abc123.execute-api.eu-west-1.amazonaws.com/api/"


class FakeAws:
    """Answers the few read commands as a fresh account would; records every command."""

    def __init__(self, profile_region: str = "eu-west-1", unreserved: str = "1000") -> None:
        self.commands: list[list[str]] = []
        self.profile_region = profile_region
        self.unreserved = unreserved

    def __call__(self, command: list[str]) -> str:
        self.commands.append(command)
        if command[1:3] == ["sts", "get-caller-identity"]:
            return "111122223333"
        if command[0] == "sh" and "configure get region" in command[2]:
            return self.profile_region
        if command[1:3] == ["lambda", "get-account-settings"]:
            return self.unreserved
        if command[1:3] == ["sns", "create-topic"]:
            return "arn:aws:sns:eu-west-1:111122223333:personal-memory-alarms"
        if command[1:3] == ["cloudformation", "describe-stacks"]:
            return json.dumps([{"OutputKey": "EndpointURL", "OutputValue": ENDPOINT}])
        return ""

    def deploys(self) -> list[dict[str, str]]:
        found = []
        for command in self.commands:
            if command[1:3] == ["cloudformation", "deploy"]:
                overrides = command[command.index("--parameter-overrides") + 1 :]
                found.append(dict(item.split("=", 1) for item in overrides))
        return found


def _rule_holds(rule: dict[str, Any], parameters: dict[str, Any]) -> bool:
    """CloudFormation's rule functions used here: Fn::Equals, Fn::Not, Ref (defaults filled in)."""

    def value(node: Any) -> Any:
        if isinstance(node, dict) and "Ref" in node:
            return parameters[node["Ref"]]
        if isinstance(node, dict) and "Fn::Equals" in node:
            left, right = node["Fn::Equals"]
            return value(left) == value(right)
        if isinstance(node, dict) and "Fn::Not" in node:
            return not value(node["Fn::Not"][0])
        return node

    if "RuleCondition" in rule and not value(rule["RuleCondition"]):
        return True
    return all(value(assertion["Assert"]) for assertion in rule["Assertions"])


def _with_defaults(template: dict[str, Any], given: dict[str, str]) -> dict[str, Any]:
    return {name: given.get(name, spec.get("Default", "")) for name, spec in template["Parameters"].items()}


def test_a_fresh_account_gets_a_bucket_a_topic_and_the_template_through_s3() -> None:
    aws = FakeAws()
    url = deploy.run(deploy.Plan(env={**IDP, **PAGE, "OIDC_REDIRECT_URI": ENDPOINT}, aws="aws"), aws)
    assert url == ENDPOINT
    verbs = [" ".join(c[:2] if c[0] == "sh" else c[1:3]) for c in aws.commands]
    assert verbs == [
        "sh -c",
        "sts get-caller-identity",
        "sh -c",
        "sns create-topic",
        "cloudformation package",
        "lambda get-account-settings",
        "cloudformation deploy",
        "cloudformation describe-stacks",
    ]
    assert "configure get region" in aws.commands[0][2]
    bucket = "personal-memory-artifacts-111122223333-eu-west-1"
    assert "create-bucket" in aws.commands[2][2] and "LocationConstraint=eu-west-1" in aws.commands[2][2]
    assert "put-public-access-block" in aws.commands[2][2]
    [package, deployed] = [c for c in aws.commands if c[1] == "cloudformation" and c[2] in ("package", "deploy")]
    assert package[package.index("--s3-bucket") + 1] == bucket
    assert deployed[deployed.index("--s3-bucket") + 1] == bucket  # the template is over TemplateBody's limit
    assert {"CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"} <= set(deployed)
    [parameters] = aws.deploys()
    assert parameters["AlarmTopicArn"] == "arn:aws:sns:eu-west-1:111122223333:personal-memory-alarms"
    assert "StreamReservedConcurrency" not in parameters  # the template's 5: the account can spare them


def test_an_account_that_cannot_spare_the_consumers_reservation_deploys_without_it() -> None:
    """Lambda guide, "Configuring reserved concurrency": Lambda keeps 100 of the account's concurrency unreserved;
    a new account's quota can be lower than that, and reserving any then fails the deploy."""
    aws = FakeAws(unreserved="10")
    plan = deploy.Plan(env={**IDP, "PAGE_SIGN_IN": "off", "AWS_REGION": "eu-west-1"})
    deploy.run(plan, aws)
    [parameters] = aws.deploys()
    assert parameters["StreamReservedConcurrency"] == "0"
    assert any("StreamReservedConcurrency=0" in line for line in plan.log)
    given = FakeAws(unreserved="10")
    deploy.run(
        deploy.Plan(env={**IDP, "PAGE_SIGN_IN": "off", "AWS_REGION": "eu-west-1", "STREAM_RESERVED_CONCURRENCY": "2"}),
        given,
    )
    assert given.deploys()[0]["StreamReservedConcurrency"] == "2"  # what the operator says goes


def test_a_given_bucket_and_topic_are_used_and_nothing_is_created() -> None:
    aws = FakeAws()
    env = {
        **IDP,
        "ARTIFACT_BUCKET": "my-artifacts",
        "ALARM_TOPIC_ARN": "arn:aws:sns:eu-west-1:1:t",
        "PAGE_SIGN_IN": "off",
        "AWS_REGION": "eu-west-1",
        "STACK_NAME": "memory-prod",
    }
    deploy.run(deploy.Plan(env=env), aws)
    assert not any(c[1] == "sns" for c in aws.commands)
    [check] = [c[2] for c in aws.commands if c[0] == "sh"]  # the given bucket is checked, never created
    assert "head-bucket" in check and "--expected-bucket-owner 111122223333" in check and "create-bucket" not in check
    [deployed] = [c for c in aws.commands if c[1:3] == ["cloudformation", "deploy"]]
    assert deployed[deployed.index("--stack-name") + 1] == "memory-prod"
    assert deployed[deployed.index("--s3-bucket") + 1] == "my-artifacts"


def test_without_a_redirect_uri_it_deploys_twice_and_the_second_names_the_pages_url() -> None:
    aws = FakeAws()
    plan = deploy.Plan(env={**IDP, **PAGE})
    deploy.run(plan, aws)
    first, second = aws.deploys()
    assert first["PageSignIn"] == "off" and "OidcRedirectUri" not in first
    assert second["PageSignIn"] == "oidc" and second["OidcRedirectUri"] == ENDPOINT
    assert any(ENDPOINT in line and "callback" in line for line in plan.log)
    rule = compose_template.compose()["Rules"]["PageSignInHasEveryOidcSetting"]
    template = compose_template.compose()
    assert _rule_holds(rule, _with_defaults(template, first)) and _rule_holds(rule, _with_defaults(template, second))


def test_the_template_refuses_a_page_that_could_sign_nobody_in() -> None:
    template = compose_template.compose()
    rule = template["Rules"]["PageSignInHasEveryOidcSetting"]
    given = {
        "OidcAuthorizeUrl": PAGE["OIDC_AUTHORIZE_URL"],
        "OidcTokenUrl": PAGE["OIDC_TOKEN_URL"],
        "OidcClientId": "client123",
        "OidcRedirectUri": ENDPOINT,
    }
    assert _rule_holds(rule, _with_defaults(template, given))
    for name in given:
        assert not _rule_holds(rule, _with_defaults(template, {**given, name: ""})), name
    assert not _rule_holds(rule, _with_defaults(template, {}))  # the defaults alone: refused
    assert _rule_holds(rule, _with_defaults(template, {"PageSignIn": "off"}))  # unless said so


def test_without_the_identity_provider_it_stops_before_any_aws_call() -> None:
    aws = FakeAws()
    with pytest.raises(SystemExit, match="JWT_AUDIENCE"):
        deploy.run(deploy.Plan(env={k: v for k, v in IDP.items() if k != "JWT_AUDIENCE"}), aws)
    assert aws.commands == []


@pytest.mark.parametrize(
    ("function", "parameter"),
    [
        ("APIHandler", "ApiReservedConcurrency"),
        ("UserToken", "AuthorizerReservedConcurrency"),
        ("HandleEventsStream", "StreamReservedConcurrency"),
    ],
)
def test_each_function_reserves_the_concurrency_its_parameter_says(function: str, parameter: str) -> None:
    template = compose_template.compose()
    reserved = template["Resources"][function]["Properties"]["ReservedConcurrentExecutions"]
    condition, value, otherwise = reserved["Fn::If"]
    assert value == {"Ref": parameter} and otherwise == {"Ref": "AWS::NoValue"}
    # A Number parameter's Ref is a string: compared with "0", as CloudFormation compares.
    assert template["Conditions"][condition] == {"Fn::Not": [{"Fn::Equals": [{"Ref": parameter}, "0"]}]}
    # The consumer reserves a few by default (make deploy passes 0 where the account cannot spare them); the others none.
    assert template["Parameters"][parameter]["Default"] == (5 if parameter == "StreamReservedConcurrency" else 0)


def test_the_dry_run_prints_the_commands_and_runs_none(tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        **IDP,
        **PAGE,
        "OIDC_REDIRECT_URI": ENDPOINT,
        "PATH": str(tmp_path),
    }  # no aws on PATH: a call would fail
    run = subprocess.run(
        [sys.executable, "scripts/deploy.py", "--dry-run"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert any(line.startswith("aws cloudformation package ") for line in lines)
    [deploy_line] = [line for line in lines if line.startswith("aws cloudformation deploy ")]
    assert "--s3-bucket" in deploy_line and f"JwtIssuer={IDP['JWT_ISSUER']}" in deploy_line
    assert f"OidcRedirectUri={ENDPOINT}" in deploy_line


def test_the_packaged_template_is_over_the_body_limit_and_every_parameter_has_a_make_variable(package: Package) -> None:
    size = len((package.out / "sam.json").read_bytes())
    assert size > deploy.TEMPLATE_BODY_LIMIT, size  # why --s3-bucket is always passed
    assert set(package.template["Parameters"]) == set(deploy.PARAMETERS)
    assert "Rules" in package.expanded and "PageSignInHasEveryOidcSetting" in package.expanded["Rules"]


def test_make_package_ran_checkov_and_parliament_clean_with_a_reason_for_every_skip(package: Package) -> None:
    assert "checkov:" in package.log and "parliament:" in package.log, package.log[-2000:]
    skips = json.loads(security_checks.SKIPS.read_text())
    for tool in ("checkov", "parliament"):
        assert skips[tool] and all(len(reason) > 40 for reason in skips[tool].values())


# Run in the checks venv: both JSONPath grammars checkov parses with must come from the written tables; a
# table PLY would rebuild (missing, or its signature not the grammar's) is what cost 8 of checkov's 10 CPU-s.
_PARSES_FROM_WRITTEN_TABLES = """
import ply.yacc

def rebuilt(*args, **kwargs):
    raise SystemExit("PLY rebuilt a JSONPath parse table")

ply.yacc.LRGeneratedTable = rebuilt
from bc_jsonpath_ng import parse
from bc_jsonpath_ng.ext import parse as parse_extended
assert str(parse("Resources.Bucket.Properties[0]")) == "Resources.Bucket.Properties.[0]"
assert str(parse_extended("Resources[?Type = 'AWS::S3::Bucket']")) != ""
print("read")
"""


def test_checkov_reads_its_jsonpath_parse_tables_instead_of_rebuilding_them_per_path(package: Package) -> None:
    checks_python = ROOT / ".venv-checks" / "bin" / "python"
    run = subprocess.run(
        [str(checks_python), "-c", _PARSES_FROM_WRITTEN_TABLES], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0 and run.stdout.strip() == "read", run.stdout + run.stderr


@pytest.mark.parametrize("damage", ["", "garbage(\n", "_tabversion = '3.10'\n"], ids=["empty", "not-python", "stale"])
def test_a_damaged_parse_table_is_written_again(package: Package, damage: str) -> None:
    """checkov swallows the error a damaged table raises and checks less, so the writer must not keep one."""
    checks_python = ROOT / ".venv-checks" / "bin" / "python"
    [table] = (ROOT / ".venv-checks").glob("lib/python3*/site-packages/bc_jsonpath_ng/ext/parser_jsonpath_parsetab.py")
    table.write_text(damage)
    subprocess.run([str(checks_python), "infra/checkov_parse_tables.py"], cwd=ROOT, check=True, timeout=120)
    run = subprocess.run(
        [str(checks_python), "-c", _PARSES_FROM_WRITTEN_TABLES], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0 and run.stdout.strip() == "read", run.stdout + run.stderr


def test_a_new_finding_or_a_stale_skip_fails_the_checks() -> None:
    skips = {"CKV_AWS_28": "why"}
    assert security_checks.compare("checkov", [("CKV_AWS_28", "KeysTable")], skips) == []
    [new] = security_checks.compare("checkov", [("CKV_AWS_28", "KeysTable"), ("CKV_AWS_18", "Bucket")], skips)
    assert "CKV_AWS_18" in new
    [stale] = security_checks.compare("checkov", [], skips)
    assert "no longer found" in stale
