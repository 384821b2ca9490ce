"""Connections in the keys table: a token's keyed hash finds its connection in one GetItem; the person's partition lists them.

Why the keys table: it has no stream and no point-in-time backups, so a revoked connection (its rows
deleted) can never come back from a restore, and its TTL (`expires_at`) removes expired connections.
Each connection is two rows, written and deleted together in one transaction:
- the lookup row `user_id = "conn#<mac>", sk = "#conn"`: who owns it, addressed by the token's MAC alone;
- the person's row `user_id = <user>, sk = "c#<id>"`: what the page lists, and what every call that reads
  or writes memory conditions on (so a revoke wins over a cached lookup; see services/connections.py).
Forget-all deletes only `#key` and `t#` rows: connections survive it, as the on/off switch does. An account's
erasure deletes the lookup rows first (`erase_lookup`), then the whole partition with the person's rows.
The service's MAC key is the row `user_id = "#service", sk = "#connections-mac"` (a `#` no user id has).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from chalicelib.storage import dynamo
from chalicelib.storage.unreadable import unreadable

LOOKUP_PREFIX, LOOKUP_SK, OWNED_PREFIX = "conn#", "#conn", "c#"
SERVICE_PARTITION, MAC_KEY_SK = "#service", "#connections-mac"
EXPIRY = "expires_at"  # the keys table's TTL attribute


@dataclass(frozen=True)
class Connection:
    id: str
    user_id: str
    agent: str
    trusted: bool
    created_at: str
    expires_at: int  # epoch seconds
    mac: str = ""
    last_used_at: str | None = None
    client_id: str | None = None  # made by OAuth consent: the client it was made for (shown on the Agents tab)
    client_name: str | None = None
    client_from: str | None = (
        None  # what the service checked of the client: "" this device, else a host (oauth/names.py)
    )

    def public(self) -> dict[str, Any]:
        from chalicelib.models import iso_from_epoch

        shown: dict[str, Any] = {
            "id": self.id,
            "agent": self.agent,
            "trusted": self.trusted,
            "created_at": self.created_at,
            "expires_at": iso_from_epoch(self.expires_at),
            "last_used_at": self.last_used_at,
        }
        if self.client_id:  # made by OAuth consent: the client it is for
            shown["client"] = {
                "id": self.client_id,
                "name": self.client_name or self.client_id,
                "from": self.client_from,
            }
        return shown


def _from_item(item: Mapping[str, Any], user_id: str | None) -> Connection | None:
    """A connection from a row; None (logged) when any attribute is missing or of another type than written."""
    texts = [item.get(name) for name in ("connection_id", "agent", "created_at", "mac")]
    owner = user_id if user_id is not None else item.get("owner")
    expires, trusted, used = item.get(EXPIRY), item.get("trusted"), item.get("last_used_at")
    client_id, client_name, client_from = item.get("client_id"), item.get("client_name"), item.get("client_from")
    if (
        not all(isinstance(value, str) and value for value in [*texts, owner])
        or isinstance(expires, bool)
        or not isinstance(expires, int | Decimal)
        or not isinstance(trusted, bool)
        or not (used is None or isinstance(used, str))
        or not all(value is None or isinstance(value, str) for value in (client_id, client_name, client_from))
    ):
        unreadable("keys", "connection")
        return None
    return Connection(
        id=str(item["connection_id"]),
        user_id=str(owner),
        agent=str(item["agent"]),
        trusted=trusted,
        created_at=str(item["created_at"]),
        expires_at=int(expires),
        mac=str(item["mac"]),
        last_used_at=used,
        client_id=client_id,
        client_name=client_name,
        client_from=client_from,
    )


class ConnectionsRepository:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self.table = table

    def _lookup_key(self, mac: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": LOOKUP_PREFIX + mac, "sk": LOOKUP_SK})

    def owned_key(self, user_id: str, connection_id: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": user_id, "sk": OWNED_PREFIX + connection_id})

    def find(self, mac: str) -> Connection | None:
        """The connection a token's MAC names: one consistent GetItem, no user id needed."""
        raw = self._client.get_item(TableName=self.table, Key=self._lookup_key(mac), ConsistentRead=True).get("Item")
        if not raw:
            return None
        found = _from_item(dynamo.load(raw), None)
        return found if found is not None and found.mac == mac else None  # a row copied under another MAC: nothing

    def owned(self, user_id: str) -> list[Connection]:
        rows = dynamo.query_partition(self._client, self.table, "user_id", user_id, consistent=True)
        found = (_from_item(row, user_id) for row in rows if str(row.get("sk", "")).startswith(OWNED_PREFIX))
        return [c for c in found if c is not None]

    def get_owned(self, user_id: str, connection_id: str) -> Connection | None:
        raw = self._client.get_item(
            TableName=self.table, Key=self.owned_key(user_id, connection_id), ConsistentRead=True
        ).get("Item")
        return _from_item(dynamo.load(raw), user_id) if raw else None

    def create(self, connection: Connection) -> list[dict[str, Any]]:
        """Transaction actions: both rows, each refused if its key is taken (a MAC or id never repeats)."""
        common = {
            "connection_id": connection.id,
            "agent": connection.agent,
            "trusted": connection.trusted,
            "created_at": connection.created_at,
            EXPIRY: connection.expires_at,
            "mac": connection.mac,
        }
        if connection.client_id:
            common.update(client_id=connection.client_id, client_name=connection.client_name or connection.client_id)
            if connection.client_from is not None:
                common["client_from"] = connection.client_from
        lookup = {"user_id": LOOKUP_PREFIX + connection.mac, "sk": LOOKUP_SK, "owner": connection.user_id, **common}
        owned = {"user_id": connection.user_id, "sk": OWNED_PREFIX + connection.id, **common}
        return [
            {
                "Put": {
                    "TableName": self.table,
                    "Item": dynamo.dump(item),
                    "ConditionExpression": "attribute_not_exists(sk)",
                }
            }
            for item in (lookup, owned)
        ]

    def revoke(self, connection: Connection, *, lookup: bool = True) -> list[dict[str, Any]]:
        """Transaction actions: delete both rows; the person's row must still be there (a second revoke is a 404),
        and the lookup row, if there, must name this person (a row copied from another's partition deletes theirs
        only when `lookup` is False: just the copy goes)."""
        owned = {
            "Delete": {
                "TableName": self.table,
                "Key": self.owned_key(connection.user_id, connection.id),
                "ConditionExpression": "attribute_exists(sk)",
            }
        }
        if not lookup:
            return [owned]
        return [
            owned,
            {
                "Delete": {
                    "TableName": self.table,
                    "Key": self._lookup_key(connection.mac),
                    "ConditionExpression": "attribute_not_exists(sk) OR #o = :u",
                    "ExpressionAttributeNames": {"#o": "owner"},
                    "ExpressionAttributeValues": dynamo.values(u=connection.user_id),
                }
            },
        ]

    def erase_lookup(self, connection: Connection) -> bool:
        """Delete a connection's lookup row, only if it is still this person's (an operator's account erasure: the
        person's row, and so the way to the lookup row, goes with their keys partition next); False when gone or not theirs."""
        try:
            self._client.delete_item(
                TableName=self.table,
                Key=self._lookup_key(connection.mac),
                ConditionExpression="#o = :u",  # a person's row altered to name another MAC deletes nothing of theirs
                ExpressionAttributeNames={"#o": "owner"},
                ExpressionAttributeValues=dynamo.values(u=connection.user_id),
            )
        except Exception as exc:
            if dynamo.is_condition_failure(exc):
                return False
            raise
        return True

    def used(self, connection: Connection, now_iso: str, now_epoch: int) -> dict[str, Any]:
        """Transaction action: the connection is still live (not revoked, not expired, the same token) — and its last use.

        Every call that reads or writes memory carries it, so a revoke wins at once even over a cached lookup.
        It also holds the lookup row to what the person's own row says (the agent, the trust): a lookup row
        altered alone is not believed.
        """
        return {
            "Update": {
                "TableName": self.table,
                "Key": self.owned_key(connection.user_id, connection.id),
                "UpdateExpression": "SET last_used_at = :u",
                "ConditionExpression": "attribute_exists(sk) AND mac = :m AND #e > :n AND #a = :a AND #t = :t",
                "ExpressionAttributeNames": {"#e": EXPIRY, "#a": "agent", "#t": "trusted"},
                "ExpressionAttributeValues": dynamo.values(
                    u=now_iso, m=connection.mac, n=now_epoch, a=connection.agent, t=connection.trusted
                ),
            }
        }

    # ---- the service's MAC key (wrapped by KMS; survives forget-all) ----

    def mac_key_row(self) -> tuple[bytes, bytes] | None:
        """(key id, wrapped key) of the service's MAC key, or None when none was made yet."""
        raw = self._client.get_item(
            TableName=self.table, Key=dynamo.dump({"user_id": SERVICE_PARTITION, "sk": MAC_KEY_SK}), ConsistentRead=True
        ).get("Item")
        if not raw:
            return None
        item = dynamo.load(raw)
        wrapped, key_id = (getattr(item.get(n), "value", item.get(n)) for n in ("wrapped", "key_id"))
        if not isinstance(wrapped, bytes) or not isinstance(key_id, bytes):
            unreadable("keys", "mac_key")
            raise ValueError("the connections MAC key row is unreadable")
        return key_id, wrapped

    def put_mac_key(self, key_id: bytes, wrapped: bytes, now_iso: str) -> bool:
        """Store the first MAC key; False when another container stored one first (use theirs)."""
        item = {
            "user_id": SERVICE_PARTITION,
            "sk": MAC_KEY_SK,
            "key_id": key_id,
            "wrapped": wrapped,
            "created_at": now_iso,
        }
        return dynamo.put_if_absent(self._client, self.table, item, "sk")
