"""The local stack's DynamoDB is AWS's DynamoDB Local (local/dynamodb_local.py): it refuses what AWS refuses, and dies with its stack."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

ROOT = Path(__file__).resolve().parents[2]


def _client(endpoint: str) -> Any:
    return boto3.client(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )


def test_the_stacks_dynamodb_refuses_what_aws_refuses_and_moto_lets_through(live: Any) -> None:
    """moto 5.2.5 accepts both requests below; DynamoDB (and DynamoDB Local) refuse them with a ValidationException.

    AWS, CreateTable: "TableName ... Length Constraints: Minimum length of 3. Maximum length of 1024."
    (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html); an
    ExpressionAttributeValues entry no expression uses is refused ("Value provided in
    ExpressionAttributeValues unused in expressions").
    """
    stack = json.loads((live.credentials_file.parent / "stack.json").read_text())
    client = _client(stack["dynamodb_endpoint"])
    with pytest.raises(ClientError) as short:
        client.create_table(
            TableName="ab",
            KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
    assert short.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as unused:
        client.query(
            TableName=stack["tables"]["entries"],
            KeyConditionExpression="user_id = :u",
            ExpressionAttributeValues={":u": {"S": "alice"}, ":unused": {"S": "x"}},
        )
    assert unused.value.response["Error"]["Code"] == "ValidationException"
    assert stack["kms_endpoint"] != stack["dynamodb_endpoint"]  # KMS stays on moto


_STARTER = """
import json, sys, time
sys.path.insert(0, {root!r})
from local import dynamodb_local
instance = dynamodb_local.start()
print(json.dumps({{"pid": instance.pid, "endpoint": instance.endpoint}}), flush=True)
time.sleep(600)
"""


@pytest.mark.dynamodb_local
def test_a_killed_stack_leaves_no_dynamodb_local_behind() -> None:
    starter = subprocess.Popen(
        [sys.executable, "-c", _STARTER.format(root=str(ROOT))], stdout=subprocess.PIPE, text=True
    )
    try:
        assert starter.stdout is not None
        started = json.loads(starter.stdout.readline())
        assert _client(started["endpoint"]).list_tables()["TableNames"] == []
        os.kill(starter.pid, signal.SIGKILL)  # no clean-up of its own runs
        starter.wait(timeout=30)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{started['pid']}").exists() and _state(started["pid"]) != "Z":
            assert time.monotonic() < deadline, "the JVM outlived the process that started it"
            time.sleep(0.1)
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_a_stack_endpoint_left_in_the_environment_never_reaches_a_moto_test(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """An in-process local stack sets AWS_ENDPOINT_URL_<SERVICE> for good (tests/support/chaos.py): a later
    test on moto in the same worker must still reach moto, not a stopped DynamoDB Local."""
    from local.process import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    for variable in ("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_DYNAMODB_STREAMS", "AWS_ENDPOINT_URL_KMS"):
        monkeypatch.setenv(variable, dead)
    tables = request.getfixturevalue("tables")
    kms = request.getfixturevalue("kms")
    assert request.getfixturevalue("dynamodb").describe_table(TableName="t-entries")["Table"]["TableName"]
    assert kms.describe_key(KeyId="alias/personal-memory-local")["KeyMetadata"]["Enabled"]
    assert tables["events_stream"]
