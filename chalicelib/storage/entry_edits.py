"""PATCH of one entry: read it, then write on the condition that nothing changed since, fingerprint included.

The transaction is the last call, so a 503 after AWS kept refusing always means the edit did not happen
(a read after it could fail on its own). A new text or kind seals the text again (the kind is bound to
it), under the key that opened it, with a check in the same transaction that this key is still the
user's. A new text also moves the entry's fingerprint (storage/fingerprints.py) in the same
transaction: the new one is claimed (refused, the edit is a `duplicate` naming the entry that holds it)
and the old one released; a new expiry is copied onto the fingerprint, so it expires with its entry.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from chalicelib.errors import Duplicate, Unavailable
from chalicelib.models import Entry
from chalicelib.storage import dynamo
from chalicelib.storage.entries import LIVE, EntriesRepository
from chalicelib.storage.entry_items import (
    ENTRY_PREFIX,
    EXPIRY_ATTRIBUTE,
    FINGERPRINT_ATTRIBUTE,
    from_item,
    sealed_and_fingerprints,
)
from chalicelib.storage.fingerprints import stale_owner
from chalicelib.storage.text import TEXT_ATTRIBUTE, UnreadableText, sealing_key_id

_EDIT_ROUNDS = 4  # read, then write if unchanged: concurrent edits of one entry take turns


@dataclass(frozen=True)
class EntryChange:
    """What a PATCH changes (None: unchanged), at which instant."""

    now_epoch: int
    now_iso: str
    text: str | None = None
    kind: str | None = None
    pinned: bool | None = None
    expires_at: int | None = None
    remove_expiry: bool = False


def update_entry(repo: EntriesRepository, user_id: str, entry_id: str, change: EntryChange) -> Entry | None:
    """Change a live entry and bump the view version in one transaction; None when it is missing, expired or unreadable."""
    release_old, stale = True, None
    for _ in range(_EDIT_ROUNDS):
        stored = repo.raw_entry(user_id, entry_id)
        try:
            current = from_item(stored, repo.seal, ENTRY_PREFIX) if stored else None
        except UnreadableText:
            return None  # not openable here (moved, altered, or its key destroyed): a 404, and nothing changes
        if stored is None or current is None or current.is_expired(change.now_epoch):
            return None
        changed = replace(
            current,
            text=change.text if change.text is not None else current.text,
            kind=change.kind if change.kind is not None else current.kind,
            pinned=change.pinned if change.pinned is not None else current.pinned,
            expires_at=None
            if change.remove_expiry
            else (change.expires_at if change.expires_at is not None else current.expires_at),
            updated_at=change.now_iso,
            edited=current.edited or change.text is not None or change.kind is not None,
        )
        resealed: dict[str, Any] | None = None
        if change.text is not None or change.kind is not None:
            resealed, fingerprints = sealed_and_fingerprints(
                changed, str(stored["sk"]), repo.seal, (repo.seal.table,), under=sealing_key_id(stored)
            )
            if change.text is not None:  # only new words move the fingerprint (a new kind keeps them)
                changed = replace(changed, fingerprint=fingerprints[repo.seal.table])
        moves = _fingerprint_moves(repo, current, changed, change, release_old=release_old)
        if moves and stale is not None:
            moves[0] = repo.fingerprints.taken_over(moves[0], stale)  # from a holder found dead last round
        actions = [{"Update": _edit(repo, stored, changed, resealed, change)}, repo.bump_version(user_id), *moves]
        if changed.expires_at != current.expires_at and current.text_id:  # the text's key expires with it (its TTL)
            actions.append(repo.seal.keyring.keys.keep_text_key(user_id, current.text_id, changed.expires_at))
        guarded = repo.seal.keyring.guard(actions)
        try:
            dynamo.transact(repo._client, guarded)
            repo.seal.keyring.written(guarded)
        except dynamo.TransactionCancelled as exc:
            if moves and exc.failed(2):  # the claim: another live entry holds these words
                met = repo.fingerprints.met(repo._client, exc, 2, actions[2])
                holder = repo.holder(user_id, met, change.now_epoch)
                if holder is not None and holder != entry_id:
                    raise Duplicate(holder) from exc
                stale = stale_owner(met)
                continue  # a stale fingerprint: try again, taking it over
            if len(moves) == 2 and exc.failed(3):
                release_old = False  # the old fingerprint is another entry's (damaged storage): leave it
                continue
            if exc.failed(0) or any(exc.failed(i) for i in range(len(actions), len(guarded))):
                continue  # gone, expired, changed or its key destroyed meanwhile: read again
            raise
        return changed
    raise Unavailable("The entry kept changing while this edit was saved: try again.")


def _fingerprint_moves(
    repo: EntriesRepository, current: Entry, changed: Entry, change: EntryChange, *, release_old: bool
) -> list[dict[str, Any]]:
    """[claim the fingerprint as it will be, release the old one]: the claim when the text or the expiry
    changes (a claim by its own holder just sets the expiry), the release when the words changed."""
    new_expiry = change.expires_at is not None or change.remove_expiry
    if changed.fingerprint is None or (changed.fingerprint == current.fingerprint and not new_expiry):
        return []
    claim = repo.fingerprints.claim(
        changed.user_id, changed.fingerprint, changed.id, now_epoch=change.now_epoch, expires_at=changed.expires_at
    )
    if current.fingerprint is None or current.fingerprint == changed.fingerprint or not release_old:
        return [claim]
    return [claim, repo.fingerprints.release(current.user_id, current.fingerprint, current.id)]


def _edit(
    repo: EntriesRepository,
    stored: dict[str, Any],
    changed: Entry,
    resealed: dict[str, Any] | None,
    change: EntryChange,
) -> dict[str, Any]:
    """The Update that stores `changed` over the entry read with `updated_at` as stored; with `resealed`, its
    text sealed again (for its kind as changed, under the key that sealed it) and its new fingerprint."""
    sets = ["updated_at = :t", "pinned = :p", "#kind = :k"]
    vals: dict[str, Any] = {
        "t": changed.updated_at,
        "p": changed.pinned,
        "k": changed.kind,
        "now": change.now_epoch,
        "seen": stored["updated_at"],
    }
    if changed.edited:
        sets.append("edited = :ed")  # the user changed what was said: the page shows it
        vals["ed"] = True
    if resealed is not None:
        sets.append(f"{TEXT_ATTRIBUTE} = :{TEXT_ATTRIBUTE}")  # Keyring.guard checks the key it names
        vals[TEXT_ATTRIBUTE] = resealed[TEXT_ATTRIBUTE]
    if changed.fingerprint is not None and changed.fingerprint != stored.get(FINGERPRINT_ATTRIBUTE):
        sets.append(f"{FINGERPRINT_ATTRIBUTE} = :fp")
        vals["fp"] = changed.fingerprint
    if changed.expires_at is not None:
        sets.append(f"{EXPIRY_ATTRIBUTE} = :exp")
        vals["exp"] = changed.expires_at
    expression = "SET " + ", ".join(sets)
    if change.remove_expiry:
        expression += f" REMOVE {EXPIRY_ATTRIBUTE}"
    return {
        "TableName": repo.table,
        "Key": dynamo.dump({"user_id": changed.user_id, "sk": stored["sk"]}),
        "UpdateExpression": expression,
        # Still there, still live, and unchanged since it was read.
        "ConditionExpression": f"attribute_exists(sk) AND {LIVE} AND updated_at = :seen",
        "ExpressionAttributeNames": {"#kind": "kind"},
        "ExpressionAttributeValues": dynamo.values(**vals),
    }
