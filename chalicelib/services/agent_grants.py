"""The agents the user allows: each agent's switches, what came from it, and forgetting what it wrote.

Turning memory on is consent for agents in general; here the user narrows it per agent. The grants
live beside the user's state item (storage/agents.py), so the context fetch and the proposal
check them without an extra call. Listing reads two partitions (entries with the grants, proposals)
and never the journal: the last read is kept on the grant item, the last proposal is the newest waiting
proposal's. Agents compare by their folded names (chalicelib/agent_names.py); rows are capped and the
listing pages (docs/agents.md).
"""

from __future__ import annotations

import base64
import json
import secrets
from typing import Any

from chalicelib.agent_names import fold_agent_name, same_agent
from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.errors import Conflict, InvalidRequest, LimitReached, Unavailable
from chalicelib.identifiers import check_identifier
from chalicelib.models import AgentGrant, Entry, merged
from chalicelib.services.agent_rows import fold_rows, stored_grants
from chalicelib.services.decided import undecided
from chalicelib.services.forget_all import Forgetting, forget_counted
from chalicelib.storage.agents import ROW_CAP, is_agent_name, older_rows
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.entries import STATE_KEY

SETTINGS_ACTION = "keep.memory.agent_settings"
FORGET_ACTION = "keep.memory.forget_agent"
DEFAULT_PAGE, MAX_PAGE = 50, 200
_SPELLINGS = 98  # other spellings a delete's condition lists, beside the agent's own name and the origin


def list_agents(
    stores: Stores, user_id: str, *, limit: int = DEFAULT_PAGE, cursor: str | None = None
) -> dict[str, Any]:
    """Every agent given this user's memory, that proposed to them, or that they set; most recently used first.

    Paged: at most `limit` rows, and `next` (opaque) names where the next page starts, or null.
    """
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidRequest(f"limit: 1 to {MAX_PAGE}.", field="limit")
    after = _cursor_position(cursor) if cursor is not None else None
    rows = [r for r in _rows(stores, user_id) if after is None or _position(r) > after]
    page = rows[:limit]
    more = len(rows) > limit
    return {"agents": page, "next": _cursor(_position(page[-1])) if more else None}


def set_switches(
    stores: Stores, user_id: str, agent: str, *, read: bool | None, propose: bool | None
) -> dict[str, Any]:
    """Set `read` and/or `propose` for one agent (seen or not yet), journaled in the same transaction.

    The setting lands on the agent's folded row (chalicelib/agent_names.py), so it holds for every spelling;
    older rows of the same name are folded into it and deleted in that transaction. A new row is counted
    under ROW_CAP (409 `limit_reached` beyond it), above the room agents can ever take (SEEN_ROW_CAP).
    """
    check_identifier(agent, "agent")
    if read is None and propose is None:
        raise InvalidRequest("Give read, propose or both.", field="read")
    state = stores.entries.get_state(user_id)
    if not state.agents_folded:
        fold_rows(stores, user_id)
    now = instant(stores.clock)
    grants = stored_grants(stores, user_id)
    current = merged(grants, agent)
    exists = any(g.row == current.key for g in grants)
    flags = {name: value for name, value in (("read", read), ("propose", propose)) if value is not None}
    actions = [
        stores.agents.set_switches(user_id, agent, now.iso, read=read, propose=propose, current=current, exists=exists),
        stores.journal.record(user_id, SETTINGS_ACTION, now.iso, {"agent": agent, **flags}),
        *[stores.agents.delete_row(user_id, row) for row in older_rows(grants, agent)[:90]],
    ]
    if not exists:
        actions.append(stores.agents.count_row(user_id, STATE_KEY, ROW_CAP))
    try:
        transact(stores.client, actions)
    except TransactionCancelled as exc:
        if not exists and exc.failed(len(actions) - 1):
            raise LimitReached(f"At most {ROW_CAP} agents can be listed; this one was not set.") from exc
        raise Conflict("This agent's settings changed meanwhile; try again.") from exc
    key = fold_agent_name(agent)
    return next(row for row in _rows(stores, user_id) if fold_agent_name(row["agent"]) == key)


def within_blocks(stores: Stores, user_id: str, agent: str, *, read: bool, propose: bool) -> tuple[bool, bool]:
    """The switches asked for, kept off where the agent's folded rows already say no (a client's consent lifts no block)."""
    current = merged(stored_grants(stores, user_id), agent)
    return read and current.read, propose and current.propose


def forget_agent(stores: Stores, user_id: str, agent: str, session_id: str | None = None) -> dict[str, int]:
    """Forget every entry that came from `agent` (or one of its sessions) and its waiting proposals.

    Like forget-all: counted transactions, each adding its counts to the call's one journal row, each
    delete conditioned on the item still being there and having come from that agent, so concurrent
    calls never count an item twice and the user's own entries can never go. Issues 24 and 26 extend
    this one function (duplicate markers, per-text keys).
    """
    check_identifier(agent, "agent")
    if session_id is not None:
        check_identifier(session_id, "session_id")
    now = instant(stores.clock)
    details: dict[str, Any] = {"agent": agent} | ({"session_id": session_id} if session_id is not None else {})
    spellings, had_items = _spellings(stores, user_id, agent)
    if had_items:  # its row first: it stays listed (to block next), and carries the cut-off below
        _keep_listed(stores, user_id, agent)
    forget_pending(stores, user_id, agent, session_id, now.iso)
    deleted = {"entries": 0, "proposals": 0, "transactions": 0}
    row_id = secrets.token_hex(6)
    try:
        # Each delete's condition lists the spellings it may take (IN: 100 values, storage/agents.py only_from),
        # so more than _SPELLINGS of them are forgotten a group at a time, all counted on the one journal row.
        for first in range(0, max(len(spellings), 1), _SPELLINGS):
            group = spellings[first : first + _SPELLINGS]
            plan = Forgetting(FORGET_ACTION, details, agent=agent, session_id=session_id, spellings=group)
            forget_counted(stores, user_id, now, row_id, deleted, plan)
    except Unavailable as exc:
        # `deleted`: what can no longer be read, deleted or only its key gone (journaled as `unreadable`).
        raise Unavailable(
            "The service got busy before everything from this agent was forgotten: try again to forget the rest.",
            deleted=max(deleted["entries"] + deleted["proposals"], deleted.get("unreadable", 0)),
        ) from exc
    return {"deleted": deleted["entries"] + deleted["proposals"]}


