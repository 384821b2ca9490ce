"""Each user's data key (created by KMS on their first stored text, destroyed by forget-all) and each text's own key.

Every text has a random 256-bit key for its whole life (event, proposal, entry), wrapped under the
user's data key in the keys table; forgetting the text deletes that row (`shred`) in the forget's own
transaction (a forget of many texts deletes their rows first, `shred_now`), so no copy of the text
opens again. A new text's key row is written by `guard`, in the same transaction as the item whose
seal names it. Unwrapped keys live only in the bounded caches.

Sealing always reads the user's key row (one consistent GetItem, no KMS call when cached), and
`guard` makes the write itself check that key is still current, so a key destroyed by another
request or container is never used for new text. Opening trusts the cache for a key it
has seen (at most `cache.MAX_AGE_SECONDS`), and otherwise asks the keys table which key is current.
Key creation and destruction are journaled in the same transaction as the key row itself.

A key row that cannot be used (attributes missing or altered, a wrapped key KMS refuses to unwrap for
this user, as when another user's row is copied over it) is `KeyUnusable`: a 503 refusal that changes
nothing, logged with KMS's error code only. Forget-all still works: destroying a key never unwraps it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from chalicelib.clock import instant
from chalicelib.crypto.cache import KeyCache
from chalicelib.crypto.kms import Kms
from chalicelib.crypto.sealing import (
    KEY_ID_BYTES,
    TEXT_ATTRIBUTE,
    Unsealable,
    data_key_cipher,
    key_id_of,
    unwrap_text_key,
    wrap_text_key,
)
from chalicelib.errors import Unavailable
from chalicelib.logs import get_logger
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.journal import JournalRepository
from chalicelib.storage.keys import TEXT_KEY_PREFIX, KeyRowUnreadable, KeysRepository, StoredKey, StoredTextKey

KEY_CREATED, KEY_DESTROYED = "keep.memory.key_created", "keep.memory.key_destroyed"
DATA_KEY_BYTES = 32  # AES-256
_PENDING_MAX = 1_000  # new text keys sealed but not yet written (a request that failed leaves one behind)

logger = get_logger("personal_memory.keys")


class KeyUnavailable(Unavailable):
    """First writes and forget-alls raced past every attempt (each time this one found no key, another stored
    one first and a forget-all destroyed it): a 503 that changed nothing, never a 500; the caller may try again."""

    default_message = "Your memory was being changed while this was saved, and nothing was: try again."


_SEALING_ATTEMPTS = 5  # each lost attempt takes another request's new key and a forget-all destroying it


class KeyUnusable(Unavailable):
    """The user's key row is there but cannot be used: refused as `unavailable` (503), nothing changes.

    Not a 500 (nothing in the request was wrong) and not "absent" (the user's memory is not gone: an
    operator can repair the row from the journal's evidence, or the user can forget everything, which
    needs no unwrap). Retry-After is long: this does not pass in seconds, as throttling does.
    """

    default_message = "Your memory's key cannot be used right now: nothing was changed. Try again later."
    retry_after_seconds = 300


class Keyring:
    def __init__(
        self,
        client: object,
        keys: KeysRepository,
        journal: JournalRepository,
        kms: Kms,
        clock: Callable[[], datetime],
        cache: KeyCache | None = None,
    ) -> None:
        self._client = client
        self.keys = keys
        self.journal = journal
        self.kms = kms
        self.clock = clock
        self.cache = cache if cache is not None else KeyCache()
        # New text keys whose row is not known to be written: (user, key, when made). Dropped once written
        # (`written`) or after the cache's age: a row forgotten later is never written again from here.
        self._pending: dict[bytes, tuple[str, StoredTextKey, float]] = {}
        self._lock = threading.Lock()

    # ---- each text's own key -------------------------------------------------------------------

    def new_text_key(self, user_id: str) -> tuple[bytes, bytes]:
        """(text id, key) for a new text; its wrapped row is written by `guard`, with the item that names it."""
        data_key_id, data_key = self.sealing_key(user_id)
        text_id, text_key = os.urandom(KEY_ID_BYTES), os.urandom(DATA_KEY_BYTES)
        stored = StoredTextKey(text_id, data_key_id, wrap_text_key(data_key, user_id, text_id, data_key_id, text_key))
        with self._lock:
            self._pending[text_id] = (user_id, stored, time.monotonic())
            while len(self._pending) > _PENDING_MAX:
                self._pending.pop(next(iter(self._pending)))
        self.cache.put(_text_slot(user_id, text_id), text_id, text_key)
        return text_id, text_key

    def fingerprint_key(self, user_id: str) -> bytes:
        """The user's data key, for their texts' fingerprints: cached if fresh, else read (and created) as for sealing."""
        cached_id = self.cache.id_of(user_id)
        cached = self.cache.get(user_id, cached_id) if cached_id else None
        return cached if cached is not None else self.sealing_key(user_id)[1]

    def text_key(self, user_id: str, text_id: bytes) -> bytes | None:
        """The key of the text named `text_id`; None once it was forgotten (or its data key destroyed)."""
        cached = self.cache.get(_text_slot(user_id, text_id), text_id)
        if cached is not None:
            return cached
        return self.text_keys(user_id, [text_id]).get(text_id)

    def text_keys(self, user_id: str, text_ids: Iterable[bytes]) -> dict[bytes, bytes]:
        """The keys of `text_ids` that still exist: cached ones, and the rest from one Query of the user's keys."""
        wanted = set(text_ids)
        found = {t: k for t in wanted if (k := self.cache.get(_text_slot(user_id, t), t)) is not None}
        if wanted - set(found):
            for text_id, key in self._load_text_keys(user_id).items():
                if text_id in wanted:
                    found[text_id] = key
        return found

    def live_text_ids(self, user_id: str) -> set[bytes]:
        """The ids of the user's texts whose key still opens (no KMS call when the data key is cached)."""
        return set(self._load_text_keys(user_id))

    def _load_text_keys(self, user_id: str) -> dict[bytes, bytes]:
        try:
            data, texts = self.keys.load(user_id)
        except KeyRowUnreadable as exc:
            logger.error("key row unusable", extra={"outcome": "key_unusable", "reason": "attributes"})
            raise KeyUnusable() from exc
        if data is None or not texts:
            return {}
        data_key = data_key_cipher(self._unwrapped(data))  # one AES-GCM object for every text key below
        opened: dict[bytes, bytes] = {}
        for row in texts:
            if row.data_key_id != data.key_id:
                continue  # wrapped under a destroyed data key: nothing opens it
            try:
                opened[row.text_id] = unwrap_text_key(data_key, user_id, row.text_id, data.key_id, row.wrapped)
            except Unsealable:
                logger.warning("text key unusable", extra={"outcome": "unreadable", "reason": "text_key"})
                continue
            self.cache.put(_text_slot(user_id, row.text_id), row.text_id, opened[row.text_id])
        return opened

    def shred(
        self, user_id: str, text_ids: Iterable[bytes | None], *, unless_held_in: str | None = None
    ) -> list[dict[str, Any]]:
        """The actions that delete these texts' keys, for a forget of one text to put in its own transaction
        (`unless_held_in`: KeysRepository.delete_text_key's).

        The keys leave this container's cache now (and again by `forget_cached` after the write); other
        containers may hold one for at most the cache's age (`unrecoverable_by` in the journal).
        """
        ids = sorted({t for t in text_ids if t})
        self.forget_cached(user_id, ids)
        return [self.keys.delete_text_key(user_id, t, unless_held_in=unless_held_in) for t in ids]

    def shred_now(self, user_id: str, text_ids: Iterable[bytes | None]) -> int:
        """Delete these texts' keys before their items (a forget of many at once); the DynamoDB calls it took.

        From then on those texts open nowhere, whatever happens to their items: a deletion that fails
        afterwards leaves items no key opens (absent everywhere, purged as orphans at the next recount).
        Refused (`Unavailable`), some keys may be gone and the caller must delete nothing else.
        """
        ids = sorted({t for t in text_ids if t})
        self.forget_cached(user_id, ids)
        try:
            return self.keys.delete_text_keys(user_id, ids) if ids else 0
        finally:
            self.forget_cached(user_id, ids)  # what a read racing this call may have put back

    def forget_cached(self, user_id: str, text_ids: Iterable[bytes | None]) -> None:
        """Drop these texts' keys from this container: the cache, and a new key still pending its row (which
        `guard` would otherwise write again for a restored copy of the forgotten text)."""
        for text_id in text_ids:
            if text_id:
                self.cache.drop(_text_slot(user_id, text_id))
                with self._lock:
                    if (pending := self._pending.get(text_id)) is not None and pending[0] == user_id:
                        del self._pending[text_id]

    def sealing_key(self, user_id: str) -> tuple[bytes, bytes]:
        """(key id, key) to seal new text with: the user's current key, created now if they have none."""
        for _ in range(_SEALING_ATTEMPTS):
            stored = self._stored(user_id)
            if stored is not None:
                return stored.key_id, self._unwrapped(stored)
            created = self._create(user_id)
            if created is not None:
                return created
        raise KeyUnavailable()

    def opening_key(self, user_id: str, key_id: bytes) -> bytes | None:
        """The key named `key_id` if it is still the user's key; None once it was destroyed (or never was)."""
        cached = self.cache.get(user_id, key_id)
        if cached is not None:
            return cached
        stored = self._stored(user_id)
        if stored is None or stored.key_id != key_id:
            return None
        return self._unwrapped(stored)

    def current_key_id(self, user_id: str) -> bytes | None:
        """The id of the user's key as the keys table has it now (consistent, no KMS call); None if they have none."""
        stored = self._stored(user_id)
        return stored.key_id if stored is not None else None

    def guard(self, actions: list[dict[str, Any]], *, sole_in: str | None = None) -> list[dict[str, Any]]:
        """`actions` followed by, for each text their Puts and Updates seal: its new key row (with the check
        that the data key wrapping it is still current), or the check that its key was not forgotten meanwhile.

        A forget-all may destroy the data key (or a forget delete a text's key) between sealing and the
        write; this makes such a write fail instead of storing text no key opens. The key row's TTL
        follows the item's expiry. Key rows an action already touches are left to it. The extra actions
        come last, so the given ones keep their indices. A Put that continues a text's key records its table
        on the key row (`held_in`); into `sole_in`, only if no item of that table holds the text yet.
        """
        touched = {_row(a) for a in actions}
        extra: dict[Any, dict[str, Any]] = {}
        for action in actions:
            put, update = action.get("Put", {}), action.get("Update", {})
            # A Put's item, or an Update that sets `sealed_text = :sealed_text` (an edit sealing again).
            user = put.get("Item", {}).get("user_id") or update.get("Key", {}).get("user_id")
            values = update.get("ExpressionAttributeValues", {})
            sealed = put.get("Item", {}).get(TEXT_ATTRIBUTE) or values.get(f":{TEXT_ATTRIBUTE}")
            if not (user and sealed):
                continue
            user_id, text_id = user["S"], key_id_of(bytes(sealed["B"]))
            item = put.get("Item", {})
            expiry = (item.get("expires_at") or item.get("ttl") or {}).get("N")  # an entry's expiry, an event's TTL
            expires_at = int(expiry) if expiry is not None else None
            with self._lock:  # kept until written (bounded): a refused transaction is built again with the same seal
                pending = self._pending.get(text_id) if put else None
                if pending is not None and time.monotonic() - pending[2] > self.cache.max_age:
                    del self._pending[text_id]  # too old to be this request's: its row was written or never will be
                    pending = None
            if pending is not None and pending[0] == user_id:
                extra[("t", text_id)] = self.keys.put_text_key(user_id, pending[1], expires_at)
                extra[("d", user_id, pending[1].data_key_id)] = self.keys.is_current(user_id, pending[1].data_key_id)
            elif (
                _row({"Update": {"TableName": self.keys.table, "Key": self.keys.text_key_row(user_id, text_id)}})
                not in touched
            ):
                table = put.get("TableName")
                keep = self.keys.keep_text_key(
                    user_id, text_id, expires_at, held_in=table, sole=table is not None and table == sole_in
                )
                if update:  # an edit: its expiry is the edit's business (entry_edits.update_entry), only check the key
                    keep = {
                        "ConditionCheck": {
                            k: v for k, v in keep["Update"].items() if k in ("TableName", "Key", "ConditionExpression")
                        }
                    }
                extra[("t", text_id)] = keep
                # ... and the data key that wraps it is still current (a forget-all may have destroyed it).
                data_key_id = self.cache.id_of(user_id) or self.current_key_id(user_id) or b"\0"
                extra[("d", user_id, data_key_id)] = self.keys.is_current(user_id, data_key_id)
        return [*actions, *extra.values()]

    def written(self, actions: Sequence[dict[str, Any]]) -> None:
        """After a committed transaction: the text key rows it put are written, so no later `guard` in this
        container writes them again (another container may forget the text, and a restored copy of its
        item must then fail its key check, not bring the key back)."""
        with self._lock:
            for action in actions:
                item = action.get("Put", {}).get("Item", {})
                if action.get("Put", {}).get("TableName") == self.keys.table and "sk" in item:
                    sort_key = item["sk"].get("S", "")
                    if sort_key.startswith(TEXT_KEY_PREFIX):
                        try:
                            self._pending.pop(bytes.fromhex(sort_key[len(TEXT_KEY_PREFIX) :]), None)
                        except ValueError:
                            continue

    def destroy(self, user_id: str, *, with_actions: Sequence[dict[str, Any]] = ()) -> bool:
        """Delete the user's wrapped key and journal it, with `with_actions` in the same transaction; False
        when they had none (then nothing happened). The next write makes a new key."""
        now = instant(self.clock)
        self.cache.drop(user_id)
        self.cache.drop_prefix(_text_slot(user_id, b""))  # its texts' keys die with it
        try:
            transact(
                self._client,
                [
                    self.keys.delete_existing(user_id),
                    self.journal.record(user_id, KEY_DESTROYED, now.iso, {}),
                    *with_actions,
                ],
            )
        except TransactionCancelled as exc:
            if exc.failed(0):
                return False
            raise
        finally:
            self.cache.drop(user_id)  # also what a sealing racing this call may have put back
            self.cache.drop_prefix(_text_slot(user_id, b""))
        return True

    def erase(self, user_id: str) -> int:
        """Delete every key row of the user — the data key first (its sort key sorts first), then each text's key —
        with no journal row (an operator's account erasure: the user's journal goes too); how many rows there were."""
        self._forget_user(user_id)
        try:
            return self.keys.erase(user_id)
        finally:
            self._forget_user(user_id)  # also what a sealing racing this call may have put back

    def _forget_user(self, user_id: str) -> None:
        self.cache.drop(user_id)
        self.cache.drop_prefix(_text_slot(user_id, b""))
        with self._lock:
            for text_id in [t for t, (owner, *_) in self._pending.items() if owner == user_id]:
                self._pending.pop(text_id, None)

    def _stored(self, user_id: str) -> StoredKey | None:
        try:
            return self.keys.get(user_id)
        except KeyRowUnreadable as exc:
            logger.error("key row unusable", extra={"outcome": "key_unusable", "reason": "attributes"})
            raise KeyUnusable() from exc

    def _unwrapped(self, stored: StoredKey) -> bytes:
        cached = self.cache.get(stored.user_id, stored.key_id)
        if cached is not None:
            return cached
        from botocore.exceptions import ClientError

        try:
            key = self.kms.unwrap(stored.user_id, stored.wrapped)
        except ClientError as exc:  # KMS said no (not "busy": that is already Unavailable): a garbage or foreign row
            code = str(exc.response.get("Error", {}).get("Code", "unknown"))
            logger.error("key row unusable", extra={"outcome": "key_unusable", "reason": code})
            raise KeyUnusable() from exc
        if len(key) != DATA_KEY_BYTES:
            logger.error("key row unusable", extra={"outcome": "key_unusable", "reason": "key_length"})
            raise KeyUnusable()
        self.cache.put(stored.user_id, stored.key_id, key)
        return key

    def _create(self, user_id: str) -> tuple[bytes, bytes] | None:
        """A new key stored with its journal row; None if another request stored one first (use theirs)."""
        now = instant(self.clock)
        new = self.kms.generate(user_id)
        stored = StoredKey(user_id=user_id, key_id=os.urandom(KEY_ID_BYTES), wrapped=new.wrapped, created_at=now.iso)
        try:
            transact(self._client, [self.keys.put_new(stored), self.journal.record(user_id, KEY_CREATED, now.iso, {})])
        except TransactionCancelled as exc:
            if exc.failed(0):
                return None
            raise
        self.cache.put(user_id, stored.key_id, new.plaintext)
        return stored.key_id, new.plaintext


def _text_slot(user_id: str, text_id: bytes) -> str:
    return f"{user_id}/{text_id.hex()}"


def _row(action: dict[str, Any]) -> tuple[str, str] | None:
    """Which item an action touches (table and key), to leave key rows to actions that already name them."""
    for body in action.values():
        if isinstance(body, dict) and "Key" in body:
            return str(body.get("TableName")), repr(sorted(body["Key"].items()))
        if isinstance(body, dict) and "Item" in body:
            item = body["Item"]
            return str(body.get("TableName")), repr(sorted((k, item[k]) for k in ("user_id", "sk") if k in item))
    return None
