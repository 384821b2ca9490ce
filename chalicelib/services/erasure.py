"""An operator erases a whole account: every item keyed by the user in every table, and their data key.

Forget-all keeps the journal, the agent rows, the state item, the connections and the sessions; erasure (a
closed account, a deletion request under data protection law) leaves nothing of the user that a Query can
reach. The order makes a retry finish the job, whatever call failed:

1. the operator's record — a log line naming the operator's ARN and the user's keyed pseudonym
   (chalicelib/logs.py), never an id or a text — before anything is touched;
2. each connection's lookup row (found through the person's connection rows, which go with the keys
   partition next), under the condition that it is still this person's: their tokens are dead at once;
3. the keys partition: the data key first, so every copy of every text (backups, the stream, a
   dead-letter message) stops opening at once (crypto-shredding), then each text's key and the
   person's connection rows;
4. every session registered for the user, found by a Query of the sessions table's sparse index by user
   (`by_user`, keys only; no Scan), each with its events posted for this user (or for none) first, then the
   session itself under the condition that its user is this user. A session already gone (erased by an
   earlier run, or by TTL) is no longer in the index, so a run cut short converges;
5. the entries partition (entries, fingerprints, agent rows, the state item), the proposals partition,
   and the journal;
6. the connections and the keys partition again (what a concurrent request created meanwhile).

The index is eventually consistent: a session registered in the second before the Query may be missed,
as one registered after the erasure is (docs/operators.md). Events that outlived their session (TTL
removed the session first) are not reached; they hold no readable text once the key is shredded.
Nothing is written to the user's journal: it is erased.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chalicelib.bootstrap import Stores
from chalicelib.logs import get_logger, user_hash
from chalicelib.metrics import count
from chalicelib.services.connections import forget_cached

logger = get_logger("personal_memory.operators")


@dataclass
class Erased:
    """How many items went from each table (a retry counts only what was still there)."""

    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("keys", "sessions", "events", "entries", "proposals", "journal"), 0)
    )

    def public(self) -> dict[str, dict[str, int]]:
        return {"erased": dict(self.counts)}


def erase_account(stores: Stores, operator: str, user_id: str, request_id: str) -> dict[str, dict[str, int]]:
    pseudonym = user_hash(user_id)
    fields = {"operator": operator, "user": pseudonym, "request_id": request_id, "outcome": "erase_account"}
    logger.info("operator erasing an account", extra={**fields, "reason": "started"})
    erased = Erased()
    erased.counts["keys"] += _erase_connections(stores, user_id) + stores.keyring.erase(user_id)
    for session_id in stores.sessions.of_user(user_id):
        erased.counts["events"] += stores.events.erase_of(session_id, user_id)  # first: the session is what finds them
        erased.counts["sessions"] += int(stores.sessions.erase_of(session_id, user_id))
    erased.counts["entries"] += stores.entries.erase(user_id)
    erased.counts["proposals"] += stores.proposals.erase(user_id)
    erased.counts["journal"] += stores.journal.erase(user_id)
    erased.counts["keys"] += _erase_connections(stores, user_id) + stores.keyring.erase(user_id)
    count("OperatorAccesses", ("Operation", "erase_account"))
    logger.info("operator erased an account", extra={**fields, "reason": "done", "erased": dict(erased.counts)})
    return erased.public()


def _erase_connections(stores: Stores, user_id: str) -> int:
    """Delete the lookup row of each of the user's connections (what a token finds); how many went. Their own rows
    go with the keys partition right after: until then a retry finds the lookup rows through them."""
    connections = stores.connections.owned(user_id)
    forget_cached(connections)
    return sum(stores.connections.erase_lookup(connection) for connection in connections)
