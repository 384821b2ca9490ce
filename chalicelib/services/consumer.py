"""The stream consumer: each new `memory.propose` event becomes a waiting proposal or a refusal with a reason.

One record at a time, idempotent by the worker's event id: every outcome is written together with
the event's own pending → handled step, under the condition that it is still pending. A replayed or
retried record finds it handled (or gone) and does nothing. That condition, not the proposal's id, is
what makes delivery idempotent, so a proposal gets a fresh random id like any entry: ids are unique for
ever, also when the same session and event id propose again after TTL removed the first event.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from chalicelib.bootstrap import Stores
from chalicelib.clock import Instant, instant
from chalicelib.logs import get_logger
from chalicelib.metrics import count
from chalicelib.models import KINDS, MAX_WAITING_PROPOSALS, Entry, Source, new_id
from chalicelib.services.agent_rows import fold_rows
from chalicelib.services.orphans import recount_waiting
from chalicelib.services.updates import resolve
from chalicelib.storage.dynamo import TransactionCancelled, transact
from chalicelib.storage.events import PENDING, AgentEvent
from chalicelib.storage.fingerprints import stale_owner
from chalicelib.text_rules import refusal_reason

logger = get_logger("personal_memory.consumer")

PROPOSED, REFUSED = "memory.proposed", "memory.proposal_refused"
CAP_REASONS = {"session_cap": "session_proposals", "waiting_cap": "waiting_proposals"}
KEY_RETRIES = 2  # a key destroyed between sealing and writing (a concurrent forget-all)
# How long a duplicate holds the waiting slot it takes (the event that made it lives as long): after that, the
# waiting cap's recount frees it, so duplicates cannot lock the person's list for ever (docs/agents.md).
SLOT_SECONDS = 30 * 86_400
_ADMIT = 3  # the proposal transaction's action that checks the user's grant for the agent
_CLAIM, _CHECK = 5, 6  # its fingerprint's claim (no waiting proposal says the same) and check (nor an active entry)


def handle_batch(stores: Stores, records: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Lambda's partial batch response: exactly the records that failed, by sequence number."""
    failures = []
    for record in records:
        try:
            handle_record(stores, record)
        except Exception as exc:  # noqa: BLE001 - one bad record must not fail the others
            sequence = (record.get("dynamodb") or {}).get("SequenceNumber", "")
            logger.error("record failed", extra={"error_type": type(exc).__name__, "sequence": sequence})
            failures.append({"itemIdentifier": sequence})
    logger.info("batch", extra={"records": len(records), "failures": len(failures)})
    if failures:  # reported, not raised: Lambda's Errors never counts them, the RecordFailures alarm does
        from chalicelib.metrics import count

        count("RecordFailures", value=len(failures))
    return {"batchItemFailures": failures}


MAX_REDRIVE_KEYS = 1000


def redrive(stores: Stores, keys: Any) -> dict[str, Any]:
    """An operator's re-drive (`make redrive`): handle the named events that are still pending.

    The events are named by key only (session id, worker event id), so the operator's command never
    holds their text; each is read here and handled exactly as its stream record would have been.
    Handled or unknown events are skipped, so re-driving twice changes nothing. Failures are reported
    like a partial batch response, by `<session_id>/<event_id>`.
    """
    if not isinstance(keys, list) or len(keys) > MAX_REDRIVE_KEYS:
        raise ValueError(f"redrive takes a list of at most {MAX_REDRIVE_KEYS} event keys")
    failures, redriven, skipped = [], 0, 0
    for key in keys:
        session_id, event_id = (key.get("session_id"), key.get("event_id")) if isinstance(key, dict) else (None, None)
        if not isinstance(session_id, str) or not isinstance(event_id, str) or not session_id or not event_id:
            raise ValueError("each redrive key needs a session_id and an event_id")
        try:
            event = stores.events.get(session_id, event_id)
            if event is None or event.type != "memory.propose" or event.status != PENDING:
                skipped += 1
                continue
            propose(stores, event)
            redriven += 1
        except Exception as exc:  # noqa: BLE001 - one bad event must not fail the others
            logger.error("redrive failed", extra={"error_type": type(exc).__name__})
            failures.append({"itemIdentifier": f"{session_id}/{event_id}"})
    logger.info("redrive", extra={"records": len(keys), "failures": len(failures)})
    return {"batchItemFailures": failures, "redriven": redriven, "skipped": skipped}


def handle_record(stores: Stores, record: Mapping[str, Any]) -> str | None:
    """Handle one stream record; returns the outcome type, or None when there was nothing to do."""
    image = (record.get("dynamodb") or {}).get("NewImage")
    if record.get("eventName") not in ("INSERT", "MODIFY") or not image:
        return None
    event = stores.events.from_image(image)
    if event.type != "memory.propose" or event.status != PENDING:
        return None  # our own settle step, or another kind of event
    outcome = propose(stores, event)
    logger.info("record", extra={"outcome": outcome, "sequence": (record.get("dynamodb") or {}).get("SequenceNumber")})
    return outcome


