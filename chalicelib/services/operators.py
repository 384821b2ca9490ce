"""Support staff's access to a named user's memory: read and forget only, and every access journaled first.

The journal row is written before any data is read or changed (or in the same transaction), so an
access whose journal write fails does not happen. Operators cannot add, edit or accept: the user decides.
"""
from __future__ import annotations

from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.errors import NotFound
from chalicelib.metrics import count
from chalicelib.models import is_id
from chalicelib.services import memory
from chalicelib.services.shredding import forget_stored, receipt

ACCESS = "keep.memory.operator_access"


def _journal(stores: Stores, user_id: str, operator: str, action: str, request_id: str, **extra: Any) -> None:
    now = instant(stores.clock)
    stores.journal.append(user_id, ACCESS, now.iso, {"operation": action, "operator": operator, "request_id": request_id, **extra})
    count("OperatorAccesses", ("Operation", action))


def view(stores: Stores, operator: str, user_id: str, request_id: str) -> dict[str, Any]:
    _journal(stores, user_id, operator, "read", request_id)
    result = memory.view(stores, user_id)
    result.pop("limits", None)
    return result


def forget(stores: Stores, operator: str, user_id: str, entry_id: str, request_id: str) -> None:
    """Delete and journal in one transaction; a missing entry is journaled as a refused attempt."""
    if not is_id(entry_id):
        _journal(stores, user_id, operator, "forget", request_id, reason="not_found")
        raise NotFound("No such entry.")
    now = instant(stores.clock)
    details = {"operation": "forget", "operator": operator, "request_id": request_id, "entry_id": entry_id}
    try:
        forget_stored(
            stores,
            user_id,
            stores.entries.ref(user_id, entry_id),
            lambda ref: [
                stores.entries.delete_live(user_id, ref.id, now.epoch),
                stores.entries.release_counts(user_id, active=1),
                stores.journal.record(user_id, ACCESS, now.iso, details),
                receipt(stores, user_id, now, by="operator"),
            ],
            "No such entry.",
        )
    except NotFound:
        _journal(stores, user_id, operator, "forget", request_id, entry_id=entry_id, reason="not_found")
        raise
    count("OperatorAccesses", ("Operation", "forget"))


def forget_all(stores: Stores, operator: str, user_id: str, request_id: str) -> dict[str, int]:
    _journal(stores, user_id, operator, "forget_all", request_id)
    return memory.forget_all(stores, user_id)
