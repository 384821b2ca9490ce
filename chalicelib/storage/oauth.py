"""OAuth's state in the keys table: registered clients, pending authorizations, codes and refresh tokens.

Why the keys table (no new table): it has no stream and no point-in-time backups, so a spent code or a
revoked refresh token (deleted, or marked spent) can never come back from a restore, and its TTL
(`expires_at`) removes what expired. Every row lives in a partition of its own whose key starts with a `#`-free
prefix no user id can take (user ids never hold `#`):
- `oclient#<client id>` / `#oclient`: a client registered by Dynamic Client Registration (its metadata as JSON);
- `oreq#<id>` / `#oreq`: an authorization request waiting for the person's consent (its query, and who opened it
  as a MAC of their id under the service's key, never the id: services/oauth.py);
- `ocode#<MAC of the code>` / `#ocode`: an issued code; each exchange is counted on it (`attempts`, at most
  `CODE_ATTEMPTS`) and only one that passed every check spends it (`spent`), both by conditional updates;
- `orefresh#<MAC of the token>` / `#orefresh`: a refresh token; spent by a conditional update when rotated.
Codes and refresh tokens are stored only as MACs under the service's connections key (never the token), and name
no person: only the connection (its id and token MAC); whose it is comes from the connection's own lookup row, so
an account's erasure (which deletes the person's connections) leaves nothing here that names them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from chalicelib.storage import dynamo
from chalicelib.storage.unreadable import unreadable

EXPIRY = "expires_at"  # the keys table's TTL attribute
CLIENT, REQUEST, CODE, REFRESH = "oclient#", "oreq#", "ocode#", "orefresh#"
CODE_ATTEMPTS = 3  # exchanges a code takes (each counted before its checks); then it is dead


@dataclass(frozen=True)
class Grant:
    """What a code or a refresh token stands for: a person's connection, for one client and one resource.

    `user_id` is never stored: a grant read back has it empty until the service finds the connection's owner.
    """

    user_id: str
    connection_id: str
    connection_mac: str
    client_id: str
    resource: str
    expires_at: int
    redirect_uri: str = ""
    code_challenge: str = ""
    spent: bool = False


@dataclass(frozen=True)
class PendingRequest:
    id: str
    query: dict[str, str]  # the authorization request's parameters, as validated
    client_id: str
    expires_at: int
    opened_by: str | None = None  # a keyed MAC of the opener's user id (services/oauth.py), never the id


def _text(item: Mapping[str, Any], *names: str) -> list[str] | None:
    found = [item.get(name) for name in names]
    return [str(v) for v in found] if all(isinstance(v, str) for v in found) else None


def _epoch(value: Any) -> int | None:
    return int(value) if isinstance(value, int | Decimal) and not isinstance(value, bool) else None


def _grant(item: Mapping[str, Any]) -> Grant | None:
    texts = _text(item, "connection_id", "connection_mac", "client_id", "resource")
    extra = _text(item, "redirect_uri", "code_challenge") or ["", ""]
    expires, spent = _epoch(item.get(EXPIRY)), item.get("spent", False)
    if texts is None or expires is None or not isinstance(spent, bool):
        unreadable("keys", "oauth_grant")
        return None
    connection_id, connection_mac, client_id, resource = texts
    return Grant(
        "",
        connection_id,
        connection_mac,
        client_id,
        resource,
        expires,
        redirect_uri=extra[0],
        code_challenge=extra[1],
        spent=spent,
    )


class OAuthRepository:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self.table = table

    def _key(self, prefix: str, name: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": prefix + name, "sk": "#" + prefix[:-1]})

    def _get(self, prefix: str, name: str) -> dict[str, Any] | None:
        raw = self._client.get_item(TableName=self.table, Key=self._key(prefix, name), ConsistentRead=True).get("Item")
        return dynamo.load(raw) if raw else None

    # ---- clients (Dynamic Client Registration) ----

    def put_client(self, client_id: str, metadata: Mapping[str, Any], expires_at: int) -> bool:
        item = {"user_id": CLIENT + client_id, "sk": "#oclient", "metadata": json.dumps(dict(metadata))}
        return dynamo.put_if_absent(self._client, self.table, {**item, EXPIRY: expires_at}, "sk")

    def client(self, client_id: str, now_epoch: int) -> dict[str, Any] | None:
        item = self._get(CLIENT, client_id)
        if item is None or (_epoch(item.get(EXPIRY)) or 0) <= now_epoch:
            return None
        try:
            metadata = json.loads(str(item.get("metadata")))
        except ValueError:
            metadata = None
        if not isinstance(metadata, dict):
            unreadable("keys", "oauth_client")
            return None
        return metadata

    # ---- authorization requests waiting for consent ----

    def put_request(self, request: PendingRequest) -> None:
        item = {
            "user_id": REQUEST + request.id,
            "sk": "#oreq",
            "query": json.dumps(request.query),
            "client_id": request.client_id,
            EXPIRY: request.expires_at,
        }
        if not dynamo.put_if_absent(self._client, self.table, item, "sk"):
            raise RuntimeError("an authorization request id repeated")

    def open_request(self, request_id: str, opener: str, now_epoch: int) -> PendingRequest | None:
        """The request, bound to the first person who opens it (`opener`: their MAC); None for anyone else, once
        decided, or expired."""
        found = dynamo.update_if(
            self._client,
            TableName=self.table,
            Key=self._key(REQUEST, request_id),
            UpdateExpression="SET opened_by = if_not_exists(opened_by, :u)",
            ConditionExpression="attribute_exists(sk) AND #e > :n AND (attribute_not_exists(opened_by) OR opened_by = :u)",
            ExpressionAttributeNames={"#e": EXPIRY},
            ExpressionAttributeValues=dynamo.values(u=opener, n=now_epoch),
        )
        return self._pending(found) if found is not None else None

    def close_request(self, request_id: str, opener: str, now_epoch: int) -> PendingRequest | None:
        """Delete the request for its decision, unless another person opened it, while live: a decision happens once."""
        try:
            raw = self._client.delete_item(
                TableName=self.table,
                Key=self._key(REQUEST, request_id),
                ConditionExpression="attribute_exists(sk) AND #e > :n AND (attribute_not_exists(opened_by) OR opened_by = :u)",
                ExpressionAttributeNames={"#e": EXPIRY},
                ExpressionAttributeValues=dynamo.values(u=opener, n=now_epoch),
                ReturnValues="ALL_OLD",
            ).get("Attributes")
        except Exception as exc:
            if dynamo.is_condition_failure(exc):
                return None
            raise
        return self._pending(dynamo.load(raw)) if raw else None

    def close_request_action(self, request_id: str, opener: str, now_epoch: int) -> dict[str, Any]:
        """Transaction action: `close_request`'s delete, so a decision's writes and the request's end are one."""
        return {
            "Delete": {
                "TableName": self.table,
                "Key": self._key(REQUEST, request_id),
                "ConditionExpression": "attribute_exists(sk) AND #e > :n AND opened_by = :u",
                "ExpressionAttributeNames": {"#e": EXPIRY},
                "ExpressionAttributeValues": dynamo.values(u=opener, n=now_epoch),
            }
        }

    def _pending(self, item: Mapping[str, Any]) -> PendingRequest | None:
        texts, expires = _text(item, "user_id", "query", "client_id"), _epoch(item.get(EXPIRY))
        opened = item.get("opened_by")
        try:
            query = json.loads(texts[1]) if texts else None
        except ValueError:
            query = None
        if texts is None or expires is None or not isinstance(query, dict) or not isinstance(opened, str | None):
            unreadable("keys", "oauth_request")
            return None
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in query.items()):
            unreadable("keys", "oauth_request")
            return None
        if query.get("client_id") != texts[2]:  # the screen shows one, the decision runs the query's: never two
            unreadable("keys", "oauth_request")
            return None
        return PendingRequest(texts[0][len(REQUEST) :], query, texts[2], expires, opened)

    # ---- codes and refresh tokens (stored as MACs) ----

    def _grant_item(self, prefix: str, mac: str, grant: Grant) -> dict[str, Any]:
        item: dict[str, Any] = {
            "user_id": prefix + mac,
            "sk": "#" + prefix[:-1],
            "connection_id": grant.connection_id,
            "connection_mac": grant.connection_mac,
            "client_id": grant.client_id,
            "resource": grant.resource,
            EXPIRY: grant.expires_at,
        }
        if prefix == CODE:
            item.update(redirect_uri=grant.redirect_uri, code_challenge=grant.code_challenge, attempts=0)
        return item

    def put_code(self, mac: str, grant: Grant) -> None:
        if not dynamo.put_if_absent(self._client, self.table, self._grant_item(CODE, mac, grant), "sk"):
            raise RuntimeError("an authorization code repeated")

    def refresh(self, mac: str, now_epoch: int) -> Grant | None:
        """A live, unspent refresh token's grant (token revocation reads it, spends nothing); None otherwise."""
        item = self._get(REFRESH, mac)
        if item is None or (_epoch(item.get(EXPIRY)) or 0) <= now_epoch or item.get("spent", False) is not False:
            return None
        return _grant(item)

    def attempt_code(self, mac: str, now_epoch: int, client_id: str) -> Grant | None:
        """Count one exchange of a code before its checks (redirect URI, PKCE): its grant (`spent` when it issued
        tokens before: a replay, which the caller ends only once it passed the checks) while it is the client's,
        live or spent, and has exchanges left; None when unknown, expired, another client's or out of exchanges.
        Counted first, so concurrent guesses cannot outrun the count: a code meets `CODE_ATTEMPTS` verifiers at most."""
        found = dynamo.update_if(
            self._client,
            TableName=self.table,
            Key=self._key(CODE, mac),
            UpdateExpression="SET attempts = attempts + :one",
            # No count (a row altered or half-written) or one that is not a number below the cap: refused.
            ConditionExpression="attribute_exists(sk) AND (#e > :n OR spent = :t) AND client_id = :c "
            "AND attribute_type(attempts, :num) AND attempts < :max",
            ExpressionAttributeNames={"#e": EXPIRY},
            ExpressionAttributeValues=dynamo.values(
                one=1, n=now_epoch, t=True, c=client_id, num="N", max=CODE_ATTEMPTS
            ),
        )
        return _grant(found) if found is not None else None

    def spend_code(self, mac: str, now_epoch: int, client_id: str) -> bool:
        """Spend a code for an exchange that passed every check, once: False when another spent it first."""
        return self._spend(CODE, mac, now_epoch, client_id) is not None

    def spend_refresh(self, mac: str, now_epoch: int, client_id: str) -> tuple[Grant | None, bool]:
        """Mark a refresh token spent, once, by the client it was issued to: (its grant, True) the first time; (its
        grant, False) when it was spent before (a replay, by anyone: the caller ends what it made); (None, False)
        when unknown, expired or another client's."""
        found = self._spend(REFRESH, mac, now_epoch, client_id)
        if found is not None:
            return _grant(found), True
        item = self._get(REFRESH, mac)
        if item is None or item.get("spent") is not True:
            return None, False  # never made, or expired (TTL may lag: expired is never believed)
        return _grant(item), False

    def _spend(self, prefix: str, mac: str, now_epoch: int, client_id: str) -> dict[str, Any] | None:
        return dynamo.update_if(
            self._client,
            TableName=self.table,
            Key=self._key(prefix, mac),
            UpdateExpression="SET spent = :t",
            ConditionExpression="attribute_exists(sk) AND #e > :n AND attribute_not_exists(spent) AND client_id = :c",
            ExpressionAttributeNames={"#e": EXPIRY},
            ExpressionAttributeValues=dynamo.values(t=True, n=now_epoch, c=client_id),
        )

    def put_refresh(self, mac: str, grant: Grant, connection_key: dict[str, Any]) -> list[dict[str, Any]]:
        """Transaction actions: the new refresh token, only while the person's connection row still stands."""
        return [
            {
                "Put": {
                    "TableName": self.table,
                    "Item": dynamo.dump(self._grant_item(REFRESH, mac, grant)),
                    "ConditionExpression": "attribute_not_exists(sk)",
                }
            },
            {
                "ConditionCheck": {
                    "TableName": self.table,
                    "Key": connection_key,
                    "ConditionExpression": "attribute_exists(sk) AND mac = :m",
                    "ExpressionAttributeValues": dynamo.values(m=grant.connection_mac),
                }
            },
        ]
