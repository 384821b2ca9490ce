"""The storage tests on AWS's DynamoDB Local: one JVM per test process, one set of tables per test.

`make test` sets MEMORY_TEST_DYNAMODB=local: then every test marked `storage` (tests/conftest.py sets the
mark: the stream, consumer and fault suites, the cap and concurrency races) gets the `dynamodb` fixture's
client, its tables and the environment's DynamoDB endpoints on the worker's DynamoDB Local instead of
in-process moto, which still serves KMS. `make check` leaves it unset: the same tests run on moto, fast.
MEMORY_TEST_DYNAMODB=all puts every test that has the `dynamodb` fixture there (how the differences in
docs/local-stack.md were found). A test marked `dynamodb_local` runs there always (it is about what DynamoDB Local refuses and moto lets
through), and so sits in the server tier.

Tables are named per test (`t<n>-entries`, ...) and deleted when it ends, so no test sees another's
items and the JVM's in-memory database stays small. The same DynamoDB Local serves every local stack the
process starts (tests/support/live.py): each makes its tables behind a prefix of its own (`s<n>-memory-entries`,
...), dropped when it stops, so a stack costs no JVM of its own (~1.2 CPU-s to start, more to warm up).
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
from typing import Any

import pytest

from chalicelib.config import TableNames

__all__ = [
    "ENDPOINT_VARIABLES",
    "ENV",
    "drop_stack_tables",
    "drop_tables",
    "on_dynamodb_local",
    "shared",
    "stack_prefix",
    "stop_shared",
    "table_names_for",
]

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
_stacks = itertools.count(1)
_instance: Any = None  # this process's DynamoDB Local (local/dynamodb_local.py), once started


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
    from local.tables import delete_tables

    delete_tables(client, names)


def drop_stack_tables(endpoint: str, prefix: str) -> None:
    """Drop the tables a local stack made behind `prefix` (it drops them itself when it stops; not when killed)."""
    import boto3

    from local.shared_dynamodb import prefixed
    from local.stack import TABLES

    keys = {"aws_access_key_id": "local", "aws_secret_access_key": "local", "region_name": "us-east-1"}
    drop_tables(boto3.client("dynamodb", endpoint_url=endpoint, **keys), prefixed(TABLES, prefix))


def stack_prefix() -> str:
    """A table-name prefix no other stack of this process has had (`s1-`, `s2-`, ...)."""
    return f"s{next(_stacks)}-"


def shared() -> Any:
    """This process's DynamoDB Local, started by its first caller and stopped by `stop_shared` (or at exit).

    Started from the main thread only: the JVM is ended when the thread that started it ends
    (PR_SET_PDEATHSIG, local/dynamodb_local.py), and a fixture's or a stack helper's thread ends early.
    """
    global _instance
    if _instance is None:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("start the shared DynamoDB Local from the main thread (PR_SET_PDEATHSIG)")
        from local import dynamodb_local

        _instance = dynamodb_local.start()
        atexit.register(stop_shared)
    return _instance


def stop_shared() -> None:
    """Stop this process's DynamoDB Local, if it was started (the session's end: after every stack on it)."""
    global _instance
    if _instance is not None:
        _instance.stop()
        _instance = None
