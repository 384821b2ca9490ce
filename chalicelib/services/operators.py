"""Support staff's access to a named user's memory: read and forget only, and every access journaled first.

The journal row is written before any data is read or changed (or in the same transaction), so an
access whose journal write fails does not happen. Operators cannot add, edit or accept: the user decides.
"""

from __future__ import annotations

import secrets
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.errors import NotFound
from chalicelib.metrics import count
from chalicelib.models import is_id
from chalicelib.services import erasure, memory
from chalicelib.services.forgetting import forget_entry
from chalicelib.services.shredding import receipt

ACCESS = "keep.memory.operator_access"


def _journal(stores: Stores, user_id: str, operator: str, action: str, request_id: str, **extra: Any) -> None:
    now = instant(stores.clock)
    stores.journal.append(
        user_id, ACCESS, now.iso, {"operation": action, "operator": operator, "request_id": request_id, **extra}
    )
    count("OperatorAccesses", ("Operation", action))


def view(stores: Stores, operator: str, user_id: str, request_id: str) -> dict[str, Any]:
    _journal(stores, user_id, operator, "read", request_id)
    result = memory.view(stores, user_id)
    result.pop("limits", None)
    result.pop("repeats", None)  # the person's own review aid: no text, nothing an operator acts on
    for proposal in result["proposals"]:  # which entry a suggestion updates: the person's decision aid too
        proposal.pop("replaces", None)
    return result


def forget(stores: Stores, operator: str, user_id: str, entry_id: str, request_id: str) -> None:
    """Journal the access, then delete; a missing entry turns that same row into a refused attempt.

    The row comes first because forgetting reads the entry (unopened: the name of its fingerprint, which
    goes with it, services/forgetting.py), and nothing of the user's may be read before the access is
    journaled. One row per attempt: a missing entry rewrites it with `reason: not_found`.
    """
    if not is_id(entry_id):
        _journal(stores, user_id, operator, "forget", request_id, reason="not_found")
        raise NotFound("No such entry.")
    now = instant(stores.clock)
    details = {"operation": "forget", "operator": operator, "request_id": request_id, "entry_id": entry_id}
    row_id = secrets.token_hex(6)
    stores.journal.append(user_id, ACCESS, now.iso, details, row_id=row_id)
    if not forget_entry(stores, user_id, entry_id, now, with_actions=[receipt(stores, user_id, now)]):
        stores.journal.append(user_id, ACCESS, now.iso, {**details, "reason": "not_found"}, row_id=row_id)
        count("OperatorAccesses", ("Operation", "forget"))
        raise NotFound("No such entry.")
    count("OperatorAccesses", ("Operation", "forget"))


def forget_all(stores: Stores, operator: str, user_id: str, request_id: str) -> dict[str, int]:
    _journal(stores, user_id, operator, "forget_all", request_id)
    return memory.forget_all(stores, user_id)


def erase_account(stores: Stores, operator: str, user_id: str, request_id: str) -> dict[str, dict[str, int]]:
    """Everything keyed by the user, in every table, and their data key (services/erasure.py); journaled to the operator."""
    return erasure.erase_account(stores, operator, user_id, request_id)
