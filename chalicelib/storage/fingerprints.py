"""Fingerprint items: one per active entry (entries table) and per waiting proposal (proposals table), so a
duplicate is refused by the write's own transaction, never by a read before it.

Each sits in its user's partition under `f#<fingerprint>` (chalicelib/crypto/fingerprint.py: a keyed MAC,
never a plain hash) and names its owner's id. Writes that add a text claim its fingerprint in the same
transaction (`claim`); writes that remove or change a text release it (`release`). An entry's fingerprint
carries the entry's expiry: TTL deletes both with a lag, and until then a claim may take over an expired
one, so an expired text can be added again at once. A refused claim returns the item it met
(ReturnValuesOnConditionCheckFailure=ALL_OLD), which names the existing id at no extra call. A fingerprint
whose holder is gone, or whose holder's text key is gone (an item restored from a backup after its forget),
is stale: the refused write is tried again with its claim `taken_over` from that holder, in the same
transaction (a fingerprint naming nobody, damaged in storage, is deleted on its own first).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.storage import dynamo

FINGERPRINT_PREFIX = "f#"
OWNER = "held_by"
EXPIRY = "expires_at"  # the entries table's TTL attribute: an entry's fingerprint expires with it


@dataclass(frozen=True)
class Fingerprint:
    """A stored fingerprint item, as read: whose text it stands for, and until when."""

    fingerprint: str
    owner: str
    expires_at: int | None

    def is_expired(self, now_epoch: int) -> bool:
        return self.expires_at is not None and self.expires_at <= now_epoch


def fingerprint_from_item(item: Mapping[str, Any] | None) -> Fingerprint | None:
    """A fingerprint item (as loaded), or None for anything else or a damaged one (never believed)."""
    if not item:
        return None
    sort_key, owner, expiry = item.get("sk"), item.get(OWNER), item.get(EXPIRY)
    if not isinstance(sort_key, str) or not sort_key.startswith(FINGERPRINT_PREFIX):
        return None
    if not isinstance(owner, str):
        owner = ""  # damaged: it names nobody, so it is stale wherever it is met (and forget-all still finds it)
    if expiry is not None and (isinstance(expiry, bool) or not isinstance(expiry, int)):
        expiry = None
    return Fingerprint(sort_key[len(FINGERPRINT_PREFIX) :], owner, expiry)


def stale_owner(met: Mapping[str, Any] | None) -> str | None:
    """The holder named by a refused claim's fingerprint item (after `holder` found it stale), for `taken_over`."""
    found = fingerprint_from_item(met)
    return found.owner if found is not None and found.owner else None


def is_fingerprint_key(sort_key: Any) -> bool:
    return isinstance(sort_key, str) and sort_key.startswith(FINGERPRINT_PREFIX)


