"""Creates the tables of infra/tables.json (the template deployment merges) in DynamoDB Local, or moto in the quick tier."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from chalicelib.config import TableNames

TEMPLATE = Path(__file__).resolve().parent.parent / "infra" / "tables.json"

# The template's logical ids, in the order of TableNames' fields.
LOGICAL_IDS = {
    "entries": "EntriesTable",
    "proposals": "ProposalsTable",
    "journal": "JournalTable",
    "sessions": "SessionsTable",
    "events": "EventsTable",
    "keys": "KeysTable",
}


def table_definitions() -> dict[str, dict[str, Any]]:
    """The Properties of each table resource, by logical id."""
    resources = json.loads(TEMPLATE.read_text())["Resources"]
    return {logical: resources[logical]["Properties"] for logical in LOGICAL_IDS.values()}


def create_tables(client: Any, names: TableNames) -> dict[str, str]:
    """Create every table (keys, billing, stream) and its TTL; returns the events table's stream ARN under 'events_stream'.

    If one cannot be made (its name taken by another stack's table, on a DynamoDB they share), the tables this
    call made are deleted before the error goes on, and no other: a refused start leaves nothing behind.
    """
    made: list[str] = []
    try:
        return _create(client, names, made)
    except Exception:
        for name in made:
            with contextlib.suppress(Exception):  # the error that stopped the start is the one to report
                client.delete_table(TableName=name)
        raise


def _create(client: Any, names: TableNames, made: list[str]) -> dict[str, str]:
    definitions = table_definitions()
    created: dict[str, str] = {}
    for field, logical in LOGICAL_IDS.items():
        props = definitions[logical]
        name = getattr(names, field)
        request: dict[str, Any] = {
            "TableName": name,
            "AttributeDefinitions": props["AttributeDefinitions"],
            "KeySchema": props["KeySchema"],
            "BillingMode": props["BillingMode"],
        }
        if "StreamSpecification" in props:
            request["StreamSpecification"] = {"StreamEnabled": True, **props["StreamSpecification"]}
        if "GlobalSecondaryIndexes" in props:
            request["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
        description = client.create_table(**request)["TableDescription"]
        made.append(name)
        ttl = props.get("TimeToLiveSpecification")
        if ttl:
            client.update_time_to_live(TableName=name, TimeToLiveSpecification=ttl)
        if description.get("LatestStreamArn"):
            created["events_stream"] = description["LatestStreamArn"]
    return created


def delete_tables(client: Any, names: TableNames) -> None:
    """Delete every table of `names` that exists (a stack's or a test's own, on a DynamoDB they share)."""
    for field in LOGICAL_IDS:
        try:
            client.delete_table(TableName=getattr(names, field))
        except client.exceptions.ResourceNotFoundException:
            pass
