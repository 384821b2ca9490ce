"""Writes waiting proposals through the repositories, as the stream consumer does, for user-route tests."""

from __future__ import annotations

from typing import Any

from chalicelib.clock import instant
from chalicelib.models import Entry, Source, new_id
from chalicelib.storage.dynamo import transact


def add_proposal(
    stores: Any, user_id: str, text: str, *, tainted: bool = False, kind: str = "note", agent: str | None = None
) -> Entry:
    now = instant(stores.clock)
    proposal = Entry(
        id=new_id(),
        user_id=user_id,
        text=text,
        kind=kind,
        pinned=False,
        tainted=tainted,
        origin="agent",
        source=Source(session_id="s-1", thread_id="t-1", message_id="m-1"),
        created_at=now.iso,
        updated_at=now.iso,
        agent=agent,
    )
    transact(
        stores.client,
        stores.keyring.guard([stores.proposals.put_new(proposal), stores.entries.take_waiting_slot(user_id)]),
    )
    return proposal
