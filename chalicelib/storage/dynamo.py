"""The one DynamoDB client of the process, item (de)serialisation, and transactions that report why they failed."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_lock = threading.Lock()
_client: Any = None

Item = dict[str, Any]


def get_client() -> Any:
    """The DynamoDB client, built on first use (never at import time) and shared by the process."""
    global _client
    if _client is None:
        with _lock:
            if _client is None:
                import boto3  # imported lazily: ~0.4 s that a cold start should not pay before it must

                from chalicelib.storage.retries import client_config

                _client = boto3.client("dynamodb", config=client_config())
    return _client


def reset_client(client: Any = None) -> None:
    """Replace (or forget) the shared client: tests and the local launcher point it at moto."""
    global _client
    with _lock:
        _client = client


class _Codec:
    """boto3's own TypeSerializer/TypeDeserializer, loaded once on first use."""

    def __init__(self) -> None:
        self._ser: Any = None
        self._de: Any = None

    def _load(self) -> None:
        from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

        self._ser, self._de = TypeSerializer(), TypeDeserializer()

    def dump(self, item: Mapping[str, Any]) -> dict[str, Any]:
        if self._ser is None:
            self._load()
        return {key: self._ser.serialize(value) for key, value in item.items() if value is not None}

    def load(self, raw: Mapping[str, Any]) -> Item:
        """boto3's own decoding, but strings and booleans (most attributes of every item) read directly: a
        list of 250 items is decoded on every GET, and boto3's per-value dispatch was most of its cost.

        A top-level number is read exactly (`Decimal(text)`), not through boto3's 38-digit context, which
        raises `Rounded` for a number DynamoDB hands back written out in full: DynamoDB Local answers a
        stored `1e40` as 41 digits (docs/local-stack.md), and one damaged item must not fail its partition."""
        if self._de is None:
            self._load()
        item: Item = {}
        for key, value in raw.items():
            if len(value) == 1:
                ((kind, plain),) = value.items()
                if (kind == "S" and type(plain) is str) or (kind == "BOOL" and type(plain) is bool):
                    item[key] = plain
                    continue
                if kind == "N" and type(plain) is str:
                    item[key] = _number(plain)
                    continue
            item[key] = _plain(self._de.deserialize(value))
        return item


def _number(text: str) -> Any:
    """A DynamoDB Number's text as `_plain` gives it, exactly; text that is no finite number stays as it is
    (a caller checking for an int refuses it as it refuses any other wrong type)."""
    from decimal import Decimal, InvalidOperation

    try:
        number = Decimal(text)
    except InvalidOperation:
        return text
    return _plain(number) if number.is_finite() else text


def _plain(value: Any) -> Any:
    """DynamoDB numbers come back as Decimal; this service stores only integers."""
    from decimal import Decimal  # loaded with boto3's decoder already: this finds it in sys.modules

    return int(value) if isinstance(value, Decimal) else value


codec = _Codec()


def dump(item: Mapping[str, Any]) -> dict[str, Any]:
    return codec.dump(item)


def load(raw: Mapping[str, Any]) -> Item:
    return codec.load(raw)


def values(**names: Any) -> dict[str, Any]:
    """ExpressionAttributeValues from keyword arguments: values(now=1) -> {":now": {"N": "1"}}."""
    return {f":{key}": value for key, value in dump(names).items()}


def query_all(client: Any, **kwargs: Any) -> Iterator[Item]:
    """Every item of a Query, following pagination (a user's partition may exceed one 1 MB page)."""
    while True:
        page = client.query(**kwargs)
        for raw in page.get("Items", []):
            yield load(raw)
        last = page.get("LastEvaluatedKey")
        if not last:
            return
        kwargs["ExclusiveStartKey"] = last


def query_partition(
    client: Any, table: str, key_name: str, key_value: str, *, newest_first: bool = False, consistent: bool = False
) -> Iterator[Item]:
    """Every item of one partition (the only read shape on a request path: no Scan anywhere)."""
    return query_all(
        client,
        TableName=table,
        KeyConditionExpression=f"{key_name} = :k",
        ExpressionAttributeValues=values(k=key_value),
        ScanIndexForward=not newest_first,
        ConsistentRead=consistent,
    )


