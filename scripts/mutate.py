"""`make mutate`: break the code on purpose, one named way at a time, and prove some test notices.

The working tree (tracked files and untracked ones git does not ignore) is copied once to a snapshot;
each mutation then gets its own copy of it with exact text replacements applied, and runs its chosen
test files there with the project venv's pytest (stopping at the first failure). Exit 1 with a failed
test is CAUGHT, exit 0 is SURVIVED; anything else (a collection error, only setup errors, a timeout)
is an ERROR, never counted as caught. A mutation whose original text is not found exactly once fails
loudly ("mutation no longer applies"), so the list cannot rot quietly (tests/tools/test_mutate_tool.py
checks this in `make test`).

A red test cannot pass for a caught mutation: every test that caught one is then run on the unmutated
snapshot (the baseline, one pytest run for all of them, instead of every chosen file before the
mutations: ~50 test ids, not ~27 files: 77 CPU-seconds measured); one that fails there too is deselected and its mutations run again,
until every catch is by a test that passes unmutated.
Usage: `scripts/mutate.py [--list] [--show] [--jobs N] [--no-baseline] [NAME ...]`; exit 0 only when
every mutation is caught.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The project venv (make's $(STAMP) builds it); the running interpreter where there is none, as in some CI.
PYTHON = ROOT / ".venv" / "bin" / "python" if (ROOT / ".venv" / "bin" / "python").exists() else Path(sys.executable)
JOBS = 2  # the machine has two cores, shared
RUN_TIMEOUT_SECONDS = 900
# Used only when git cannot list the files: never copied into a scratch tree.
SKIPPED_DIRS = frozenset(
    {".git", ".venv", "build", ".local", "__pycache__", ".pytest_cache", ".hypothesis", ".helpers"}
)

CAUGHT, SURVIVED, ERROR = "CAUGHT", "SURVIVED", "ERROR"
PYTEST_TESTS_FAILED = 1

__all__ = [
    "CATCHERS",
    "CAUGHT",
    "ERROR",
    "MUTATIONS",
    "SURVIVED",
    "Edit",
    "Mutation",
    "MutationRotted",
    "Outcome",
    "classify",
    "main",
]


@dataclass(frozen=True)
class Edit:
    """Replace `old` (which must occur exactly once in `path`) with `new`."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Mutation:
    """A realistic way to break a promise, and the test files that should notice."""

    name: str
    why: str
    tests: tuple[str, ...]
    edits: tuple[Edit, ...]


AGENTS, TENANCY, OPERATORS = (
    "tests/routes/test_agents.py",
    "tests/routes/test_tenancy.py",
    "tests/routes/test_operators.py",
)
GAPS = "tests/routes/test_mutation_gaps.py"
DUPLICATES = "tests/routes/test_duplicates.py"
AGENT_GRANTS = "tests/routes/test_agent_grants.py"
ENCRYPTION, SEALING = "tests/routes/test_encryption.py", "tests/unit/test_sealing.py"
FINAL = "tests/routes/test_forgetting_is_final.py"  # issue 26: proof by restore
TAMPERING, EVENTS = "tests/routes/test_stored_tampering.py", "tests/routes/test_event_integrity.py"
FAULTS, FAULTS_STREAM = "tests/faults/test_faults.py", "tests/faults/test_faults_stream.py"
FAULTS_OPERATORS, AIMED = "tests/faults/test_faults_operators.py", "tests/routes/test_rules_aimed.py"
SDK_TESTS = ("tests/sdk/test_sdk_memory.py", "tests/sdk/test_sdk_http.py")

MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        "user_token_honors_user_id_query",
        "a user token reads and writes whichever user ?user_id= names",
        (TENANCY,),
        (
            Edit(
                "chalicelib/web_api.py",
                '    user_id = authorizer.get("principalId")\n',
                '    user_id = (request.query_params or {}).get("user_id") or authorizer.get("principalId")\n',
            ),
        ),
    ),
    Mutation(
        "drop_manifest_gate",
        "context ignores the manifest's memory flag",
        (AGENTS,),
        (
            Edit(
                "chalicelib/services/agents.py",
                "    if not session.memory_requested or session.user_id is None:\n",
                "    if session.user_id is None:\n",
            ),
        ),
    ),
    Mutation(
        "drop_context_freezing",
        "the SDK's memory items can be reassigned by agent code",
        SDK_TESTS,
        (
            Edit(
                "sdk/personal_memory_sdk/memory.py",
                "@dataclass(frozen=True, slots=True, repr=False)\nclass MemoryItem:",
                "@dataclass(slots=True, repr=False)\nclass MemoryItem:",
            ),
        ),
    ),
    Mutation(
        "context_items_become_a_list",
        "ctx.memory.items is a plain, appendable list",
        SDK_TESTS,
        (
            Edit(
                "sdk/personal_memory_sdk/context.py",
                "        sealed = items if isinstance(items, MemoryItems) else MemoryItems(items)\n",
                "        sealed = list(items)\n",
            ),
        ),
    ),
    Mutation(
        "drop_session_user_gate",
        "context checks only the manifest: a user-less session reaches the store with no user",
        (AGENTS,),
        (
            Edit(
                "chalicelib/services/agents.py",
                "    if not session.memory_requested or session.user_id is None:\n",
                "    if not session.memory_requested:\n",
            ),
        ),
    ),
    Mutation(
        "session_user_falls_back_to_thread",
        "no crash, but no gate either: a user-less session reads the memory its thread id names",
        (AGENTS, GAPS),
        (
            Edit(
                "chalicelib/services/agents.py",
                '    if not session.memory_requested or session.user_id is None:\n        return {"items": []}\n',
                '    if not session.memory_requested:\n        return {"items": []}\n'
                "    if session.user_id is None:\n"
                "        session = Session(session_id, session.thread_id, session.thread_id, session.agent, True)\n",
            ),
        ),
    ),
    Mutation(
        "drop_memory_on_gate",
        "context ignores the user's on/off switch",
        (AGENTS,),
        (Edit("chalicelib/services/agents.py", '    if not state.enabled:\n        return {"items": []}\n', ""),),
    ),
    Mutation(
        "untainted_proposals",
        "proposals from sessions that read untrusted content are not marked",
        (AGENTS,),
        (
            Edit(
                "chalicelib/services/consumer.py",
                "        tainted=event.tainted_at_post or session.tainted,\n",
                "        tainted=False,\n",
            ),
        ),
    ),
    Mutation(
        "accept_launders_taint",
        "accepting a tainted proposal makes an untainted entry",
        ("tests/routes/test_proposals.py", AGENTS),
        (
            Edit(
                "chalicelib/services/memory.py",
                "created_at=now.iso, updated_at=now.iso, expires_at=None, fingerprint=None, replaces=None",
                "created_at=now.iso, updated_at=now.iso, expires_at=None, fingerprint=None, replaces=None, tainted=False",
            ),
        ),
    ),
    Mutation(
        "reregistration_resets_session",
        "an identical PUT of a session refreshes it: its taint and proposal count start again",
        (AGENTS, GAPS),
        (
            Edit(
                "chalicelib/services/agents.py",
                "    return existing\n",
                "    stores.sessions._client.update_item(\n"
                "        TableName=stores.sessions.table, Key={'session_id': {'S': session_id}},\n"
                "        UpdateExpression='SET tainted = :f, proposals = :z',\n"
                "        ExpressionAttributeValues={':f': {'BOOL': False}, ':z': {'N': '0'}},\n"
                "    )\n    return existing\n",
            ),
        ),
    ),
    Mutation(
        "no_credential_check_on_patch",
        "PATCH keeps the empty and length checks but lets credentials in",
        ("tests/routes/test_validation.py",),
        (
            Edit(
                "chalicelib/services/memory.py",
                '    text = accepted_text(body.text) if "text" in given and body.text is not None else None\n',
                '    text = body.text.strip() if "text" in given and body.text is not None else None\n'
                "    if text is not None and (not text or len(text.encode()) > MAX_ENTRY_BYTES):\n"
                "        accepted_text(text)  # the usual 400 for empty or too long\n",
            ),
        ),
    ),
    Mutation(
        "journal_text_in_context",
        "keep.memory.context records what the agent was shown, text included",
        (AGENTS, "tests/routes/test_privacy.py", "tests/routes/test_journal_export.py"),
        (
            Edit(
                "chalicelib/services/agents.py",
                '{**journaled, "count": len(chosen)}\n',
                '{**journaled, "count": len(chosen), "text": [e.text for e in chosen]}\n',
            ),
            Edit(
                "chalicelib/storage/journal.py",
                '        "entry_id",\n',
                '        "entry_id",\n        "text",\n',
            ),
        ),
    ),
    Mutation(
        "context_not_journaled",
        "a context read leaves no keep.memory.context row",
        (AGENTS, "tests/routes/test_journal_export.py"),
        (
            Edit(
                "chalicelib/services/agents.py",
                "    journal_row = stores.journal.record(\n"
                '        session.user_id, "keep.memory.context", now.iso, {**journaled, "count": len(chosen)}\n'
                "    )\n",
                "    journal_row = None\n",
            ),
            Edit("chalicelib/services/agents.py", "[journal_row, *read_receipt(", "[*read_receipt("),
            Edit("chalicelib/services/agents.py", "transact(stores.client, [journal_row])\n", "pass\n"),
        ),
    ),
    Mutation(
        "agent_read_gate_ignored",
        "an agent the user stopped reading still gets their memory",
        (AGENT_GRANTS,),
        (Edit("chalicelib/services/agents.py", "    if not state.grant(session.agent).read:", "    if False:"),),
    ),
    Mutation(
        "agent_propose_gate_missing",
        "an agent the user stopped suggesting still gets its proposals through",
        (AGENT_GRANTS,),
        (
            Edit(
                "chalicelib/services/consumer.py",
                "            stores.agents.admit_proposal(user_id, session.agent, now.iso, event.created_at),\n",
                "",
            ),
        ),
    ),
    Mutation(
        "forget_agent_trusts_its_listing",
        "forgetting an agent's writes deletes whatever its listing named, the user's own entries included",
        (AGENT_GRANTS,),
        (
            Edit(
                "chalicelib/services/forget_all.py",
                "        return only_from(action, self._names()) if self.agent is not None else action",
                "        return action",
            ),
        ),
    ),
    Mutation(
        "expired_entries_in_context",
        "context hands agents entries whose expiry has passed (TTL lags)",
        (AGENTS, GAPS),
        (
            Edit(
                "chalicelib/services/agents.py",
                "select_context([e for e in entries if not e.is_expired(now.epoch)])",
                "select_context(entries)",
            ),
        ),
    ),
    Mutation(
        "skip_operator_journal",
        "an operator's read is not journaled",
        (OPERATORS,),
        (
            Edit(
                "chalicelib/services/operators.py", '    _journal(stores, user_id, operator, "read", request_id)\n', ""
            ),
        ),
    ),
    Mutation(
        "operator_routes_check_host_list",
        "a copy-paste slip: operator routes admit the host role",
        (OPERATORS,),
        (Edit("app.py", "    operator = _caller(callers.OPERATOR)\n", "    operator = _caller(callers.HOST)\n"),),
    ),
    Mutation(
        "forget_all_keeps_proposals",
        "DELETE /v1/memory leaves waiting proposals behind",
        ("tests/routes/test_user_api.py",),
        (
            Edit(
                "chalicelib/services/forget_all.py",
                '        removals += [Removal("slot" if p.slot else "proposal", p.id) for p in proposals]\n',
                "",
            ),
        ),
    ),
    Mutation(
        "session_cap_six",
        "the per-session condition is off by one: a 6th proposal gets through",
        (AGENTS,),
        (Edit("chalicelib/storage/sessions.py", "AND proposals < :cap", "AND proposals <= :cap"),),
    ),
    Mutation(
        "erasure_skips_unnamed_sessions",
        "an account's erasure no longer queries the sessions' index: a session nothing names survives",
        ("tests/routes/test_erasure.py",),
        (
            Edit(
                "chalicelib/services/erasure.py",
                "    for session_id in stores.sessions.of_user(user_id):\n",
                "    for session_id in []:\n",
            ),
        ),
    ),
    Mutation(
        "erasure_lookup_unconditioned",
        "an account's erasure deletes whatever lookup row a (possibly altered) connection row names",
        ("tests/routes/test_erasure.py",),
        (
            Edit(
                "chalicelib/storage/connections.py",
                'ConditionExpression="#o = :u",',
                'ConditionExpression="attribute_exists(#o) OR #o = :u",',
            ),
        ),
    ),
    Mutation(
        "session_cap_constant_six",
        "the per-session cap constant says 6",
        (AGENTS,),
        (Edit("chalicelib/models.py", "MAX_PROPOSALS_PER_SESSION = 5\n", "MAX_PROPOSALS_PER_SESSION = 6\n"),),
    ),
    # ---- deployable and operable (issue 11) ----
    Mutation(
        "gateway_sibling_variables_allowed",
        "the import-rule check lets two variable path parts share a parent, as API Gateway does not",
        ("tests/deploy/test_gateway_rules.py",),
        (Edit("infra/apigateway_rules.py", "        if len(names) > 1:\n", "        if len(names) > 2:\n"),),
    ),
    Mutation(
        "export_whole_journal",
        "the export carries the whole journal again, past Lambda's 6 MB for the largest user",
        ("tests/routes/test_export_size.py",),
        (
            Edit(
                "chalicelib/services/memory.py",
                "    journal, journal_cursor = stores.journal.page(user_id, limit=EXPORT_JOURNAL_ROWS)\n",
                "    journal, journal_cursor = stores.journal.all(user_id), None\n",
            ),
        ),
    ),
    Mutation(
        "redrive_deletes_failed_messages",
        "the redrive command deletes a dead-letter message whose events failed again",
        ("tests/stream/test_redrive.py",),
        (
            Edit(
                "scripts/redrive.py",
                "            if outcome.failed == 0 and outcome.error is None:\n",
                "            if outcome.error is None:\n",
            ),
        ),
    ),
    Mutation(
        "local_stream_unfiltered",
        "the local stream pump ignores the template's FilterCriteria",
        ("tests/stream/test_event_filter.py",),
        (
            Edit(
                "local/event_filter.py",
                "    return lambda record: any(matches(p, record) for p in patterns)\n",
                "    return lambda record: True\n",
            ),
        ),
    ),
    Mutation(
        "authorizer_refusals_uncounted",
        "the authorizer stops counting refused tokens: its errors alarm pages on every bad token",
        ("tests/routes/test_metrics.py",),
        (Edit("app.py", '        count("TokenRefused")', "        pass"),),
    ),
    Mutation(
        "taint_read_at_post_time_only",
        "a session marked untrusted after its event was posted yields an untainted proposal",
        (FAULTS_STREAM,),
        (
            Edit(
                "chalicelib/services/consumer.py",
                "        tainted=event.tainted_at_post or session.tainted,\n",
                "        tainted=event.tainted_at_post,\n",
            ),
        ),
    ),
    Mutation(
        "patch_credentials_checked_only_for_text_alone",
        "a PATCH that changes text together with another field skips the credential check",
        (AIMED,),
        (
            Edit(
                "chalicelib/services/memory.py",
                '    text = accepted_text(body.text) if "text" in given and body.text is not None else None\n',
                '    text = (accepted_text(body.text) if given == {"text"} else body.text.strip()) '
                'if "text" in given and body.text is not None else None\n',
            ),
        ),
    ),
    Mutation(
        "forget_keeps_its_slot",
        "forgetting one entry does not give its slot back: at 200, DELETE one and POST is still refused",
        (AIMED,),
        (
            Edit(
                "chalicelib/services/forgetting.py",
                "stores.entries.release_counts(user_id, active=1),\n",
                "stores.entries.release_counts(user_id, active=0),\n",
            ),
        ),
    ),
    Mutation(
        "entry_limit_2001_bytes",
        "the per-entry limit is off by one: 2001 bytes are kept",
        (AIMED,),
        (
            Edit(
                "chalicelib/text_rules.py",
                '    if len(clean.encode("utf-8")) > MAX_ENTRY_BYTES:\n',
                '    if len(clean.encode("utf-8")) > MAX_ENTRY_BYTES + 1:\n',
            ),
        ),
    ),
    Mutation(
        "entry_limit_counts_characters",
        "the limit counts characters, not UTF-8 bytes: 2000 emoji (8000 bytes) are kept",
        (AIMED,),
        (
            Edit(
                "chalicelib/text_rules.py",
                '    if len(clean.encode("utf-8")) > MAX_ENTRY_BYTES:\n',
                "    if len(clean) > MAX_ENTRY_BYTES:\n",
            ),
        ),
    ),
    Mutation(
        "conflicts_not_retried",
        "a TransactionConflict cancellation is never retried: a rare conflict fails the request",
        (FAULTS,),
        (
            Edit(
                "chalicelib/storage/retries.py",
                "                if is_conflict(exc) and attempt < CONFLICT_ATTEMPTS:\n",
                "                if False:\n",
            ),
        ),
    ),
    Mutation(
        "exhausted_retries_are_500",
        "AWS's refusal after retries leaks out as a botocore error: a 500, not 503 unavailable",
        (FAULTS,),
        (
            Edit(
                "chalicelib/storage/retries.py",
                '                    counts["unavailable"] += 1\n                    raise Unavailable() from exc\n',
                '                    counts["unavailable"] += 1\n',
            ),
        ),
    ),
    Mutation(
        "no_retry_after",
        "the 503 carries no Retry-After header",
        (FAULTS,),
        (
            Edit(
                "chalicelib/errors.py",
                '        return {"Retry-After": str(self.retry_after_seconds)}\n',
                "        return {}\n",
            ),
        ),
    ),
    Mutation(
        "forget_all_journals_at_the_end",
        "forget-all journals one total after its last transaction: a 503 midway leaves deletions unjournaled",
        (FAULTS,),
        (
            Edit(
                "chalicelib/services/forget_all.py",
                "        actions.append(stores.journal.add_counts(user_id, plan.action, now.iso, row_id, counts, plan.details))\n",
                "",
            ),
            Edit(
                "chalicelib/services/forget_all.py",
                '    if not deleted["transactions"]:  # nothing was left to delete: the request is still journaled, as a count of zero\n'
                "        stores.journal.append(\n"
                '            user_id, plan.action, now.iso, {**plan.details, "entries": 0, "proposals": 0}, row_id=row_id\n'
                "        )\n",
                '    stores.journal.append(user_id, plan.action, now.iso, {**plan.details, "entries": deleted["entries"], '
                '"proposals": deleted["proposals"]})\n',
            ),
        ),
    ),
    Mutation(
        "forget_all_past_the_key_claims_nothing_changed",
        "a forget-all refused after destroying the key answers a plain 503 ('nothing was changed'): the text is already gone",
        (FAULTS,),
        (
            Edit(
                "chalicelib/services/forget_all.py",
                "    except Unavailable as exc:\n        # The key is gone",
                "    except ZeroDivisionError as exc:\n        # The key is gone",
            ),
        ),
    ),
    Mutation(
        "recount_keeps_orphans",
        "items an interrupted forget-all left unreadable keep counting: the user is locked out of a cap they cannot see",
        ("tests/routes/test_orphans.py",),
        (
            Edit(
                "chalicelib/services/orphans.py",
                "    return {ref.id for ref in refs if ref.key_id is not None and ref.key_id not in live}\n",
                "    return set()\n",
            ),
        ),
    ),
    Mutation(
        "recount_deletes_whatever_is_sealed",
        "the recount deletes every sealed item at a cap, not only those a destroyed key left: readable memory lost",
        ("tests/routes/test_orphans.py",),
        (
            Edit(
                "chalicelib/services/orphans.py",
                "ref.key_id is not None and ref.key_id not in live}",
                "ref.key_id is not None}",
            ),
        ),
    ),
    Mutation(
        "consumer_refuses_at_a_waiting_cap_of_orphans",
        "at 50 waiting proposals the consumer refuses without recounting: proposals no key opens fill the inbox",
        ("tests/routes/test_orphans.py",),
        (
            Edit(
                "chalicelib/services/consumer.py",
                "                if state.enabled and state.waiting >= MAX_WAITING_PROPOSALS and not recounted:\n",
                "                if False:\n",
            ),
        ),
    ),
    Mutation(
        "consumer_fails_the_whole_batch",
        "one failing record fails the whole stream batch instead of being reported alone",
        (FAULTS_STREAM,),
        (
            Edit(
                "chalicelib/services/consumer.py",
                '            failures.append({"itemIdentifier": sequence})\n',
                "            raise\n",
            ),
        ),
    ),
    Mutation(
        "operator_reads_before_journaling",
        "an operator's read happens before its journal row is written: a refused journal write still reads",
        (FAULTS_OPERATORS,),
        (
            Edit(
                "chalicelib/services/operators.py",
                '    _journal(stores, user_id, operator, "read", request_id)\n    result = memory.view(stores, user_id)\n',
                '    result = memory.view(stores, user_id)\n    _journal(stores, user_id, operator, "read", request_id)\n',
            ),
        ),
    ),
    Mutation(
        "edit_keeps_the_etag",
        "PATCH changes an entry without moving the view version: a polling page keeps getting 304",
        ("tests/routes/test_freshness.py",),
        (
            Edit(
                "chalicelib/storage/entry_edits.py",
                "_edit(repo, stored, changed, resealed, change)}, repo.bump_version(user_id), *moves]",
                "_edit(repo, stored, changed, resealed, change)}, *moves]",
            ),
        ),
    ),
    Mutation(
        "corrections_skip_the_text_rules",
        "text corrected while accepting is stored without the credential and length checks",
        ("tests/routes/test_corrections.py",),
        (
            Edit(
                "chalicelib/services/memory.py",
                "    text = accepted_text(body.text) if body is not None and body.text is not None else None\n",
                "    text = body.text.strip() if body is not None and body.text is not None else None\n",
            ),
        ),
    ),
    # issue 13: the credential check reads text as a person sees it, and no field skips the rules
    Mutation(
        "credentials_read_as_typed",
        "the credential check reads the raw text: a zero-width space or a Cyrillic letter hides a token",
        ("tests/routes/test_credentials_routes.py",),
        (Edit("chalicelib/credentials/__init__.py", "    view = readable(text)\n", "    view = text\n"),),
    ),
    Mutation(
        "split_tokens_not_rejoined",
        "a token split by a space or a line break is read in pieces",
        ("tests/routes/test_credentials_routes.py",),
        (Edit("chalicelib/credentials/__init__.py", "    readings = rejoined_views(view)\n", "    readings = []\n"),),
    ),
    Mutation(
        "ids_may_hold_credentials",
        "message_id, thread_id and agent are checked for shape but not for credentials",
        ("tests/routes/test_credentials_routes.py",),
        (
            Edit(
                "chalicelib/identifiers.py",
                "    shape = find_credential(value)\n    if shape:\n",
                "    shape = find_credential(value)\n    if shape and False:\n",
            ),
        ),
    ),
    Mutation(
        "prompt_block_leaves_variation_selectors",
        "the prompt block escapes format characters only: variation selectors and fillers pass unseen",
        ("tests/sdk/test_sdk_prompt_hidden.py",),
        (Edit("sdk/personal_memory_sdk/prompt.py", " or _invisible(ord(ch)):", ":"),),
    ),
    Mutation(
        "js_prompt_block_shows_braille_blank",
        "the JavaScript SDK's prompt block lets U+2800 through, which the Python one escapes (the SDKs drift)",
        ("tests/sdk/test_sdk_js_parity.py",),
        (Edit("sdk/js/src/prompt.js", 'const BLANK_LOOKING = ["\\u2800"];', "const BLANK_LOOKING = [];"),),
    ),
    Mutation(
        "text_stored_unsealed",
        "the plaintext is stored beside its sealed copy (reads still work; tables, backups and stream hold text)",
        (ENCRYPTION,),
        (
            Edit(
                "chalicelib/storage/text.py",
                "            TEXT_ATTRIBUTE: seal(under, text_key, text, associated_data(self.table, user_id, key, provenance))\n",
                "            TEXT_ATTRIBUTE: seal(under, text_key, text, associated_data(self.table, user_id, key, provenance)),\n"
                '            "text": text,\n',
            ),
        ),
    ),
    Mutation(
        "aad_without_user_id",
        "the associated data leaves out the user: a ciphertext opens for another user under the same key",
        (SEALING,),
        (
            Edit("chalicelib/crypto/sealing.py", '"table": table, "user": user_id, "key"', '"table": table, "key"'),
            Edit("chalicelib/crypto/sealing.py", """f'"user":{_string(user_id)},"v":""", """f'"v":"""),
        ),
    ),
    Mutation(
        "edit_trusts_a_destroyed_key",
        "a PATCH racing a forget-all stores text sealed under the destroyed key: a 200 for text nothing opens",
        (ENCRYPTION,),
        (
            Edit(
                "chalicelib/crypto/keyring.py",
                ' or values.get(f":{TEXT_ATTRIBUTE}")',
                "",
            ),
        ),
    ),
    Mutation(
        "aad_without_provenance",
        "the associated data binds where a text is stored but not its provenance: a taint cleared in storage is believed",
        (TAMPERING,),
        (
            Edit(
                "chalicelib/crypto/sealing.py", '"key": dict(key), "provenance": dict(provenance)}', '"key": dict(key)}'
            ),
            Edit("chalicelib/crypto/sealing.py", '"provenance":{_flat(provenance)},', ""),
        ),
    ),
    Mutation(
        "aad_binds_the_id_not_the_key",
        "the associated data leaves out the item's key: a copy under a new sort key opens (listed twice)",
        (TAMPERING,),
        (
            Edit(
                "chalicelib/storage/entry_items.py",
                '    return {"user_id": user_id, "sk": sort_key}\n',
                '    return {"user_id": user_id}\n',
            ),
        ),
    ),
    Mutation(
        "damaged_items_raise",
        "an item with a missing or mistyped attribute raises instead of being absent: one half-written item is a 500",
        (TAMPERING,),
        (
            Edit(
                "chalicelib/storage/entry_items.py",
                '    except (KeyError, TypeError, ValueError) as exc:\n        raise unreadable(seal.table, "attributes") from exc\n',
                '    except ZeroDivisionError as exc:\n        raise unreadable(seal.table, "attributes") from exc\n',
            ),
        ),
    ),
    Mutation(
        "broken_key_row_is_a_500",
        "KMS refusing to unwrap a garbage or foreign key row escapes as a botocore error: a 500, not a 503 refusal",
        (TAMPERING,),
        (
            Edit(
                "chalicelib/crypto/keyring.py",
                "        except ClientError as exc:  # KMS said no",
                "        except ZeroDivisionError as exc:  # KMS said no",
            ),
        ),
    ),
    Mutation(
        "event_kind_stored_as_typed",
        "a worker's kind is stored as typed: a token or control characters stay in the events table and its stream",
        (EVENTS,),
        (
            Edit(
                "chalicelib/storage/events.py",
                '            "kind": known_kind(event.kind),  # None',
                '            "kind": event.kind,  # None',
            ),
        ),
    ),
    Mutation(
        "proposal_id_derived_from_the_event",
        "a proposal's id is derived from its session and event ids: after TTL the same ids propose an entry's id again",
        (EVENTS,),
        (
            Edit(
                "chalicelib/services/consumer.py",
                "        id=new_id(),  # never derived",
                "        id=(refusal_row_id(event) * 3)[:32],  # never derived",
            ),
        ),
    ),
    Mutation(
        "forget_keeps_the_text_key",
        "forgetting one text deletes its item but not its own key: a backup of the item opens again (issue 26)",
        (FINAL,),
        (
            Edit(
                "chalicelib/crypto/keyring.py",
                "        return [self.keys.delete_text_key(user_id, t, unless_held_in=unless_held_in) for t in ids]\n",
                "        return []\n",
            ),
        ),
    ),
    Mutation(
        "receipt_without_the_cache_age",
        "the forget's receipt says the text is unrecoverable at once, though a running function may hold its key for minutes",
        (FINAL,),
        (Edit("chalicelib/services/shredding.py", "timedelta(seconds=MAX_AGE_SECONDS + 1)", "timedelta(seconds=0)"),),
    ),
    Mutation(
        "refusal_keeps_the_text_key",
        "a refused event's text key stays: the event restored from a backup becomes a proposal once the agent may propose",
        (FINAL,),
        (
            Edit(
                "chalicelib/services/consumer.py",
                "        actions.extend(stores.keyring.shred(user_id, [event.text_id]))\n",
                "        pass\n",
            ),
        ),
    ),
    Mutation(
        "forget_all_keeps_the_key",
        "DELETE /v1/memory deletes the items but not the user's wrapped key: backups stay readable",
        (ENCRYPTION,),
        (
            Edit(
                "chalicelib/services/forget_all.py",
                "    stores.keyring.destroy(user_id, with_actions=[stores.entries.bump_version(user_id, only_if_stored=False)])\n",
                "",
            ),
        ),
    ),
    Mutation(
        "destroyed_key_keeps_the_tag",
        "forget-all destroys the key without moving the view version: after an interrupted forget-all a stale tag gets 304",
        ("tests/faults/test_faults.py",),
        (
            Edit(
                "chalicelib/services/forget_all.py",
                "with_actions=[stores.entries.bump_version(user_id, only_if_stored=False)]",
                "with_actions=[]",
            ),
        ),
    ),
    # ---- issue 24: no duplicates, keyed fingerprints, replace ----
    Mutation(
        "duplicate_claim_unconditional",
        "the fingerprint is put without its condition: a second POST of the same words is stored beside the first",
        (DUPLICATES,),
        (
            Edit(
                "chalicelib/storage/fingerprints.py",
                '                "ConditionExpression": f"attribute_not_exists(sk) OR {owner_test} OR {EXPIRY} <= :now",\n',
                "",
            ),
        ),
    ),
    Mutation(
        "comparison_keeps_case",
        "texts are compared without case folding: 'PREFERS TEA' is stored beside 'Prefers tea'",
        (DUPLICATES,),
        (
            Edit(
                "chalicelib/comparison.py",
                'readable(_FILLERS.sub(" ", text)).casefold())',
                'readable(_FILLERS.sub(" ", text)))',
            ),
        ),
    ),
    Mutation(
        "fingerprint_is_a_plain_hash",
        "the fingerprint is SHA-256 of the compared text: anyone with the tables can test a guess and link users",
        (DUPLICATES,),
        (
            Edit(
                "chalicelib/crypto/fingerprint.py",
                '    return hmac.new(key, comparison_form(text).encode("utf-8"), hashlib.sha256).hexdigest()',
                '    return hashlib.sha256(comparison_form(text).encode("utf-8")).hexdigest()',
            ),
        ),
    ),
    Mutation(
        "forget_keeps_the_fingerprint",
        "forgetting an entry leaves its fingerprint behind (only a later refusal would clear it)",
        (DUPLICATES,),
        (
            Edit(
                "chalicelib/storage/entries.py",
                "        return [delete, self.fingerprints.release(user_id, ref.fingerprint, ref.id)] if release else [delete]\n",
                "        return [delete]\n",
            ),
        ),
    ),
    Mutation(
        "edit_keeps_the_old_fingerprint",
        "an edit claims the new words without releasing the old ones",
        (DUPLICATES,),
        (
            Edit(
                "chalicelib/storage/entry_edits.py",
                "    return [claim, repo.fingerprints.release(current.user_id, current.fingerprint, current.id)]\n",
                "    return [claim]\n",
            ),
        ),
    ),
    Mutation(
        "proposal_skips_the_entry_check",
        "a proposal repeating an active entry is proposed anyway",
        (DUPLICATES,),
        (Edit("chalicelib/storage/proposals.py", "        if entries_check is not None:", "        if False:"),),
    ),
    Mutation(
        "replace_takes_a_slot",
        "accept with replaces counts one more entry: at 200 entries it is refused limit_reached",
        (DUPLICATES,),
        (Edit("chalicelib/services/memory.py", "count=0 if replaced else 1,", "count=1,"),),
    ),
    Mutation(
        "writes_trust_a_destroyed_key",
        "a POST racing a forget-all stores text sealed under the destroyed key: a 201 entry nothing opens",
        (ENCRYPTION,),
        (
            Edit(
                "chalicelib/services/memory.py",
                "        guarded = stores.keyring.guard(actions, sole_in=stores.entries.holder_name())\n",
                "        guarded = actions\n",
            ),
        ),
    ),
    Mutation(
        "deadline_hook_assumes_request_context",
        "the deadline hook writes request.context on any botocore: before 1.43.68 every DynamoDB and KMS call raises",
        ("tests/faults/test_invocation_deadline.py",),
        (
            Edit(
                "chalicelib/storage/retries.py",
                '    context = getattr(request, "context", None)\n    if isinstance(context, dict):\n        context["read_timeout"] = read_timeout\n',
                '    request.context["read_timeout"] = read_timeout\n    if True:\n        pass\n',
            ),
        ),
    ),
    Mutation(
        "cached_authorizer_outlives_its_token",
        "a user route believes a cached authorizer answer after the token's exp",
        ("tests/routes/test_authorizer_cache.py",),
        (
            Edit(
                "chalicelib/web_api.py",
                '    if not user_id or not token_unexpired(authorizer.get("tokenExpires")):\n',
                "    if not user_id:\n",
            ),
        ),
    ),
    Mutation(
        "handled_500s_uncounted",
        "a 500 the contract's handler answered is never counted: the ServerErrors alarm stays silent",
        ("tests/faults/test_alarm_metrics.py",),
        (
            Edit(
                "chalicelib/web_api.py",
                '        count("Unavailable" if response.status_code == 503 else "ServerErrors")\n',
                '        count("Unavailable") if response.status_code == 503 else None\n',
            ),
        ),
    ),
)