def propose(stores: Stores, event: AgentEvent) -> str:
    now = instant(stores.clock)
    session = stores.sessions.get(event.session_id)
    if session is None:
        return _refuse(stores, event, "unknown_session", None, now)
    if not session.memory_requested:
        return _refuse(stores, event, "not_requested", session.user_id, now, session.agent)
    if session.user_id is None:
        return _refuse(stores, event, "no_user", None, now, session.agent)
    user_id = session.user_id
    if event.user_id != user_id:  # posted before the session had its user: no text was kept to check
        return _refuse(stores, event, "unknown_session", user_id, now, session.agent)
    if event.unreadable:  # sealed text that does not open for this user and event: never retried
        return _refuse(stores, event, "unreadable", user_id, now, session.agent)
    reason = refusal_reason(event.text or "") or (None if event.kind in KINDS else "invalid_kind")
    if reason or event.kind is None:
        return _refuse(stores, event, reason or "invalid_kind", user_id, now, session.agent)
    # The entry the agent says this updates: kept only if its ref opens for this session and user and names a
    # live entry (one GetItem); anything else is an ordinary proposal, told as one (services/updates.py).
    replaces = resolve(stores, user_id, event.session_id, event.replaces, now.epoch) if event.replaces else None
    proposal = Entry(
        id=new_id(),  # never derived from the event: see the module's docstring
        user_id=user_id,
        text=(event.text or "").strip(),
        kind=event.kind,
        pinned=False,
        tainted=event.tainted_at_post or session.tainted,
        origin="agent",
        source=Source(session_id=event.session_id, thread_id=session.thread_id, message_id=event.message_id),
        created_at=now.iso,
        updated_at=now.iso,
        agent=session.agent,
        text_id=event.text_id,  # the text's life goes on under the event's key
        replaces=replaces,
    )
    recounted = folded = masked = False
    stale: dict[int, str] = {}  # a fingerprint's dead holder, by the action that met it: taken over on the next try
    for _ in range(KEY_RETRIES + 5):
        actions = [
            stores.events.settle(
                event.session_id, event.event_id, {"type": PROPOSED, "proposal_id": proposal.id}, now.iso
            ),
            stores.sessions.count_proposal(event.session_id, event.created_at),  # its cap, and not forgotten since
            stores.entries.take_waiting_slot(user_id),
            # the user's grant: no read needed
            stores.agents.admit_proposal(user_id, session.agent, now.iso, event.created_at),
            # sealed here, under the user's current key: [4] Put, [5] claim its fingerprint, [6] no live entry has it;
            # or, for a duplicate, [4] the waiting slot it holds instead, its journal row and its text key's deletion
            *(
                _masked(stores, event, proposal, now)
                if masked
                else stores.proposals.put_unique(
                    proposal, entries_check=stores.entries.fingerprints.check_free, now_epoch=now.epoch
                )
            ),
        ]
        if _CLAIM in stale and not masked:
            actions[_CLAIM] = stores.proposals.fingerprints.taken_over(actions[_CLAIM], stale[_CLAIM])
        if _CHECK in stale and not masked:
            actions[_CHECK] = stores.entries.fingerprints.taken_over(actions[_CHECK], stale[_CHECK])
        guarded = stores.keyring.guard(actions)  # ... which must still be current when this lands
        try:
            transact(stores.client, guarded)
            stores.keyring.written(guarded)
        except TransactionCancelled as exc:
            if exc.failed(0):
                return "replayed"  # already handled by an earlier delivery
            if exc.failed(_ADMIT) or exc.failed(1):
                return _refuse(
                    stores,
                    event,
                    _why_not_admitted(stores, exc, event, user_id, session.agent),
                    user_id,
                    now,
                    session.agent,
                )
            if exc.failed(2):
                state = stores.entries.get_state(user_id)
                if state.enabled and not state.agents_folded and not folded:
                    folded = True  # once per user: rows stored before agent names were folded (services/agent_rows.py)
                    fold_rows(stores, user_id)
                    continue
                if state.enabled and state.waiting >= MAX_WAITING_PROPOSALS and not recounted:
                    recounted = True  # proposals an interrupted forget-all left unreadable may fill it (or old slots)
                    state = recount_waiting(stores, user_id)
                    if state.waiting < MAX_WAITING_PROPOSALS:
                        continue
                over = state.enabled and state.waiting >= MAX_WAITING_PROPOSALS
                return _refuse(stores, event, "waiting_cap" if over else "memory_off", user_id, now, session.agent)
            if any(exc.failed(index) for index in range(len(actions), len(guarded))):
                continue  # a forget-all destroyed the key meanwhile: seal again under the new one
            if masked or not (exc.failed(_CLAIM) or exc.failed(_CHECK)):
                raise
            if exc.failed(_CLAIM):
                met = stores.proposals.fingerprints.met(stores.client, exc, _CLAIM, actions[_CLAIM])
                masked = stores.proposals.holder(user_id, met) is not None  # the same words already wait
                if (dead := stale_owner(met)) is not None and not masked:
                    stale[_CLAIM] = dead
            if exc.failed(_CHECK) and not masked:
                met = stores.entries.fingerprints.met(stores.client, exc, _CHECK, actions[_CHECK])
                masked = stores.entries.holder(user_id, met, now.epoch) is not None  # the same words are already kept
                if (dead := stale_owner(met)) is not None and not masked:
                    stale[_CHECK] = dead
            continue  # a duplicate: told as proposed, holding a slot (`_masked`); or a stale fingerprint, taken over
        if masked:
            stores.keyring.forget_cached(user_id, [event.text_id])
            count("ProposalsRefused", ("Reason", "duplicate"))
        else:
            count("ProposalsCreated")
        return PROPOSED
    raise RuntimeError("the user's key changed during every attempt")  # the record fails and is retried


