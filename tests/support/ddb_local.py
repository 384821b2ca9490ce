"""The storage tests on AWS's DynamoDB Local: one JVM per test process, one set of tables per test.

`make test` sets MEMORY_TEST_DYNAMODB=local: then every test marked `storage` (tests/conftest.py sets the
mark: the stream, consumer and fault suites, the cap and concurrency races) gets the `dynamodb` fixture's
client, its tables and the environment's DynamoDB endpoints on the worker's DynamoDB Local instead of
in-process moto, which still serves KMS. `make check` leaves it unset: the same tests run on moto, fast.
MEMORY_TEST_DYNAMODB=all puts every test that has the `dynamodb` fixture there (how the differences in
docs/local-stack.md were found). A test marked `dynamodb_local` runs there always (it is about what DynamoDB Local refuses and moto lets
through), and so sits in the server tier.

Tables are named per test (`t<n>-entries`, ...) and deleted when it ends, so no test sees another's
items and the JVM's in-memory database stays small.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.config import TableNames

__all__ = ["ENDPOINT_VARIABLES", "ENV", "on_dynamodb_local", "running", "table_names_for", "drop_tables"]

# Every variable that points boto3 somewhere else than AWS's own hosts (which moto answers). An in-process
# local stack (tests/support/chaos.py) sets them in os.environ for good: a fixture meaning moto unsets them all.
ENDPOINT_VARIABLES = (
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_ENDPOINT_URL_DYNAMODB_STREAMS",
    "AWS_ENDPOINT_URL_KMS",
)

ENV = "MEMORY_TEST_DYNAMODB"
_numbers = itertools.count(1)


def on_dynamodb_local(node: pytest.Item) -> bool:
    """Whether this test's DynamoDB is DynamoDB Local (else in-process moto)."""
    if node.get_closest_marker("dynamodb_local") is not None or os.environ.get(ENV) == "all":
        return True
    return os.environ.get(ENV) == "local" and node.get_closest_marker("storage") is not None


def table_names_for(prefix: str = "t") -> TableNames:
    """A fresh set of table names (DynamoDB wants 3 to 255 characters: `t1-keys` is 7)."""
    number = next(_numbers)
    return TableNames(
        entries=f"{prefix}{number}-entries",
        proposals=f"{prefix}{number}-proposals",
        journal=f"{prefix}{number}-journal",
        sessions=f"{prefix}{number}-sessions",
        events=f"{prefix}{number}-events",
        keys=f"{prefix}{number}-keys",
    )


def drop_tables(client: Any, names: TableNames) -> None:
    for name in (names.entries, names.proposals, names.journal, names.sessions, names.events, names.keys):
        try:
            client.delete_table(TableName=name)
        except client.exceptions.ResourceNotFoundException:
            pass


def running() -> Iterator[Any]:
    """A DynamoDB Local for this test process (local/dynamodb_local.py), stopped when the session ends."""
    from local import dynamodb_local

    instance = dynamodb_local.start()
    try:
        yield instance
    finally:
        instance.stop()
