"""The events table: agent events posted by workers, per session, with their outcomes. Its stream feeds the consumer.

A propose event holds its text, sealed for the session's user, only until the consumer has handled
it; settling it removes the text in the same write that records the outcome. An event posted to a
session with no user (or none registered yet) stores no text at all: there is no key to seal it with.

The sealed text is bound to the event's key and to what it claims (type, kind, message, taint at post,
time, user): an event altered in storage is refused `unreadable`. A `kind` outside the three is never
stored as typed (issue 21): the event keeps no kind, and the consumer refuses it `invalid_kind`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from chalicelib.crypto.sealing import Provenance
from chalicelib.models import KINDS
from chalicelib.storage import dynamo
from chalicelib.storage.text import TEXT_ATTRIBUTE, TextSeal, UnreadableText, sealing_key_id

PENDING, HANDLED = "pending", "handled"
EVENT_TTL_SECONDS = 30 * 86_400


@dataclass(frozen=True)
class AgentEvent:
    session_id: str
    event_id: str
    type: str
    kind: str | None  # one of the three, or None: any other kind is never stored (nor shown) as typed
    message_id: str | None
    status: str
    outcome: Mapping[str, Any] | None
    created_at: str
    tainted_at_post: bool
    user_id: str | None  # the session's user when it was posted (text is sealed for that user)
    text: str | None = None  # only while pending, and only when opened
    unreadable: bool = False  # its sealed text did not open for this session, event and user
    text_id: bytes | None = None  # the id of its text's own key (the proposal it becomes goes on under it)
    replaces: str | None = None  # a context item's ref the agent says it updates (issue 39), only while pending

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


def known_kind(kind: object) -> str | None:
    """The kind if it is one of the three; None for anything else (it is then never stored or shown)."""
    return kind if isinstance(kind, str) and kind in KINDS else None


def event_key(session_id: str, event_id: str) -> dict[str, str]:
    """The event's whole primary key, as its associated data binds it."""
    return {"session_id": session_id, "event_id": event_id}


def event_provenance(event: AgentEvent) -> Provenance:
    """What the event claims besides its text; bound to the sealed text, so storage cannot change it."""
    claims: dict[str, str | bool | None] = {
        "type": event.type,
        "kind": event.kind,
        "message_id": event.message_id,
        "tainted_at_post": event.tainted_at_post,
        "created_at": event.created_at,
    }
    if event.replaces is not None:  # bound only when given: events posted before issue 39 keep their data
        claims["replaces"] = event.replaces
    return claims


def _optional_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _plain(value: Any) -> bool:
    """Whether an outcome read back is made only of what the consumer writes (text, numbers, flags, maps, lists)."""
    if isinstance(value, Mapping):
        return all(isinstance(name, str) and _plain(inner) for name, inner in value.items())
    if isinstance(value, list):
        return all(_plain(inner) for inner in value)
    return value is None or isinstance(value, str | bool | int | Decimal)


def event_from_item(item: Mapping[str, Any], seal: TextSeal | None = None) -> AgentEvent:
    """The event in `item`; its text is opened only when `seal` is given (the consumer's read).

    Attributes of the wrong type read as missing (never a 500): if that changed what the event claims,
    its sealed text no longer opens, and the consumer refuses it `unreadable`.
    """
    user_id = _optional_text(item.get("user_id"))
    outcome = item.get("outcome")
    event = AgentEvent(
        session_id=str(item["session_id"]),
        event_id=str(item["event_id"]),
        type=_optional_text(item.get("type")) or "",
        kind=known_kind(item.get("kind")),
        message_id=_optional_text(item.get("message_id")),
        status=_optional_text(item.get("status", PENDING)) or "",
        outcome=outcome if isinstance(outcome, Mapping) and _plain(outcome) else None,
        created_at=_optional_text(item.get("created_at")) or "",
        tainted_at_post=item.get("tainted_at_post") is True,
        user_id=user_id,
        replaces=_optional_text(item.get("replaces")),
    )
    if TEXT_ATTRIBUTE in item:
        event = replace(event, text_id=sealing_key_id(item))
    if seal is None or TEXT_ATTRIBUTE not in item:
        return event
    try:
        if not user_id:  # text with no user to open it for was never written by us
            raise UnreadableText("events")
        text = seal.open_text(user_id, event_key(event.session_id, event.event_id), event_provenance(event), item)
    except UnreadableText:
        return replace(event, unreadable=True)
    return replace(event, text=text)


def _binary_decoded(image: Mapping[str, Any]) -> dict[str, Any]:
    """Lambda's JSON event carries binary attributes (the sealed text) as base64 text; boto3 wants bytes."""
    import base64

    return {
        name: {"B": base64.b64decode(value["B"])}
        if isinstance(value, Mapping) and isinstance(value.get("B"), str)
        else value
        for name, value in image.items()
    }


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
            "kind": known_kind(event.kind),  # None (left out) for any other: never stored as typed
            "message_id": event.message_id,
            "status": PENDING,
            "created_at": event.created_at,
            "tainted_at_post": event.tainted_at_post,
            "user_id": event.user_id,
            "replaces": event.replaces if event.user_id else None,  # kept with the text only: it opens nothing else
            "ttl": now_epoch + EVENT_TTL_SECONDS,
        }
        if event.user_id:  # an event for no user (yet) keeps no text (issue 12)
            stored = replace(event, kind=known_kind(event.kind))
            key, claims = event_key(event.session_id, event.event_id), event_provenance(stored)
            item.update(self.seal.seal_text(event.user_id, key, claims, event.text or ""))
        return item

    def list(self, session_id: str) -> list[AgentEvent]:
        return [
            event_from_item(item) for item in dynamo.query_partition(self._client, self.table, "session_id", session_id)
        ]

    def erase_of(self, session_id: str, user_id: str) -> int:
        """Delete the events of a session the caller found is the user's that were posted for this user, or for no
        user (posted before it was registered: textless); how many. An account's erasure. Another user's event in
        the partition (their session of that id, which TTL removed before its events) is theirs and stays."""
        items = dynamo.query_all(
            self._client,
            TableName=self.table,
            KeyConditionExpression="session_id = :s",
            ExpressionAttributeValues=dynamo.values(s=session_id),
            ProjectionExpression="session_id, event_id, user_id",
            ConsistentRead=True,
        )
        keys = [
            {"session_id": i["session_id"], "event_id": i["event_id"]}
            for i in items
            if i.get("user_id") in (None, user_id)
        ]
        return dynamo.batch_delete(self._client, self.table, keys)

    def settle(self, session_id: str, event_id: str, outcome: Mapping[str, Any], now_iso: str) -> dict[str, Any]:
        """Transaction action: record the outcome and drop the text (and any ref), only if still pending (idempotency)."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(session_id, event_id),
                "UpdateExpression": "SET #st = :handled, outcome = :o, handled_at = :t REMOVE #tx, #rp",
                "ConditionExpression": "#st = :pending",
                "ExpressionAttributeNames": {"#st": "status", "#tx": TEXT_ATTRIBUTE, "#rp": "replaces"},
                "ExpressionAttributeValues": dynamo.values(
                    handled=HANDLED, o=dict(outcome), t=now_iso, pending=PENDING
                ),
            }
        }

    def get(self, session_id: str, event_id: str) -> AgentEvent | None:
        raw = self._client.get_item(TableName=self.table, Key=self._key(session_id, event_id), ConsistentRead=True).get(
            "Item"
        )
        return event_from_item(dynamo.load(raw), self.seal) if raw else None
