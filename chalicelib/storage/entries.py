"""The entries table: per user, one state item (switch and counters) and the active entries.

The counters are the caps' source of truth: every write that adds or removes an entry or a proposal
moves a counter in the same transaction, under a condition, so the caps hold under concurrency.

`active` counts the entry items stored, expired ones included, so it can only ever be too high:
DynamoDB's TTL deletes expired items behind the app's back and moves no counter. A write refused
at the cap therefore recounts (`recount`: one consistent Query of the partition) and corrects the
counter under a condition on the view version, which every counted write moves: the correction
lands only if no counted write happened since the state item was read, so it can never undercount.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

from chalicelib.models import MAX_ACTIVE_ENTRIES, MAX_WAITING_PROPOSALS, AgentGrant, Entry, MemoryState
from chalicelib.storage import dynamo
from chalicelib.storage.agents import AGENT_PREFIX, FOLDED_MARK, FOLDED_VERSION, ROWS_COUNTER, grant_from_item
from chalicelib.storage.entry_items import (
    ENTRY_PREFIX,
    EXPIRY_ATTRIBUTE,
    FINGERPRINT_ATTRIBUTE,
    StoredRef,
    from_item,
    opened_ref,
    ref_from_item,
    sealed_and_fingerprints,
    text_keys_for,
    to_item,
)
from chalicelib.storage.fingerprints import Fingerprint, FingerprintItems, fingerprint_from_item
from chalicelib.storage.text import TextSeal, UnreadableText, unreadable

STATE_KEY = "#state"

# An entry is live while it has no expiry or its expiry is still ahead: TTL deletion lags by up to
# days, so every read and conditional write checks the instant itself instead of trusting TTL.
LIVE = f"(attribute_not_exists({EXPIRY_ATTRIBUTE}) OR {EXPIRY_ATTRIBUTE} > :now)"

# The state item's view version: every write that changes what GET /v1/memory or /v1/inbox shows
# moves it in the same transaction, so an ETag built from it answers 304 after one GetItem.
VERSION = "view_version"
_BUMP = f"{VERSION} = if_not_exists({VERSION}, :zero) + :one"


def _state_from_item(item: dict[str, Any] | None, grants: list[AgentGrant] | None = None) -> MemoryState:
    if not item:
        return MemoryState(agents=tuple(grants or ()))
    return MemoryState(
        enabled=item.get("enabled") is True,
        active=_count(item, "active"),
        waiting=_count(item, "waiting"),
        version=_count(item, VERSION),
        agents=tuple(grants or ()),
        agent_rows=_count(item, ROWS_COUNTER),
        agents_folded=item.get(FOLDED_MARK) == FOLDED_VERSION,
        switched_at=switched if isinstance(switched := item.get("updated_at"), str) else "",
    )


def _count(item: dict[str, Any], name: str) -> int:
    """A counter of the state item; one altered to another type reads as 0 and is logged (never a 500).

    The caps stay safe: their conditions compare the stored value, which DynamoDB finds of the wrong
    type, so the write is refused and the refusal's recount writes a number again.
    """
    value = item.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        unreadable("entries", f"state:{name}")
        return 0
    return int(value)


class EntriesRepository:
    def __init__(self, client: Any, table: str, seal: TextSeal) -> None:
        self._client = client
        self.table = table
        self.seal = seal
        self.fingerprints = FingerprintItems(table)

    def holder_name(self) -> str:
        """What the keys table's `held_in` says of a text key an entry holds (this table's name)."""
        return self.table

    def _key(self, user_id: str, sort_key: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": user_id, "sk": sort_key})

    def erase(self, user_id: str) -> int:
        """Delete every item of the user's partition (an operator's account erasure); how many there were."""
        return dynamo.batch_delete(
            self._client, self.table, dynamo.partition_keys(self._client, self.table, "user_id", user_id, "sk")
        )

    # ---- reads -------------------------------------------------------------------------------

    def load(self, user_id: str, *, consistent: bool = False) -> tuple[MemoryState, list[Entry]]:
        """The state and every stored entry (expired ones included: callers filter) in one Query."""
        state: dict[str, Any] | None = None
        grants: list[AgentGrant] = []
        entries: list[Entry] = []
        stored: list[dict[str, Any]] = []
        # "#state" sorts before "a#…" (the agents' grants) and "e#…": the state item comes first.
        for item in dynamo.query_partition(self._client, self.table, "user_id", user_id, consistent=consistent):
            if item["sk"] == STATE_KEY:
                state = item
            elif item["sk"].startswith(AGENT_PREFIX):
                grants.extend(g for g in (grant_from_item(item),) if g is not None)
            elif item["sk"].startswith(ENTRY_PREFIX):  # not the fingerprint items (storage/fingerprints.py)
                stored.append(item)
        keys = text_keys_for(stored, self.seal, user_id)  # cached, or one Query of the keys table for them all
        for item in stored:
            try:
                entries.append(from_item(item, self.seal, ENTRY_PREFIX, keys))
            except UnreadableText:
                continue  # not openable here (moved, altered, or its key forgotten): absent, like any missing id
        return _state_from_item(state, grants), entries

    def stored(self, user_id: str, *, consistent: bool = False) -> tuple[MemoryState, list[StoredRef]]:
        """The state and every stored entry's id and expiry, without opening any text (no key needed)."""
        state, refs, _ = self.stored_all(user_id, consistent=consistent)
        return state, refs

    def stored_all(
        self, user_id: str, *, consistent: bool = False
    ) -> tuple[MemoryState, list[StoredRef], list[Fingerprint]]:
        """`stored`, and the partition's fingerprint items (never counted: they are not entries)."""
        state: dict[str, Any] | None = None
        refs: list[StoredRef] = []
        fingerprints: list[Fingerprint] = []
        for item in dynamo.query_partition(self._client, self.table, "user_id", user_id, consistent=consistent):
            if item["sk"] == STATE_KEY:
                state = item
            elif (found := fingerprint_from_item(item)) is not None:
                fingerprints.append(found)
            elif (ref := ref_from_item(item, ENTRY_PREFIX)) is not None:
                refs.append(ref)
        return _state_from_item(state), refs, fingerprints

    def correct_active(self, user_id: str, active: int, seen: MemoryState) -> bool:
        """Set `active` to a recounted value, only if no counted write moved the state since `seen` was read."""
        return self._correct(user_id, "active", active, seen)

    def correct_waiting(self, user_id: str, waiting: int, seen: MemoryState) -> bool:
        """Set `waiting` to a recounted value (proposals and slots stored), on the same condition as `correct_active`."""
        return self._correct(user_id, "waiting", waiting, seen)

    def _correct(self, user_id: str, counter: str, value: int, seen: MemoryState) -> bool:
        # view_version = :seen: the recount's Query read the state item first and the entries after
        # it; any counted write in between (or since) moved the version, and then this changes
        # nothing. A TTL deletion in between only makes the recount too high: the next refusal fixes it.
        condition = f"{VERSION} = :seen" if seen.version else f"attribute_not_exists({VERSION})"
        vals: dict[str, Any] = {"a": value, "zero": 0, "one": 1}
        if seen.version:
            vals["seen"] = seen.version
        return (
            dynamo.update_if(
                self._client,
                TableName=self.table,
                Key=self._key(user_id, STATE_KEY),
                UpdateExpression=f"SET {counter} = :a, {_BUMP}",
                ConditionExpression=f"attribute_exists(sk) AND {condition}",
                ExpressionAttributeValues=dynamo.values(**vals),
            )
            is not None
        )

    def get_state(self, user_id: str) -> MemoryState:
        raw = self._client.get_item(TableName=self.table, Key=self._key(user_id, STATE_KEY), ConsistentRead=True).get(
            "Item"
        )
        return _state_from_item(dynamo.load(raw) if raw else None)

    # ---- single writes -----------------------------------------------------------------------

    def switch(self, user_id: str, enabled: bool, now_iso: str) -> dict[str, Any]:
        """Transaction action: flip the switch, only if that changes it (so a no-op writes no journal row)."""
        # Turning on also creates the counters of a user who never had memory on; turning off
        # requires it to be on, so a user who never turned it on gets no state item at all.
        changes = "attribute_not_exists(enabled) OR enabled = :off" if enabled else "enabled = :on"
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, STATE_KEY),
                "UpdateExpression": (
                    "SET enabled = :e, updated_at = :t, "
                    "active = if_not_exists(active, :zero), waiting = if_not_exists(waiting, :zero), " + _BUMP
                ),
                "ConditionExpression": changes,
                "ExpressionAttributeValues": dynamo.values(
                    e=enabled, t=now_iso, zero=0, one=1, **({"off": False} if enabled else {"on": True})
                ),
            }
        }

    def raw_entry(self, user_id: str, entry_id: str) -> dict[str, Any] | None:
        """The stored item of one entry, read consistently (not opened)."""
        raw = self._client.get_item(
            TableName=self.table, Key=self._key(user_id, ENTRY_PREFIX + entry_id), ConsistentRead=True
        ).get("Item")
        return dynamo.load(raw) if raw else None

    def holder(self, user_id: str, met: dict[str, Any] | None, now_epoch: int) -> str | None:
        """The id of the live entry holding the fingerprint item `met` (a refused claim's ALL_OLD item); None when
        that fingerprint is stale (its entry gone, expired, holding another text, or its text's key gone: restored
        from a backup after its forget), and the write may take it over (`fingerprints.taken_over`).

        A refusal path only: one GetItem and the text key's lookup. Stale fingerprints come from damaged or
        restored items, never from this service's own writes, which move them with their entry.
        """
        found = fingerprint_from_item(met)
        if found is None:
            return None
        if not found.is_expired(now_epoch):
            raw = self.raw_entry(user_id, found.owner) if found.owner else None
            ref = opened_ref(raw, self.seal, ENTRY_PREFIX) if raw else None
            if (
                ref is not None
                and ref.key_live
                and not ref.is_expired(now_epoch)
                and ref.fingerprint == found.fingerprint
            ):
                return ref.id
        if not found.owner:
            self.fingerprints.drop_if_stale(self._client, user_id, found)  # names nobody: no takeover can name it
        return None

    # ---- transaction actions (services compose these so a cap and its write move together) ----

    def bump_version(self, user_id: str, *, only_if_stored: bool = True) -> dict[str, Any]:
        """Move the view version (for a write that changes what the user sees but no counter).

        `only_if_stored=False` moves it whether or not the state item exists yet (it then holds only the
        version): for destroying a key, which changes what GET shows however the items came to be.
        """
        update: dict[str, Any] = {
            "TableName": self.table,
            "Key": self._key(user_id, STATE_KEY),
            "UpdateExpression": "SET " + _BUMP,
            "ExpressionAttributeValues": dynamo.values(zero=0, one=1),
        }
        if only_if_stored:
            update["ConditionExpression"] = "attribute_exists(sk)"
        return {"Update": update}

    def take_entry_slots(self, user_id: str, count: int = 1, *, release_waiting: int = 0) -> dict[str, Any]:
        """Count `count` more active entries, only while memory is on and the cap leaves room; `release_waiting`
        fewer waiting proposals, only while `waiting` holds that many (never below zero, as `release_counts`'s floor)."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, STATE_KEY),
                "UpdateExpression": "SET active = active + :n, waiting = waiting - :w, " + _BUMP,
                # enabled = true: nothing is added while memory is off (no state item = never on).
                # active <= cap - n: the cap holds however many requests race for the last slots.
                # waiting >= w: an accepted proposal put back from a backup (or a damaged counter) was never counted.
                "ConditionExpression": "enabled = :on AND active <= :room"
                + (" AND waiting >= :w" if release_waiting else ""),
                "ExpressionAttributeValues": dynamo.values(
                    n=count, w=release_waiting, on=True, room=MAX_ACTIVE_ENTRIES - count, zero=0, one=1
                ),
            }
        }

    def take_waiting_slot(self, user_id: str) -> dict[str, Any]:
        """Count one more waiting proposal, only while memory is on and fewer than 50 wait.

        `folded`: also only once the user's agent rows are keyed by folded names (services/agent_rows.py), so a
        proposal's grant check (one folded row) cannot miss a block stored under another spelling.
        """
        folded = f" AND {FOLDED_MARK} = :folded"
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, STATE_KEY),
                "UpdateExpression": "SET waiting = waiting + :one, " + _BUMP,
                "ConditionExpression": "enabled = :on AND waiting < :cap" + folded,
                "ExpressionAttributeValues": dynamo.values(
                    one=1, zero=0, on=True, cap=MAX_WAITING_PROPOSALS, folded=FOLDED_VERSION
                ),
            }
        }

    def release_counts(self, user_id: str, *, active: int = 0, waiting: int = 0, floor: bool = False) -> dict[str, Any]:
        """Count entries or proposals that a transaction removes (the state item always exists by then).

        `floor`: only while `waiting` holds that many, so it never goes below zero (a reject of an item that was
        never counted: put back from a backup); refused, the caller removes the item uncounted."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, STATE_KEY),
                "UpdateExpression": "SET active = active - :a, waiting = waiting - :w, " + _BUMP,
                "ConditionExpression": "attribute_exists(sk)" + (" AND waiting >= :w" if floor else ""),
                "ExpressionAttributeValues": dynamo.values(a=active, w=waiting, zero=0, one=1),
            }
        }

    def put_new(self, entry: Entry) -> dict[str, Any]:
        """The Put of a new entry, its fingerprint attribute included (without claiming it: `put_unique`); its text
        continues under `entry.text_id` (an accepted proposal's), else gets a new key."""
        return self.put_unique(entry, now_epoch=0)[0]

    def put_unique(self, entry: Entry, *, now_epoch: int) -> list[dict[str, Any]]:
        """A new entry and the claim of its text's fingerprint: [Put entry, Put fingerprint], for one transaction.

        The claim (index 1) fails when a live entry holds the same text: `holder` names it.
        """
        sort_key = ENTRY_PREFIX + entry.id
        attributes, fingerprints = sealed_and_fingerprints(entry, sort_key, self.seal, (self.seal.table,))
        entry = replace(entry, fingerprint=fingerprints[self.seal.table])
        assert entry.fingerprint is not None
        put = {
            "Put": {
                "TableName": self.table,
                "Item": dynamo.dump(to_item(entry, sort_key, self.seal, sealed_text=attributes)),
                "ConditionExpression": "attribute_not_exists(sk)",
            }
        }
        claim = self.fingerprints.claim(
            entry.user_id, entry.fingerprint, entry.id, now_epoch=now_epoch, expires_at=entry.expires_at
        )
        return [put, claim]

    def live_ref(self, user_id: str, entry_id: str, now_epoch: int) -> StoredRef | None:
        """A live entry's id, expiry and fingerprint, read consistently without opening its text."""
        raw = self.raw_entry(user_id, entry_id)
        ref = opened_ref(raw, self.seal, ENTRY_PREFIX) if raw else None  # names its text key only if it opens as itself
        return ref if ref is not None and not ref.is_expired(now_epoch) else None

    def forget_actions(
        self, user_id: str, ref: StoredRef, now_epoch: int | None, *, release: bool = True
    ) -> list[dict[str, Any]]:
        """Delete one entry and release its fingerprint: what every forget path runs (one entry, by agent, purges).

        `now_epoch`: only while live (a user's or operator's forget); None: whatever its expiry (purges).
        The release (index 1, when there is one) fails only if another entry holds that fingerprint (damaged
        storage): run the delete again with `release=False` (`forget_actions(..., ref without fingerprint)`).
        """
        delete = (
            self.delete_live(user_id, ref.id, now_epoch)
            if now_epoch is not None
            else self.delete_stored(user_id, ref.id)
        )
        # ... and still holding the text it held when read: an edit in between moved the fingerprint, and
        # releasing the old one would leave the new one behind, refusing that text for ever.
        same = f"{FINGERPRINT_ATTRIBUTE} = :fp" if ref.fingerprint else f"attribute_not_exists({FINGERPRINT_ATTRIBUTE})"
        delete["Delete"]["ConditionExpression"] += f" AND {same}"
        if ref.fingerprint is None:
            return [delete]
        delete["Delete"]["ExpressionAttributeValues"] = {
            **delete["Delete"].get("ExpressionAttributeValues", {}),
            **dynamo.values(fp=ref.fingerprint),
        }
        return [delete, self.fingerprints.release(user_id, ref.fingerprint, ref.id)] if release else [delete]

    def delete_live(self, user_id: str, entry_id: str, now_epoch: int) -> dict[str, Any]:
        """Delete an entry that exists and has not expired (an expired one is already gone to the user)."""
        return {
            "Delete": {
                "TableName": self.table,
                "Key": self._key(user_id, ENTRY_PREFIX + entry_id),
                "ConditionExpression": f"attribute_exists(sk) AND {LIVE}",
                "ExpressionAttributeValues": dynamo.values(now=now_epoch),
            }
        }

    def delete_stored(self, user_id: str, entry_id: str) -> dict[str, Any]:
        """Delete an entry whatever its expiry (forget-all and the purge of expired entries)."""
        return {
            "Delete": {
                "TableName": self.table,
                "Key": self._key(user_id, ENTRY_PREFIX + entry_id),
                "ConditionExpression": "attribute_exists(sk)",
            }
        }
