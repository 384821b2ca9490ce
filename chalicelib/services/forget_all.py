"""Forget everything in as many transactions as it takes, its one journal row always saying exactly what it deleted.

A user may hold 200 entries and 50 proposals; a transaction takes at most 100 actions. Each chunk
deletes its items, moves the counters by exactly that many and adds its counts to the call's one
`keep.memory.forget_all` row in the same transaction, so the journal never says more (or less) was
forgotten than was, and the counters never drift. Concurrent calls each count only what they
themselves deleted. If AWS stays busy after the key is gone, the caller gets 503 with how many were
deleted so far (maybe 0); running the request again forgets the rest (it starts from what is
stored): it converges, never lies.

The user's data key goes first (issue 12): from then on no copy of the old text opens anywhere
(crypto-shredding), even if a deletion below fails and the user has to ask again. An agent's forget
(services/agent_grants.py) deletes its texts' own keys first the same way (issue 26; BatchWriteItem,
`Keyring.shred_now`), then the items; so do these chunks for forget-all, whose text keys are already
useless: each transaction then holds 98 items, its counters and its journal row. No text is opened
here: items are listed by id and expiry only.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant, instant
from chalicelib.errors import Unavailable
from chalicelib.services.orphans import true_waiting
from chalicelib.services.recount import recount
from chalicelib.services.shredding import unrecoverable_by
from chalicelib.storage.agents import only_from
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.entry_items import StoredRef
from chalicelib.storage.fingerprints import Fingerprint

ACTION = "keep.memory.forget_all"
_ITEMS_PER_TRANSACTION = 98  # 100 actions at most: the items, the counters and the journal row (their keys went first)
_ROUNDS = 10  # a concurrent forget cancels a chunk (it committed one of its own): read again, go on

ENTRY_PRINT, PROPOSAL_PRINT = "entry_fingerprint", "proposal_fingerprint"


class Removal(NamedTuple):
    kind: str  # "entry", "proposal", or a fingerprint of either table
    item_id: str  # the item's id, or the fingerprint
    live: bool = False  # an unexpired entry: counts in the counters
    owner: str | None = None  # a fingerprint an agent's forget releases: only while it still names this item


@dataclass(frozen=True)
class Forgetting:
    """What one call forgets and how its journal row reads: everything, or what came from one agent (or one of its sessions)."""

    action: str
    details: Mapping[str, Any] = field(default_factory=dict)
    agent: str | None = None
    session_id: str | None = None
    spellings: tuple[str, ...] = ()  # other stored names that fold to `agent` (chalicelib/agent_names.py)

    def _names(self) -> tuple[str, ...]:
        return (self.agent, *self.spellings) if self.agent is not None else ()

    def wants(self, ref: StoredRef) -> bool:
        if self.agent is None:
            return True
        return ref.agent in self._names() and (self.session_id is None or ref.session_id == self.session_id)

    def shreds(self, ref: StoredRef) -> bool:
        """Whether the key of `ref`'s text goes first. A key's deletion carries no condition (BatchWriteItem), so
        beside `wants` it checks what `delete`'s condition checks on the item: its stored origin and agent
        (`ref.agent` is read only from an item whose origin is "agent"). A wrong listing cannot shred the
        text of the user's own entry."""
        return self.wants(ref) and (self.agent is None or ref.agent in self._names())

    def delete(self, action: dict[str, Any]) -> dict[str, Any]:
        """The item's Delete, conditioned on its origin when only an agent's writes go."""
        return only_from(action, self._names()) if self.agent is not None else action


EVERYTHING = Forgetting(ACTION)


def forget_all(stores: Stores, user_id: str) -> dict[str, int]:
    now = instant(stores.clock)
    # Refused, this is a 503 that changed nothing: the key is still there. The view version moves with
    # the key: from then on nothing opens, so GET shows less, and a tag taken before must stop matching
    # even if every deletion below is interrupted (red team, issue 21 #8).
    stores.keyring.destroy(user_id, with_actions=[stores.entries.bump_version(user_id, only_if_stored=False)])
    row_id = secrets.token_hex(6)  # this call's journal row, which each of its transactions adds to
    deleted = {"entries": 0, "proposals": 0, "transactions": 0}
    try:
        forget_counted(stores, user_id, now, row_id, deleted, EVERYTHING)
    except Unavailable as exc:
        # The key is gone, so this is no "nothing was changed" 503: nothing left opens any more, and
        # what is left still counts until the request is run again. `deleted` says so, even when 0.
        raise Unavailable(
            "Your memory can no longer be read, but the service got busy before all of it was deleted: "
            "try again to delete the rest.",
            deleted=deleted["entries"] + deleted["proposals"],
        ) from exc
    return {"deleted": deleted["entries"] + deleted["proposals"]}


