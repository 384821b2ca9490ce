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
from typing import Any

from chalicelib.errors import Unavailable
from chalicelib.models import MAX_ACTIVE_ENTRIES, MAX_WAITING_PROPOSALS, AgentGrant, Entry, MemoryState
from chalicelib.storage import dynamo
from chalicelib.storage.agents import AGENT_PREFIX, grant_from_item
from chalicelib.storage.entry_items import (
    ENTRY_PREFIX,
    EXPIRY_ATTRIBUTE,
    StoredRef,
    from_item,
    opened_ref,
    ref_from_item,
    sealed,
    text_keys_for,
    to_item,
)
from chalicelib.storage.text import TEXT_ATTRIBUTE, TextSeal, UnreadableText, sealing_key_id

STATE_KEY = "#state"
_EDIT_ROUNDS = 4  # read, then write if unchanged: concurrent edits of one entry take turns

# An entry is live while it has no expiry or its expiry is still ahead: TTL deletion lags by up to
# days, so every read and conditional write checks the instant itself instead of trusting TTL.
_LIVE = f"(attribute_not_exists({EXPIRY_ATTRIBUTE}) OR {EXPIRY_ATTRIBUTE} > :now)"

# The state item's view version: every write that changes what GET /v1/memory or /v1/inbox shows
# moves it in the same transaction, so an ETag built from it answers 304 after one GetItem.
VERSION = "view_version"
_BUMP = f"{VERSION} = if_not_exists({VERSION}, :zero) + :one"


def _state_from_item(item: dict[str, Any] | None, grants: list[AgentGrant] | None = None) -> MemoryState:
    if not item:
        return MemoryState(agents=tuple(grants or ()))
    return MemoryState(
        enabled=bool(item.get("enabled", False)),
        active=int(item.get("active", 0)),
        waiting=int(item.get("waiting", 0)),
        version=int(item.get(VERSION, 0)),
        agents=tuple(grants or ()),
        switched_at=str(item.get("updated_at", "")),
    )


