"""The waiting slots duplicates hold (issue 37 #8), written sealed and believed only where their seal opens.

A slot has no text, yet its fields are shown to the person (who repeated a note she keeps, in which conversation,
when) and dismissing it frees a counted waiting place. So its fields are bound as a proposal's provenance is: an
empty text sealed under the slot's own text key (storage/text.py), its associated data naming the table, the user,
the slot's whole primary key, its agent, session and time, and that it is a slot (no proposal's seal opens as one).
A slot copied to another id, renamed, or put back after its forget (its key gone) does not open: it is shown
nowhere, and rejecting it is a 404 that moves no counter. Its expiry is not bound (as an entry's is not): the
waiting cap's recount reads it unopened, and true_waiting (services/orphans.py) corrects what that deletes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from chalicelib.crypto.sealing import Provenance
from chalicelib.models import is_id
from chalicelib.storage.entry_items import EXPIRY_ATTRIBUTE, PROPOSAL_PREFIX, SLOT_ATTRIBUTE, item_key, ref_from_item
from chalicelib.storage.text import TextSeal, UnreadableText, sealing_key_id

__all__ = ["slot_item", "verified"]

_INSTANT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{6})?Z")  # openapi.yaml Timestamp
_NAME_CHARACTERS = 128  # an agent's name and a session id, as the API takes them


def _provenance(agent: str, session_id: str, created_at: str) -> Provenance:
    return {"origin": "agent", "agent": agent, "src_session": session_id, "created_at": created_at, "slot": True}


def slot_item(
    seal: TextSeal, user_id: str, slot_id: str, *, agent: str, session_id: str, now_iso: str, until: int
) -> dict[str, Any]:
    """The item of a new slot, sealed under a new text key (Keyring.guard writes its row with the item)."""
    sort_key = PROPOSAL_PREFIX + slot_id
    sealed = seal.seal_text(user_id, item_key(user_id, sort_key), _provenance(agent, session_id, now_iso), "")
    return {
        "user_id": user_id,
        "sk": sort_key,
        "id": slot_id,
        SLOT_ATTRIBUTE: True,
        "origin": "agent",
        "agent": agent,
        "src_session": session_id,
        "created_at": now_iso,
        EXPIRY_ATTRIBUTE: until,
        **sealed,
    }


def verified(
    item: Mapping[str, Any], seal: TextSeal, user_id: str, keys: Mapping[bytes, bytes] | None = None
) -> dict[str, str] | None:
    """The slot as the person sees it, {id, agent, session_id, created_at}, if its seal opens here as this user's slot
    with these fields; None for anything else (copied, renamed, altered, half-written, or its key gone).
    `keys`: the text keys of a list, read at once; else one lookup."""
    ref = ref_from_item(item, PROPOSAL_PREFIX)
    agent, session_id, created_at = item.get("agent"), item.get("src_session"), item.get("created_at")
    if (
        ref is None
        or not ref.slot
        or not is_id(ref.id)
        or not isinstance(agent, str)
        or not isinstance(session_id, str)
        or not 0 < len(agent) <= _NAME_CHARACTERS
        or not 0 < len(session_id) <= _NAME_CHARACTERS
        or not isinstance(created_at, str)
        or not _INSTANT.fullmatch(created_at)
        or sealing_key_id(item) is None
    ):
        return None
    key = item_key(user_id, PROPOSAL_PREFIX + ref.id)
    try:
        opened = seal.open_text(user_id, key, _provenance(agent, session_id, created_at), item, keys)
    except UnreadableText:
        return None
    if opened != "":
        return None
    return {"id": ref.id, "agent": agent, "session_id": session_id, "created_at": created_at}