# The test that caught each mutation in the last full run (`make mutate --show` prints them). A mutation
# runs its catcher alone first and stops there when it fails; otherwise (no hint, or a hint that no longer
# catches it) all its test files run, as they always did. Keeps every mutation judged by its files while
# `make mutate` costs one test each instead of the files up to the first failure.
CATCHERS: dict[str, str] = {
    "deadline_hook_assumes_request_context": "tests/faults/test_invocation_deadline.py::test_on_a_botocore_without_a_request_context_the_hook_lets_calls_through_and_still_keeps_the_deadline",
    "cached_authorizer_outlives_its_token": "tests/routes/test_authorizer_cache.py::test_a_cached_answer_works_until_the_token_expires_and_then_is_a_401_that_changes_nothing",
    "handled_500s_uncounted": "tests/faults/test_alarm_metrics.py::test_every_500_the_api_answers_is_counted_with_no_text",
    "user_token_honors_user_id_query": "tests/routes/test_tenancy.py::test_user_id_query_is_ignored_for_user_tokens[GET-/v1/memory?user_id=alice-None]",
    "drop_manifest_gate": "tests/routes/test_agents.py::test_agent_gets_memory_only_when_asked_with_a_user_who_turned_it_on",
    "drop_context_freezing": "tests/sdk/test_sdk_memory.py::test_memory_item_fields_cannot_be_assigned",
    "context_items_become_a_list": "tests/sdk/test_sdk_memory.py::test_agent_context_and_memory_are_frozen",
    "drop_session_user_gate": "tests/routes/test_agents.py::test_agent_gets_memory_only_when_asked_with_a_user_who_turned_it_on",
    "session_user_falls_back_to_thread": "tests/routes/test_mutation_gaps.py::test_a_session_without_a_user_gets_nothing_whatever_its_other_ids_name",
    "drop_memory_on_gate": "tests/routes/test_agents.py::test_agent_gets_memory_only_when_asked_with_a_user_who_turned_it_on",
    "untainted_proposals": "tests/routes/test_agents.py::test_proposals_from_tainted_sessions_are_marked",
    "accept_launders_taint": "tests/routes/test_proposals.py::test_accept_makes_an_active_entry_that_keeps_its_provenance",
    "reregistration_resets_session": "tests/routes/test_mutation_gaps.py::test_re_registering_a_tainted_session_keeps_its_proposals_tainted",
    "no_credential_check_on_patch": "tests/routes/test_validation.py::test_credentials_are_refused_on_post_and_patch_naming_the_shape",
    "journal_text_in_context": "tests/routes/test_agents.py::test_agent_gets_memory_only_when_asked_with_a_user_who_turned_it_on",
    "context_not_journaled": "tests/routes/test_agents.py::test_agent_gets_memory_only_when_asked_with_a_user_who_turned_it_on",
    "expired_entries_in_context": "tests/routes/test_mutation_gaps.py::test_expired_entries_are_never_given_to_agents",
    "skip_operator_journal": "tests/routes/test_operators.py::test_operator_reads_a_named_users_memory_and_is_journaled",
    "operator_routes_check_host_list": "tests/routes/test_operators.py::test_operator_reads_a_named_users_memory_and_is_journaled",
    "forget_all_keeps_proposals": "tests/routes/test_user_api.py::test_forget_all_removes_entries_and_proposals_keeps_switch_and_journals_counts",
    "session_cap_six": "tests/routes/test_agents.py::test_sixth_proposal_from_one_session_is_refused",
    "session_cap_constant_six": "tests/routes/test_agents.py::test_sixth_proposal_from_one_session_is_refused",
    "gateway_sibling_variables_allowed": "tests/deploy/test_gateway_rules.py::test_the_template_of_854b17a_is_refused_for_its_sibling_variables_and_its_30_s_function",
    "export_whole_journal": "tests/routes/test_export_size.py::test_the_largest_users_export_fits_one_lambda_response_and_the_journal_follows_by_cursor",
    "redrive_deletes_failed_messages": "tests/stream/test_redrive.py::test_a_failing_consumer_leaves_the_message_and_the_events_pending",
    "local_stream_unfiltered": "tests/stream/test_event_filter.py::test_the_template_filter_keeps_pending_propose_events_only",
    "authorizer_refusals_uncounted": "tests/routes/test_metrics.py::test_the_entry_cap_and_refused_tokens_are_counted",
    "taint_read_at_post_time_only": "tests/faults/test_faults_stream.py::test_a_session_marked_untrusted_after_posting_but_before_handling_yields_a_tainted_proposal",
    "patch_credentials_checked_only_for_text_alone": "tests/routes/test_rules_aimed.py::test_a_patch_changing_text_with_other_fields_still_refuses_a_credential",
    "forget_keeps_its_slot": "tests/routes/test_rules_aimed.py::test_at_the_cap_forgetting_one_entry_frees_its_slot",
    "entry_limit_2001_bytes": "tests/routes/test_rules_aimed.py::test_exactly_2000_bytes_is_kept_and_2001_refused[ascii]",
    "entry_limit_counts_characters": "tests/routes/test_rules_aimed.py::test_exactly_2000_bytes_is_kept_and_2001_refused[two-byte]",
    "conflicts_not_retried": "tests/faults/test_faults.py::test_a_passing_fault_is_retried_and_the_entry_is_stored_once[TransactionConflict]",
    "exhausted_retries_are_500": "tests/faults/test_faults.py::test_when_retries_run_out_the_answer_is_503_and_nothing_changed[PUT /v1/memory/settings-ThrottlingException]",
    "no_retry_after": "tests/faults/test_faults.py::test_when_retries_run_out_the_answer_is_503_and_nothing_changed[PUT /v1/memory/settings-ThrottlingException]",
    "forget_all_journals_at_the_end": "tests/faults/test_faults.py::test_forget_all_interrupted_midway_says_so_and_a_retry_finishes_it",
    "forget_all_past_the_key_claims_nothing_changed": "tests/faults/test_faults.py::test_forget_all_interrupted_midway_says_so_and_a_retry_finishes_it",
    "recount_keeps_orphans": "tests/routes/test_orphans.py::test_at_the_entry_cap_orphans_make_room_and_entries_under_the_new_key_stay",
    "recount_deletes_whatever_is_sealed": "tests/routes/test_orphans.py::test_at_the_entry_cap_orphans_make_room_and_entries_under_the_new_key_stay",
    "consumer_refuses_at_a_waiting_cap_of_orphans": "tests/routes/test_orphans.py::test_at_the_waiting_cap_orphaned_proposals_make_room_for_an_agents_proposal",
    "consumer_fails_the_whole_batch": "tests/faults/test_faults_stream.py::test_throttling_fails_only_the_affected_record_and_the_retry_converges",
    "operator_reads_before_journaling": "tests/faults/test_faults_operators.py::test_an_operator_access_whose_journal_write_is_refused_does_not_happen[GET-/v1/operator/memory?user_id=alice-ThrottlingException]",
    "edit_keeps_the_etag": "tests/routes/test_freshness.py::test_every_write_that_changes_the_view_changes_the_tag",
    "corrections_skip_the_text_rules": "tests/routes/test_corrections.py::test_corrected_text_passes_the_same_rules_and_a_refusal_loses_nothing",
    "credentials_read_as_typed": "tests/routes/test_credentials_routes.py::test_post_refuses_every_probe_by_shape_and_stores_nothing",
    "split_tokens_not_rejoined": "tests/routes/test_credentials_routes.py::test_post_refuses_every_probe_by_shape_and_stores_nothing",
    "ids_may_hold_credentials": "tests/routes/test_credentials_routes.py::test_session_names_holding_a_credential_are_refused_and_nothing_is_registered[thread_id]",
    "prompt_block_leaves_variation_selectors": "tests/sdk/test_sdk_prompt_hidden.py::test_hidden_and_lookalike_characters_are_escaped_and_decode_back[combining_grapheme_joiner]",
    "js_prompt_block_shows_braille_blank": "tests/sdk/test_sdk_js_parity.py::test_both_sdks_escape_the_same_characters_but_those_assigned_after_pythons_unicode",
    "text_stored_unsealed": "tests/routes/test_encryption.py::test_stored_entries_hold_sealed_text_and_no_plaintext",
    "aad_without_user_id": "tests/unit/test_sealing.py::test_sealed_text_opens_only_for_its_table_user_key_and_provenance",
    "forget_all_keeps_the_key": "tests/routes/test_encryption.py::test_forget_all_destroys_the_key_and_a_backup_of_the_old_items_no_longer_opens",
    "destroyed_key_keeps_the_tag": "tests/faults/test_faults.py::test_forget_all_refused_right_after_the_key_went_says_nothing_opens_and_deleted_zero",
    "writes_trust_a_destroyed_key": "tests/routes/test_encryption.py::test_a_text_sealed_under_a_key_destroyed_before_it_lands_is_sealed_again",
}


