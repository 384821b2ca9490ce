"""The agents the user allows: each agent's switches, what came from it, and forgetting what it wrote.

Turning memory on is consent for agents in general; here the user narrows it per agent. The grants
live beside the user's state item (storage/agents.py), so the context fetch and the proposal
check them without an extra call. Listing reads two partitions (entries with the grants, proposals)
and never the journal: the last read and last proposal are kept on the grant item itself.
"""
from __future__ import annotations

import secrets
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.errors import InvalidRequest, Unavailable
from chalicelib.identifiers import check_identifier
from chalicelib.models import AgentGrant, Entry
from chalicelib.services.forget_all import Forgetting, forget_counted
from chalicelib.storage.agents import is_agent_name
from chalicelib.storage.dynamo import transact

SETTINGS_ACTION = "keep.memory.agent_settings"
FORGET_ACTION = "keep.memory.forget_agent"


def list_agents(stores: Stores, user_id: str) -> dict[str, Any]:
    """Every agent given this user's memory, that proposed to them, or that they set; most recently used first."""
    return {"agents": _rows(stores, user_id)}


def set_switches(stores: Stores, user_id: str, agent: str, *, read: bool | None, propose: bool | None) -> dict[str, Any]:
    """Set `read` and/or `propose` for one agent (seen or not yet), journaled in the same transaction."""
    check_identifier(agent, "agent")
    if read is None and propose is None:
        raise InvalidRequest("Give read, propose or both.", field="read")
    now = instant(stores.clock)
    flags = {name: value for name, value in (("read", read), ("propose", propose)) if value is not None}
    transact(
        stores.client,
        [
            stores.agents.set_switches(user_id, agent, now.iso, read=read, propose=propose),
            stores.journal.record(user_id, SETTINGS_ACTION, now.iso, {"agent": agent, **flags}),
        ],
    )
    return next(row for row in _rows(stores, user_id) if row["agent"] == agent)


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
    plan = Forgetting(FORGET_ACTION, details, agent=agent, session_id=session_id)
    forget_pending(stores, user_id, agent, session_id, now.iso)
    deleted = {"entries": 0, "proposals": 0, "transactions": 0}
    try:
        forget_counted(stores, user_id, now, secrets.token_hex(6), deleted, plan)
    except Unavailable as exc:
        # `deleted`: what can no longer be read, deleted or only its key gone (journaled as `unreadable`).
        raise Unavailable(
            "The service got busy before everything from this agent was forgotten: try again to forget the rest.",
            deleted=max(deleted["entries"] + deleted["proposals"], deleted.get("unreadable", 0)),
        ) from exc
    return {"deleted": deleted["entries"] + deleted["proposals"]}


def _rows(stores: Stores, user_id: str) -> list[dict[str, Any]]:
    now = instant(stores.clock)
    state, entries = stores.entries.load(user_id)
    return agent_rows(state.agents, [e for e in entries if not e.is_expired(now.epoch)], stores.proposals.list(user_id))


def agent_rows(stored: tuple[AgentGrant, ...], live: list[Entry], proposals: list[Entry]) -> list[dict[str, Any]]:
    """One row per agent with a grant item or anything of the user's from it (also the export's `agents`)."""
    grants = {g.agent: g for g in stored}
    for item in (*live, *proposals):
        if _agent_of(item) is not None:
            grants.setdefault(str(item.agent), AgentGrant(str(item.agent)))
    # Most recently used first (ISO times sort as text); agents only set, never used, after them by name.
    ordered = sorted(grants.values(), key=lambda g: g.agent)
    ordered.sort(key=lambda g: max(g.last_read_at or "", g.last_proposal_at or ""), reverse=True)
    return [
        {
            "agent": g.agent,
            "read": g.read,
            "propose": g.propose,
            "entries": sum(1 for e in live if _agent_of(e) == g.agent),
            "waiting": sum(1 for p in proposals if _agent_of(p) == g.agent),
            "last_read_at": g.last_read_at,
            "last_proposal_at": g.last_proposal_at,
        }
        for g in ordered
    ]


def _agent_of(item: Entry) -> str | None:
    return item.agent if item.origin == "agent" and is_agent_name(item.agent) else None


def forget_pending(stores: Stores, user_id: str, agent: str, session_id: str | None, now_iso: str) -> None:
    """Before the writes go: the agent's (or the session's) events posted until now and still pending are refused
    `agent_forgotten` when the consumer meets them (a retry, a redrive), never made suggestions (issue 37 #12)."""
    if session_id is None:
        stores.agents.forget_before(stores.client, user_id, agent, now_iso)
    else:
        stores.sessions.forget_before(session_id, user_id, agent, now_iso)
