"""The proposals table: per user, the agents' proposals waiting for the user to accept or reject."""
from __future__ import annotations

import builtins
from typing import Any

from chalicelib.models import Entry
from chalicelib.storage import dynamo
from chalicelib.storage.entry_items import (
    PROPOSAL_PREFIX,
    StoredRef,
    from_item,
    opened_ref,
    ref_from_item,
    text_keys_for,
    to_item,
)
from chalicelib.storage.text import TextSeal, UnreadableText


class ProposalsRepository:
    def __init__(self, client: Any, table: str, seal: TextSeal) -> None:
        self._client = client
        self.table = table
        self.seal = seal

    def _key(self, user_id: str, proposal_id: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": user_id, "sk": PROPOSAL_PREFIX + proposal_id})

    def list(self, user_id: str) -> list[Entry]:
        found = []
        items = list(dynamo.query_partition(self._client, self.table, "user_id", user_id))
        keys = text_keys_for(items, self.seal, user_id)
        for item in items:
            try:
                found.append(from_item(item, self.seal, PROPOSAL_PREFIX, keys))
            except UnreadableText:
                continue  # not openable here (moved, altered, or its key destroyed): absent, like any missing id
        return found

    def stored(self, user_id: str) -> builtins.list[StoredRef]:  # `list` here is the method above
        """Every waiting proposal's id, without opening any text (no key needed)."""
        refs = (ref_from_item(item, PROPOSAL_PREFIX) for item in dynamo.query_partition(self._client, self.table, "user_id", user_id))
        return [ref for ref in refs if ref is not None]

    def ref(self, user_id: str, proposal_id: str) -> StoredRef | None:
        """One waiting proposal's id and text key id, unopened (a reject needs to know which key to delete)."""
        raw = self._client.get_item(TableName=self.table, Key=self._key(user_id, proposal_id), ConsistentRead=True).get("Item")
        return opened_ref(dynamo.load(raw), self.seal, PROPOSAL_PREFIX) if raw else None

    def get(self, user_id: str, proposal_id: str) -> Entry | None:
        raw = self._client.get_item(
            TableName=self.table, Key=self._key(user_id, proposal_id), ConsistentRead=True
        ).get("Item")
        if not raw:
            return None
        try:
            return from_item(dynamo.load(raw), self.seal, PROPOSAL_PREFIX)
        except UnreadableText:
            return None  # a 404 like any missing id

    def put_new(self, proposal: Entry) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self.table,
                "Item": dynamo.dump(to_item(proposal, PROPOSAL_PREFIX + proposal.id, self.seal)),
                "ConditionExpression": "attribute_not_exists(sk)",
            }
        }

    def delete_waiting(self, user_id: str, proposal_id: str) -> dict[str, Any]:
        """Delete a proposal only if it still waits: a second accept or reject finds nothing (404)."""
        return {
            "Delete": {
                "TableName": self.table,
                "Key": self._key(user_id, proposal_id),
                "ConditionExpression": "attribute_exists(sk)",
            }
        }
