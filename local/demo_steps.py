"""What `make demo`'s stories share (the main one in local/demo.py, MCP's and the connection's beside it), so
each story imports these and none imports another."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

NEW_ENTRY_TEXT = "Starts afresh on Mondays"
PUMP_WAIT_SECONDS = 30.0  # the local pump answers in about a second; a loaded 2-core machine may take far longer

__all__ = ["NEW_ENTRY_TEXT", "PUMP_WAIT_SECONDS", "PersonStory", "Step", "StepFailed", "expect", "http"]


class StepFailed(Exception):
    """An expectation that did not hold; the message says what differed (never memory text)."""


@dataclass(frozen=True)
class Step:
    """One printed line of the story: a description and a check that raises StepFailed."""

    description: str
    check: Callable[[], None]


class PersonStory(Protocol):
    """What a later story uses of the main one: its stack, its first person, and her page's calls."""

    url: str
    credentials_file: Path
    alice: str

    def _user(self, user: str, method: str, path: str, body: Any = None) -> tuple[int, Any, str]: ...

    def _view(self, user: str) -> dict[str, Any]: ...

    def _set_enabled(self, user: str, enabled: bool) -> None: ...


def http(url: str, method: str, headers: dict[str, str], data: bytes | None = None) -> tuple[int, str]:
    """One request, no retries: (status, raw body text)."""
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        with error:
            return int(error.code), error.read().decode("utf-8", errors="replace")


def expect(status: int, want: int, what: str) -> None:
    if status != want:
        raise StepFailed(f"{what} answered {status}, expected {want}")
