"""The local stack's one clock: real time plus an offset that `POST /dev/clock` moves forward (demos and tests)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

MAX_ADVANCE_SECONDS = 20 * 365 * 86_400  # beyond any expiry the contract allows (3650 days)
# However many advances: a century ahead is past every expiry and TTL, and far from datetime's year 9999.
MAX_OFFSET = timedelta(days=100 * 365)


class DevClock:
    """Callable like `utc_now`: the app, the stream pump and the TTL sweeper all read this one."""

    def __init__(self) -> None:
        self._offset = timedelta()
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self._offset

    def epoch(self) -> int:
        return int(self().timestamp())

    def advance(self, seconds: float) -> datetime:
        """Move time forward (never back: TTL deletions and expiries cannot be undone)."""
        if not 0 <= seconds <= MAX_ADVANCE_SECONDS:
            raise ValueError(f"advance_seconds must be between 0 and {MAX_ADVANCE_SECONDS}")
        with self._lock:
            moved = self._offset + timedelta(seconds=seconds)
            if moved > MAX_OFFSET:
                raise ValueError(f"the dev clock goes at most {MAX_OFFSET.days} days ahead in all")
            self._offset = moved
        return self()