def forget_counted(
    stores: Stores, user_id: str, now: Instant, row_id: str, deleted: dict[str, int], plan: Forgetting
) -> None:
    """Delete what `plan` wants — their texts' keys first, then the items in counted transactions, each adding to the
    one journal row `row_id`, which carries the receipt's `unrecoverable_by` (services/shredding.py)."""
    plan = replace(plan, details={**plan.details, "unrecoverable_by": unrecoverable_by(now)})
    for _ in range(_ROUNDS):
        removals, text_ids = _stored(stores, user_id, now, plan)
        if not removals:
            break
        # Keys first: refused, this is a 503 before any item went (the texts whose keys did go are absent
        # everywhere from now on; a retry deletes them, counted). Then no text of these opens again,
        # whatever happens to the deletions below. An agent's forget then journals them (issue 37 #12): if the
        # deletions are refused, its row and its 503 still say how many texts can no longer be read.
        stores.keyring.shred_now(user_id, text_ids)
        if plan.agent is not None and text_ids:
            counts = {"unreadable": len(text_ids), "entries": 0, "proposals": 0}
            transact(
                stores.client, [stores.journal.add_counts(user_id, plan.action, now.iso, row_id, counts, plan.details)]
            )
            deleted["unreadable"] = deleted.get("unreadable", 0) + len(text_ids)
            deleted["transactions"] += 1  # the row exists: no zero row below
        try:
            _delete_in_chunks(stores, user_id, removals, now, row_id, deleted, plan)
            break
        except TransactionCancelled:
            continue  # something went (or came) meanwhile: read what is stored now and go on
    if not deleted["transactions"]:  # nothing was left to delete: the request is still journaled, as a count of zero
        stores.journal.append(
            user_id, plan.action, now.iso, {**plan.details, "entries": 0, "proposals": 0}, row_id=row_id
        )
    # Entries TTL removed behind our back must not keep counting. Orphans stay: each belongs to the
    # concurrent forget-all that destroyed its key, which counts it (recount's docstring).
    state = recount(stores, user_id, now, orphans=False)
    # And `waiting`: items put back from a backup were never counted, yet their deletion was (issue 37 #11), also
    # while others still wait (so the counter need not go below zero). Forget-all always; an agent's forget when it
    # released a waiting place: an agent's entries alone add no call. The recount's read of the state item is
    # true_waiting's first read when the recount wrote nothing (one Query more, not a GetItem and a Query).
    if plan.agent is None or deleted.get("waiting", 0) or state.waiting < 0:
        true_waiting(stores, user_id, seen=state if state.version else None)


