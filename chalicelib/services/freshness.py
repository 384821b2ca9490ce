"""ETags for GET /v1/memory and /v1/inbox, so a page that polls pays one GetItem while nothing changed.

A tag names the user's view version (moved by every write that changes what those routes show, in the
same transaction as the write) and the instant the next shown entry expires: an expiry changes the
view with no write at all, so a tag stops matching once that instant has passed. A tag is read
before the data it labels, so it is never newer than the data sent with it (at worst one extra 200).
"""
from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.services import memory

MEMORY, INBOX = "m", "i"
_TAG = re.compile(r'(?:W/)?"([mi])(\d{1,18})\.(\d{1,12})\.([0-9a-f]{8})"')


def _user_mark(user_id: str) -> str:
    """Binds a tag to its user, so a tag kept across a change of account never matches the other's view."""
    return hashlib.sha256(user_id.encode()).hexdigest()[:8]


def tag(view: str, user_id: str, version: int, next_expiry: int | None) -> str:
    return f'"{view}{version}.{next_expiry or 0}.{_user_mark(user_id)}"'


def current_tag_in(if_none_match: str, view: str, user_id: str, version: int, now_epoch: int) -> str | None:
    """The tag of an If-None-Match header that still describes this view now, rebuilt from its parts, or None.

    Rebuilt rather than echoed: a 304 carries the current tag, never the rest of what the client sent
    (other tags, a weak prefix, a script). `*` never matches here.
    """
    for candidate in if_none_match.split(","):
        found = _TAG.fullmatch(candidate.strip())
        if not found:
            continue
        kind, seen_version, expiry, mark = found.groups()
        if (kind, int(seen_version), mark) == (view, version, _user_mark(user_id)) and (
            int(expiry) == 0 or now_epoch < int(expiry)
        ):
            return tag(view, user_id, version, int(expiry) or None)
    return None


def _epoch(iso_second: str) -> int:
    return int(datetime.strptime(iso_second, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp())


def next_expiry(items: list[dict[str, Any]]) -> int | None:
    """The earliest expiry among the entries shown (None when none of them expires)."""
    instants = [_epoch(item["expires_at"]) for item in items if item.get("expires_at")]
    return min(instants) if instants else None


def view(stores: Stores, user_id: str, view_name: str, if_none_match: str | None) -> tuple[dict[str, Any] | None, str]:
    """(body, ETag) — body None means 304, for one GetItem of the state item.

    Without If-None-Match, GET /v1/memory costs what it did (two Queries: the version comes with the
    entries); a tag that no longer matches costs that GetItem on top.
    """
    version: int | None = None
    if if_none_match:
        version = stores.entries.get_state(user_id).version
        current = current_tag_in(if_none_match, view_name, user_id, version, instant(stores.clock).epoch)
        if current is not None:
            return None, current
    if view_name == MEMORY:
        body, version = memory.view_and_version(stores, user_id)
        return body, tag(MEMORY, user_id, version, next_expiry(body["items"]))
    if version is None:
        version = stores.entries.get_state(user_id).version  # read before the proposals it labels
    body = memory.inbox(stores, user_id)
    return body, tag(INBOX, user_id, version, None)