class MutationRotted(Exception):
    """The code moved on and a mutation's original text is gone (or ambiguous): fix the mutation."""


@dataclass(frozen=True)
class Summary:
    """What a pytest run reported: counts from its last line and the ids of its failed tests."""

    failed: int
    errors: int
    failed_ids: tuple[str, ...]
    last_line: str
    errored_ids: tuple[str, ...] = ()  # tests whose setup or teardown raised
    evidence: tuple[str, ...] = ()  # the first "E  ..." lines: why the first test failed


@dataclass(frozen=True)
class Outcome:
    name: str
    verdict: str
    summary: Summary
    exit_code: int
    seconds: float

    def line(self) -> str:
        first = self.summary.failed_ids[0] if self.summary.failed_ids else ""
        if self.verdict == CAUGHT:
            note = f"({self.summary.failed} failed: {first})"
        elif self.verdict == SURVIVED:
            note = ""
        else:
            note = f"(pytest exit {self.exit_code}: {self.summary.last_line or 'no output'})"
        return f"{self.verdict:<8} {self.name}  {note}".rstrip() + f"  [{self.seconds:.0f}s]"


def classify(exit_code: int, summary: Summary) -> str:
    """Only a failed test catches a mutation; setup errors, collection errors and timeouts do not."""
    if exit_code == 0:
        return SURVIVED
    if exit_code == PYTEST_TESTS_FAILED and summary.failed > 0:
        return CAUGHT
    return ERROR


