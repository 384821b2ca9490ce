"""ETags for GET /v1/memory and /v1/inbox, so a page that polls pays one GetItem while nothing changed.

A tag names the user's view version (moved by every write that changes what those routes show, in the
same transaction as the write) and the instant the next shown entry expires: an expiry changes the
view with no write at all, so a tag stops matching once that instant has passed. A tag is read
before the data it labels, so it is never newer than the data sent with it (at worst one extra 200).

GET /v1/memory also advises how soon to ask again (`poll`), from what it has read anyway: the switch
and when it last changed (the state item) and the newest waiting proposal (the proposals Query).
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import instant
from chalicelib.models import MemoryState
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


# Polling advice. An agent that just proposed is usually still in its conversation (up to 5 proposals
# a session), and someone who just turned memory on is usually about to try an agent: for FAST_WINDOW
# seconds after either, ask every FAST seconds; otherwise every SLOW. Memory off: no agent can change
# anything, so always SLOW (the person's own changes in this tab are loaded when made).
FAST, SLOW, FAST_WINDOW = 5, 60, 300


def _epoch_or_none(value: object) -> int | None:
    """An ISO 8601 instant (seconds or finer, `Z` or an offset) in epoch seconds; None for anything else."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None  # a stored instant in another shape is never a reason to poll fast (or to fail)
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())


def poll_advice(state: MemoryState, proposals: list[dict[str, Any]], now_epoch: int) -> dict[str, int]:
    """{every_seconds, for_seconds, then_every_seconds}: ask every `every` s for `for` s more, then every `then` s.

    Relative to the moment it is sent, so a client's clock never matters; a 304 keeps the advice that
    came with the view it confirms. Costs no DynamoDB call: it reads only what GET already read.
    """
    moments = [_epoch_or_none(p.get("created_at")) for p in proposals] + [_epoch_or_none(state.switched_at)]
    newest = max((m for m in moments if m is not None), default=None)
    # A moment "from the future" (a restored or altered item) counts as now: never more than one window.
    left = FAST_WINDOW - max(0, now_epoch - newest) if newest is not None else 0
    if not state.enabled or left <= 0:
        return {"every_seconds": SLOW, "for_seconds": 0, "then_every_seconds": SLOW}
    return {"every_seconds": FAST, "for_seconds": min(left, FAST_WINDOW), "then_every_seconds": SLOW}


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
        body, state = memory.view_and_version(stores, user_id)
        body["poll"] = poll_advice(state, body["proposals"], instant(stores.clock).epoch)
        return body, tag(MEMORY, user_id, state.version, next_expiry(body["items"]))
    if version is None:
        version = stores.entries.get_state(user_id).version  # read before the proposals it labels
    body = memory.inbox(stores, user_id)
    return body, tag(INBOX, user_id, version, None)
