"""The container's cache of unwrapped keys (users' data keys and texts' own keys): at most 10,000, each for at most 5 minutes.

Why these bounds: a warm Lambda container serves one request at a time; a user holds at most 250
texts (200 entries, 50 proposals) besides their data key, so 10,000 keys cover dozens of recent
users' whole memory in ~1 MB; the age bound is the crypto-shredding promise for *other*
containers (a forget-all elsewhere stops this copy of the key from being usable within 5 minutes),
and it makes every user's key come back through KMS (and CloudTrail) at least that often.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

MAX_USERS = 10_000  # keys, in fact: one per user's data key, one per text ("<user>/<text id>")
MAX_AGE_SECONDS = 300.0


class KeyCache:
    def __init__(
        self, max_users: int = MAX_USERS, max_age: float = MAX_AGE_SECONDS, now: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_users = max_users
        self.max_age = max_age
        self._now = now
        self._lock = threading.Lock()
        self._keys: OrderedDict[str, tuple[bytes, bytes, float]] = OrderedDict()

    def get(self, user_id: str, key_id: bytes) -> bytes | None:
        """The cached key of `user_id` if it is the one named `key_id` and young enough."""
        with self._lock:
            hit = self._keys.get(user_id)
            if hit is None:
                return None
            cached_id, key, stored_at = hit
            if self._now() - stored_at > self.max_age:
                del self._keys[user_id]
                return None
            if cached_id != key_id:
                return None
            self._keys.move_to_end(user_id)
            return key

    def id_of(self, slot: str) -> bytes | None:
        """The id of the key cached under `slot` if it is young enough (no key handed out)."""
        with self._lock:
            hit = self._keys.get(slot)
            return hit[0] if hit is not None and self._now() - hit[2] <= self.max_age else None

    def put(self, user_id: str, key_id: bytes, key: bytes) -> None:
        with self._lock:
            self._keys[user_id] = (key_id, key, self._now())
            self._keys.move_to_end(user_id)
            while len(self._keys) > self.max_users:
                self._keys.popitem(last=False)

    def drop(self, user_id: str) -> None:
        with self._lock:
            self._keys.pop(user_id, None)

    def drop_prefix(self, prefix: str) -> None:
        """Drop every key whose slot starts with `prefix` (a user's texts' keys, "<user>/")."""
        with self._lock:
            for slot in [s for s in self._keys if s.startswith(prefix)]:
                del self._keys[slot]

    def __len__(self) -> int:
        return len(self._keys)