_RESULT_LINE = re.compile(r"^(FAILED|ERROR) (\S+?::.+?)(?: - .*)?$")


def parse_summary(output: str) -> Summary:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    counts = {word: int(number) for number, word in re.findall(r"(\d+) (failed|errors?)\b", last)}
    results = [m.groups() for m in (_RESULT_LINE.match(line) for line in lines) if m]
    return Summary(
        failed=counts.get("failed", 0),
        errors=counts.get("error", 0) + counts.get("errors", 0),
        failed_ids=tuple(nodeid for kind, nodeid in results if kind == "FAILED"),
        errored_ids=tuple(nodeid for kind, nodeid in results if kind == "ERROR"),
        last_line=last[:200],
        evidence=tuple(line[:200] for line in lines if line.startswith("E "))[:6],
    )


# ---- applying ---------------------------------------------------------------------------------


def _checked_text(mutation: Mutation, edit: Edit, root: Path) -> str:
    path = root / edit.path
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    found = text.count(edit.old)
    if found != 1:
        raise MutationRotted(
            f"{mutation.name}: mutation no longer applies: its original text is in {edit.path} "
            f"{found} times, not exactly once"
        )
    return text


def check_applies(mutation: Mutation, root: Path = ROOT) -> None:
    for edit in mutation.edits:
        _checked_text(mutation, edit, root)


