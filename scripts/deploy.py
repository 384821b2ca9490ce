"""`make deploy`: upload `make package`'s output and deploy it with the AWS CLI, a fresh account included.

What it runs, in order (`--dry-run` prints the same commands and runs none):
1. the Region: AWS_REGION, else AWS_DEFAULT_REGION, else the CLI profile's (`aws configure get region`),
   else it stops and says so. Every command then names it with `--region`: the pinned CLI v1 reads
   AWS_DEFAULT_REGION and the profile but not AWS_REGION, so without it the artifacts and the stack
   could land in different Regions. The account is the caller's (`aws sts get-caller-identity`);
2. the artifact bucket: the one given, or `<stack>-artifacts-<account>-<region>` (lowercased, cut to
   S3's 63 characters without a trailing hyphen), created (private, public access blocked) if it does
   not exist; `--expected-bucket-owner` on every check, so a bucket of that predictable name made by
   another account is refused, never used;
3. the alarm topic: the one given, or `<stack>-alarms`, created if it does not exist (subscribe the
   on-call to it: docs/deploy.md);
4. `aws cloudformation package` (the zips to S3) and `aws cloudformation deploy` with `--s3-bucket`:
   the packaged template is ~135 KB (JSON), and CloudFormation takes one over 51,200 bytes only from
   S3 (the CLI refuses it otherwise);
5. when the page's sign-in settings are given but not its redirect URI (which exists only once the
   API does), deploys with `PageSignIn=off`, reads `EndpointURL`, and deploys again with it.

Parameters come from the environment (the Makefile's variables): every template parameter has one.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "build" / "package" / "sam.json"
PACKAGED = ROOT / "build" / "packaged.json"
TEMPLATE_BODY_LIMIT = 51_200  # bytes: larger templates must come from S3 (CloudFormation's TemplateBody limit)
# Template parameter -> the environment variable (Makefile variable) that sets it.
PARAMETERS = {
    "JwtIssuer": "JWT_ISSUER",
    "JwtAudience": "JWT_AUDIENCE",
    "JwtJwksUrl": "JWT_JWKS_URL",
    "HostRoleArns": "HOST_ROLE_ARNS",
    "WorkerRoleArns": "WORKER_ROLE_ARNS",
    "OperatorRoleArns": "OPERATOR_ROLE_ARNS",
    "OAuthRedirectHosts": "OAUTH_REDIRECT_HOSTS",
    "OAuthReservedNames": "OAUTH_RESERVED_NAMES",
    "OidcAuthorizeUrl": "OIDC_AUTHORIZE_URL",
    "OidcTokenUrl": "OIDC_TOKEN_URL",
    "OidcClientId": "OIDC_CLIENT_ID",
    "OidcRedirectUri": "OIDC_REDIRECT_URI",
    "OidcScope": "OIDC_SCOPE",
    "PageSignIn": "PAGE_SIGN_IN",
    "AlarmTopicArn": "ALARM_TOPIC_ARN",
    "LogRetentionInDays": "LOG_RETENTION_DAYS",
    "ApiThrottlingBurstLimit": "API_BURST_LIMIT",
    "ApiThrottlingRateLimit": "API_RATE_LIMIT",
    "ConfigureApiGatewayLoggingRole": "CONFIGURE_API_GATEWAY_LOGGING_ROLE",
    "ApiReservedConcurrency": "API_RESERVED_CONCURRENCY",
    "AuthorizerReservedConcurrency": "AUTHORIZER_RESERVED_CONCURRENCY",
    "StreamReservedConcurrency": "STREAM_RESERVED_CONCURRENCY",
    "PerTokenRateLimit": "PER_TOKEN_RATE_LIMIT",
    "PerIpRateLimit": "PER_IP_RATE_LIMIT",
    "LogPseudonymKey": "LOG_PSEUDONYM_KEY",
}
STREAM_RESERVED_DEFAULT = 5  # the template's default for StreamReservedConcurrency
MIN_UNRESERVED = 100  # Lambda keeps at least this much of an account's concurrency unreserved
SECRET_PARAMETERS = ("LogPseudonymKey",)  # never printed (NoEcho in the template)
REQUIRED = ("JWT_ISSUER", "JWT_AUDIENCE", "JWT_JWKS_URL")
PAGE_OIDC = ("OIDC_AUTHORIZE_URL", "OIDC_TOKEN_URL", "OIDC_CLIENT_ID")


@dataclass
class Plan:
    """The deploy as data: the tests read it, `--dry-run` prints it, `run` carries it out."""

    env: Mapping[str, str]
    aws: str = "aws"
    log: list[str] = field(default_factory=list)
    template: Path = TEMPLATE
    packaged: Path = PACKAGED
    region: str = ""  # set by `run` before any command: every command names it

    @property
    def stack(self) -> str:
        return self.env.get("STACK_NAME") or "personal-memory"

    def parameters(self, **overrides: str) -> dict[str, str]:
        given = {name: self.env[var] for name, var in PARAMETERS.items() if self.env.get(var)}
        return {**given, **overrides}

    def _region(self) -> list[str]:
        if not self.region:
            raise SystemExit("no AWS Region: set AWS_REGION (or AWS_DEFAULT_REGION, or the profile's region)")
        return ["--region", self.region]

    def package_command(self, bucket: str) -> list[str]:
        return [
            self.aws,
            "cloudformation",
            "package",
            *self._region(),
            "--template-file",
            str(self.template),
            "--s3-bucket",
            bucket,
            "--s3-prefix",
            self.stack,
            "--use-json",
            "--output-template-file",
            str(self.packaged),
        ]

    def deploy_command(self, bucket: str, parameters: Mapping[str, str]) -> list[str]:
        # --s3-bucket always: the packaged template is over TEMPLATE_BODY_LIMIT (tests/deploy/test_deploy.py).
        return [
            self.aws,
            "cloudformation",
            "deploy",
            *self._region(),
            "--template-file",
            str(self.packaged),
            "--stack-name",
            self.stack,
            "--s3-bucket",
            bucket,
            "--s3-prefix",
            self.stack,
            "--capabilities",
            "CAPABILITY_NAMED_IAM",
            "CAPABILITY_AUTO_EXPAND",
            "--no-fail-on-empty-changeset",
            "--parameter-overrides",
            *[f"{k}={v}" for k, v in sorted(parameters.items())],
        ]

    def outputs_command(self) -> list[str]:
        return [
            self.aws,
            "cloudformation",
            "describe-stacks",
            *self._region(),
            "--stack-name",
            self.stack,
            "--query",
            "Stacks[0].Outputs",
            "--output",
            "json",
        ]


def missing(env: Mapping[str, str]) -> list[str]:
    return [name for name in REQUIRED if not env.get(name)]


def run(plan: Plan, execute: Callable[[list[str]], str]) -> str:
    """The whole deploy through `execute` (which runs a command and returns its stdout); the API's URL."""
    env = plan.env
    if missing(env):
        raise SystemExit(f"make deploy needs {', '.join(missing(env))} (the identity provider: docs/deploy.md)")
    plan.region = resolve_region(plan, execute)
    account = env.get("ACCOUNT_ID") or execute(
        [plan.aws, "sts", "get-caller-identity", "--region", plan.region, "--query", "Account", "--output", "text"]
    )
    bucket = env.get("ARTIFACT_BUCKET") or artifact_bucket(plan.stack, account, plan.region)
    execute(["sh", "-c", bucket_script(plan.aws, bucket, plan.region, account, create=not env.get("ARTIFACT_BUCKET"))])
    topic = env.get("ALARM_TOPIC_ARN") or execute(
        [
            plan.aws,
            "sns",
            "create-topic",
            "--region",
            plan.region,
            "--name",
            f"{plan.stack}-alarms",
            "--query",
            "TopicArn",
            "--output",
            "text",
        ]
    )
    execute(plan.package_command(bucket))
    overrides = {"AlarmTopicArn": topic}
    if not env.get("STREAM_RESERVED_CONCURRENCY") and not can_reserve(plan, execute, STREAM_RESERVED_DEFAULT):
        plan.log.append(
            f"WARNING: the account's unreserved concurrency cannot spare {STREAM_RESERVED_DEFAULT} for the consumer "
            "(a new account's quota): deploying with StreamReservedConcurrency=0; ask for a higher quota"
        )
        overrides["StreamReservedConcurrency"] = "0"
    if not env.get("LOG_PSEUDONYM_KEY"):
        # 256 random bits; a deploy without LOG_PSEUDONYM_KEY makes a new one, so pseudonyms change with it
        overrides["LogPseudonymKey"] = secrets.token_urlsafe(32)
        plan.log.append(
            "No LOG_PSEUDONYM_KEY: this deploy keys the logs' user pseudonyms with a new secret (docs/deploy.md)"
        )
    page = [env.get(name) for name in PAGE_OIDC]
    two_passes = all(page) and not env.get("OIDC_REDIRECT_URI") and not env.get("PAGE_SIGN_IN")
    if not any(page) and not env.get("PAGE_SIGN_IN"):
        plan.log.append(
            "WARNING: no OIDC_* settings: the Memory page is deployed with PageSignIn=off and can sign nobody in"
        )
        overrides["PageSignIn"] = "off"
    if two_passes:
        execute(plan.deploy_command(bucket, plan.parameters(**overrides, PageSignIn="off")))
        endpoint = endpoint_url(execute(plan.outputs_command()))
        plan.log.append(
            f"Add {endpoint} to the identity provider's callback URLs; deploying again with it as OidcRedirectUri"
        )
        overrides.update(OidcRedirectUri=endpoint, PageSignIn="oidc")
    execute(plan.deploy_command(bucket, plan.parameters(**overrides)))
    return endpoint_url(execute(plan.outputs_command()))


