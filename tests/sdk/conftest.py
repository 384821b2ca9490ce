"""SDK test fixtures: the SDK on sys.path, a recording HTTP server, a SigV4 checker."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for path in (HERE.parents[1] / "sdk", HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from sdk_http_support import RecordingServer, sigv4_verifies  # noqa: E402


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as running:
        yield running


@pytest.fixture
def verify_sigv4() -> Callable[..., bool]:
    return sigv4_verifies


@pytest.fixture
def no_sleep() -> list[float]:
    """Collects the backoff delays instead of sleeping them."""
    return []
