"""DynamoDB answers from the embedded moto as plain JSON, skipping moto's shape-walking serializer.

moto 5.2.5 builds each DynamoDB answer as a dict already in the wire's shape (`DynamoResult`), then
walks botocore's output shape for every value to serialize it: a Query of 200 entries spends ~25 ms
there, two thirds of its time (profiled in the property tests at the caps). DynamoDB's JSON protocol
needs no walk for these answers: the dict is the body, with binary values base64-encoded. Anything
the shape walk does more (timestamps in DescribeTable, error answers, paginated results) keeps
moto's own path: a value JSON cannot carry as-is falls back to it, and so does every non-dict result.
tests/local_stack/test_embedded_aws.py compares both paths answer by answer.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

__all__ = ["install", "moto_execute_result", "wire_body"]

JSON_HEADERS = {"Content-Type": "application/x-amz-json-1.0"}
moto_execute_result: Callable[..., Any] | None = None  # moto's own method, once installed (for the comparison test)


class _NotPlain(TypeError):
    """A value only moto's serializer knows how to write (a timestamp, say)."""


def _plain(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    raise _NotPlain(type(value).__name__)


def wire_body(result: Any) -> str | None:
    """The JSON body for `result`, or None where moto's serializer must write it."""
    if not isinstance(result, dict):
        return None
    try:
        return json.dumps(result, default=_plain, separators=(",", ":"))
    except _NotPlain:
        return None


def install() -> None:
    """Patch moto's DynamoResult (once; the caller holds embedded_aws's lock)."""
    global moto_execute_result
    from moto.dynamodb.responses import DynamoResult

    original = moto_execute_result = DynamoResult.execute_result

    def execute_result(self: Any, context: Any) -> Any:
        body = wire_body(self.result)
        if body is None:
            return original(self, context)
        return 200, dict(JSON_HEADERS), body

    DynamoResult.execute_result = execute_result
