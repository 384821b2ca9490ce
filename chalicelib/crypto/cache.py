"""The container's cache of unwrapped data keys: at most 1,000 users, each for at most 5 minutes.

Why these bounds: a warm Lambda container serves one request at a time, so 1,000 recent users covers
any realistic working set in ~100 KB; the age bound is the crypto-shredding promise for *other*
containers (a forget-all elsewhere stops this copy of the key from being usable within 5 minutes),
and it makes every user's key come back through KMS (and CloudTrail) at least that often.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

MAX_USERS = 1_000
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

    def put(self, user_id: str, key_id: bytes, key: bytes) -> None:
        with self._lock:
            self._keys[user_id] = (key_id, key, self._now())
            self._keys.move_to_end(user_id)
            while len(self._keys) > self.max_users:
                self._keys.popitem(last=False)

    def drop(self, user_id: str) -> None:
        with self._lock:
            self._keys.pop(user_id, None)

    def __len__(self) -> int:
        return len(self._keys)
