"""Counts the DynamoDB API calls a block of code makes, by operation name (botocore's before-call event)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def dynamodb_calls(client: Any) -> Iterator[Counter[str]]:
    seen: Counter[str] = Counter()

    def count(model: Any, **_: Any) -> None:
        seen[model.name] += 1

    client.meta.events.register("before-call.dynamodb", count, unique_id="count-dynamodb-calls")
    try:
        yield seen
    finally:
        client.meta.events.unregister("before-call.dynamodb", unique_id="count-dynamodb-calls")
