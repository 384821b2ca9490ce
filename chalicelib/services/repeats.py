"""Deciding an agent's last waiting suggestion also dismisses its repeats (issue 37 #8): they repeat what she keeps.

A repeat (storage/slots.py) holds a waiting place, so an agent cannot tell a duplicate from a new text. A person who
decides every suggestion but never dismisses the repeat line would still leave a place taken only where she keeps
the guessed words, and 50 proposals would tell. So when an accept or a reject leaves an agent (its folded name) with
no suggestion waiting, that agent's repeats go too; when it leaves one of the agent's conversations (sessions) with
none, that conversation's repeats go. "Accept all" and "Reject all from <agent>" are such decisions, one request
each. What it costs: the decision reads the waiting items in one consistent Query (instead of one GetItem), and only
when there is a repeat to dismiss, their keys (cached, or one Query) and one counted transaction. A person who never
decides anything from that agent (it sent only the guess) keeps the residual: docs/agents.md, Repeats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chalicelib.agent_names import same_agent
from chalicelib.bootstrap import Stores
from chalicelib.errors import Unavailable
from chalicelib.logs import get_logger
from chalicelib.services.forgetting import remove_proposal
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.entry_items import PROPOSAL_PREFIX, StoredRef, ref_from_item

__all__ = ["decision_read", "dismiss_after", "reject"]

logger = get_logger("personal_memory.repeats")
_SLOTS_PER_TRANSACTION = 49  # each slot's Delete and its key's, and the counter: 99 actions at most

Item = dict[str, Any]


def decision_read(stores: Stores, user_id: str, proposal_id: str) -> tuple[Item | None, list[Item]]:
    """The decided item (or None) and every other waiting item, from one consistent Query of the waiting items."""
    items = stores.proposals.waiting_items(user_id)
    sort_key = PROPOSAL_PREFIX + proposal_id
    mine = next((i for i in items if i.get("sk") == sort_key), None)
    return mine, [i for i in items if i is not mine]


def reject(stores: Stores, user_id: str, proposal_id: str) -> bool:
    """Reject a proposal (or dismiss one repeat), then its agent's repeats if nothing of it waits; False: a 404."""
    mine, others = decision_read(stores, user_id, proposal_id)
    ref = stores.proposals.stored_from(user_id, mine) if mine is not None else None
    if not remove_proposal(stores, user_id, proposal_id, read=lambda: ref):
        return False
    if ref is not None and not ref.slot:
        dismiss_after(stores, user_id, ref.agent, ref.session_id, others)
    return True


def dismiss_after(
    stores: Stores, user_id: str, agent: str | None, session_id: str | None, others: Sequence[Item]
) -> int:
    """After a decision on `agent`'s suggestion from `session_id`: dismiss the repeats it leaves with nothing waiting
    beside them (`others`: the waiting items read before the decision); how many went. Never fails the decision."""
    if agent is None:
        return 0
    refs = [(item, ref) for item in others if (ref := ref_from_item(item, PROPOSAL_PREFIX)) is not None]
    # Its other suggestions, read unopened: a damaged one counts as waiting (then nothing is dismissed).
    waiting = [ref for _, ref in refs if not ref.slot and same_agent(ref.agent, agent)]
    wanted: Callable[[StoredRef], bool]
    if not waiting:
        wanted = lambda ref: same_agent(ref.agent, agent)  # noqa: E731
    elif session_id is not None and not any(ref.session_id == session_id for ref in waiting):
        wanted = lambda ref: same_agent(ref.agent, agent) and ref.session_id == session_id  # noqa: E731
    else:
        return 0
    candidates = [item for item, ref in refs if ref.slot and wanted(ref)]
    if not candidates:
        return 0
    # Only what the person is shown (a slot whose seal opens): a copied or restored one is never counted.
    slots = stores.proposals.believed_slots(user_id, candidates)
    try:
        return sum(
            _dismiss(stores, user_id, slots[n : n + _SLOTS_PER_TRANSACTION])
            for n in range(0, len(slots), _SLOTS_PER_TRANSACTION)
        )
    except Unavailable:
        logger.warning("repeats not dismissed", extra={"outcome": "unavailable"})  # the decision stands
        return 0


def _dismiss(stores: Stores, user_id: str, slots: Sequence[StoredRef]) -> int:
    """Delete these slots and their keys, counted (never below zero); one by one when one went meanwhile."""
    actions = [stores.proposals.delete_waiting(user_id, s.id) for s in slots]
    actions += stores.keyring.shred(user_id, [s.key_id for s in slots])
    actions.append(stores.entries.release_counts(user_id, waiting=len(slots), floor=True))
    try:
        transact(stores.client, actions)
        return len(slots)
    except TransactionCancelled:
        return sum(1 for s in slots if remove_proposal(stores, user_id, s.id))
