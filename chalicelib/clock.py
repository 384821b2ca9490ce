"""The service's notion of now, injectable so tests can move time (expiry) without sleeping."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from chalicelib.models import iso, utc_now


@dataclass(frozen=True)
class Instant:
    """One reading of the clock, in the two forms the tables use."""

    iso: str
    epoch: int


def instant(now: Callable[[], datetime] = utc_now) -> Instant:
    moment = now()
    return Instant(iso=iso(moment), epoch=int(moment.timestamp()))
