"""How agent rows come to be: counted under the cap, keyed by folded names, older rows folded in once.

Every new agent row moves the state item's `agent_rows` counter in the same transaction, under a
condition (storage/agents.py): a context fetch creates one only while fewer than SEEN_ROW_CAP are
counted, the person's own setting while fewer than ROW_CAP are. A row is never deleted to make room.

Rows stored before names were folded (`a#Helper`, uncounted) are folded once per user (`fold_rows`):
the rows of one folded name become its folded row, the most restrictive switch winning; rows the person
never set and saying no to nothing, beyond the SEEN_ROW_CAP most recently used, are dropped (they only
held times, which the journal keeps); the counter is set to what is left, and the state item is marked, which the proposal's
transaction checks (storage/entries.py take_waiting_slot): a proposal for a user not folded yet folds
first, so a block stored as `Helper` stops a proposal from `helper` too.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.models import AgentGrant, MemoryState, merged
from chalicelib.storage.agents import (
    AGENT_PREFIX,
    SEEN_ROW_CAP,
    grant_from_item,
)
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.entries import STATE_KEY

__all__ = ["fold_rows", "read_receipt", "stored_grants"]


def read_receipt(stores: Stores, user_id: str, agent: str, now_iso: str, state: MemoryState) -> list[dict[str, Any]]:
    """The actions that record `agent`'s read beside the context's journal row: its row's time, and the row
    itself (counted) when it has none and the cap leaves room. Beyond the cap: nothing (the journal row
    still names the agent)."""
    grant = state.grant(agent)
    exists = any(g.row == grant.key for g in state.agents)
    if exists:
        return [stores.agents.record_read(user_id, agent, now_iso, current=grant, exists=True)]
    if state.agent_rows >= SEEN_ROW_CAP:
        return []
    return [
        stores.agents.record_read(user_id, agent, now_iso, current=grant, exists=False),
        stores.agents.count_row(user_id, STATE_KEY, SEEN_ROW_CAP),
    ]


def _rows(stores: Stores, user_id: str) -> list[tuple[dict[str, Any], AgentGrant | None]]:
    items = stores.agents.stored_rows(stores.client, user_id)
    return [(item, grant_from_item(item)) for item in items]


def stored_grants(stores: Stores, user_id: str) -> tuple[AgentGrant, ...]:
    """The user's agent rows, read consistently (one Query of the `a#` keys only)."""
    return tuple(grant for _, grant in _rows(stores, user_id) if grant is not None)


def fold_rows(stores: Stores, user_id: str) -> None:
    """Fold this user's agent rows once (see the module's docstring); running it again changes nothing."""
    rows = _rows(stores, user_id)
    unnamed = [str(item["sk"]) for item, grant in rows if grant is None]  # altered keys: no agent, no room
    groups: dict[str, list[AgentGrant]] = defaultdict(list)
    for _, grant in rows:
        if grant is not None:
            groups[grant.key].append(grant)
    kept = {key: merged(grants, grants[0].agent) for key, grants in groups.items()}
    # Only rows that say yes to both may go: a "no" stays whatever its times say (set_at missing or altered).
    seen = sorted(
        (g for g in kept.values() if g.set_at is None and g.read and g.propose),
        key=lambda g: (g.last_read_at or "", g.key),
        reverse=True,
    )
    dropped = {g.key for g in seen[SEEN_ROW_CAP:]}
    deletes = unnamed + [AGENT_PREFIX + g.row for key in dropped for g in groups[key]]
    for key, grants in groups.items():
        if key not in dropped and any(g.row != key for g in grants):
            _fold_one(stores, user_id, kept[key], [g.row for g in grants if g.row != key])
    stores.agents.delete_stored(stores.client, user_id, deletes)
    stores.agents.mark_folded(stores.client, user_id, STATE_KEY, len(kept) - len(dropped))


def _fold_one(stores: Stores, user_id: str, grant: AgentGrant, older: list[str]) -> None:
    """One agent's folded row, written from all its rows, and its older rows deleted, in one transaction."""
    sets = {
        "name": grant.agent,
        "read": grant.read,
        "propose": grant.propose,
        "last_read_at": grant.last_read_at,
        "set_at": grant.set_at,
    }
    given = {name: value for name, value in sets.items() if value is not None}
    update = stores.agents.folded_row(user_id, {"key": grant.key, **given})
    deletes = [stores.agents.delete_row(user_id, row) for row in older[:99]]
    try:
        transact(stores.client, [update, *deletes])
    except TransactionCancelled:  # a concurrent fold or setting moved them: the next fold starts from what is stored
        return
