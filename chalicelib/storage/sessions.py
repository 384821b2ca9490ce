"""The sessions table: agent sessions registered by hosts — user, thread, agent, manifest, taint, proposal count."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from chalicelib.models import MAX_PROPOSALS_PER_SESSION, Session
from chalicelib.storage import dynamo
from chalicelib.storage.text import unreadable

SESSION_TTL_SECONDS = 30 * 86_400  # sessions (and their events) expire a month after registration
BY_USER_INDEX = (
    "by_user"  # the sessions table's sparse index by user (infra/tables.json): one write more per registration
)


def _from_item(item: Mapping[str, Any]) -> Session | None:
    """The session in `item`; None (an unknown session, logged) when an attribute is of another type than written."""
    user_id, thread_id, proposals = item.get("user_id"), item.get("thread_id"), item.get("proposals", 0)
    texts = (item.get("session_id"), item.get("agent", ""), item.get("created_at", ""))
    if (
        not all(isinstance(value, str) for value in texts)
        or not all(value is None or isinstance(value, str) for value in (user_id, thread_id))
        or isinstance(proposals, bool)
        or not isinstance(proposals, int | Decimal)
        or not all(isinstance(item.get(flag, False), bool) for flag in ("memory", "tainted"))
    ):
        unreadable("sessions", "attributes")
        return None
    return Session(
        session_id=str(item["session_id"]),
        user_id=user_id,
        thread_id=thread_id,
        agent=str(item.get("agent", "")),
        memory_requested=item.get("memory", False) is True,
        tainted=item.get("tainted", False) is True,
        proposals=int(proposals),
        created_at=str(item.get("created_at", "")),
    )


FORGOTTEN_AT = "forgotten_at"  # when the user last forgot this session's writes (POST /v1/agents/{id}/forget)


class SessionsRepository:
    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self.table = table

    def _key(self, session_id: str) -> dict[str, Any]:
        return dynamo.dump({"session_id": session_id})

    def get(self, session_id: str) -> Session | None:
        raw = self._client.get_item(TableName=self.table, Key=self._key(session_id), ConsistentRead=True).get("Item")
        return _from_item(dynamo.load(raw)) if raw else None

    def create(self, session: Session, now_epoch: int) -> bool:
        """Store a new session; False when the id is already taken (the caller compares the two)."""
        item = {
            "ttl": now_epoch + SESSION_TTL_SECONDS,
            "session_id": session.session_id,
            "user_id": session.user_id,
            "thread_id": session.thread_id,
            "agent": session.agent,
            "memory": session.memory_requested,
            "tainted": False,
            "proposals": 0,
            "created_at": session.created_at,
        }
        return dynamo.put_if_absent(self._client, self.table, item, "session_id")

    def mark_tainted(self, session_id: str) -> Session | None:
        """Taint only ever goes on; None for an unknown session."""
        item = dynamo.update_if(
            self._client,
            TableName=self.table,
            Key=self._key(session_id),
            UpdateExpression="SET tainted = :t",
            ConditionExpression="attribute_exists(session_id)",
            ExpressionAttributeValues=dynamo.values(t=True),
        )
        return _from_item(item) if item else None

    def count_proposal(self, session_id: str, posted_at: str) -> dict[str, Any]:
        """Transaction action: one more proposal from this session, refused past the per-session cap, and for an
        event posted before the user forgot this session's writes (`forget_before`)."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(session_id),
                "UpdateExpression": "SET proposals = proposals + :one",
                "ConditionExpression": (
                    f"attribute_exists(session_id) AND proposals < :cap AND (attribute_not_exists({FORGOTTEN_AT}) OR {FORGOTTEN_AT} < :posted)"
                ),
                "ExpressionAttributeValues": dynamo.values(one=1, cap=MAX_PROPOSALS_PER_SESSION, posted=posted_at),
            }
        }

    def of_user(self, user_id: str) -> list[str]:
        """The ids of every session stored with `user_id` as its user (an operator's account erasure): a Query of the
        sparse index `by_user` (infra/tables.json; a session without a user is not in it), keys only, every page.
        The index is eventually consistent: a session registered a moment ago may be missing (docs/operators.md)."""
        items = dynamo.query_all(
            self._client,
            TableName=self.table,
            IndexName=BY_USER_INDEX,
            KeyConditionExpression="user_id = :u",
            ExpressionAttributeValues=dynamo.values(u=user_id),
        )
        return sorted({item["session_id"] for item in items if isinstance(item.get("session_id"), str)})

    def erase_of(self, session_id: str, user_id: str) -> bool:
        """Delete the session only if it is `user_id`'s (an operator's account erasure); False when it is not (or gone)."""
        try:
            self._client.delete_item(
                TableName=self.table,
                Key=self._key(session_id),
                ConditionExpression="user_id = :u",  # never another user's session, whatever named it
                ExpressionAttributeValues=dynamo.values(u=user_id),
            )
        except Exception as exc:
            if dynamo.is_condition_failure(exc):
                return False
            raise
        return True

    def open_conversation(self, session: Session, now_epoch: int) -> dict[str, Any]:
        """Transaction action: a connection's conversation, created by its first proposal (a host registers no
        session for it). Later proposals find it as it was made; a session of the same id that belongs to
        another person or agent refuses the write, so a conversation is never borrowed."""
        fields = {
            "user_id": session.user_id,
            "agent": session.agent,
            "memory": True,  # no thread: absent reads as None
            "tainted": session.tainted,
            "proposals": 0,
            "created_at": session.created_at,
            "ttl": now_epoch + SESSION_TTL_SECONDS,
        }
        names = {f"#f{n}": name for n, name in enumerate(fields)}
        sets = ", ".join(f"#f{n} = if_not_exists(#f{n}, :f{n})" for n in range(len(fields)))
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(session.session_id),
                "UpdateExpression": f"SET {sets}",
                "ConditionExpression": "attribute_not_exists(session_id) OR (#f0 = :f0 AND #f1 = :f1)",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": dynamo.values(
                    **{f"f{n}": value for n, value in enumerate(fields.values())}
                ),
            }
        }

    def forget_before(self, session_id: str, user_id: str, agent: str, now_iso: str) -> bool:
        """The user forgot this session's writes now (one UpdateItem); False when it is no session of theirs
        (then nothing of it can be pending for them). Any spelling of `agent` (the page names its folded row)."""
        del agent
        return (
            dynamo.update_if(
                self._client,
                TableName=self.table,
                Key=self._key(session_id),
                UpdateExpression=f"SET {FORGOTTEN_AT} = :t",
                # The user's session: its agent may be stored under another spelling of `agent` (agent_names.py).
                ConditionExpression="#u = :u",
                ExpressionAttributeNames={"#u": "user_id"},
                ExpressionAttributeValues=dynamo.values(t=now_iso, u=user_id),
            )
            is not None
        )

    def forgot_before(self, session_id: str, posted_at: str) -> bool:
        """Whether the user forgot this session's writes after `posted_at` (a refusal path only)."""
        raw = self._client.get_item(TableName=self.table, Key=self._key(session_id), ConsistentRead=True).get("Item")
        forgotten = dynamo.load(raw).get(FORGOTTEN_AT) if raw else None
        return isinstance(forgotten, str) and posted_at <= forgotten
