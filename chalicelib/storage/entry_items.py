"""Mapping between Entry dataclasses and the items that store them (entries and proposals share a shape)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.models import Entry, Source
from chalicelib.storage.text import TextSeal, sealing_key_id

# The entries table's TTL attribute: DynamoDB removes an expired entry some time after this instant.
EXPIRY_ATTRIBUTE = "expires_at"


def to_item(entry: Entry, sort_key: str, seal: TextSeal) -> dict[str, Any]:
    item: dict[str, Any] = {
        "user_id": entry.user_id,
        "sk": sort_key,
        "id": entry.id,
        "kind": entry.kind,
        "pinned": entry.pinned,
        "tainted": entry.tainted,
        "origin": entry.origin,
        "src_session": entry.source.session_id,
        "src_thread": entry.source.thread_id,
        "src_message": entry.source.message_id,
        "created_at": entry.created_at,
        "updated_at": entry.updated_at,
        EXPIRY_ATTRIBUTE: entry.expires_at,
        "agent": entry.agent,
        "edited": entry.edited or None,  # stored only when true (None attributes are left out)
    }
    item.update(seal.seal_text(entry.user_id, [entry.id], entry.text))
    return item


def from_item(item: Mapping[str, Any], seal: TextSeal) -> Entry:
    """The entry or proposal stored in `item`; UnreadableText when its text does not open here."""
    user_id = str(item["user_id"])
    entry_id = str(item["id"])
    return Entry(
        id=entry_id,
        user_id=user_id,
        text=seal.open_text(user_id, [entry_id], item),
        kind=str(item["kind"]),
        pinned=bool(item.get("pinned", False)),
        tainted=bool(item.get("tainted", False)),
        origin=str(item.get("origin", "user")),
        source=Source(
            session_id=item.get("src_session"),
            thread_id=item.get("src_thread"),
            message_id=item.get("src_message"),
        ),
        created_at=str(item["created_at"]),
        updated_at=str(item["updated_at"]),
        expires_at=item.get(EXPIRY_ATTRIBUTE),
        agent=item.get("agent"),
        edited=bool(item.get("edited", False)),
    )


@dataclass(frozen=True)
class StoredRef:
    """An item's id, expiry and the id of the key that sealed it, read without opening its text (forget-all and purges need no key)."""

    id: str
    expires_at: int | None
    key_id: bytes | None = None
    agent: str | None = None  # the proposing agent, for items that came from one (origin "agent")
    session_id: str | None = None

    def is_expired(self, now_epoch: int) -> bool:
        return self.expires_at is not None and self.expires_at <= now_epoch


def ref_from_item(item: Mapping[str, Any]) -> StoredRef:
    came_from_agent = item.get("origin") == "agent" and isinstance(item.get("agent"), str)
    return StoredRef(
        id=str(item["id"]),
        expires_at=item.get(EXPIRY_ATTRIBUTE),
        key_id=sealing_key_id(item),
        agent=str(item["agent"]) if came_from_agent else None,
        session_id=item.get("src_session") if came_from_agent and isinstance(item.get("src_session"), str) else None,
    )