def _stored(stores: Stores, user_id: str, now: Instant, plan: Forgetting) -> tuple[list[Removal], set[bytes]]:
    """What `plan` wants deleted, and the keys of their texts; forgetting everything also takes every
    fingerprint item (never counted: no key gives them meaning any more). An agent's forget releases each of
    its items' fingerprints in the item's own transaction, conditioned on it still naming that item.

    A key that an item this plan keeps also names is not among the keys: only copied ciphertext (damaged
    storage) shares a key across items, and a forget of an agent's writes must not shred the text of a
    user's own entry. Such an item is still deleted; the text it copied stays readable where it belongs.
    """
    _, entries, entry_prints = stores.entries.stored_all(user_id)
    proposals, proposal_prints = stores.proposals.stored_all(user_id)
    kept = {r.key_id for r in (*entries, *proposals) if not plan.shreds(r)}
    text_ids = {r.key_id for r in (*entries, *proposals) if plan.shreds(r) and r.key_id and r.key_id not in kept}
    if plan.agent is None:
        removals = [Removal("entry", e.id, not e.is_expired(now.epoch)) for e in entries]
        # A duplicate's waiting slot (storage/proposals.py) goes with them, uncounted: no proposal the person saw.
        removals += [Removal("slot" if p.slot else "proposal", p.id) for p in proposals]
        removals += [Removal(ENTRY_PRINT, f.fingerprint) for f in entry_prints]
        return removals + [Removal(PROPOSAL_PRINT, f.fingerprint) for f in proposal_prints], text_ids
    # An agent's forget: each item followed by the fingerprints that name it, in the same transaction (`_chunks`).
    prints: dict[str, list[Removal]] = {}
    for kind, found in ((ENTRY_PRINT, entry_prints), (PROPOSAL_PRINT, proposal_prints)):
        for f in found:
            prints.setdefault(f.owner, []).append(Removal(kind, f.fingerprint, owner=f.owner))
    removals = []
    for kind, refs in (("entry", entries), ("proposal", proposals)):
        for ref in refs:
            if plan.wants(ref):
                named = "slot" if kind == "proposal" and getattr(ref, "slot", False) else kind
                removals.append(Removal(named, ref.id, kind == "entry" and not ref.is_expired(now.epoch)))
                removals += [r for r in prints.get(ref.id, []) if (r.kind == ENTRY_PRINT) == (kind == "entry")]
    return removals, text_ids


def _delete(stores: Stores, user_id: str, removal: Removal, plan: Forgetting) -> dict[str, Any]:
    kind, item_id = removal.kind, removal.item_id
    if kind == "entry":
        return plan.delete(stores.entries.delete_stored(user_id, item_id))
    if kind in ("proposal", "slot"):
        return plan.delete(stores.proposals.delete_waiting(user_id, item_id))
    if removal.owner is not None:  # only while it still names the item this forget deletes (never a new owner's)
        stale = Fingerprint(item_id, removal.owner, None)
        if kind == ENTRY_PRINT:
            return stores.entries.fingerprints.drop_stale(user_id, stale)
        return stores.proposals.fingerprints.drop_stale(user_id, stale)
    if kind == ENTRY_PRINT:
        return stores.entries.fingerprints.delete_any(user_id, item_id)
    return stores.proposals.fingerprints.delete_any(user_id, item_id)


def _chunks(removals: list[Removal]) -> list[list[Removal]]:
    """At most `_ITEMS_PER_TRANSACTION` removals a chunk, an item never apart from the fingerprints that follow it
    (an agent's forget): a pair split across two transactions lost the fingerprint when the second was cancelled,
    as the next round reads the item gone and no longer knows the fingerprint was its. Only a group too big for
    one transaction (many fingerprint items naming one item: damaged storage) is cut."""
    groups: list[list[Removal]] = []
    for removal in removals:
        if removal.owner is not None and groups and len(groups[-1]) < _ITEMS_PER_TRANSACTION:
            groups[-1].append(removal)
        else:
            groups.append([removal])
    chunks: list[list[Removal]] = []
    for group in groups:
        if not chunks or len(chunks[-1]) + len(group) > _ITEMS_PER_TRANSACTION:
            chunks.append([])
        chunks[-1].extend(group)
    return chunks


def _delete_in_chunks(
    stores: Stores,
    user_id: str,
    removals: list[Removal],
    now: Instant,
    row_id: str,
    deleted: dict[str, int],
    plan: Forgetting,
) -> None:
    for part in _chunks(removals):
        entries = sum(1 for r in part if r.kind == "entry")
        live = sum(1 for r in part if r.kind == "entry" and r.live)
        proposals = sum(1 for r in part if r.kind == "proposal")
        slots = sum(1 for r in part if r.kind == "slot")  # a duplicate's waiting slot: room, never counted as deleted
        actions: list[dict[str, Any]] = [_delete(stores, user_id, r, plan) for r in part]
        actions.append(stores.entries.release_counts(user_id, active=entries, waiting=proposals + slots))
        counts = {"entries": live, "proposals": proposals}
        actions.append(stores.journal.add_counts(user_id, plan.action, now.iso, row_id, counts, plan.details))
        transact(stores.client, actions)
        deleted["entries"] += live
        deleted["proposals"] += proposals
        deleted["waiting"] = deleted.get("waiting", 0) + proposals + slots
        deleted["transactions"] += 1