class EntriesRepository:
    def __init__(self, client: Any, table: str, seal: TextSeal) -> None:
        self._client = client
        self.table = table
        self.seal = seal

    def _key(self, user_id: str, sort_key: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": user_id, "sk": sort_key})

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
            elif item["sk"].startswith(ENTRY_PREFIX):
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
        state: dict[str, Any] | None = None
        refs: list[StoredRef] = []
        for item in dynamo.query_partition(self._client, self.table, "user_id", user_id, consistent=consistent):
            if item["sk"] == STATE_KEY:
                state = item
            elif (ref := ref_from_item(item, ENTRY_PREFIX)) is not None:
                refs.append(ref)
        return _state_from_item(state), refs

    def correct_active(self, user_id: str, active: int, seen: MemoryState) -> bool:
        """Set `active` to a recounted value, only if no counted write moved the state since `seen` was read."""
        # view_version = :seen: the recount's Query read the state item first and the entries after
        # it; any counted write in between (or since) moved the version, and then this changes
        # nothing. A TTL deletion in between only makes the recount too high: the next refusal fixes it.
        condition = f"{VERSION} = :seen" if seen.version else f"attribute_not_exists({VERSION})"
        vals: dict[str, Any] = {"a": active, "zero": 0, "one": 1}
        if seen.version:
            vals["seen"] = seen.version
        return dynamo.update_if(
            self._client,
            TableName=self.table,
            Key=self._key(user_id, STATE_KEY),
            UpdateExpression=f"SET active = :a, {_BUMP}",
            ConditionExpression=f"attribute_exists(sk) AND {condition}",
            ExpressionAttributeValues=dynamo.values(**vals),
        ) is not None

    def ref(self, user_id: str, entry_id: str) -> StoredRef | None:
        """One stored entry's id, expiry and text key id, unopened (a forget needs to know which key to delete)."""
        raw = self._client.get_item(TableName=self.table, Key=self._key(user_id, ENTRY_PREFIX + entry_id), ConsistentRead=True).get("Item")
        return opened_ref(dynamo.load(raw), self.seal, ENTRY_PREFIX) if raw else None

    def get_state(self, user_id: str) -> MemoryState:
        raw = self._client.get_item(
            TableName=self.table, Key=self._key(user_id, STATE_KEY), ConsistentRead=True
        ).get("Item")
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
                    "active = if_not_exists(active, :zero), waiting = if_not_exists(waiting, :zero), "
                    + _BUMP
                ),
                "ConditionExpression": changes,
                "ExpressionAttributeValues": dynamo.values(
                    e=enabled, t=now_iso, zero=0, one=1, **({"off": False} if enabled else {"on": True})
                ),
            }
        }

    def update_entry(
        self,
        user_id: str,
        entry_id: str,
        *,
        now_epoch: int,
        now_iso: str,
        text: str | None = None,
        kind: str | None = None,
        pinned: bool | None = None,
        expires_at: int | None = None,
        remove_expiry: bool = False,
    ) -> Entry | None:
        """Change a live entry and bump the view version in one transaction; None when it is missing, expired or unreadable.

        Read first, then write on the condition that nothing changed since (`updated_at` as read), and
        answer with what was read plus these changes: the transaction is the last call, so a 503 after
        AWS kept refusing always means the edit did not happen (a read after it could fail on its own).
        A new text or kind seals the text again (the kind is bound to it), under the key that opened it,
        with a check in the same transaction that this key is still the user's.
        """
        key = self._key(user_id, ENTRY_PREFIX + entry_id)
        for _ in range(_EDIT_ROUNDS):
            raw = self._client.get_item(TableName=self.table, Key=key, ConsistentRead=True).get("Item")
            stored = dynamo.load(raw) if raw else None
            try:
                current = from_item(stored, self.seal, ENTRY_PREFIX) if stored else None
            except UnreadableText:
                return None  # not openable here (moved, altered, or its key destroyed): a 404, and nothing changes
            if stored is None or current is None or current.is_expired(now_epoch):
                return None
            changed = replace(
                current,
                text=text if text is not None else current.text,
                kind=kind if kind is not None else current.kind,
                pinned=pinned if pinned is not None else current.pinned,
                expires_at=None if remove_expiry else (expires_at if expires_at is not None else current.expires_at),
                updated_at=now_iso,
                edited=current.edited or text is not None or kind is not None,
            )
            resealed = text is not None or kind is not None
            actions = [
                {"Update": self._edit(key, changed, stored if resealed else None, seen=current.updated_at, now_epoch=now_epoch,
                                      remove_expiry=remove_expiry)},
                self.bump_version(user_id),
            ]
            if changed.expires_at != current.expires_at and current.text_id:  # the text's key expires with it
                actions.append(self.seal.keyring.keys.keep_text_key(user_id, current.text_id, changed.expires_at))
            guarded = self.seal.keyring.guard(actions)
            try:
                dynamo.transact(self._client, guarded)
            except dynamo.TransactionCancelled as exc:
                if exc.failed(0) or any(exc.failed(i) for i in range(len(actions), len(guarded))):
                    continue  # gone, expired, changed or its key destroyed meanwhile: read again
                raise
            return changed
        raise Unavailable("The entry kept changing while this edit was saved: try again.")

    def _edit(
        self, key: dict[str, Any], changed: Entry, reseal: dict[str, Any] | None, *, seen: str, now_epoch: int, remove_expiry: bool
    ) -> dict[str, Any]:
        """The Update that stores `changed` over the entry read with `updated_at == seen`; with `reseal` (that
        item as read), its text is sealed again, for its kind as changed, under the key that sealed it."""
        sets = ["updated_at = :t", "pinned = :p", "#kind = :k"]
        vals: dict[str, Any] = {"t": changed.updated_at, "p": changed.pinned, "k": changed.kind, "now": now_epoch, "seen": seen}
        if changed.edited:
            sets.append("edited = :ed")  # the user changed what was said: the page shows it
            vals["ed"] = True
        if reseal is not None:
            attributes = sealed(changed, str(reseal["sk"]), self.seal, under=sealing_key_id(reseal))
            sets.append(f"{TEXT_ATTRIBUTE} = :{TEXT_ATTRIBUTE}")  # Keyring.guard checks the key it names
            vals[TEXT_ATTRIBUTE] = attributes[TEXT_ATTRIBUTE]
        if changed.expires_at is not None:
            sets.append(f"{EXPIRY_ATTRIBUTE} = :exp")
            vals["exp"] = changed.expires_at
        expression = "SET " + ", ".join(sets)
        if remove_expiry:
            expression += f" REMOVE {EXPIRY_ATTRIBUTE}"
        return {
            "TableName": self.table,
            "Key": key,
            "UpdateExpression": expression,
            # Still there, still live, and unchanged since it was read.
            "ConditionExpression": f"attribute_exists(sk) AND {_LIVE} AND updated_at = :seen",
            "ExpressionAttributeNames": {"#kind": "kind"},
            "ExpressionAttributeValues": dynamo.values(**vals),
        }

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
        """Count `count` more active entries, only while memory is on and the cap leaves room."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, STATE_KEY),
                "UpdateExpression": "SET active = active + :n, waiting = waiting - :w, " + _BUMP,
                # enabled = true: nothing is added while memory is off (no state item = never on).
                # active <= cap - n: the cap holds however many requests race for the last slots.
                "ConditionExpression": "enabled = :on AND active <= :room",
                "ExpressionAttributeValues": dynamo.values(
                    n=count, w=release_waiting, on=True, room=MAX_ACTIVE_ENTRIES - count, zero=0, one=1
                ),
            }
        }

    def take_waiting_slot(self, user_id: str) -> dict[str, Any]:
        """Count one more waiting proposal, only while memory is on and fewer than 50 wait."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, STATE_KEY),
                "UpdateExpression": "SET waiting = waiting + :one, " + _BUMP,
                "ConditionExpression": "enabled = :on AND waiting < :cap",
                "ExpressionAttributeValues": dynamo.values(one=1, zero=0, on=True, cap=MAX_WAITING_PROPOSALS),
            }
        }

    def release_counts(self, user_id: str, *, active: int = 0, waiting: int = 0) -> dict[str, Any]:
        """Count entries or proposals that a transaction removes (the state item always exists by then)."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, STATE_KEY),
                "UpdateExpression": "SET active = active - :a, waiting = waiting - :w, " + _BUMP,
                "ConditionExpression": "attribute_exists(sk)",
                "ExpressionAttributeValues": dynamo.values(a=active, w=waiting, zero=0, one=1),
            }
        }

    def put_new(self, entry: Entry) -> dict[str, Any]:
        """Transaction action: store a new entry; its text continues under `entry.text_id` (an accepted proposal's)."""
        return {
            "Put": {
                "TableName": self.table,
                "Item": dynamo.dump(to_item(entry, ENTRY_PREFIX + entry.id, self.seal)),
                "ConditionExpression": "attribute_not_exists(sk)",
            }
        }

    def delete_live(self, user_id: str, entry_id: str, now_epoch: int) -> dict[str, Any]:
        """Delete an entry that exists and has not expired (an expired one is already gone to the user)."""
        return {
            "Delete": {
                "TableName": self.table,
                "Key": self._key(user_id, ENTRY_PREFIX + entry_id),
                "ConditionExpression": f"attribute_exists(sk) AND {_LIVE}",
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