@dataclass(frozen=True)
class TransactionCancelled(Exception):
    """A transaction's condition failed; `reasons` has one code per action, in order ("None" = that one passed).

    `items`: per action, the item its failed condition met, when the action asked for it
    (ReturnValuesOnConditionCheckFailure=ALL_OLD), loaded; None otherwise.
    """

    reasons: tuple[str, ...]
    items: tuple[Item | None, ...] = ()

    def failed(self, index: int) -> bool:
        return index < len(self.reasons) and self.reasons[index] == "ConditionalCheckFailed"

    def item(self, index: int) -> Item | None:
        return self.items[index] if index < len(self.items) else None


def transact(client: Any, actions: Sequence[Mapping[str, Any]]) -> None:
    """Run TransactWriteItems; a cancelled transaction becomes TransactionCancelled with per-action reasons."""
    from botocore.exceptions import ClientError

    try:
        client.transact_write_items(TransactItems=list(actions))
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
            raise
        cancellation = exc.response.get("CancellationReasons", [])
        reasons = tuple(reason.get("Code", "None") for reason in cancellation)
        items = tuple(load(reason["Item"]) if reason.get("Item") else None for reason in cancellation)
        raise TransactionCancelled(reasons, items) from exc


def is_condition_failure(exc: BaseException) -> bool:
    from botocore.exceptions import ClientError

    return isinstance(exc, ClientError) and (
        exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
    )


def put_if_absent(client: Any, table: str, item: Mapping[str, Any], key_attribute: str) -> bool:
    """PutItem unless an item with this key is stored already; False in that case (nothing written)."""
    try:
        client.put_item(TableName=table, Item=dump(item), ConditionExpression=f"attribute_not_exists({key_attribute})")
    except Exception as exc:
        if is_condition_failure(exc):
            return False
        raise
    return True


def update_if(client: Any, **request: Any) -> Item | None:
    """UpdateItem under its ConditionExpression: the item as it now is, or None when the condition failed."""
    try:
        raw = client.update_item(ReturnValues="ALL_NEW", **request)["Attributes"]
    except Exception as exc:
        if is_condition_failure(exc):
            return None
        raise
    return load(raw)


BATCH_WRITE_ITEMS = 25  # DynamoDB's BatchWriteItem limit per call


def batch_delete(client: Any, table: str, keys: Sequence[Mapping[str, Any]]) -> int:
    """Delete these items (each a whole primary key, plain values): BatchWriteItem, 25 a call; the items sent.

    No condition (BatchWriteItem takes none): the caller has decided each key is to go. A key already
    gone is no error. What DynamoDB hands back unprocessed (throttling) is sent again with backoff; still
    unprocessed after `retries.MAX_ATTEMPTS` sends, it is `Unavailable` (503), and a retry of the whole
    request deletes the rest (it lists again what is stored).
    """
    from chalicelib.errors import Unavailable
    from chalicelib.storage import retries

    for start in range(0, len(keys), BATCH_WRITE_ITEMS):
        requests: list[dict[str, Any]] = [
            {"DeleteRequest": {"Key": dump(key)}} for key in keys[start : start + BATCH_WRITE_ITEMS]
        ]
        for attempt in range(1, retries.MAX_ATTEMPTS + 1):
            answer = client.batch_write_item(RequestItems={table: requests})
            requests = (answer.get("UnprocessedItems") or {}).get(table) or []
            if not requests:
                break
            if attempt == retries.MAX_ATTEMPTS:
                raise Unavailable()
            retries.sleep(retries.backoff_within_the_deadline(attempt))
    return len(keys)


def partition_keys(client: Any, table: str, key_name: str, key_value: str, sort_name: str) -> list[dict[str, Any]]:
    """The whole primary key of every item in one partition (a consistent Query that reads nothing else)."""
    return [
        {key_name: item[key_name], sort_name: item[sort_name]}
        for item in query_all(
            client,
            TableName=table,
            KeyConditionExpression="#p = :k",
            ExpressionAttributeNames={"#p": key_name, "#s": sort_name},
            ExpressionAttributeValues=values(k=key_value),
            ProjectionExpression="#p, #s",
            ConsistentRead=True,
        )
    ]
