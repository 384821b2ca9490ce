"""The local stack's own AWS calls are answered in-process (local/moto_direct.py), and faulted ones are not applied."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EndpointConnectionError

from local import moto_direct
from local.faults import FaultInjector
from local.process import free_port


@pytest.fixture
def nowhere(dynamodb: Any, tables: dict[str, str]) -> str:
    """A 127.0.0.1 URL nothing listens on: a call that reaches a socket there fails to connect."""
    return f"http://127.0.0.1:{free_port()}"


def _client(service: str, url: str, *, direct: bool) -> Any:
    session = boto3.session.Session(aws_access_key_id="local", aws_secret_access_key="local", region_name="us-east-1")
    if direct:
        moto_direct.install(session, url)
    return session.client(service, endpoint_url=url, config=Config(retries={"max_attempts": 1}))


def test_calls_to_the_stacks_moto_url_are_answered_in_process_by_the_same_backends(
    nowhere: str, dynamodb: Any, table_names: Any
) -> None:
    client = _client("dynamodb", nowhere, direct=True)
    client.put_item(TableName=table_names.sessions, Item={"session_id": {"S": "s1"}, "note": {"S": "é 😀"}})
    # What the in-process call wrote is what any other caller of the same moto reads, and the other way round.
    assert dynamodb.get_item(TableName=table_names.sessions, Key={"session_id": {"S": "s1"}})["Item"]["note"] == {
        "S": "é 😀"
    }
    dynamodb.put_item(TableName=table_names.sessions, Item={"session_id": {"S": "s2"}})
    assert client.get_item(TableName=table_names.sessions, Key={"session_id": {"S": "s2"}})["Item"] == {
        "session_id": {"S": "s2"}
    }
    # moto's own errors come back as AWS's: a condition that fails is a ConditionalCheckFailedException.
    with pytest.raises(ClientError) as refused:
        client.put_item(
            TableName=table_names.sessions,
            Item={"session_id": {"S": "s2"}},
            ConditionExpression="attribute_not_exists(session_id)",
        )
    assert refused.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    streams = _client("dynamodbstreams", nowhere, direct=True)
    assert isinstance(streams.list_streams()["Streams"], list)
    kms = _client("kms", nowhere, direct=True)
    assert kms.describe_key(KeyId="alias/personal-memory-local")["KeyMetadata"]["KeyUsage"] == "ENCRYPT_DECRYPT"


def test_without_the_hook_the_same_call_goes_to_the_socket(nowhere: str, table_names: Any) -> None:
    """The proof above is not vacuous: the same client without moto_direct tries the (dead) port."""
    with pytest.raises(EndpointConnectionError):
        _client("dynamodb", nowhere, direct=False).get_item(
            TableName=table_names.sessions, Key={"session_id": {"S": "s1"}}
        )


def test_other_urls_are_left_to_botocore(nowhere: str, table_names: Any) -> None:
    """Only the stack's own moto URL is answered here: a call to another port still goes to its socket."""
    session = boto3.session.Session(aws_access_key_id="local", aws_secret_access_key="local", region_name="us-east-1")
    moto_direct.install(session, f"http://127.0.0.1:{free_port()}")
    client = session.client("dynamodb", endpoint_url=nowhere, config=Config(retries={"max_attempts": 1}))
    with pytest.raises(EndpointConnectionError):
        client.get_item(TableName=table_names.sessions, Key={"session_id": {"S": "s1"}})
    assert moto_direct.answers(nowhere + "/", nowhere) and not moto_direct.answers(nowhere + "0/", nowhere)


def test_a_faulted_call_is_never_applied_in_process(nowhere: str, dynamodb: Any, table_names: Any) -> None:
    """The fault injector answers first; the in-process hook must not also carry out the write it refused."""
    client = _client("dynamodb", nowhere, direct=True)
    injector = FaultInjector(seed=1)
    injector.add(error="InternalServerError", operation="PutItem")
    injector.attach(client)
    with pytest.raises(ClientError) as failed:
        client.put_item(TableName=table_names.sessions, Item={"session_id": {"S": "faulted"}})
    assert failed.value.response["Error"]["Code"] == "InternalServerError"
    assert "Item" not in dynamodb.get_item(TableName=table_names.sessions, Key={"session_id": {"S": "faulted"}})
    injector.detach()
    client.put_item(TableName=table_names.sessions, Item={"session_id": {"S": "faulted"}})
    assert "Item" in dynamodb.get_item(TableName=table_names.sessions, Key={"session_id": {"S": "faulted"}})
