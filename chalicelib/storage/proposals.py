"""The proposals table: per user, the agents' proposals waiting for the user to accept or reject.

It also holds the waiting slots that duplicates take (`hold_slot`, issue 37 #8): an agent is told a
duplicate was proposed, so the duplicate must also fill the waiting list as a new text does, or 51
proposals would tell it whether the person keeps a guessed text. A slot is an item with no text and
no fingerprint, counted in `waiting`, shown only as a repeat, and only when its seal opens (storage/slots.py);
forget-all, forgetting its agent (or its session), and the waiting cap's recount once it is past `expires_at`
delete it (this table has no TTL, so nothing deletes one behind the counter's back).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from chalicelib.models import Entry
from chalicelib.storage import dynamo
from chalicelib.storage.entry_items import (
    PROPOSAL_PREFIX,
    SLOT_ATTRIBUTE,
    StoredRef,
    from_item,
    opened_ref,
    ref_from_item,
    sealed_and_fingerprints,
    text_keys_for,
    to_item,
)
from chalicelib.storage.fingerprints import Fingerprint, FingerprintItems, fingerprint_from_item, is_fingerprint_key
from chalicelib.storage.slots import slot_item, verified
from chalicelib.storage.text import TextSeal, UnreadableText

ENTRIES = "entries"  # the entries table's fingerprints (a proposal must not repeat an active entry)


class ProposalsRepository:
    def __init__(self, client: Any, table: str, seal: TextSeal) -> None:
        self._client = client
        self.table = table
        self.seal = seal
        self.fingerprints = FingerprintItems(table)

    def _key(self, user_id: str, proposal_id: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": user_id, "sk": PROPOSAL_PREFIX + proposal_id})

    def erase(self, user_id: str) -> int:
        """Delete every item of the user's partition (an operator's account erasure); how many there were."""
        return dynamo.batch_delete(
            self._client, self.table, dynamo.partition_keys(self._client, self.table, "user_id", user_id, "sk")
        )

    def list(self, user_id: str) -> list[Entry]:
        return self.listing(user_id)[0]

    def listing(self, user_id: str) -> tuple[builtins.list[Entry], builtins.list[dict[str, str]]]:
        """The waiting proposals and, from the same Query, the waiting slots shown as repeats (`repeat_of`)."""
        found: builtins.list[Entry] = []
        items: builtins.list[dict[str, Any]] = []
        slots: builtins.list[dict[str, Any]] = []
        for i in dynamo.query_partition(self._client, self.table, "user_id", user_id):
            if is_fingerprint_key(i.get("sk")):
                continue
            # a slot shows only who repeated a note, and when (it has no text), if its seal opens (storage/slots.py)
            (slots if i.get(SLOT_ATTRIBUTE) is True else items).append(i)
        keys = text_keys_for(items + slots, self.seal, user_id)  # fingerprint items are no proposals
        repeats = [r for r in (verified(i, self.seal, user_id, keys) for i in slots) if r is not None]
        for item in items:
            try:
                found.append(from_item(item, self.seal, PROPOSAL_PREFIX, keys))
            except UnreadableText:
                continue  # not openable here (moved, altered, or its key destroyed): absent, like any missing id
        return found, sorted(repeats, key=lambda r: (r["created_at"], r["id"]))

    def stored(self, user_id: str) -> builtins.list[StoredRef]:  # `list` here is the method above
        """Every waiting proposal's id, without opening any text (no key needed)."""
        return self.stored_all(user_id)[0]

    def stored_all(
        self, user_id: str, *, consistent: bool = False
    ) -> tuple[builtins.list[StoredRef], builtins.list[Fingerprint]]:
        """`stored`, and the partition's fingerprint items (never counted: they are not proposals)."""
        refs: builtins.list[StoredRef] = []
        fingerprints: builtins.list[Fingerprint] = []
        for item in dynamo.query_partition(self._client, self.table, "user_id", user_id, consistent=consistent):
            if (found := fingerprint_from_item(item)) is not None:
                fingerprints.append(found)
            elif (ref := ref_from_item(item, PROPOSAL_PREFIX)) is not None:
                refs.append(ref)
        return refs, fingerprints

    def get(self, user_id: str, proposal_id: str) -> Entry | None:
        raw = self._client.get_item(TableName=self.table, Key=self._key(user_id, proposal_id), ConsistentRead=True).get(
            "Item"
        )
        return self.opened(user_id, dynamo.load(raw) if raw else None)  # a slot is no proposal: 404 like any missing id

    def waiting_items(self, user_id: str) -> builtins.list[dict[str, Any]]:
        """Every waiting proposal and slot item, unopened, from one consistent Query (no fingerprint item is read):
        a decision's read, which also tells whether the agent has any other suggestion waiting (services/repeats.py)."""
        return builtins.list(
            dynamo.query_all(
                self._client,
                TableName=self.table,
                KeyConditionExpression="user_id = :u AND begins_with(sk, :p)",
                ExpressionAttributeValues=dynamo.values(u=user_id, p=PROPOSAL_PREFIX),
                ConsistentRead=True,
            )
        )

    def stored_from(self, user_id: str, item: dict[str, Any]) -> StoredRef | None:
        """`stored_one` over an item already read (`waiting_items`)."""
        return opened_one(item, self.seal, user_id)

    def believed_slots(self, user_id: str, items: builtins.list[dict[str, Any]]) -> builtins.list[StoredRef]:
        """The slots among `items` whose seal opens here (what the person is shown as repeats), their keys read at once."""
        keys = text_keys_for(items, self.seal, user_id)
        refs = [(i, ref_from_item(i, PROPOSAL_PREFIX)) for i in items]
        return [r for i, r in refs if r is not None and r.slot and verified(i, self.seal, user_id, keys) is not None]

    def opened(self, user_id: str, item: dict[str, Any] | None) -> Entry | None:
        """`get` over an item already read: the proposal it holds, or None (a slot, or not openable here as itself)."""
        if not item or item.get(SLOT_ATTRIBUTE) is True:
            return None
        try:
            return from_item(item, self.seal, PROPOSAL_PREFIX)
        except UnreadableText:
            return None

    def put_new(self, proposal: Entry) -> dict[str, Any]:
        """The Put of a new proposal, its fingerprint attribute included (without claiming it: `put_unique`)."""
        return self.put_unique(proposal, entries_check=None, now_epoch=0)[0]

    def put_unique(
        self, proposal: Entry, *, entries_check: Callable[..., dict[str, Any]] | None, now_epoch: int
    ) -> builtins.list[dict[str, Any]]:
        """[Put proposal, claim its fingerprint, check no active entry holds the same text] for one transaction.

        Both fingerprints come from the one key that seals the text (no extra call). The claim (index 1)
        fails when a waiting proposal has the same text, the check (index 2) when a live entry has it.
        """
        sort_key = PROPOSAL_PREFIX + proposal.id
        attributes, fingerprints = sealed_and_fingerprints(proposal, sort_key, self.seal, (self.seal.table, ENTRIES))
        proposal = replace(proposal, fingerprint=fingerprints[self.seal.table])
        put = {
            "Put": {
                "TableName": self.table,
                "Item": dynamo.dump(to_item(proposal, sort_key, self.seal, sealed_text=attributes)),
                "ConditionExpression": "attribute_not_exists(sk)",
            }
        }
        actions: builtins.list[dict[str, Any]] = [
            put,
            self.fingerprints.claim(proposal.user_id, fingerprints[self.seal.table], proposal.id, now_epoch=now_epoch),
        ]
        if entries_check is not None:  # the entries table's `fingerprints.check_free`
            actions.append(entries_check(proposal.user_id, fingerprints[ENTRIES], now_epoch=now_epoch))
        return actions

    def hold_slot(
        self, user_id: str, slot_id: str, *, agent: str, session_id: str, now_iso: str, until: int
    ) -> dict[str, Any]:
        """Transaction action: a waiting slot held for a duplicate, named after its agent and session so forgetting
        them deletes it, until `until` (epoch seconds), after which the waiting cap's recount deletes it."""
        item = slot_item(
            self.seal, user_id, slot_id, agent=agent, session_id=session_id, now_iso=now_iso, until=until
        )  # sealed under a new text key: the caller's transaction goes through Keyring.guard, which writes its row
        return {
            "Put": {
                "TableName": self.table,
                "Item": dynamo.dump(item),
                "ConditionExpression": "attribute_not_exists(sk)",
            }
        }

    def holder(self, user_id: str, met: dict[str, Any] | None) -> str | None:
        """The waiting proposal holding the fingerprint item `met` (a refused claim's item); None when that
        fingerprint is stale (its proposal gone, holding other words, or its text's key gone: restored after its
        reject), and the write may take it over (`fingerprints.taken_over`)."""
        found = fingerprint_from_item(met)
        if found is None:
            return None
        held = self.stored_one(user_id, found.owner) if found.owner else None
        if held is not None and held.key_live and held.fingerprint == found.fingerprint:
            return held.id
        if not found.owner:
            self.fingerprints.drop_if_stale(self._client, user_id, found)  # names nobody: no takeover can name it
        return None

    def stored_one(self, user_id: str, proposal_id: str) -> StoredRef | None:
        """One waiting proposal's id and fingerprint, read consistently without opening its text."""
        raw = self._client.get_item(TableName=self.table, Key=self._key(user_id, proposal_id), ConsistentRead=True).get(
            "Item"
        )
        return opened_one(dynamo.load(raw), self.seal, user_id) if raw else None

    def remove_actions(self, user_id: str, ref: StoredRef, *, release: bool = True) -> builtins.list[dict[str, Any]]:
        """Delete one waiting proposal (accept, reject, forget) and release its fingerprint (index 1, if any).

        The delete holds only if it still waits with the fingerprint read; the release fails only when
        another proposal holds that fingerprint (damaged storage): then run it again with `release=False`.
        """
        delete = self.delete_waiting(user_id, ref.id)
        if not ref.fingerprint or not release:
            return [delete]
        return [delete, self.fingerprints.release(user_id, ref.fingerprint, ref.id)]

    def delete_waiting(self, user_id: str, proposal_id: str) -> dict[str, Any]:
        """Delete a proposal only if it still waits: a second accept or reject finds nothing (404)."""
        return {
            "Delete": {
                "TableName": self.table,
                "Key": self._key(user_id, proposal_id),
                "ConditionExpression": "attribute_exists(sk)",
            }
        }


def opened_one(item: dict[str, Any], seal: TextSeal, user_id: str) -> StoredRef | None:
    """`opened_ref`: its text key only if it opens as itself; a slot whose seal does not open as this user's slot
    (copied, renamed, restored after its forget) is as a proposal restored after its forget: `key_live` False,
    so a reject is a 404 that moves no counter."""
    ref = ref_from_item(item, PROPOSAL_PREFIX)
    if ref is None or not ref.slot:
        return opened_ref(item, seal, PROPOSAL_PREFIX)
    return ref if verified(item, seal, user_id) is not None else replace(ref, key_id=None, key_live=False)
