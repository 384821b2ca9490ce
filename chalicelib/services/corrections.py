"""Corrections a user makes to an agent's proposal while accepting it (the entry keeps origin, source, taint)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalicelib.clock import Instant
from chalicelib.models import DAY_SECONDS, Entry

if TYPE_CHECKING:  # pydantic loads only when a body is parsed
    from chalicelib.schemas import AcceptBody


def corrected(entry: Entry, body: AcceptBody, text: str | None, now: Instant) -> Entry:
    """Apply accept-time corrections; `edited` is true only when the words or the kind differ from the proposal."""
    kind = body.kind if body.kind is not None else entry.kind
    text = text if text is not None else entry.text
    return entry.with_changes(
        text=text,
        kind=kind,
        pinned=body.pinned if body.pinned is not None else entry.pinned,
        expires_at=now.epoch + body.expires_in_days * DAY_SECONDS if body.expires_in_days else None,
        edited=text != entry.text or kind != entry.kind,
    )
