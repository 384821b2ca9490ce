"""The events table: agent events posted by workers, per session, with their outcomes. Its stream feeds the consumer.

A propose event holds its text, sealed for the session's user, only until the consumer has handled
it; settling it removes the text in the same write that records the outcome. An event posted to a
session with no user (or none registered yet) stores no text at all: there is no key to seal it with.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.storage import dynamo
from chalicelib.storage.text import TEXT_ATTRIBUTE, TextSeal, UnreadableText

PENDING, HANDLED = "pending", "handled"
EVENT_TTL_SECONDS = 30 * 86_400


@dataclass(frozen=True)
class AgentEvent:
    session_id: str
    event_id: str
    type: str
    kind: str
    message_id: str | None
    status: str
    outcome: Mapping[str, Any] | None
    created_at: str
    tainted_at_post: bool
    user_id: str | None  # the session's user when it was posted (text is sealed for that user)
    text: str | None = None  # only while pending, and only when opened
    unreadable: bool = False  # its sealed text did not open for this session, event and user

    def public(self) -> dict[str, Any]:
        return {
            "id": self.event_id,
            "type": self.type,
            "kind": self.kind,
            "message_id": self.message_id,
            "status": self.status,
            "outcome": dict(self.outcome) if self.outcome else None,
            "created_at": self.created_at,
        }


def event_from_item(item: Mapping[str, Any], seal: TextSeal | None = None) -> AgentEvent:
    """The event in `item`; its text is opened only when `seal` is given (the consumer's read)."""
    user_id = item.get("user_id")
    text, unreadable = None, False
    if seal is not None and TEXT_ATTRIBUTE in item:
        try:
            if not user_id:  # text with no user to open it for was never written by us
                raise UnreadableText("events")
            text = seal.open_text(user_id, _item_parts(item), item)
        except UnreadableText:
            unreadable = True
    return AgentEvent(
        session_id=str(item["session_id"]),
        event_id=str(item["event_id"]),
        type=str(item.get("type", "")),
        kind=str(item.get("kind", "")),
        message_id=item.get("message_id"),
        status=str(item.get("status", PENDING)),
        outcome=item.get("outcome"),
        created_at=str(item.get("created_at", "")),
        tainted_at_post=bool(item.get("tainted_at_post", False)),
        user_id=user_id,
        text=text,
        unreadable=unreadable,
    )


def _binary_decoded(image: Mapping[str, Any]) -> dict[str, Any]:
    """Lambda's JSON event carries binary attributes (the sealed text) as base64 text; boto3 wants bytes."""
    import base64

    return {
        name: {"B": base64.b64decode(value["B"])} if isinstance(value, Mapping) and isinstance(value.get("B"), str) else value
        for name, value in image.items()
    }


def _item_parts(item: Mapping[str, Any]) -> list[str]:
    return [str(item["session_id"]), str(item["event_id"])]


class EventsRepository:
    def __init__(self, client: Any, table: str, seal: TextSeal) -> None:
        self._client = client
        self.table = table
        self.seal = seal

    def from_image(self, image: Mapping[str, Any]) -> AgentEvent:
        """A stream record's NewImage (DynamoDB JSON) as an event with its text opened for the consumer's checks."""
        return event_from_item(dynamo.load(_binary_decoded(image)), self.seal)

    def _key(self, session_id: str, event_id: str) -> dict[str, Any]:
        return dynamo.dump({"session_id": session_id, "event_id": event_id})

    def put_new(self, event: AgentEvent, now_epoch: int) -> dict[str, Any]:
        """Transaction action: store a posted event unless the worker already posted this id."""
        return {
            "Put": {
                "TableName": self.table,
                "Item": dynamo.dump(self._item(event, now_epoch)),
                "ConditionExpression": "attribute_not_exists(event_id)",
            }
        }

    def _item(self, event: AgentEvent, now_epoch: int) -> dict[str, Any]:
        item: dict[str, Any] = {
            "session_id": event.session_id,
            "event_id": event.event_id,
            "type": event.type,
            "kind": event.kind,
            "message_id": event.message_id,
            "status": PENDING,
            "created_at": event.created_at,
            "tainted_at_post": event.tainted_at_post,
            "user_id": event.user_id,
            "ttl": now_epoch + EVENT_TTL_SECONDS,
        }
        if event.user_id:  # an event for no user (yet) keeps no text (issue 12)
            item.update(self.seal.seal_text(event.user_id, [event.session_id, event.event_id], event.text or ""))
        return item

    def list(self, session_id: str) -> list[AgentEvent]:
        return [
            event_from_item(item)
            for item in dynamo.query_partition(self._client, self.table, "session_id", session_id)
        ]

    def settle(self, session_id: str, event_id: str, outcome: Mapping[str, Any], now_iso: str) -> dict[str, Any]:
        """Transaction action: record the outcome and drop the text, only if still pending (idempotency)."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(session_id, event_id),
                "UpdateExpression": "SET #st = :handled, outcome = :o, handled_at = :t REMOVE #tx",
                "ConditionExpression": "#st = :pending",
                "ExpressionAttributeNames": {"#st": "status", "#tx": TEXT_ATTRIBUTE},
                "ExpressionAttributeValues": dynamo.values(
                    handled=HANDLED, o=dict(outcome), t=now_iso, pending=PENDING
                ),
            }
        }

    def get(self, session_id: str, event_id: str) -> AgentEvent | None:
        raw = self._client.get_item(
            TableName=self.table, Key=self._key(session_id, event_id), ConsistentRead=True
        ).get("Item")
        return event_from_item(dynamo.load(raw), self.seal) if raw else None
