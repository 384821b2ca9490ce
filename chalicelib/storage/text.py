"""The one place memory text is written to or read from an item, so per-user encryption can land here alone."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TEXT_ATTRIBUTE = "text"


def seal_text(user_id: str, text: str) -> dict[str, Any]:
    """The attributes that store `text` for `user_id` (plain today; a later change encrypts per user)."""
    del user_id  # the key a later change will derive the per-user encryption context from
    return {TEXT_ATTRIBUTE: text}


def open_text(user_id: str, item: Mapping[str, Any]) -> str:
    """The text stored in `item` for `user_id`."""
    del user_id
    return str(item.get(TEXT_ATTRIBUTE, ""))
