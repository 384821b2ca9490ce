"""The one KMS client of the process, and the two calls the service makes: wrap a new data key, unwrap one.

Every call names the user in its encryption context, so CloudTrail shows whose key was unwrapped and
the key policy can refuse any call without it. The client is built on first use, never at import.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

_lock = threading.Lock()
_client: Any = None


def get_client() -> Any:
    global _client
    if _client is None:
        with _lock:
            if _client is None:
                import boto3

                from chalicelib.storage.retries import client_config

                # The DynamoDB client's bounds: the deadline check counts a connect as CONNECT_TIMEOUT at most.
                _client = boto3.client("kms", config=client_config())
    return _client


def reset_client(client: Any = None) -> None:
    """Replace (or forget) the shared client: tests and the local launcher point it at moto."""
    global _client
    with _lock:
        _client = client


def encryption_context(user_id: str) -> dict[str, str]:
    return {"user_id": user_id}


@dataclass(frozen=True)
class NewDataKey:
    plaintext: bytes
    wrapped: bytes


class Kms:
    """GenerateDataKey / Decrypt under the configured customer-managed key, with the user's context."""

    def __init__(self, key_id: str, client: Any = None) -> None:
        self.key_id = key_id
        self._client = client
        self.calls = 0  # KMS requests made through this object (the bench and the tests count them)

    @property
    def client(self) -> Any:
        """The KMS client, guarded as the DynamoDB client is: throttling that outlasts retries is `Unavailable` (503)."""
        from chalicelib.storage.retries import guarded

        return guarded(self._client if self._client is not None else get_client())

    def generate(self, user_id: str) -> NewDataKey:
        self.calls += 1
        answer = self.client.generate_data_key(
            KeyId=self.key_id, KeySpec="AES_256", EncryptionContext=encryption_context(user_id)
        )
        return NewDataKey(plaintext=bytes(answer["Plaintext"]), wrapped=bytes(answer["CiphertextBlob"]))

    def unwrap(self, user_id: str, wrapped: bytes) -> bytes:
        self.calls += 1
        answer = self.client.decrypt(
            KeyId=self.key_id, CiphertextBlob=wrapped, EncryptionContext=encryption_context(user_id)
        )
        return bytes(answer["Plaintext"])
