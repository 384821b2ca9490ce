"""What the host and worker clients share: construction from keys or files, and session paths."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar
from urllib.parse import quote

from botocore.credentials import Credentials

from .credentials import Role, load_credentials_file
from .transport import DEFAULT_REGION, RetryPolicy, SignedTransport

__all__ = ["SignedClient", "session_path"]

_Client = TypeVar("_Client", bound="SignedClient")
_MAX_SESSION_ID_CHARS = 256


def session_path(session_id: str, suffix: str = "") -> str:
    """`/v1/sessions/{session_id}{suffix}` with the id percent-encoded as one path segment."""
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("session_id must be a non-empty string")
    if len(session_id) > _MAX_SESSION_ID_CHARS:
        raise ValueError(f"session_id must be at most {_MAX_SESSION_ID_CHARS} characters")
    if session_id in (".", ".."):  # would be read as a path step, not as a name
        raise ValueError("session_id must not be '.' or '..'")
    return f"/v1/sessions/{quote(session_id, safe='')}{suffix}"


class SignedClient:
    """A client signed as one IAM principal. Subclasses say which role's file entry they use."""

    ROLE: ClassVar[Role]

    def __init__(
        self,
        base_url: str,
        access_key_id: str,
        secret_access_key: str,
        session_token: str | None = None,
        region: str = DEFAULT_REGION,
        *,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        credentials = Credentials(access_key_id, secret_access_key, session_token)
        self._transport = SignedTransport(
            base_url, credentials, region, timeout=timeout, retry=retry, sleep=sleep
        )

    @classmethod
    def from_credentials_file(
        cls: type[_Client], base_url: str, path: str | Path, **kwargs: Any
    ) -> _Client:
        """Build a client from the local stack's `.local/credentials.json` (this class's role)."""
        keys = load_credentials_file(path, cls.ROLE)
        return cls(
            base_url, keys.access_key_id, keys.secret_access_key, keys.session_token, **kwargs
        )

    @classmethod
    def from_botocore(
        cls: type[_Client],
        base_url: str,
        credentials: Credentials,
        region: str = DEFAULT_REGION,
        **kwargs: Any,
    ) -> _Client:
        """Build a client from botocore credentials (e.g. an assumed role's, which refresh)."""
        client = cls.__new__(cls)
        client._transport = SignedTransport(base_url, credentials, region, **kwargs)
        return client

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._transport.base_url!r})"
