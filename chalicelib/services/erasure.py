"""An operator erases a whole account: every item keyed by the user in every table, and their data key.

Forget-all keeps the journal, the agent rows, the state item and the sessions; erasure (a closed
account, a deletion request under data protection law) leaves nothing of the user that a Query can
reach. The order makes a retry finish the job, whatever call failed:

1. the operator's record — a log line naming the operator's ARN and the user's keyed pseudonym
   (chalicelib/logs.py), never an id or a text — before anything is touched;
2. the lookup rows of the user's connections (keyed by a token's MAC: the keys partition's `c#` rows
   name them, so they go first; their tokens stop), then the keys partition: the data key first, so
   every copy of every text (backups, the stream, a dead-letter message) stops opening at once
   (crypto-shredding), then each text's key;
3. the sessions the user's items and journal name whose stored user is this user (BatchGetItem, 100 a
   call), each with its events posted for this user (or for none) first, then the session itself under the condition that its user is this
   user — a session id that names another user's session erases nothing of theirs. A session already gone
   (erased by an earlier run, or by TTL) costs nothing more on a retry, so a run cut short converges;
4. the entries partition (entries, fingerprints, agent rows, the state item), the proposals partition,
   and the journal last: it is what names the sessions, so a failure before it leaves them findable;
5. the connections' lookup rows and the keys partition again (a key or a connection a concurrent
   request created meanwhile).

Sessions are keyed by session id and no index leads from a user to them (infra/tables.json), and no
Scan runs on a request path: a session no entry, proposal or journal row names (registered, never read
from, its proposals all rejected or forgotten) is not found here. It holds no text (an agent name, a thread id) and its events no
text without a user; DynamoDB's TTL removes both 30 days after registration (docs/operators.md).
Nothing is written to the user's journal: it is erased.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from chalicelib.bootstrap import Stores
from chalicelib.identifiers import IDENTIFIER_PATTERN
from chalicelib.logs import get_logger, user_hash
from chalicelib.metrics import count

logger = get_logger("personal_memory.operators")
_SESSION_ID = re.compile(IDENTIFIER_PATTERN)  # a stored id of another shape was never a session's (and may be no valid key)


@dataclass
class Erased:
    """How many items went from each table (a retry counts only what was still there)."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("keys", "sessions", "events", "entries", "proposals", "journal"), 0))

    def public(self) -> dict[str, dict[str, int]]:
        return {"erased": dict(self.counts)}


def erase_account(stores: Stores, operator: str, user_id: str, request_id: str) -> dict[str, dict[str, int]]:
    pseudonym = user_hash(user_id)
    fields = {"operator": operator, "user": pseudonym, "request_id": request_id, "outcome": "erase_account"}
    logger.info("operator erasing an account", extra={**fields, "reason": "started"})
    erased = Erased()
    erased.counts["keys"] += _erase_connections(stores, user_id)
    erased.counts["keys"] += stores.keyring.erase(user_id)
    for session_id in stores.sessions.owned_by(sorted(_named_sessions(stores, user_id)), user_id):
        erased.counts["events"] += stores.events.erase_of(session_id, user_id)  # first: the session is what shows they are the user's
        erased.counts["sessions"] += int(stores.sessions.erase_of(session_id, user_id))
    erased.counts["entries"] += stores.entries.erase(user_id)
    erased.counts["proposals"] += stores.proposals.erase(user_id)
    erased.counts["journal"] += stores.journal.erase(user_id)
    erased.counts["keys"] += _erase_connections(stores, user_id)
    erased.counts["keys"] += stores.keyring.erase(user_id)
    count("OperatorAccesses", ("Operation", "erase_account"))
    logger.info("operator erased an account", extra={**fields, "reason": "done", "erased": dict(erased.counts)})
    return erased.public()


def _erase_connections(stores: Stores, user_id: str) -> int:
    """The lookup rows of the user's connections (keyed by a token's MAC, not by the user), and this container's cache of them."""
    from chalicelib.services.connections import forget_cached

    macs = stores.connections.erase_lookups(user_id)
    forget_cached(macs)
    return len(macs)


def _named_sessions(stores: Stores, user_id: str) -> set[str]:
    """Every session id the user's entries, proposals and journal rows name (no Scan: three Queries)."""
    _, entries, _ = stores.entries.stored_all(user_id, consistent=True)
    proposals, _ = stores.proposals.stored_all(user_id)
    named = {ref.session_id for ref in (*entries, *proposals) if ref.session_id}
    named |= {row.details["session_id"] for row in stores.journal.all(user_id) if isinstance(row.details.get("session_id"), str)}
    return {session_id for session_id in named if _SESSION_ID.fullmatch(session_id)}
