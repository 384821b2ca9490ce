"""What a running local stack really stores, read straight from its embedded DynamoDB (`.local/stack.json`).

The HTTP tests compare this with what the API answered: a test checks what is stored, not only
what was said.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class UserState:
    """One user's stored partition: the state item's counters and the items themselves."""

    enabled: bool
    active_counter: int
    waiting_counter: int
    entry_ids: frozenset[str]
    proposal_ids: frozenset[str]
    journal_actions: tuple[str, ...]
    raw_entries: tuple[dict[str, Any], ...]
    # Fingerprint items (issue 24): sort key → the id of the entry or proposal holding it.
    entry_fingerprints: tuple[tuple[str, str], ...] = ()
    proposal_fingerprints: tuple[tuple[str, str], ...] = ()

    @property
    def counters_match(self) -> bool:
        return self.active_counter == len(self.entry_ids) and self.waiting_counter == len(self.proposal_ids)


class StoredState:
    """Raw reads of the stack's tables through boto3 against the endpoints in stack.json."""

    def __init__(self, stack_file: Path) -> None:
        import boto3
        from boto3.dynamodb.types import TypeDeserializer

        self.description = json.loads(stack_file.read_text())
        self.tables = self.description["tables"]
        self._client = boto3.client(
            "dynamodb",
            endpoint_url=self.description["dynamodb_endpoint"],
            region_name=self.description["region"],
            aws_access_key_id=self.description["aws_access_key_id"],
            aws_secret_access_key=self.description["aws_secret_access_key"],
        )
        self._de = TypeDeserializer()

    def partition(self, table: str, user_id: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "TableName": self.tables[table],
            "KeyConditionExpression": "user_id = :u",
            "ExpressionAttributeValues": {":u": {"S": user_id}},
            "ConsistentRead": True,
        }
        while True:
            page = self._client.query(**kwargs)
            items.extend({k: self._de.deserialize(v) for k, v in raw.items()} for raw in page["Items"])
            if "LastEvaluatedKey" not in page:
                return items
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def proposals(self, user_id: str) -> list[dict[str, Any]]:
        """The user's stored proposals (not their fingerprint items)."""
        return [item for item in self.partition("proposals", user_id) if str(item["sk"]).startswith("p#")]

    def user(self, user_id: str) -> UserState:
        entries = self.partition("entries", user_id)
        state = next((item for item in entries if item["sk"] == "#state"), {})
        stored = tuple(
            item for item in entries if str(item["sk"]).startswith("e#")
        )  # not the state, grants, fingerprints
        everything = self.partition("proposals", user_id)
        proposals = [item for item in everything if str(item["sk"]).startswith("p#")]
        journal = self.partition("journal", user_id)
        return UserState(
            enabled=bool(state.get("enabled", False)),
            active_counter=int(state.get("active", 0)),
            waiting_counter=int(state.get("waiting", 0)),
            entry_ids=frozenset(str(item["id"]) for item in stored),
            proposal_ids=frozenset(str(item["id"]) for item in proposals),
            journal_actions=tuple(str(item.get("action")) for item in journal),
            raw_entries=stored,
            entry_fingerprints=_fingerprints(entries),
            proposal_fingerprints=_fingerprints(everything),
        )


def _fingerprints(items: list[dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(i["sk"]), str(i.get("held_by"))) for i in items if str(i["sk"]).startswith("f#")))
