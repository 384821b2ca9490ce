"""Each user's data key: created by KMS on their first stored text, unwrapped on use, destroyed by forget-all.

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
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from chalicelib.clock import instant
from chalicelib.crypto.cache import KeyCache
from chalicelib.crypto.kms import Kms
from chalicelib.crypto.sealing import KEY_ID_BYTES, key_id_of
from chalicelib.errors import Unavailable
from chalicelib.logs import get_logger
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.journal import JournalRepository
from chalicelib.storage.keys import KeyRowUnreadable, KeysRepository, StoredKey
from chalicelib.storage.text import TEXT_ATTRIBUTE

KEY_CREATED, KEY_DESTROYED = "keep.memory.key_created", "keep.memory.key_destroyed"
DATA_KEY_BYTES = 32  # AES-256

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

    def guard(self, actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`actions` followed by one check per key that sealed text in their Puts: that key is still current.

        Sealing reads the key row first, but a forget-all may destroy the key between that read and the
        write; this makes such a write fail (the caller seals again under the new key) instead of
        storing text no key opens. The checks come last, so the actions keep their indices.
        """
        checks: dict[tuple[str, bytes], dict[str, Any]] = {}
        for action in actions:
            put, update = action.get("Put", {}), action.get("Update", {})
            # A Put's item, or an Update that sets `sealed_text = :sealed_text` (an edit sealing again).
            user = put.get("Item", {}).get("user_id") or update.get("Key", {}).get("user_id")
            sealed = put.get("Item", {}).get(TEXT_ATTRIBUTE) or update.get("ExpressionAttributeValues", {}).get(f":{TEXT_ATTRIBUTE}")
            if user and sealed:
                user_id, key_id = user["S"], key_id_of(bytes(sealed["B"]))
                checks[(user_id, key_id)] = self.keys.is_current(user_id, key_id)
        return [*actions, *checks.values()]

    def destroy(self, user_id: str, *, with_actions: Sequence[dict[str, Any]] = ()) -> bool:
        """Delete the user's wrapped key and journal it, with `with_actions` in the same transaction; False
        when they had none (then nothing happened). The next write makes a new key."""
        now = instant(self.clock)
        self.cache.drop(user_id)
        try:
            transact(
                self._client,
                [self.keys.delete_existing(user_id), self.journal.record(user_id, KEY_DESTROYED, now.iso, {}), *with_actions],
            )
        except TransactionCancelled as exc:
            if exc.failed(0):
                return False
            raise
        finally:
            self.cache.drop(user_id)  # also what a sealing racing this call may have put back
        return True

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
