"""What the embedded DynamoDB holds, read raw (as a backup, a stream reader or an operator with table access would)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from chalicelib.storage import dynamo


def every_item(dynamodb: Any, tables: Iterable[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Table name → every raw item (DynamoDB JSON), by Scan: this is the test looking, not a request path.

    Every table of the endpoint, or `tables` (a stack's own, on the DynamoDB Local other stacks share).
    """
    found: dict[str, list[dict[str, Any]]] = {}
    for name in dynamodb.list_tables()["TableNames"] if tables is None else tables:
        items: list[dict[str, Any]] = []
        request: dict[str, Any] = {"TableName": name}
        while True:
            page = dynamodb.scan(**request)
            items.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        found[name] = items
    return found


def every_stream_record(streams: Any, stream_arn: str) -> list[dict[str, Any]]:
    """Every record still in the stream, from its oldest, in every shard."""
    records: list[dict[str, Any]] = []
    shards = streams.describe_stream(StreamArn=stream_arn)["StreamDescription"]["Shards"]
    for shard in shards:
        iterator = streams.get_shard_iterator(
            StreamArn=stream_arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while iterator:
            page = streams.get_records(ShardIterator=iterator, Limit=1000)
            records.extend(page.get("Records", []))
            if not page.get("Records"):
                break
            iterator = page.get("NextShardIterator")
    return records


def plaintext_hits(texts: list[str], *stored: Any) -> list[str]:
    """Which of `texts` appear anywhere in `stored` (strings, or bytes shown by repr: ASCII shows as itself)."""
    shown = repr(stored)
    return [text for text in texts if text in shown]


def raw_item(dynamodb: Any, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    item = dynamodb.get_item(TableName=table, Key=dynamo.dump(key), ConsistentRead=True).get("Item")
    return dict(item) if item else None


def strings_in(value: Any) -> Iterator[str]:
    """Every string anywhere in raw items or stream records, attribute names included (a kind hides in neither)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from strings_in(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from strings_in(inner)