class FingerprintItems:
    """Transaction actions on one table's fingerprint items."""

    def __init__(self, table: str) -> None:
        self.table = table

    def key(self, user_id: str, fingerprint: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": user_id, "sk": FINGERPRINT_PREFIX + fingerprint})

    def claim(
        self,
        user_id: str,
        fingerprint: str,
        owner: str,
        *,
        now_epoch: int,
        expires_at: int | None = None,
        taking_from: str | None = None,
    ) -> dict[str, Any]:
        """Put the fingerprint for `owner`: refused while another live owner holds it (its item comes back).

        `taking_from`: the entry this write forgets in the same transaction (a replace with the same words).
        """
        item = {"user_id": user_id, "sk": FINGERPRINT_PREFIX + fingerprint, OWNER: owner, EXPIRY: expires_at}
        if taking_from is not None:
            owner_test, values = (
                f"{OWNER} IN (:owner, :old)",
                dynamo.values(owner=owner, old=taking_from, now=now_epoch),
            )
        else:
            owner_test, values = f"{OWNER} = :owner", dynamo.values(owner=owner, now=now_epoch)
        return {
            "Put": {
                "TableName": self.table,
                "Item": dynamo.dump(item),
                # Free, already this owner's (an edit keeping the text, a new expiry), or held by an
                # expired entry that TTL has not deleted yet (TTL lags by days; the text is gone to the user).
                "ConditionExpression": f"attribute_not_exists(sk) OR {owner_test} OR {EXPIRY} <= :now",
                "ExpressionAttributeValues": values,
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        }

    def check_free(self, user_id: str, fingerprint: str, *, now_epoch: int) -> dict[str, Any]:
        """A check that no live item holds the fingerprint (a proposal must not repeat an active entry)."""
        return {
            "ConditionCheck": {
                "TableName": self.table,
                "Key": self.key(user_id, fingerprint),
                "ConditionExpression": f"attribute_not_exists(sk) OR {EXPIRY} <= :now",
                "ExpressionAttributeValues": dynamo.values(now=now_epoch),
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        }

    def release(self, user_id: str, fingerprint: str, owner: str) -> dict[str, Any]:
        """Delete the fingerprint if `owner` holds it (or it is missing): never another owner's."""
        return {
            "Delete": {
                "TableName": self.table,
                "Key": self.key(user_id, fingerprint),
                "ConditionExpression": f"attribute_not_exists(sk) OR {OWNER} = :owner",
                "ExpressionAttributeValues": dynamo.values(owner=owner),
            }
        }

    def taken_over(self, action: Mapping[str, Any], stale_owner: str) -> dict[str, Any]:
        """`action` (a `claim`'s Put or a `check_free`) that also holds while the fingerprint still names `stale_owner`:
        a holder whose text no longer opens (forgotten, then put back from a backup, issue 37 #11). The write takes
        the fingerprint over in its own transaction; a live holder that claimed it meanwhile still refuses it."""
        kind = "Put" if "Put" in action else "ConditionCheck"
        body = dict(action[kind])
        body["ConditionExpression"] = f"({body['ConditionExpression']}) OR {OWNER} = :stale"
        body["ExpressionAttributeValues"] = {
            **body.get("ExpressionAttributeValues", {}),
            **dynamo.values(stale=stale_owner),
        }
        return {kind: body}

    def drop_stale(self, user_id: str, stale: Fingerprint) -> dict[str, Any]:
        """Delete a fingerprint whose owner is gone, only while it still names that owner."""
        delete: dict[str, Any] = {"TableName": self.table, "Key": self.key(user_id, stale.fingerprint)}
        if stale.owner:
            delete["ConditionExpression"] = f"{OWNER} = :owner"
            delete["ExpressionAttributeValues"] = dynamo.values(owner=stale.owner)
        else:
            delete["ConditionExpression"] = f"attribute_exists(sk) AND NOT attribute_type({OWNER}, :s)"  # still damaged
            delete["ExpressionAttributeValues"] = dynamo.values(s="S")
        return {"Delete": delete}

    def met(
        self, client: Any, exc: dynamo.TransactionCancelled, index: int, action: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """The fingerprint item that refused the claim or check `action` (at `index`): the cancellation's own
        copy (ALL_OLD: no call), or, should a client not pass it on, one consistent GetItem of it."""
        found = exc.item(index)
        if found is not None:
            return found
        request = action.get("Put") or action.get("ConditionCheck") or {}
        key = request.get("Key") or {
            name: request["Item"][name] for name in ("user_id", "sk") if name in request.get("Item", {})
        }
        raw = client.get_item(TableName=self.table, Key=key, ConsistentRead=True).get("Item") if key else None
        return dynamo.load(raw) if raw else None

    def drop_if_stale(self, client: Any, user_id: str, stale: Fingerprint) -> None:
        """Run `drop_stale` on its own (a refusal path); a fingerprint that changed meanwhile is left as it is."""
        try:
            dynamo.transact(client, [self.drop_stale(user_id, stale)])
        except dynamo.TransactionCancelled:
            pass  # the next attempt meets whatever is there now

    def delete_any(self, user_id: str, fingerprint: str) -> dict[str, Any]:
        """Delete whatever is there (forget-all: the key that gave it meaning is already destroyed)."""
        return {"Delete": {"TableName": self.table, "Key": self.key(user_id, fingerprint)}}