def apply(mutation: Mutation, root: Path) -> None:
    for edit in mutation.edits:
        text = _checked_text(mutation, edit, root)
        (root / edit.path).write_text(text.replace(edit.old, edit.new), encoding="utf-8")


def source_files(root: Path = ROOT) -> list[str]:
    """The working tree as git sees it (tracked, plus untracked files not ignored), relative paths."""
    try:
        listed = (
            subprocess.run(
                ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                cwd=root,
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .split("\0")
        )
        return sorted({name for name in listed if name and (root / name).is_file()})
    except (OSError, subprocess.CalledProcessError):
        return sorted(
            str(path.relative_to(root))
            for path in root.rglob("*")
            if path.is_file() and not SKIPPED_DIRS.intersection(path.relative_to(root).parts)
        )


def snapshot(target: Path, source: Path = ROOT) -> None:
    """Copy the working tree once; every run starts from this copy, so all see the same code.

    Others edit the checkout meanwhile: a file that vanishes between listing and copying is skipped.
    """
    for name in source_files(source):
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(source / name, destination)
        except FileNotFoundError:
            continue


# ---- running ----------------------------------------------------------------------------------


def run_pytest(root: Path, tests: Sequence[str], *, stop_first: bool, deselect: Iterable[str] = ()) -> tuple[int, str]:
    command = [str(PYTHON), "-m", "pytest", "-q", "-rfE", "-p", "no:randomly", *(["-x"] if stop_first else [])]
    command += [arg for nodeid in sorted(deselect) for arg in ("--deselect", nodeid)]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}  # never the real tree
    # No bytecode: `chalice package` (the package tests) imports the staged app and would zip its __pycache__.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    try:
        done = subprocess.run(
            [*command, *tests], cwd=root, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS
        )
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {RUN_TIMEOUT_SECONDS}s"
    return done.returncode, done.stdout + done.stderr


