"""What every repository raises for a stored item it cannot believe: kept apart so any storage module (the journal too) can use it without the sealing code."""

from __future__ import annotations

from chalicelib.logs import get_logger

logger = get_logger("personal_memory.storage")


class UnreadableText(Exception):
    """A stored item that does not open here: moved, altered, half-written, or its key destroyed."""


def unreadable(table: str, why: str) -> UnreadableText:
    """Log (the table and a reason code, never content) and return the error that makes an item absent."""
    logger.warning("stored item unreadable", extra={"outcome": "unreadable", "reason": f"{table}:{why}"})
    return UnreadableText(table)
