"""IAM callers for the Chalice test client, which lets IAM routes through with no identity (NOTES.md).

API Gateway puts the verified principal in `requestContext.identity.userArn`; here the event
converter is wrapped to do the same for the ARN the test names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from chalice.local import LambdaEventConverter


@contextmanager
def calling_as(arn: str | None) -> Iterator[None]:
    original = LambdaEventConverter.create_lambda_event

    def with_identity(self: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        event = original(self, *args, **kwargs)
        if arn is not None:
            event["requestContext"]["identity"]["userArn"] = arn
        return event

    LambdaEventConverter.create_lambda_event = with_identity  # type: ignore[method-assign]
    try:
        yield
    finally:
        LambdaEventConverter.create_lambda_event = original  # type: ignore[method-assign]


def iam_call(
    client: Any, method: str, path: str, arn: str | None, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    with calling_as(arn):
        response = getattr(client.http, method.lower())(
            path,
            headers={"Content-Type": "application/json", **(headers or {})},
            body=json.dumps(body) if body is not None else None,
        )
    text = response.body.decode() if isinstance(response.body, bytes) else response.body
    return response.status_code, (json.loads(text) if text else None)
