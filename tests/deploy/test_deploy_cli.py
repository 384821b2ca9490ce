"""`make deploy`'s own command lines, run by the pinned AWS CLI against moto's S3 and CloudFormation on 127.0.0.1.

The AWS CLI v1 (`awscli` in requirements-dev.txt; `AWS_CLI` points at another) parses every argument
and does the S3 part for real; moto then stands in for CloudFormation. Seen with awscli 1.46.3: the
packaged template (JSON) is ~135 KB, and `aws cloudformation deploy` without `--s3-bucket` refuses it
before any call: "Templates with a size greater than 51,200 bytes must be deployed via an S3 Bucket."
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts import deploy
from tests.support.package import Package

AWS_CLI = os.environ.get("AWS_CLI") or str(Path(sys.executable).parent / "aws")


@pytest.fixture
def moto_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def _cli(endpoint: str) -> Any:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        "AWS_ACCESS_KEY_ID": "offline",
        "AWS_SECRET_ACCESS_KEY": "offline",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        "AWS_EC2_METADATA_DISABLED": "true",
    }

    def run(command: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)

    return run


def test_the_pinned_cli_packages_to_s3_and_deploys_the_template_only_through_the_bucket(
    package: Package, moto_endpoint: str, tmp_path: Path
) -> None:
    assert Path(AWS_CLI).exists(), f"{AWS_CLI}: the AWS CLI of requirements-dev.txt is not installed (make install)"
    run = _cli(moto_endpoint)
    plan = deploy.Plan(
        env={"STACK_NAME": "personal-memory"},
        aws=AWS_CLI,
        template=package.out / "sam.json",
        region="eu-west-1",
        packaged=tmp_path / "packaged.json",
    )
    made = run(
        [
            AWS_CLI,
            "s3api",
            "create-bucket",
            "--bucket",
            "artifacts",
            "--create-bucket-configuration",
            "LocationConstraint=eu-west-1",
        ]
    )
    assert made.returncode == 0, made.stderr
    packaged = run(plan.package_command("artifacts"))
    assert packaged.returncode == 0, packaged.stderr[-2000:]
    assert plan.packaged.stat().st_size > deploy.TEMPLATE_BODY_LIMIT
    listed = run([AWS_CLI, "s3api", "list-objects-v2", "--bucket", "artifacts", "--query", "length(Contents)"])
    assert listed.stdout.strip() == "2"  # the app zip and the layer zip
    parameters = {
        "JwtIssuer": "https://issuer.example",
        "JwtAudience": "a",
        "JwtJwksUrl": "https://issuer.example/jwks",
        "AlarmTopicArn": "arn:aws:sns:eu-west-1:123456789012:alarms",
        "PageSignIn": "off",
    }

    without_bucket = [arg for arg in plan.deploy_command("artifacts", parameters)]
    at = without_bucket.index("--s3-bucket")
    del without_bucket[at : at + 2]
    refused = run(without_bucket)
    assert refused.returncode != 0 and "greater than 51,200 bytes must be deployed via an S3 Bucket" in refused.stderr

    through_s3 = run(plan.deploy_command("artifacts", parameters))
    assert "must be deployed via an S3 Bucket" not in through_s3.stderr
    uploaded = run([AWS_CLI, "s3api", "list-objects-v2", "--bucket", "artifacts", "--query", "Contents[].Key"])
    assert ".template" in uploaded.stdout, uploaded.stdout  # the CLI sent the template itself through the bucket