def can_reserve(plan: Plan, execute: Callable[[list[str]], str], wanted: int) -> bool:
    """Whether reserving `wanted` leaves the MIN_UNRESERVED Lambda requires (Lambda guide, "Configuring reserved
    concurrency"); a stack already reserving it counts it as unreserved again on update, so this errs on "no"."""
    answer = execute(
        [
            plan.aws,
            "lambda",
            "get-account-settings",
            "--region",
            plan.region,
            "--query",
            "AccountLimit.UnreservedConcurrentExecutions",
            "--output",
            "text",
        ]
    )
    try:
        return int(answer) - wanted >= MIN_UNRESERVED
    except ValueError:
        return True  # --dry-run's placeholder: print the plan as a normal account would get it


def resolve_region(plan: Plan, execute: Callable[[list[str]], str]) -> str:
    """The Region every command names. `aws configure get region` exits 1 when no profile sets one: that is
    "none", not a crash; with none anywhere the deploy stops before any AWS call rather than guess one."""
    env = plan.env
    found = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if not found:
        found = execute(["sh", "-c", f"{shlex.quote(plan.aws)} configure get region || true"]).strip()
    if not found:
        raise SystemExit(
            "make deploy needs an AWS Region: set AWS_REGION (e.g. AWS_REGION=eu-west-1 make deploy ...) "
            "or configure one for the profile (aws configure set region ...)"
        )
    return found


