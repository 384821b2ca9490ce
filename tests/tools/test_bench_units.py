"""bench/units.py computes request units as AWS's documentation says (quoted there), from what each call touches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bench.units import UnitMeter, item_size, value_size
from tests.support import ddb_local


def test_item_sizes_follow_the_documented_rules() -> None:
    assert value_size({"S": "héllo"}) == 6  # UTF-8 bytes
    assert value_size({"N": "1234500"}) == 4  # 12345: 5 significant digits -> 3 bytes, + 1
    assert value_size({"N": "-0.05"}) == 2
    assert value_size({"B": b"\x00" * 12}) == 12
    assert value_size({"BOOL": True}) == value_size({"NULL": True}) == 1
    assert value_size({"L": [{"S": "ab"}, {"N": "7"}]}) == 3 + (2 + 1) + (2 + 1)
    assert value_size({"M": {"k": {"S": "v"}}}) == 3 + 1 + 1 + 1
    assert item_size({"user_id": {"S": "alice"}, "sk": {"S": "e#1"}}) == 7 + 5 + 2 + 3


@pytest.fixture
def meter(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, UnitMeter]]:
    import boto3
    from moto import mock_aws

    for key, value in {
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    for variable in ddb_local.ENDPOINT_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    with mock_aws():
        client, peek = boto3.client("dynamodb"), boto3.client("dynamodb")
        client.create_table(
            TableName="units",
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
        )
        yield client, UnitMeter(client, peek)


def _item(sk: str, size: int) -> dict[str, Any]:
    return {"pk": {"S": "p"}, "sk": {"S": sk}, "v": {"S": "x" * (size - 1 - len(sk) - 2 - 1)}}


def test_writes_cost_1_kb_blocks_of_the_larger_side_and_twice_in_a_transaction(meter: tuple[Any, UnitMeter]) -> None:
    client, units = meter
    with units.metering() as used:
        client.put_item(TableName="units", Item=_item("a", 1500))  # 1.5 KB: 2 WRU
    assert (used.rru, used.wru) == (0, 2)
    with units.metering() as used:  # shrinking it: the larger (before) counts
        client.update_item(
            TableName="units",
            Key={"pk": {"S": "p"}, "sk": {"S": "a"}},
            UpdateExpression="SET v = :v",
            ExpressionAttributeValues={":v": {"S": "y"}},
        )
    assert used.wru == 2
    with units.metering() as used:
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": "units", "Item": _item("b", 3000)}},
                {"Delete": {"TableName": "units", "Key": {"pk": {"S": "p"}, "sk": {"S": "a"}}}},
            ]
        )
    assert used.wru == 2 * 3 + 2 * 1  # 3 KB put, and the deleted item (now 1 block), each twice


def test_a_query_costs_its_items_together_in_4_kb_blocks_whatever_it_projects(meter: tuple[Any, UnitMeter]) -> None:
    client, units = meter
    for n in range(5):
        client.put_item(TableName="units", Item=_item(f"q{n}", 2000))  # 10,000 bytes in all: 3 blocks
    query = {"TableName": "units", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}}}
    with units.metering() as used:
        client.query(**query, ConsistentRead=True, ProjectionExpression="sk")
    assert used.rru == 3
    with units.metering() as used:
        client.query(**query)
        client.get_item(TableName="units", Key={"pk": {"S": "p"}, "sk": {"S": "missing"}})
    assert used.rru == 1.5 + 0.5  # eventually consistent: half; a missing item still reads one block


def test_a_sparse_keys_only_index_costs_a_write_when_an_item_enters_or_leaves_it_and_none_otherwise(
    meter: tuple[Any, UnitMeter],
) -> None:
    """GSI.html: putting an item into an index, or removing it, is one more write; an item never in it costs nothing."""
    client, units = meter
    client.create_table(
        TableName="indexed",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "id", "AttributeType": "S"},
            {"AttributeName": "u", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_u",
                "KeySchema": [{"AttributeName": "u", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
    )
    key = {"id": {"S": "s1"}}
    with units.metering() as used:
        client.put_item(TableName="indexed", Item={**key, "u": {"S": "alice"}, "n": {"N": "0"}})
    assert used.wru == 1 + 1
    with units.metering() as used:  # a non-key attribute: the keys-only entry is unchanged
        client.update_item(
            TableName="indexed", Key=key, UpdateExpression="SET n = :n", ExpressionAttributeValues={":n": {"N": "1"}}
        )
    assert used.wru == 1
    with units.metering() as used:  # the index key changes: out of one entry, into another
        client.update_item(
            TableName="indexed", Key=key, UpdateExpression="SET u = :u", ExpressionAttributeValues={":u": {"S": "bob"}}
        )
    assert used.wru == 1 + 2
    with units.metering() as used:
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": "indexed", "Item": {"id": {"S": "s2"}}}},  # no user: not indexed
                {"Delete": {"TableName": "indexed", "Key": key}},
            ]
        )
    assert used.wru == 2 * 1 + 2 * 1 + 1
