"""The service's key for connection tokens' MACs: made by KMS once, kept wrapped in the keys table, unwrapped once per process.

It is no user's data key, so forget-all never destroys it (a person's connections outlive forgetting
their notes, as the on/off switch does). KMS's encryption context names it `user_id = "#connections"`,
a value no token subject has (user ids never hold `#`), so CloudTrail tells its unwraps apart. The
plaintext key lives only in this process's memory.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from datetime import datetime

from chalicelib.clock import instant
from chalicelib.crypto.kms import Kms
from chalicelib.storage.connections import ConnectionsRepository

KMS_CONTEXT_USER = "#connections"


class ConnectionMacKey:
    def __init__(self, connections: ConnectionsRepository, kms: Kms, clock: Callable[[], datetime]) -> None:
        self._connections, self._kms, self._clock = connections, kms, clock
        self._lock = threading.Lock()
        self._key: bytes | None = None

    def get(self) -> bytes:
        """The key: from memory, else the keys table (one GetItem + KMS Decrypt), else made now (first use ever)."""
        if self._key is not None:
            return self._key
        with self._lock:
            for _ in range(2):
                if self._key is not None:
                    return self._key
                row = self._connections.mac_key_row()
                if row is not None:
                    self._key = self._kms.unwrap(KMS_CONTEXT_USER, row[1])
                    continue
                made = self._kms.generate(KMS_CONTEXT_USER)
                if self._connections.put_mac_key(os.urandom(16), made.wrapped, instant(self._clock).iso):
                    self._key = made.plaintext
        if self._key is None:
            raise RuntimeError("the connections MAC key could not be read or made")
        return self._key