# S3's rules for a bucket name: 3-63 characters, lowercase letters, digits, hyphens (and dots), a letter or
# digit at each end; these prefixes are reserved (S3 User Guide, "General purpose bucket naming rules").
BUCKET_NAME_MAX = 63
RESERVED_BUCKET_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")


def artifact_bucket(stack: str, account: str, region: str) -> str:
    """`<stack>-artifacts-<account>-<region>`, valid for every legal stack name (1-128 of [A-Za-z0-9-], a letter first)."""
    suffix = f"-artifacts-{account}-{region}".lower()
    prefix = stack.lower()
    if prefix.startswith(RESERVED_BUCKET_PREFIXES):
        prefix = "pm-" + prefix
    prefix = prefix[: BUCKET_NAME_MAX - len(suffix)].rstrip("-")
    return f"{prefix}{suffix}" if prefix else suffix.lstrip("-")


def bucket_script(aws: str, bucket: str, region: str, account: str, *, create: bool = True) -> str:
    """The artifact bucket must exist and be this account's; created (private, public access blocked; S3 encrypts
    by default) when it does not exist and `create`. A bucket of that name owned by anyone else stops the deploy."""
    a, b, r, o = shlex.quote(aws), shlex.quote(bucket), shlex.quote(region), shlex.quote(account)
    location = "" if region == "us-east-1" else f" --create-bucket-configuration LocationConstraint={r}"
    refuse = (
        f"{{ echo 'the artifact bucket {bucket} is not in account {account} (or not reachable): "
        "set ARTIFACT_BUCKET to a bucket of yours' >&2; exit 1; }"
    )
    head = f"{a} s3api head-bucket --region {r} --bucket {b} --expected-bucket-owner {o} 2>/dev/null"
    if not create:
        return f"{head} || {refuse}"
    return (
        f"{head} || {{ {a} s3api create-bucket --region {r} --bucket {b}{location} && "
        f"{a} s3api put-public-access-block --region {r} --bucket {b} --expected-bucket-owner {o} "
        "--public-access-block-configuration "
        f"BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,RestrictPublicBuckets=true; }} || {refuse}"
    )


def endpoint_url(outputs_json: str) -> str:
    try:
        outputs = json.loads(outputs_json or "[]") or []
    except ValueError:
        return "<EndpointURL>"
    return next((o["OutputValue"] for o in outputs if o.get("OutputKey") == "EndpointURL"), "<EndpointURL>")


def shown(command: list[str]) -> str:
    """The command as printed: a secret parameter's value masked."""
    return shlex.join(
        [f"{arg.split('=', 1)[0]}=****" if arg.split("=", 1)[0] in SECRET_PARAMETERS else arg for arg in command]
    )


def _execute(command: list[str]) -> str:
    print("+ " + shown(command), flush=True)
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    return done.stdout.strip()


def _print_only(command: list[str]) -> str:
    """--dry-run: print the command; what it would have printed is a named placeholder."""
    print(shown(command))
    return f"<{' '.join(command[1:3])} output>"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run none (no AWS call)")
    parser.add_argument("--aws", default=os.environ.get("AWS_CLI", "aws"), help="the AWS CLI to run")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    if args.dry_run:
        env.setdefault("ACCOUNT_ID", "<account>")
        env.setdefault("AWS_REGION", env.get("AWS_DEFAULT_REGION") or "<region>")
    plan = Plan(env=env, aws=args.aws)
    if not args.dry_run and not TEMPLATE.exists():
        raise SystemExit(f"{TEMPLATE} is missing: run make package first")
    url = run(plan, _print_only if args.dry_run else _execute)
    for line in plan.log:
        print(line, flush=True)
    print(f"EndpointURL: {url}\nNext: make smoke BASE_URL={url}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
