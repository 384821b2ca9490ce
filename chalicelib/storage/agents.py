"""The user's grants per agent: one item per agent in the user's entries partition, so the Query that
reads their entries for a context fetch reads the grants too, at no extra call.

An item `a#<agent>` holds the user's switches (`read`, `propose`; absent = allowed) and when the agent
last read the user's memory or proposed to them. Those times are written in the same transaction as
what they record (the context's journal row, the proposal), so listing agents never reads the journal.
No counter moves here: grants are not entries (EntriesRepository skips these items).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from chalicelib.identifiers import IDENTIFIER_PATTERN
from chalicelib.models import AgentGrant
from chalicelib.storage import dynamo

AGENT_PREFIX = "a#"
FORGOTTEN_AT = "forgotten_at"  # when the user last forgot the agent's writes (POST /v1/agents/{id}/forget)
_AGENT = re.compile(IDENTIFIER_PATTERN)
_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z")


def is_agent_name(value: Any) -> bool:
    """An agent as sessions name it (chalicelib/identifiers.py's shape); anything else in storage was altered."""
    return isinstance(value, str) and _AGENT.fullmatch(value) is not None


def _allowed(value: Any) -> bool:
    """A switch the user never set is on; only a stored `true` keeps a set one on (anything altered is off)."""
    return value is None or value is True


def grant_from_item(item: Mapping[str, Any]) -> AgentGrant | None:
    """The grant stored in `item`, named by the item's key; None when that key names no agent (altered)."""
    agent = str(item["sk"])[len(AGENT_PREFIX):]
    if not is_agent_name(agent):
        return None

    def when(name: str) -> str | None:
        value = item.get(name)
        return value if isinstance(value, str) and _INSTANT.fullmatch(value) else None

    return AgentGrant(
        agent=agent,
        read=_allowed(item.get("read")),
        propose=_allowed(item.get("propose")),
        last_read_at=when("last_read_at"),
        last_proposal_at=when("last_proposal_at"),
        set_at=when("set_at"),
    )


class AgentsRepository:
    """Transaction actions on the grant items (they live in the entries table, beside the state item)."""

    def __init__(self, table: str) -> None:
        self.table = table

    def _key(self, user_id: str, agent: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": user_id, "sk": AGENT_PREFIX + agent})

    def may_read(self, client: Any, user_id: str, agent: str) -> bool:
        """Whether the user lets `agent` read (one consistent GetItem: a refusal path only, never a proposal's)."""
        raw = client.get_item(TableName=self.table, Key=self._key(user_id, agent), ConsistentRead=True).get("Item")
        return _allowed(dynamo.load(raw).get("read") if raw else None)

    def set_switches(self, user_id: str, agent: str, now_iso: str, *, read: bool | None, propose: bool | None) -> dict[str, Any]:
        """Set the switches given (at least one); created on first use, for an agent seen or not."""
        sets = ["set_at = :t"]
        vals: dict[str, Any] = {"t": now_iso}
        names: dict[str, str] = {}
        for name, value in (("read", read), ("propose", propose)):
            if value is not None:
                names[f"#{name}"] = name
                vals[name] = value
                sets.append(f"#{name} = :{name}")
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, agent),
                "UpdateExpression": "SET " + ", ".join(sets),
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": dynamo.values(**vals),
            }
        }

    def record_read(self, user_id: str, agent: str, now_iso: str) -> dict[str, Any]:
        """The agent was given the user's memory now (written with the context's journal row)."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, agent),
                "UpdateExpression": "SET last_read_at = :t",
                "ExpressionAttributeValues": dynamo.values(t=now_iso),
            }
        }

    def forget_before(self, client: Any, user_id: str, agent: str, now_iso: str) -> None:
        """The user forgot this agent's writes now (one UpdateItem), so its events posted until now and still
        pending (a stream retry, a later redrive) are refused `agent_forgotten`, never turned into suggestions.

        Only on a row that exists: every admitted proposal writes one, so an agent without a row never got a
        suggestion through (a forget must not add an agent to the person's list).
        """
        dynamo.update_if(
            client,
            TableName=self.table,
            Key=self._key(user_id, agent),
            UpdateExpression=f"SET {FORGOTTEN_AT} = :t",
            ConditionExpression="attribute_exists(sk)",
            ExpressionAttributeValues=dynamo.values(t=now_iso),
        )

    def forgot_before(self, client: Any, user_id: str, agent: str, posted_at: str) -> bool:
        """Whether the user forgot this agent's writes after `posted_at` (one GetItem: a refusal path only)."""
        raw = client.get_item(TableName=self.table, Key=self._key(user_id, agent), ConsistentRead=True).get("Item")
        forgotten = dynamo.load(raw).get(FORGOTTEN_AT) if raw else None
        return isinstance(forgotten, str) and posted_at <= forgotten

    def admit_proposal(self, user_id: str, agent: str, now_iso: str, posted_at: str) -> dict[str, Any]:
        """The proposal's gate and its receipt: fails when the user turned `propose` off for this agent.

        In the proposal's own transaction, so the grant costs no read: the condition is the check.
        It holds when the switch was never set (no attribute) or is a stored `true`, and fails for
        `false` or anything altered, as the reader above does.
        """
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, agent),
                "UpdateExpression": "SET last_proposal_at = :t",
                # ... and the event was posted after the user last forgot this agent's writes (issue 37 #12)
                "ConditionExpression": f"(attribute_not_exists(#p) OR #p = :on) AND (attribute_not_exists({FORGOTTEN_AT}) OR {FORGOTTEN_AT} < :posted)",
                "ExpressionAttributeNames": {"#p": "propose"},
                "ExpressionAttributeValues": dynamo.values(t=now_iso, on=True, posted=posted_at),
            }
        }


def only_from(delete: dict[str, Any], agent: str) -> dict[str, Any]:
    """`delete` (an entry's or a proposal's Delete action) narrowed to an item that came from `agent`.

    Forgetting an agent's writes must never take the user's own entries, whatever the listing said:
    the condition is checked on the item itself, in the transaction that deletes it.
    """
    request = dict(delete["Delete"])
    request["ConditionExpression"] = f"({request['ConditionExpression']}) AND #origin = :agent_origin AND #agent = :from_agent"
    request["ExpressionAttributeNames"] = {**request.get("ExpressionAttributeNames", {}), "#origin": "origin", "#agent": "agent"}
    request["ExpressionAttributeValues"] = {
        **request.get("ExpressionAttributeValues", {}),
        **dynamo.values(agent_origin="agent", from_agent=agent),
    }
    return {"Delete": request}