def _why_not_admitted(stores: Stores, exc: TransactionCancelled, event: AgentEvent, user_id: str, agent: str) -> str:
    """`agent_forgotten` when the user forgot the agent's (or the session's) writes after the event was posted
    (it was still pending: a retry, a redrive), else `agent_blocked` or `session_cap` (a refusal path: reads)."""
    if exc.failed(_ADMIT):
        return (
            "agent_forgotten"
            if stores.agents.forgot_before(stores.client, user_id, agent, event.created_at)
            else "agent_blocked"
        )
    return "agent_forgotten" if stores.sessions.forgot_before(event.session_id, event.created_at) else "session_cap"


def _masked(stores: Stores, event: AgentEvent, proposal: Entry, now: Instant) -> list[dict[str, Any]]:
    """A duplicate's actions after the four every proposal takes: the waiting slot it holds in the proposal's
    place (its id the one the agent is told), the person's journal row saying `duplicate`, and its text's key.

    Every agent, reading or not, is told what a new text gets: the same outcome, the session's proposal and a
    waiting slot counted, the same refusals when a cap is reached (issue 37 #8). Only the person's journal
    says it was a duplicate. The text is kept nowhere: the settle drops it from the event, and its key goes.
    """
    assert proposal.agent is not None and proposal.source.session_id is not None
    return [
        stores.proposals.hold_slot(
            proposal.user_id,
            proposal.id,
            agent=proposal.agent,
            session_id=proposal.source.session_id,
            now_iso=now.iso,
            until=now.epoch + SLOT_SECONDS,
        ),
        stores.journal.record(
            proposal.user_id,
            "keep.memory.proposal_refused",
            now.iso,
            {"reason": "duplicate", "session_id": event.session_id, "agent": proposal.agent},
            row_id=refusal_row_id(event),
        ),
        *stores.keyring.shred(proposal.user_id, [event.text_id]),
    ]


def refusal_row_id(event: AgentEvent) -> str:
    """The refusal's journal row, named after the event (its sort key also holds the time of the refusal)."""
    return hashlib.sha256(f"{event.session_id}\x00{event.event_id}".encode()).hexdigest()[:12]


def _refuse(
    stores: Stores, event: AgentEvent, reason: str, user_id: str | None, now: Instant, agent: str | None = None
) -> str:
    """Record the refusal (reason only, never text) on the event and, when there is a user, in their journal.

    The journal row names the session's agent, so the user can see who tried (the page says it).
    """
    actions = [stores.events.settle(event.session_id, event.event_id, {"type": REFUSED, "reason": reason}, now.iso)]
    # The refused text's key goes with the refusal: only when the text opened here as this event's
    # (a ciphertext copied from another event names that event's key, which must not be touched).
    opened = user_id is not None and event.user_id == user_id and event.text is not None and not event.unreadable
    if opened and user_id is not None:
        actions.extend(stores.keyring.shred(user_id, [event.text_id]))
    if user_id is not None:
        actions.append(
            stores.journal.record(
                user_id,
                "keep.memory.proposal_refused",
                now.iso,
                {"reason": reason, "session_id": event.session_id, **({"agent": agent} if agent else {})},
                row_id=refusal_row_id(event),
            )
        )
    try:
        transact(stores.client, actions)
    except TransactionCancelled as exc:
        if exc.failed(0):
            return "replayed"
        raise
    if user_id is not None:
        stores.keyring.forget_cached(user_id, [event.text_id])
    count("ProposalsRefused", ("Reason", reason))
    if reason in CAP_REASONS:
        count("CapRefusals", ("Cap", CAP_REASONS[reason]))
    return REFUSED
