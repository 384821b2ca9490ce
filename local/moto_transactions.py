"""TransactWriteItems for the embedded moto: all conditions first, then all writes, with no table copies.

moto 5.2.5 deep-copies every table a transaction touches before it starts and, when an action
fails, puts the copies back in place of the live tables (NOTES.md). Under the one lock of
local/embedded_aws.py that is correct but costs a copy of whole tables per transaction (time and
memory grow with the data), and it replaces the table objects a stream reader holds.

DynamoDB's semantics are simpler: each item appears at most once in a transaction, every
condition is judged against the state before it, and either every write happens or none does.
This does exactly that, holding the lock: phase one checks each action's condition and collects
the per-action cancellation reasons moto would report; phase two applies the writes. Should an
apply step still raise (a validation error moto finds late), the items it touched and their
stream records are put back as they were, so a refused request changes nothing.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["transact_write_items"]

_OPERATIONS = frozenset({"ConditionCheck", "Put", "Delete", "Update"})


def _key_of(backend: Any, op_type: str, op: dict[str, Any]) -> dict[str, Any]:
    if op_type != "Put":
        return dict(op["Key"])
    table = backend.get_table(op["TableName"])
    key = {table.hash_key_attr: op["Item"][table.hash_key_attr]}
    if table.range_key_attr is not None:
        key[table.range_key_attr] = op["Item"][table.range_key_attr]
    return key


def _check(
    backend: Any, transact_items: list[dict[str, Any]]
) -> tuple[list[tuple[str, dict[str, Any], dict[str, Any]]], list[Any]]:
    """Phase one: each action's key and condition, against the state before the transaction."""
    from moto.dynamodb.comparisons import get_filter_expression
    from moto.dynamodb.exceptions import (
        ConditionalCheckFailed,
        MockValidationException,
        MultipleTransactionsException,
        TransactWriteSingleOpException,
    )

    targets: set[tuple[str, str]] = set()
    plan: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    errors: list[Any] = []
    for item in transact_items:
        if len(item) > 1:
            raise TransactWriteSingleOpException
        original_item = None
        try:
            op_type, op = next(iter(item.items()))
            if op_type not in _OPERATIONS:
                raise ValueError("Unsupported transaction operation")
            key = _key_of(backend, op_type, op)
            target = (str(op["TableName"]), str(dict(sorted(key.items()))))
            if target in targets:
                raise MultipleTransactionsException()
            targets.add(target)
            current = backend.get_item(op["TableName"], key)
            expression = op.get("ConditionExpression")
            if expression is not None:
                condition = get_filter_expression(
                    expression, op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
                )
                if not condition.expr(current):
                    if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current:
                        original_item = current.to_json()["Attributes"]
                    raise ConditionalCheckFailed(item=original_item)
            plan.append((op_type, op, key))
            errors.append((None, None, None))
        except (MultipleTransactionsException, MockValidationException):
            raise
        except ConditionalCheckFailed as exc:
            errors.append(("ConditionalCheckFailed", str(exc.message), original_item))
        except Exception as exc:  # noqa: BLE001 - reported per action, as moto and DynamoDB do
            errors.append((type(exc).__name__, str(exc), original_item))
    return plan, errors


def _snapshot(backend: Any, plan: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> list[tuple[Any, Any, Any, Any]]:
    """What phase two may change: each touched item (a copy, or None) and its table's stream length."""
    saved = []
    for _op_type, op, key in plan:
        table = backend.get_table(op["TableName"])
        hash_key, range_key = backend.get_keys_value(table, key)
        current = table.get_item(hash_key, range_key)
        shard = table.stream_shard
        saved.append((table, hash_key, range_key, (copy.deepcopy(current), len(shard.items) if shard else 0)))
    return saved


def _restore(saved: list[tuple[Any, Any, Any, Any]]) -> None:
    for table, hash_key, range_key, (item, stream_length) in reversed(saved):
        if range_key is None:
            table.items.pop(hash_key, None)
            if item is not None:
                table.items[hash_key] = item
        else:
            table.items.get(hash_key, {}).pop(range_key, None)
            if item is not None:
                table.items.setdefault(hash_key, {})[range_key] = item
        if table.stream_shard is not None:
            del table.stream_shard.items[stream_length:]


def transact_write_items(backend: Any, transact_items: list[dict[str, Any]]) -> None:
    """Replacement for DynamoDBBackend.transact_write_items (the caller holds the embedded lock)."""
    from moto.dynamodb.exceptions import TooManyTransactionsException, TransactionCanceledException

    if len(transact_items) > 100:
        raise TooManyTransactionsException()
    plan, errors = _check(backend, transact_items)
    if any(code is not None for code, _, _ in errors):
        raise TransactionCanceledException(errors)
    saved = _snapshot(backend, plan)
    try:
        for op_type, op, key in plan:
            # The condition goes along again (as moto itself does): it holds, since nothing else
            # runs under the lock and each item appears once, and it keeps every value "used".
            given = {
                "condition_expression": op.get("ConditionExpression"),
                "expression_attribute_names": op.get("ExpressionAttributeNames"),
                "expression_attribute_values": op.get("ExpressionAttributeValues"),
            }
            if op_type == "Put":
                backend.put_item(op["TableName"], op["Item"], **given)
            elif op_type == "Delete":
                backend.delete_item(op["TableName"], key, **given)
            elif op_type == "Update":
                backend.update_item(op["TableName"], key, update_expression=op["UpdateExpression"], **given)
    except BaseException:
        _restore(saved)
        raise