def _keep_listed(stores: Stores, user_id: str, agent: str) -> None:
    """An agent whose writes the person just forgot stays on their list (to block it next), even if only its
    proposals had named it: a row for it, counted under ROW_CAP as the person's own; none beyond it."""
    key = fold_agent_name(agent)
    if any(g.row == key for g in stored_grants(stores, user_id)):
        return
    try:
        transact(
            stores.client,
            [stores.agents.keep_row(user_id, agent), stores.agents.count_row(user_id, STATE_KEY, ROW_CAP)],
        )
    except TransactionCancelled:
        return  # at the cap, or made meanwhile: the forget itself is done


def _spellings(stores: Stores, user_id: str, agent: str) -> tuple[tuple[str, ...], bool]:
    """The other names stored on the user's items that fold to `agent`'s (forgetting `helper` takes `Helper`'s
    too), and whether any item came from the agent at all."""
    _, entries = stores.entries.stored(user_id)
    proposals, _ = stores.proposals.stored_all(user_id)
    mine = {r.agent for r in (*entries, *proposals) if r.agent and same_agent(r.agent, agent)}
    return tuple(sorted(mine - {agent})), bool(mine)


def _rows(stores: Stores, user_id: str) -> list[dict[str, Any]]:
    now = instant(stores.clock)
    state, entries = stores.entries.load(user_id)
    proposals = undecided(stores.proposals.list(user_id), entries)  # services/decided.py
    return agent_rows(state.agents, [e for e in entries if not e.is_expired(now.epoch)], proposals)


def agent_rows(
    stored: tuple[AgentGrant, ...], live: list[Entry], proposals: list[Entry], *, only_set: bool = False
) -> list[dict[str, Any]]:
    """One row per agent (its folded name: chalicelib/agent_names.py) with a grant item or anything of the user's
    from it; the export (`only_set`) keeps the agents the user set. The last proposal's time is the newest of
    the row's and the agent's waiting proposals' (a proposal writes no row)."""
    names: dict[str, str] = {}
    for g in stored:
        names.setdefault(g.key, g.agent)
    for item in (*live, *proposals):
        if (agent := _agent_of(item)) is not None:
            names.setdefault(fold_agent_name(agent), agent)
    grants = [merged(stored, name) for name in names.values()]
    if only_set:
        grants = [g for g in grants if g.set_at is not None]

    def folded(items: list[Entry]) -> dict[str, list[Entry]]:
        by: dict[str, list[Entry]] = {}
        for item in items:
            if (agent := _agent_of(item)) is not None:
                by.setdefault(fold_agent_name(agent), []).append(item)
        return by

    from_agent, waiting = folded(live), folded(proposals)
    rows = []
    for g in grants:
        proposed = max([g.last_proposal_at or "", *(p.created_at for p in waiting.get(g.key, []))]) or None
        rows.append(
            {
                "agent": g.agent,
                "read": g.read,
                "propose": g.propose,
                "entries": len(from_agent.get(g.key, [])),
                "waiting": len(waiting.get(g.key, [])),
                "last_read_at": g.last_read_at,
                "last_proposal_at": proposed,
            }
        )
    # Most recently used first (ISO times sort as text); agents only set, never used, after them by name.
    return sorted(rows, key=_position)


def _position(row: dict[str, Any]) -> tuple[str, str]:
    """A row's place in the listing's order, as a key that sorts ascending (the cursor names one)."""
    used = max(row["last_read_at"] or "", row["last_proposal_at"] or "")
    newest_first = "0" + "".join(chr(0x10FFFF - ord(c)) for c in used) if used else "1"  # never used: last
    return (newest_first, fold_agent_name(row["agent"]))


def _cursor(position: tuple[str, str]) -> str:
    raw = json.dumps([position[0], position[1]], ensure_ascii=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _cursor_position(cursor: str) -> tuple[str, str]:
    """The position a `next` cursor names; a 400 for anything this service did not write."""
    try:  # the length first: json of ~1,000 nested lists is a RecursionError, not a ValueError
        decoded = (
            json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))) if len(cursor) <= 2048 else None
        )
        if isinstance(decoded, list) and len(decoded) == 2 and all(isinstance(p, str) for p in decoded):
            return decoded[0], decoded[1]
    except (ValueError, TypeError, RecursionError):
        pass
    raise InvalidRequest("next: not a cursor this listing gave.", field="next")


def _agent_of(item: Entry) -> str | None:
    return item.agent if item.origin == "agent" and is_agent_name(item.agent) else None


def forget_pending(stores: Stores, user_id: str, agent: str, session_id: str | None, now_iso: str) -> None:
    """Before the writes go: the agent's (or the session's) events posted until now and still pending are refused
    `agent_forgotten` when the consumer meets them (a retry, a redrive), never made suggestions (issue 37 #12)."""
    if session_id is None:
        stores.agents.forget_before(stores.client, user_id, agent, now_iso)
    else:
        stores.sessions.forget_before(session_id, user_id, agent, now_iso)
