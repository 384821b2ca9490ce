"""Under AWS's own refusals the user routes retry what is retryable and otherwise answer 503 having changed nothing.

Faults come from local/faults.py on the app's real client (moto behind it); after each refusal the
stored items, counters and journal are read back and compared with what was there before.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.crypto.cache import KeyCache
from local.faults import FaultInjector, from_environment
from tests.support.invariants import assert_counters_match
from tests.support.openapi_check import check
from tests.support.proposals import add_proposal


def _call(api: Any, method: str, path: str, user: str, body: Any = None) -> tuple[int, Any, dict[str, str]]:
    response = getattr(api.client.http, method.lower())(
        path, headers=api.headers(user), body=json.dumps(body) if body is not None else None
    )
    text = response.body.decode() if isinstance(response.body, bytes) else response.body
    return response.status_code, (json.loads(text) if text else None), dict(response.headers)


def _snapshot(stores: Any, user: str) -> dict[str, Any]:
    state, entries = stores.entries.load(user)
    return {
        "state": state,
        "entries": sorted((e.id, e.text, e.pinned, e.kind) for e in entries),
        "proposals": sorted(p.id for p in stores.proposals.list(user)),
        "journal": [(r.action, dict(r.details)) for r in stores.journal.all(user)],
    }


def _assert_unavailable(status: int, body: Any, headers: dict[str, str]) -> None:
    assert status == 503, body
    assert body["code"] == "unavailable" and isinstance(body["message"], str)
    assert int(headers["Retry-After"]) >= 1


# ---- the injector itself ----------------------------------------------------------------------


def test_the_injector_is_inert_without_rules(api: Any, stores: Any, faults: FaultInjector) -> None:
    api.turn_on("alice")
    api.add("alice", "likes tea")
    assert faults.stats()["faults"] == 0 and faults.stats()["calls"] >= 2
    assert from_environment({}) is None and from_environment({"MEMORY_FAULT_RATE": ""}) is None


def test_every_nth_call_of_one_operation_on_one_table(
    api: Any, stores: Any, faults: FaultInjector, table_names: Any
) -> None:
    entries, proposals = table_names.entries, table_names.proposals
    api.turn_on("alice")
    before = len(list(faults.seen("Query", entries)))  # turning on reads the agent rows once (services/agent_rows.py)
    faults.add(error="InternalServerError", operation="Query", table=entries, every=2)
    for _ in range(3):
        assert api.call("GET", "/v1/memory", "alice")[0] == 200
    entries_queries = list(faults.seen("Query", entries))[before:]
    # Calls 2 and 4 fail; botocore retries each (attempt 2), and the retry is the next call.
    assert [c.fault for c in entries_queries] == [None, "InternalServerError", None, "InternalServerError", None]
    assert [c.attempt for c in entries_queries] == [1, 1, 2, 1, 2]
    assert all(c.fault is None for c in faults.seen("Query", proposals))


def test_a_seeded_rate_fails_the_same_calls_every_time(aws_credentials: None) -> None:
    def run(seed: int) -> list[str | None]:
        injector = FaultInjector(seed=seed)
        injector.add(rate=0.3, errors=("ThrottlingException", "Timeout"))
        return [injector._choose("dynamodb", "GetItem", ("t",)) for _ in range(200)]

    first, again, other = run(7), run(7), run(8)
    assert first == again and first != other
    assert 30 < sum(1 for f in first if f) < 90  # about 30 % of 200
    env = from_environment({"MEMORY_FAULT_RATE": "0.05", "MEMORY_FAULT_SEED": "7"})
    assert env is not None and env.seed == 7 and env.rules[0].rate == 0.05


@pytest.mark.parametrize(
    "fault, code",
    [
        ("ThrottlingException", "ThrottlingException"),
        ("ProvisionedThroughputExceededException", "ProvisionedThroughputExceededException"),
        ("RequestLimitExceeded", "RequestLimitExceeded"),
        ("InternalServerError", "InternalServerError"),
        ("TransactionConflict", "TransactionCanceledException"),
    ],
)
def test_faults_are_awss_own_error_shapes(
    stores: Any, faults: FaultInjector, fault: str, code: str, table_names: Any
) -> None:
    from botocore.exceptions import ClientError

    journal = table_names.journal
    faults.add(error=fault)
    raw = stores.client.unguarded
    with pytest.raises(ClientError) as caught:
        raw.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": journal, "Item": {"user_id": {"S": "u"}, "sk": {"S": "a"}}}},
                {"Put": {"TableName": journal, "Item": {"user_id": {"S": "u"}, "sk": {"S": "b"}}}},
            ]
        )
    error = caught.value.response
    assert error["Error"]["Code"] == code
    if fault == "TransactionConflict":
        assert sorted(r["Code"] for r in error["CancellationReasons"]) == ["None", "TransactionConflict"]
    retried = fault != "TransactionConflict"  # botocore's standard mode retries all but the conflict
    assert len(list(faults.seen("TransactWriteItems"))) == (5 if retried else 1)
    faults.clear()
    assert stores.journal.all("u") == []  # a faulted call never reached moto


# ---- retried, then fine -----------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["ThrottlingException", "TransactionConflict", "InternalServerError", "Timeout"])
def test_a_passing_fault_is_retried_and_the_entry_is_stored_once(
    api: Any, stores: Any, faults: FaultInjector, fault: str
) -> None:
    api.turn_on("alice")
    first = _call(api, "POST", "/v1/memory", "alice", {"text": "first"})[1]  # her data key is made here (issue 12)
    faults.calls.clear()
    faults.add(error=fault, operation="TransactWriteItems", times=2)
    status, body, _ = _call(api, "POST", "/v1/memory", "alice", {"text": "likes green tea"})
    assert status == 201, body
    assert [c.fault for c in faults.seen("TransactWriteItems")] == [fault, fault, None]
    assert {e.id for e in stores.entries.load("alice")[1]} == {first["id"], body["id"]}
    assert assert_counters_match(stores, "alice")["active"] == 2
    assert faults.slept  # every retry waited (jittered backoff), none hammered


# ---- retries run out: 503, nothing changed ---------------------------------------------------


def _prepared(api: Any, stores: Any) -> dict[str, str]:
    api.turn_on("alice")
    entry = api.add("alice", "likes green tea")
    proposal = add_proposal(stores, "alice", "maybe likes cats")
    return {"entry": entry["id"], "proposal": proposal.id}


ROUTES = [
    ("PUT", "/v1/memory/settings", {"enabled": False}),
    ("POST", "/v1/memory", {"text": "a new note"}),
    ("PATCH", "/v1/memory/{entry}", {"text": "changed", "pinned": True}),
    ("DELETE", "/v1/memory/{entry}", None),
    ("DELETE", "/v1/memory", None),
    ("POST", "/v1/memory/{proposal}/accept", None),
    ("POST", "/v1/memory/{proposal}/reject", None),
    ("GET", "/v1/memory", None),
]


@pytest.mark.parametrize("fault", ["ThrottlingException", "TransactionConflict", "InternalServerError", "Timeout"])
@pytest.mark.parametrize("method, path, body", ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_when_retries_run_out_the_answer_is_503_and_nothing_changed(
    api: Any, stores: Any, faults: FaultInjector, fault: str, method: str, path: str, body: Any
) -> None:
    ids = _prepared(api, stores)
    before = _snapshot(stores, "alice")
    faults.add(error=fault)  # every DynamoDB call fails from here on
    status, answer, headers = _call(api, method, path.format(**ids), "alice", body)
    _assert_unavailable(status, answer, headers)
    check(method, path.replace("{entry}", "{id}").replace("{proposal}", "{id}"), status, answer)  # as openapi.yaml says
    faults.clear()
    assert _snapshot(stores, "alice") == before
    assert_counters_match(stores, "alice")
    assert "tea" not in json.dumps(answer) and "cats" not in json.dumps(answer)


def test_a_transaction_whose_answer_was_lost_is_retried_with_its_token_and_applied_once(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    api.turn_on("alice")
    first = _call(api, "POST", "/v1/memory", "alice", {"text": "first"})[1]  # her data key is made here (issue 12)
    faults.calls.clear()
    faults.add(error="LostResponse", operation="TransactWriteItems", times=1)  # applied, then a 500
    status, body, _ = _call(api, "POST", "/v1/memory", "alice", {"text": "likes green tea"})
    assert status == 201, body
    assert [c.fault for c in faults.seen("TransactWriteItems")] == ["LostResponse", None]
    # AWS's token made the retry a no-op
    assert {e.id for e in stores.entries.load("alice")[1]} == {first["id"], body["id"]}
    assert assert_counters_match(stores, "alice")["active"] == 2


def test_conflicts_are_retried_a_bounded_number_of_times_with_jitter(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    from chalicelib.storage.retries import CONFLICT_ATTEMPTS, CONFLICT_MAX_SECONDS

    api.turn_on("alice")
    faults.calls.clear()
    faults.add(error="TransactionConflict", operation="TransactWriteItems")
    status, body, headers = _call(api, "POST", "/v1/memory", "alice", {"text": "x"})
    _assert_unavailable(status, body, headers)
    assert len(list(faults.seen("TransactWriteItems"))) == CONFLICT_ATTEMPTS
    assert len(faults.slept) == CONFLICT_ATTEMPTS - 1 and all(0 <= s <= CONFLICT_MAX_SECONDS for s in faults.slept)
    assert len(set(faults.slept)) == len(faults.slept)  # jittered, not a fixed delay


def test_a_condition_failure_is_never_retried_or_reported_as_unavailable(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    status, body, _ = _call(api, "POST", "/v1/memory", "alice", {"text": "memory is off"})
    assert (status, body["code"]) == (409, "memory_off")
    entry_writes = [c for c in faults.seen("TransactWriteItems") if any("entries" in t for t in c.tables)]
    assert len(entry_writes) == 1  # (the other transaction made her data key, issue 12)


# ---- forget-all spans several transactions ---------------------------------------------------


@pytest.mark.slow
def test_forget_all_interrupted_midway_says_so_and_a_retry_finishes_it(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    from chalicelib.services.forget_all import _ITEMS_PER_TRANSACTION as CHUNK

    api.turn_on("alice")
    for n in range(150):
        api.add("alice", f"note number {n}")
    for n in range(10):
        add_proposal(stores, "alice", f"proposal {n}")
    # The key's destruction (issue 12) and the first chunk's transaction go through; every later one
    # is refused, retries and all.
    faults.add(error="InternalServerError", operation="TransactWriteItems", after=2)
    status, body, headers = _call(api, "DELETE", "/v1/memory", "alice")
    _assert_unavailable(status, body, headers)
    check("DELETE", "/v1/memory", status, body)
    assert body["deleted"] == CHUNK
    counts = assert_counters_match(stores, "alice")
    assert counts["entries"] + counts["proposals"] == 160 - CHUNK
    rows = [dict(r.details) for r in stores.journal.all("alice") if r.action == "keep.memory.forget_all"]
    # The journal says exactly what went, no more, with its receipt (issue 26): when nothing of it opens anywhere.
    assert [{k: v for k, v in r.items() if k != "unrecoverable_by"} for r in rows] == [
        {"entries": CHUNK, "proposals": 0}
    ]
    assert [set(r) for r in rows] == [{"entries", "proposals", "unrecoverable_by"}]
    faults.clear()
    status, body, _ = _call(api, "DELETE", "/v1/memory", "alice")
    assert status == 200 and body == {"deleted": 160 - CHUNK}
    assert assert_counters_match(stores, "alice") == {"active": 0, "entries": 0, "waiting": 0, "proposals": 0}
    rows = [dict(r.details) for r in stores.journal.all("alice") if r.action == "keep.memory.forget_all"]
    assert sum(r["entries"] for r in rows) == 150 and sum(r["proposals"] for r in rows) == 10
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["enabled"] is True and view["items"] == [] and view["proposals"] == []


def test_forget_all_refused_right_after_the_key_went_says_nothing_opens_and_deleted_zero(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    """Not a "nothing was changed" 503: the key is destroyed first, so the answer carries `deleted: 0`."""
    api.turn_on("alice")
    for n in range(3):
        api.add("alice", f"note number {n}")
    add_proposal(stores, "alice", "a waiting proposal")
    tags = {path: api.tagged_get(path, "alice")[2] for path in ("/v1/memory", "/v1/inbox")}
    faults.add(
        error="InternalServerError", operation="TransactWriteItems", after=1
    )  # the key's destruction goes through
    status, body, headers = _call(api, "DELETE", "/v1/memory", "alice")
    _assert_unavailable(status, body, headers)
    check("DELETE", "/v1/memory", status, body)
    assert body["deleted"] == 0 and "no longer be read" in body["message"]
    actions = [r.action for r in stores.journal.all("alice")]
    assert "keep.memory.key_destroyed" in actions and "keep.memory.forget_all" not in actions
    # Everything is still stored and counted, and none of it opens: not listed, not given to agents.
    assert assert_counters_match(stores, "alice") == {"active": 3, "entries": 3, "waiting": 1, "proposals": 1}
    faults.clear()
    # What GET shows changed with the key alone (red team, issue 21 #8): a tag from before is no 304.
    for path, before in tags.items():
        status, shown, after = api.tagged_get(path, "alice", before)
        assert status == 200 and after != before and shown is not None, path
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["items"] == [] and view["proposals"] == []
    status, body, _ = _call(api, "DELETE", "/v1/memory", "alice")
    assert status == 200 and body == {"deleted": 4}
    assert assert_counters_match(stores, "alice") == {"active": 0, "entries": 0, "waiting": 0, "proposals": 0}


def test_forget_all_whose_key_destruction_is_refused_changes_nothing(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    api.turn_on("alice")
    api.add("alice", "likes tea")
    before = _snapshot(stores, "alice")
    faults.add(error="InternalServerError", operation="TransactWriteItems")
    status, body, headers = _call(api, "DELETE", "/v1/memory", "alice")
    _assert_unavailable(status, body, headers)
    assert "deleted" not in body
    faults.clear()
    assert _snapshot(stores, "alice") == before
    assert [e["text"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]] == ["likes tea"]


# ---- KMS (the users' data keys) ----------------------------------------------------------------


@pytest.mark.parametrize("fault", ["KMSThrottling", "KMSInternal"])
def test_kms_refusing_a_new_data_key_is_503_and_stores_nothing(
    api: Any, stores: Any, faults: FaultInjector, fault: str
) -> None:
    api.turn_on("alice")
    before = stored_items(stores, "alice")
    faults.add(service="kms", error=fault)
    status, body, headers = _call(api, "POST", "/v1/memory", "alice", {"text": "likes green tea"})
    _assert_unavailable(status, body, headers)
    check("POST", "/v1/memory", status, body)
    faults.clear()
    assert stored_items(stores, "alice") == before and stores.keyring.keys.get("alice") is None
    assert assert_counters_match(stores, "alice")["active"] == 0
    assert "tea" not in json.dumps(body)


def test_kms_refusing_to_unwrap_a_key_is_503_and_a_retry_reads_everything(
    api: Any, stores: Any, faults: FaultInjector
) -> None:
    api.turn_on("alice")
    entry = _call(api, "POST", "/v1/memory", "alice", {"text": "likes green tea"})[1]
    # A cold container (no data key and no text key cached): the wrapped data key must be unwrapped by KMS.
    stores.keyring.cache = KeyCache()
    faults.add(service="kms", error="KMSThrottling")
    status, body, headers = _call(api, "GET", "/v1/memory", "alice")
    _assert_unavailable(status, body, headers)
    faults.clear()
    status, body, _ = _call(api, "GET", "/v1/memory", "alice")
    assert status == 200 and [item["id"] for item in body["items"]] == [entry["id"]]


def stored_items(stores: Any, user_id: str) -> list[str]:
    return sorted(ref.id for ref in stores.entries.stored(user_id)[1])
