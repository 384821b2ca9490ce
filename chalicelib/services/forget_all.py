"""Forget everything in as many transactions as it takes, its one journal row always saying exactly what it deleted.

A user may hold 200 entries and 50 proposals; a transaction takes at most 100 actions. Each chunk
deletes its items, moves the counters by exactly that many and adds its counts to the call's one
`keep.memory.forget_all` row in the same transaction, so the journal never says more (or less) was
forgotten than was, and the counters never drift. Concurrent calls each count only what they
themselves deleted. If AWS stays busy after the key is gone, the caller gets 503 with how many were
deleted so far (maybe 0); running the request again forgets the rest (it starts from what is
stored): it converges, never lies.

The user's data key goes first (issue 12): from then on no copy of the old text opens anywhere
(crypto-shredding), even if a deletion below fails and the user has to ask again. No text is
opened here: items are listed by id and expiry only.
"""
from __future__ import annotations

import secrets
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant, instant
from chalicelib.errors import Unavailable
from chalicelib.services.recount import recount
from chalicelib.storage.dynamo import TransactionCancelled, transact

ACTION = "keep.memory.forget_all"
_ITEMS_PER_TRANSACTION = 98  # 100 actions at most: the items, the counters and the journal row
_ROUNDS = 10  # a concurrent forget cancels a chunk (it committed one of its own): read again, go on

Removal = tuple[str, str, bool]  # (kind, id or fingerprint, counts as a live entry)
ENTRY_PRINT, PROPOSAL_PRINT = "entry_fingerprint", "proposal_fingerprint"


def forget_all(stores: Stores, user_id: str) -> dict[str, int]:
    now = instant(stores.clock)
    # Refused, this is a 503 that changed nothing: the key is still there. The view version moves with
    # the key: from then on nothing opens, so GET shows less, and a tag taken before must stop matching
    # even if every deletion below is interrupted (red team, issue 21 #8).
    stores.keyring.destroy(user_id, with_actions=[stores.entries.bump_version(user_id, only_if_stored=False)])
    row_id = secrets.token_hex(6)  # this call's journal row, which each of its transactions adds to
    deleted = {"entries": 0, "proposals": 0, "transactions": 0}
    try:
        _delete_everything(stores, user_id, now, row_id, deleted)
    except Unavailable as exc:
        # The key is gone, so this is no "nothing was changed" 503: nothing left opens any more, and
        # what is left still counts until the request is run again. `deleted` says so, even when 0.
        raise Unavailable(
            "Your memory can no longer be read, but the service got busy before all of it was deleted: "
            "try again to delete the rest.",
            deleted=deleted["entries"] + deleted["proposals"],
        ) from exc
    return {"deleted": deleted["entries"] + deleted["proposals"]}


def _delete_everything(stores: Stores, user_id: str, now: Instant, row_id: str, deleted: dict[str, int]) -> None:
    for _ in range(_ROUNDS):
        removals = _stored(stores, user_id, now)
        if not removals:
            break
        try:
            _delete_in_chunks(stores, user_id, removals, now, row_id, deleted)
            break
        except TransactionCancelled:
            continue  # something went (or came) meanwhile: read what is stored now and go on
    if not deleted["transactions"]:  # nothing was left to delete: the request is still journaled, as a count of zero
        stores.journal.append(user_id, ACTION, now.iso, {"entries": 0, "proposals": 0}, row_id=row_id)
    recount(stores, user_id, now)  # entries TTL removed behind our back must not keep counting


def _stored(stores: Stores, user_id: str, now: Instant) -> list[Removal]:
    """Every entry and proposal, and their fingerprint items (deleted, never counted: no key gives them meaning now)."""
    _, entries, entry_prints = stores.entries.stored_all(user_id)
    proposals, proposal_prints = stores.proposals.stored_all(user_id)
    return (
        [("entry", e.id, not e.is_expired(now.epoch)) for e in entries]
        + [("proposal", p.id, False) for p in proposals]
        + [(ENTRY_PRINT, f.fingerprint, False) for f in entry_prints]
        + [(PROPOSAL_PRINT, f.fingerprint, False) for f in proposal_prints]
    )


def _delete(stores: Stores, user_id: str, kind: str, item_id: str) -> dict[str, Any]:
    if kind == "entry":
        return stores.entries.delete_stored(user_id, item_id)
    if kind == "proposal":
        return stores.proposals.delete_waiting(user_id, item_id)
    fingerprints = stores.entries.fingerprints if kind == ENTRY_PRINT else stores.proposals.fingerprints
    return fingerprints.delete_any(user_id, item_id)


def _delete_in_chunks(
    stores: Stores, user_id: str, removals: list[Removal], now: Instant, row_id: str, deleted: dict[str, int]
) -> None:
    for start in range(0, len(removals), _ITEMS_PER_TRANSACTION):
        part = removals[start : start + _ITEMS_PER_TRANSACTION]
        entries = sum(1 for kind, _, _ in part if kind == "entry")
        live = sum(1 for kind, _, is_live in part if kind == "entry" and is_live)
        proposals = sum(1 for kind, _, _ in part if kind == "proposal")
        actions: list[dict[str, Any]] = [_delete(stores, user_id, kind, item_id) for kind, item_id, _ in part]
        actions.append(stores.entries.release_counts(user_id, active=entries, waiting=proposals))
        actions.append(stores.journal.add_counts(user_id, ACTION, now.iso, row_id, {"entries": live, "proposals": proposals}))
        transact(stores.client, actions)
        deleted["entries"] += live
        deleted["proposals"] += proposals
        deleted["transactions"] += 1
