"""The user's grants per agent: one item per agent in the user's entries partition, so the Query that
reads their entries for a context fetch reads the grants too, at no extra call.

An item `a#<folded name>` (chalicelib/agent_names.py: `Helper`, `helper_` and `helper2` are one agent)
holds the name the agent was first known by (`name`), the user's switches (`read`, `propose`; absent =
allowed), when the agent last read the user's memory, and when the user last set a switch. The last
read is written in the same transaction as the context's journal row, so listing agents never reads
the journal. Rows are capped (docs/agents.md): the state item's `agent_rows` counts the rows this
service created, and a row is only ever created in a transaction that moves it under a condition.
Items stored before names were folded (`a#Helper`) still count: every reader merges the rows of one
folded name, the most restrictive switch winning, and the next write for that agent folds them into one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from chalicelib.agent_names import fold_agent_name
from chalicelib.identifiers import IDENTIFIER_PATTERN
from chalicelib.models import AgentGrant
from chalicelib.storage import dynamo

AGENT_PREFIX = "a#"
# At most this many rows made by agents using the user's memory (a context fetch); a person's own
# settings may take the partition up to ROW_CAP, so agents can never use up the room a block needs.
SEEN_ROW_CAP = 100
ROW_CAP = 200
ROWS_COUNTER = "agent_rows"
FOLDED_MARK = "agent_keys"  # on the state item once its rows are keyed by folded names (migrate_rows)
FOLDED_VERSION = 1
FORGOTTEN_AT = "forgotten_at"  # when the user last forgot the agent's writes (POST /v1/agents/{id}/forget)
_AGENT = re.compile(IDENTIFIER_PATTERN)
_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z")


def is_agent_name(value: Any) -> bool:
    """An agent as sessions name it (chalicelib/identifiers.py's shape); anything else in storage was altered."""
    return isinstance(value, str) and _AGENT.fullmatch(value) is not None


def _allowed(value: Any) -> bool:
    """A switch the user never set is on; only a stored `true` keeps a set one on (anything altered is off)."""
    return value is None or value is True


def grant_from_item(item: Mapping[str, Any]) -> AgentGrant | None:
    """The grant stored in `item`; None when its key names no agent (altered).

    Its name is the stored `name` when that folds to the key; else the key itself (an item stored before
    names were folded is keyed by the name as the agent gave it, and folds to where it belongs).
    """
    row = str(item["sk"])[len(AGENT_PREFIX) :]
    name = item.get("name")
    if not (is_agent_name(name) and fold_agent_name(str(name)) == row):
        if not is_agent_name(row):
            return None
        name = row

    def when(attribute: str) -> str | None:
        value = item.get(attribute)
        return value if isinstance(value, str) and _INSTANT.fullmatch(value) else None

    return AgentGrant(
        agent=str(name),
        read=_allowed(item.get("read")),
        propose=_allowed(item.get("propose")),
        last_read_at=when("last_read_at"),
        last_proposal_at=when("last_proposal_at"),
        set_at=when("set_at"),
        key=fold_agent_name(str(name)),
        row=row,
    )


class AgentsRepository:
    """Transaction actions on the grant items (they live in the entries table, beside the state item)."""

    def __init__(self, table: str) -> None:
        self.table = table

    def _key(self, user_id: str, row: str) -> dict[str, Any]:
        return dynamo.dump({"user_id": user_id, "sk": AGENT_PREFIX + row})

    def _row_key(self, user_id: str, agent: str) -> dict[str, Any]:
        return self._key(user_id, fold_agent_name(agent))

    def stored_rows(self, client: Any, user_id: str) -> list[dict[str, Any]]:
        """Every `a#` item of the user as stored, read consistently (one Query of those keys only)."""
        return list(
            dynamo.query_all(
                client,
                TableName=self.table,
                KeyConditionExpression="user_id = :u AND begins_with(sk, :a)",
                ExpressionAttributeValues=dynamo.values(u=user_id, a=AGENT_PREFIX),
                ConsistentRead=True,
            )
        )

    def mark_folded(self, client: Any, user_id: str, state_key: str, rows: int) -> None:
        """The state item says its rows are folded, and how many there are (services/agent_rows.py)."""
        dynamo.update_if(
            client,
            TableName=self.table,
            Key=dynamo.dump({"user_id": user_id, "sk": state_key}),
            UpdateExpression=f"SET {FOLDED_MARK} = :v, {ROWS_COUNTER} = :n",
            # Not already marked by a concurrent fold (which counted first); a mark altered to anything else is replaced.
            ConditionExpression=f"attribute_not_exists({FOLDED_MARK}) OR {FOLDED_MARK} <> :v",
            ExpressionAttributeValues=dynamo.values(v=FOLDED_VERSION, n=rows),
        )

    def folded_row(self, user_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Transaction action: write one agent's folded row (`fields` without None values) from all its rows."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(user_id, str(fields["key"])),
                "UpdateExpression": "SET " + ", ".join(f"#{n} = :{n}" for n in fields if n != "key"),
                "ExpressionAttributeNames": {f"#{n}": n for n in fields if n != "key"},
                "ExpressionAttributeValues": dynamo.values(**{n: v for n, v in fields.items() if n != "key"}),
            }
        }

    def delete_stored(self, client: Any, user_id: str, sort_keys: Sequence[str]) -> int:
        """Delete these rows by their stored sort keys (the one-time fold's strays): BatchWriteItem, 25 a call,
        what DynamoDB hands back unprocessed sent again (dynamo.batch_delete)."""
        return dynamo.batch_delete(client, self.table, [{"user_id": user_id, "sk": sk} for sk in sort_keys])

    def may_read(self, client: Any, user_id: str, agent: str) -> bool:
        """Whether the user lets `agent` read (one consistent GetItem: a refusal path only, never a proposal's)."""
        raw = client.get_item(TableName=self.table, Key=self._row_key(user_id, agent), ConsistentRead=True).get("Item")
        return _allowed(dynamo.load(raw).get("read") if raw else None)

    def _exists(self, update: dict[str, Any], exists: bool) -> dict[str, Any]:
        # A row that was there when the partition was read must still be there (else this would create an
        # uncounted row); a new one must still be absent (else two writers would count it twice).
        update["ConditionExpression"] = "attribute_exists(sk)" if exists else "attribute_not_exists(sk)"
        return {"Update": update}

    def set_switches(
        self,
        user_id: str,
        agent: str,
        now_iso: str,
        *,
        read: bool | None,
        propose: bool | None,
        current: AgentGrant,
        exists: bool,
    ) -> dict[str, Any]:
        """Set the switches given (at least one) on the agent's folded row; a switch not given keeps what
        `current` (the merged rows) says, so folding older rows into this one loosens nothing."""
        sets = ["set_at = :t", "#name = if_not_exists(#name, :name)"]
        vals: dict[str, Any] = {"t": now_iso, "name": current.agent if exists else agent}
        names: dict[str, str] = {"#name": "name"}
        for switch, given, kept in (("read", read, current.read), ("propose", propose, current.propose)):
            value = given if given is not None else (None if kept else False)
            if value is not None:
                names[f"#{switch}"] = switch
                vals[switch] = value
                sets.append(f"#{switch} = :{switch}")
        return self._row_update(user_id, agent, sets, names, vals, exists)

    def _row_update(
        self, user_id: str, agent: str, sets: list[str], names: dict[str, str], vals: dict[str, Any], exists: bool
    ) -> dict[str, Any]:
        """The agent's folded row: SET `sets`, made only where it is (or is not) there yet (`_exists`)."""
        update = {
            "TableName": self.table,
            "Key": self._row_key(user_id, agent),
            "UpdateExpression": "SET " + ", ".join(sets),
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": dynamo.values(**vals),
        }
        return self._exists(update, exists)

    def record_read(
        self, user_id: str, agent: str, now_iso: str, *, current: AgentGrant, exists: bool
    ) -> dict[str, Any]:
        """The agent was given the user's memory now (written with the context's journal row)."""
        sets = ["last_read_at = :t", "#name = if_not_exists(#name, :name)"]
        vals: dict[str, Any] = {"t": now_iso, "name": agent}
        names = {"#name": "name"}
        if not current.propose:  # an older row of this name said no: the folded row says it from now on
            sets.append("#p = :off")
            names["#p"] = "propose"
            vals["off"] = False
        return self._row_update(user_id, agent, sets, names, vals, exists)

    def count_row(self, user_id: str, state_key: str, cap: int) -> dict[str, Any]:
        """The state item's Update that counts one new agent row, only while fewer than `cap` are counted."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": dynamo.dump({"user_id": user_id, "sk": state_key}),
                "UpdateExpression": f"SET {ROWS_COUNTER} = if_not_exists({ROWS_COUNTER}, :zero) + :one",
                "ConditionExpression": f"attribute_not_exists({ROWS_COUNTER}) OR {ROWS_COUNTER} < :cap",
                "ExpressionAttributeValues": dynamo.values(zero=0, one=1, cap=cap),
            }
        }

    def keep_row(self, user_id: str, agent: str) -> dict[str, Any]:
        """A row naming `agent` and nothing else, made only where none is (count it with `count_row`)."""
        update = {
            "TableName": self.table,
            "Key": self._row_key(user_id, agent),
            "UpdateExpression": "SET #name = :name",
            "ExpressionAttributeNames": {"#name": "name"},
            "ExpressionAttributeValues": dynamo.values(name=agent),
        }
        return self._exists(update, False)

    def delete_row(self, user_id: str, row: str) -> dict[str, Any]:
        """Delete one stored row by its key as stored (an older row folded into its agent's row)."""
        return {"Delete": {"TableName": self.table, "Key": self._key(user_id, row)}}

    def forget_before(self, client: Any, user_id: str, agent: str, now_iso: str) -> None:
        """The user forgot this agent's writes now (one UpdateItem), so its events posted until now and still
        pending (a stream retry, a later redrive) are refused `agent_forgotten`, never turned into suggestions.

        Only on a row that exists (its folded row): forget_agent makes one for an agent that left anything
        (services/agent_grants.py); an agent with no row and nothing stored has no cut-off.
        """
        dynamo.update_if(
            client,
            TableName=self.table,
            Key=self._row_key(user_id, agent),
            UpdateExpression=f"SET {FORGOTTEN_AT} = :t",
            ConditionExpression="attribute_exists(sk)",
            ExpressionAttributeValues=dynamo.values(t=now_iso),
        )

    def forgot_before(self, client: Any, user_id: str, agent: str, posted_at: str) -> bool:
        """Whether the user forgot this agent's writes after `posted_at` (one GetItem: a refusal path only)."""
        raw = client.get_item(TableName=self.table, Key=self._row_key(user_id, agent), ConsistentRead=True).get("Item")
        forgotten = dynamo.load(raw).get(FORGOTTEN_AT) if raw else None
        return isinstance(forgotten, str) and posted_at <= forgotten

    def admit_proposal(self, user_id: str, agent: str, now_iso: str, posted_at: str) -> dict[str, Any]:
        """The proposal's gate: fails when the user turned `propose` off for this agent (its folded row), or forgot
        its writes after the event was posted.

        In the proposal's own transaction, so the grant costs no read: the condition is the check. It holds
        when there is no row or the switch was never set (no attribute) or is a stored `true`, and fails for
        `false` or anything altered, as the reader above does. A check, not a write: a proposal never
        creates a row, so no agent can fill the person's rows by proposing under new names (the listing
        takes the last proposal's time from the proposals themselves).
        """
        del now_iso  # the proposal itself carries its time
        return {
            "ConditionCheck": {
                "TableName": self.table,
                "Key": self._row_key(user_id, agent),
                # ... and the event was posted after the user last forgot this agent's writes (issue 37 #12)
                "ConditionExpression": f"(attribute_not_exists(#p) OR #p = :on) AND (attribute_not_exists({FORGOTTEN_AT}) OR {FORGOTTEN_AT} < :posted)",
                "ExpressionAttributeNames": {"#p": "propose"},
                "ExpressionAttributeValues": dynamo.values(on=True, posted=posted_at),
            }
        }


def older_rows(grants: Iterable[AgentGrant], agent: str) -> list[str]:
    """The stored keys of `agent`'s rows that are not its folded row (stored before names were folded, or altered)."""
    key = fold_agent_name(agent)
    return sorted(g.row for g in grants if g.key == key and g.row != key)


def only_from(delete: dict[str, Any], agents: Sequence[str]) -> dict[str, Any]:
    """`delete` (an entry's or a proposal's Delete action) narrowed to an item that came from one of `agents`
    (the spellings of one agent's name as stored on its items).

    Forgetting an agent's writes must never take the user's own entries, whatever the listing said:
    the condition is checked on the item itself, in the transaction that deletes it.
    """
    request = dict(delete["Delete"])
    # IN takes at most 100 values (AWS, "Condition and filter expressions, operators, and functions in
    # DynamoDB", Comparators: "a IN (b, c, d) — true if a is equal to any value in the list [...] The list
    # can contain up to 100 values"); services/agent_grants.py gives at most 99.
    names = {f"from_agent{n}": agent for n, agent in enumerate(agents)}
    listed = ", ".join(f":{name}" for name in names)
    request["ConditionExpression"] = (
        f"({request['ConditionExpression']}) AND #origin = :agent_origin AND #agent IN ({listed})"
    )
    request["ExpressionAttributeNames"] = {
        **request.get("ExpressionAttributeNames", {}),
        "#origin": "origin",
        "#agent": "agent",
    }
    request["ExpressionAttributeValues"] = {
        **request.get("ExpressionAttributeValues", {}),
        **dynamo.values(agent_origin="agent", **names),
    }
    return {"Delete": request}
