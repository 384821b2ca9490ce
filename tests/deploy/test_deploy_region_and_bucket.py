"""`make deploy` names its Region on every command, checks the artifact bucket's owner, and names a valid bucket.

AWS's documentation, quoted:
- AWS CLI v1 user guide, "Environment variables to configure the AWS CLI": the v1 CLI reads
  `AWS_DEFAULT_REGION`; `AWS_REGION` is read by the SDKs and CLI v2 ("AWS_REGION – The AWS SDK
  compatible environment variable ... If defined, this environment variable overrides the values in the
  environment variable AWS_DEFAULT_REGION" — a v2 statement). So with AWS_REGION alone, the pinned CLI
  v1 used the profile's Region, or none.
- Amazon S3 User Guide, "Verifying bucket ownership with bucket owner condition": "If the bucket is owned
  by a different account, the request fails with the HTTP status code 403 Forbidden (access denied)."
- Amazon S3 User Guide, "General purpose bucket naming rules": "Bucket names must be between 3 (min)
  and 63 (max) characters long", "can consist only of lowercase letters, numbers, periods (.), and
  hyphens (-)", "must begin and end with a letter or number", and must not start with `xn--`,
  `sthree-` or `amzn-s3-demo-`.
- CloudFormation, CreateStack `StackName`: "can contain only alphanumeric characters (case sensitive)
  and hyphens. It must start with an alphabetic character and can't be longer than 128 characters."
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scripts import deploy
from tests.deploy.test_deploy import IDP, FakeAws

ROOT = Path(__file__).resolve().parents[2]
AWS_CLI = os.environ.get("AWS_CLI") or str(Path(sys.executable).parent / "aws")
BUCKET_RULE = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


def _aws_calls(commands: list[list[str]]) -> list[str]:
    """Every AWS CLI call made, as text: direct commands and those inside `sh -c` scripts."""
    calls = []
    for command in commands:
        if command[0] == "sh":
            calls += [
                part.strip() for part in re.split(r"\|\||&&|[{};]", command[2]) if part.strip().startswith("aws ")
            ]
        else:
            calls.append(" ".join(command))
    return calls


def test_aws_region_alone_reaches_every_cli_call_as_region() -> None:
    aws = FakeAws(profile_region="us-east-1")  # the profile says otherwise: AWS_REGION must win, everywhere
    deploy.run(deploy.Plan(env={**IDP, "AWS_REGION": "eu-central-1", "PAGE_SIGN_IN": "off"}), aws)
    calls = [c for c in _aws_calls(aws.commands) if not c.startswith("aws configure")]
    assert len(calls) >= 7  # sts, head/create bucket, public access block, sns, package, deploy, describe
    for call in calls:
        assert "--region eu-central-1" in call, call
    assert not any("configure get region" in c for c in _aws_calls(aws.commands))  # no profile look-up needed
    assert any("LocationConstraint=eu-central-1" in c for c in calls)


def test_without_a_region_anywhere_it_stops_and_says_so_before_any_aws_call() -> None:
    aws = FakeAws(profile_region="")
    with pytest.raises(SystemExit, match="needs an AWS Region"):
        deploy.run(deploy.Plan(env=dict(IDP)), aws)
    assert [c for c in aws.commands if c[0] != "sh"] == []  # only the profile was asked


def test_the_pinned_cli_without_a_configured_region_is_no_crash(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`aws configure get region` exits 1 when nothing sets a Region; that ended the deploy in a traceback."""
    assert Path(AWS_CLI).exists(), f"{AWS_CLI}: the AWS CLI of requirements-dev.txt is not installed (make install)"
    for name in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert subprocess.run([AWS_CLI, "configure", "get", "region"], capture_output=True, timeout=120).returncode == 1
    plan = deploy.Plan(env=dict(IDP), aws=AWS_CLI)
    with pytest.raises(SystemExit, match="needs an AWS Region"):
        deploy.resolve_region(plan, deploy._execute)


def _fake_cli(tmp_path: Path, owner: str, exists: bool) -> Path:
    """An `aws` that answers head-bucket as S3 does for a bucket of `owner`, and logs every call."""
    script = tmp_path / "aws"
    log = tmp_path / "calls.log"
    script.write_text(f"""#!/bin/sh
echo "$*" >> {log}
case "$*" in
  *head-bucket*)
    {"exit 254" if not exists else ""}
    case "$*" in *"--expected-bucket-owner {owner}"*) exit 0;; *--expected-bucket-owner*) exit 254;; *) exit 0;; esac;;
  *create-bucket*) {"exit 254" if exists else "exit 0"};;
  *) exit 0;;
esac
""")
    script.chmod(0o755)
    return log


def test_a_predictably_named_bucket_of_another_account_stops_the_deploy(tmp_path: Path) -> None:
    log = _fake_cli(tmp_path, owner="999988887777", exists=True)  # someone made our bucket's name first
    script = deploy.bucket_script(
        str(tmp_path / "aws"), "personal-memory-artifacts-111122223333-eu-west-1", "eu-west-1", "111122223333"
    )
    run = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "is not in account 111122223333" in run.stderr
    calls = log.read_text().splitlines()
    assert "--expected-bucket-owner 111122223333" in calls[0]
    assert not any("put-public-access-block" in c for c in calls)


def test_our_own_bucket_passes_and_a_missing_one_is_created_private(tmp_path: Path) -> None:
    ours = tmp_path / "ours"
    ours.mkdir()
    log = _fake_cli(ours, owner="111122223333", exists=True)
    script = deploy.bucket_script(str(ours / "aws"), "b-artifacts", "eu-west-1", "111122223333")
    assert subprocess.run(["sh", "-c", script], capture_output=True, timeout=60).returncode == 0
    assert len(log.read_text().splitlines()) == 1  # the owner check alone
    new = tmp_path / "new"
    new.mkdir()
    log = _fake_cli(new, owner="111122223333", exists=False)
    script = deploy.bucket_script(str(new / "aws"), "b-artifacts", "eu-west-1", "111122223333")
    assert subprocess.run(["sh", "-c", script], capture_output=True, timeout=60).returncode == 0
    calls = log.read_text().splitlines()
    assert "create-bucket" in calls[1] and "put-public-access-block" in calls[2]
    assert "--expected-bucket-owner 111122223333" in calls[2]


def test_a_39_character_stack_name_gets_a_bucket_name_without_a_trailing_hyphen() -> None:
    name = deploy.artifact_bucket("a" * 39, "111122223333", "eu-west-1")
    assert BUCKET_RULE.fullmatch(name), name
    assert name.endswith("-111122223333-eu-west-1")


REGIONS = ["us-east-1", "eu-west-1", "ap-southeast-2", "us-gov-west-1", "ap-northeast-3", "il-central-1", "ca-west-1"]


@given(
    stack=st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,127}", fullmatch=True),
    region=st.sampled_from(REGIONS),
    account=st.from_regex(r"[0-9]{12}", fullmatch=True),
)
def test_every_legal_stack_name_gets_a_valid_bucket_name(stack: str, region: str, account: str) -> None:
    name = deploy.artifact_bucket(stack, account, region)
    assert BUCKET_RULE.fullmatch(name), name
    assert ".." not in name and not name.startswith(deploy.RESERVED_BUCKET_PREFIXES)
    assert name.endswith(f"-{account}-{region}")  # the account and Region stay whole: two accounts never share a name