def run_in_scratch(
    name: str, pristine: Path, tests: Sequence[str], mutation: Mutation | None, deselect: Iterable[str]
) -> Outcome:
    """Copy the snapshot, apply the mutation (if any) and run `tests` there; stop at the first failure."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mutate-{name}-") as scratch:
        root = Path(scratch) / "tree"
        try:
            shutil.copytree(pristine, root, symlinks=True)
            if mutation is not None:
                apply(mutation, root)
        except (OSError, MutationRotted) as exc:
            return Outcome(name, ERROR, Summary(0, 0, (), str(exc)[:200]), -2, time.monotonic() - started)
        catcher = CATCHERS.get(name, "") if mutation is not None else ""
        if catcher and catcher not in deselect:
            # The test that caught it last time, alone: a catch there is the same proof, in seconds. If it no
            # longer catches it (changed, renamed), the mutation is judged by all its files, as without a hint.
            exit_code, output = run_pytest(root, [catcher], stop_first=True, deselect=deselect)
            summary = parse_summary(output)
            if classify(exit_code, summary) == CAUGHT:
                return Outcome(name, CAUGHT, summary, exit_code, time.monotonic() - started)
        exit_code, output = run_pytest(root, tests, stop_first=mutation is not None, deselect=deselect)
    summary = parse_summary(output)
    return Outcome(name, classify(exit_code, summary), summary, exit_code, time.monotonic() - started)


def baseline(pristine: Path, tests: Sequence[str], jobs: int) -> Outcome:
    """`tests` (files or test ids) on the unmutated copy, in `jobs` parallel parts: what fails here is deselected."""
    parts = [list(tests[i::jobs]) for i in range(jobs) if tests[i::jobs]]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        runs = list(pool.map(lambda part: run_in_scratch("baseline", pristine, part, None, ()), parts))
    # Failed tests and tests whose setup errored are tolerated (and deselected later); a run that did
    # not get as far as running tests (collection error, timeout) makes the baseline an ERROR.
    worst = next((run for run in runs if run.exit_code not in (0, PYTEST_TESTS_FAILED)), runs[0])
    summary = Summary(
        failed=sum(r.summary.failed for r in runs),
        errors=sum(r.summary.errors for r in runs),
        failed_ids=tuple(nodeid for run in runs for nodeid in run.summary.failed_ids),
        last_line=worst.summary.last_line,
        errored_ids=tuple(nodeid for run in runs for nodeid in run.summary.errored_ids),
    )
    verdict = ERROR if worst.exit_code not in (0, PYTEST_TESTS_FAILED) else SURVIVED
    return Outcome("baseline", verdict, summary, worst.exit_code, max(r.seconds for r in runs))


def select(names: Sequence[str]) -> list[Mutation]:
    by_name = {m.name: m for m in MUTATIONS}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SystemExit(f"unknown mutation(s): {', '.join(unknown)}; see --list")
    return [by_name[n] for n in names] if names else list(MUTATIONS)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Apply each named mutation to a scratch copy; fail unless every one is caught."
    )
    parser.add_argument("names", nargs="*", help="run only these mutations")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--jobs", type=int, default=JOBS)
    parser.add_argument("--show", action="store_true", help="print why the first failing test failed")
    parser.add_argument(
        "--no-baseline", action="store_true", help="skip the unmutated run (pre-existing failures then count)"
    )
    args = parser.parse_args(argv)
    chosen = select(args.names)
    if args.list:
        for m in chosen:
            print(f"{m.name:<34} {' '.join(m.tests)}\n    {m.why}")
        return 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutate-snapshot-") as scratch:
        pristine = Path(scratch) / "tree"
        snapshot(pristine)
        try:
            for m in chosen:
                check_applies(m, pristine)
        except MutationRotted as rotted:
            print(f"ERROR    {rotted}", file=sys.stderr)
            return 2
        outcomes = run_all(chosen, pristine, jobs=args.jobs, use_baseline=not args.no_baseline, show=args.show)
    if outcomes is None:
        return 2
    caught = sum(1 for o in outcomes if o.verdict == CAUGHT)
    print(f"{caught}/{len(outcomes)} mutations caught in {time.monotonic() - started:.0f}s")
    return 0 if caught == len(outcomes) else 1


def run_all(
    chosen: Sequence[Mutation], pristine: Path, *, jobs: int, use_baseline: bool, show: bool
) -> list[Outcome] | None:
    """Every mutation `jobs` at a time (each line printed as it finishes), then the baseline of the tests that caught them."""
    deselect: set[str] = set()
    outcomes = {
        m.name: outcome
        for m, outcome in zip(chosen, _run_mutations(chosen, pristine, jobs, deselect, show), strict=True)
    }
    confirmed: set[str] = set()
    while use_baseline:
        catchers = sorted(
            {nodeid for o in outcomes.values() if o.verdict == CAUGHT for nodeid in o.summary.failed_ids} - confirmed
        )
        if not catchers:
            break
        base = baseline(pristine, catchers, 1 if len(catchers) < 8 else max(1, jobs))
        if base.verdict == ERROR:
            print(base.line(), flush=True)
            return None
        red = {*base.summary.failed_ids, *base.summary.errored_ids}
        confirmed.update(set(catchers) - red)
        print(
            f"baseline: {len(catchers) - len(red)} of the {len(catchers)} catching tests pass unmutated [{base.seconds:.0f}s]",
            flush=True,
        )
        if not red:
            break
        deselect |= red
        print(f"WARNING  {len(red)} test(s) already fail unmutated, deselected: {', '.join(sorted(red))}", flush=True)
        again = [m for m in chosen if red & set(outcomes[m.name].summary.failed_ids)]
        outcomes.update(
            {m.name: o for m, o in zip(again, _run_mutations(again, pristine, jobs, deselect, show), strict=True)}
        )
    return [outcomes[m.name] for m in chosen]


def _run_mutations(
    chosen: Sequence[Mutation], pristine: Path, jobs: int, deselect: set[str], show: bool
) -> list[Outcome]:
    by_name: dict[str, Outcome] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(run_in_scratch, m.name, pristine, m.tests, m, frozenset(deselect)) for m in chosen]
        for future in as_completed(futures):
            outcome = future.result()
            by_name[outcome.name] = outcome
            print(outcome.line(), flush=True)
            if show:
                print("".join(f"    {line}\n" for line in outcome.summary.evidence), end="", flush=True)
    return [by_name[m.name] for m in chosen]


if __name__ == "__main__":
    sys.exit(main())
