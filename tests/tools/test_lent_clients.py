"""The tests' lent boto3 clients (tests/support/moto.py `lent_client`): one reused only when taken back as it was lent.

Each test here lends the same named client twice, in two fresh mocks, with something done to it in between, and
asks whether the second lend got the same object. A reused client must also see only its own test's moto.
"""

from __future__ import annotations

from typing import Any

import botocore.exceptions
import pytest

from chalicelib.storage.retries import client_config, guarded
from local.faults import FaultInjector
from tests.support.moto import fresh_moto, lent_client


@pytest.fixture
def two_lends(aws_credentials: None) -> Any:
    """Lend `name` in one fresh moto, let `between(client)` act on it, then lend it again in another: the two clients."""
    import boto3

    def lend_twice(name: str, between: Any) -> tuple[Any, Any]:
        def make() -> Any:
            return guarded(boto3.client("dynamodb", region_name="us-east-1", config=client_config())).unguarded

        with pytest.MonkeyPatch.context() as patch, fresh_moto(patch), lent_client(name, make) as first:
            first.create_table(
                TableName="left-behind",
                BillingMode="PAY_PER_REQUEST",
                KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
            )
            between(first)
        with pytest.MonkeyPatch.context() as patch, fresh_moto(patch), lent_client(name, make) as second:
            assert second.list_tables()["TableNames"] == [], "a lent client reached the previous test's moto"
        return first, second

    return lend_twice


def test_a_client_taken_back_as_lent_is_lent_again_and_reaches_only_the_new_moto(two_lends: Any) -> None:
    first, second = two_lends("untouched", lambda client: client.describe_table(TableName="left-behind"))
    assert second is first


def test_a_handler_registered_and_unregistered_again_leaves_it_lendable(two_lends: Any) -> None:
    def counted(client: Any) -> None:
        client.meta.events.register("before-call.dynamodb", lambda **_: None, unique_id="t-count")
        client.meta.events.unregister("before-call.dynamodb", unique_id="t-count")

    first, second = two_lends("registered-and-gone", counted)
    assert second is first


def test_a_handler_left_registered_retires_the_client(two_lends: Any) -> None:
    first, second = two_lends(
        "handler-left", lambda c: c.meta.events.register("before-call.dynamodb", lambda **_: None)
    )
    assert second is not first


def test_a_handler_left_unregistered_retires_the_client(two_lends: Any) -> None:
    first, second = two_lends(
        "handler-removed", lambda c: c.meta.events.unregister("before-send", unique_id="personal-memory-deadline-send")
    )
    assert second is not first


def test_an_attribute_set_on_the_client_retires_it(two_lends: Any) -> None:
    def patched(client: Any) -> None:
        client.put_item = lambda **_: {}

    first, second = two_lends("attribute-set", patched)
    assert second is not first


def test_a_client_whose_retries_ran_out_is_retired(two_lends: Any) -> None:
    """Retries that run out spend the standard-retry quota (botocore gives back only what a success repays)."""

    def exhausted(client: Any) -> None:
        injector = FaultInjector(seed=1)
        injector.attach(client)
        injector.add(error="InternalServerError", operation="DescribeTable")
        with pytest.raises(botocore.exceptions.ClientError):
            client.describe_table(TableName="left-behind")
        injector.detach()

    first, second = two_lends("retries-spent", exhausted)
    assert second is not first


def test_a_fault_that_a_retry_overcame_leaves_it_lendable(two_lends: Any) -> None:
    """The success after one retried fault gives back the quota that retry took: nothing left to carry over."""

    def overcome(client: Any) -> None:
        injector = FaultInjector(seed=1)
        injector.attach(client)
        injector.add(error="InternalServerError", operation="DescribeTable", times=1)
        client.describe_table(TableName="left-behind")
        injector.detach()

    first, second = two_lends("retried-once", overcome)
    assert second is first
