"""Rules whose deliberate break went unnoticed (or was noticed only by an unrelated, racy test), each pinned here.

Through the real routes against moto; after each step the stored items and counters are read back.
`make mutate` breaks each rule on purpose and expects a test in this file to fail.
"""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.models import MAX_ACTIVE_ENTRIES, MAX_ENTRY_BYTES
from tests.routes.test_validation import _credential_samples
from tests.support.iam import iam_call
from tests.support.invariants import assert_counters_match
from tests.support.proposals import add_proposal
from tests.support.stack import OPERATOR_ARN


@pytest.fixture
def kept(api: Any) -> dict[str, Any]:
    api.turn_on("alice")
    return api.add("alice", "kept entry")


# ---- a PATCH that changes several fields still checks the text ----------------------------------


@pytest.mark.parametrize(("shape", "text"), _credential_samples())
@pytest.mark.parametrize(
    "others",
    [{"pinned": True}, {"pinned": False, "expires_in_days": None}, {"expires_in_days": 3, "pinned": True}],
    ids=str,
)
def test_a_patch_changing_text_with_other_fields_still_refuses_a_credential(
    api: Any, stores: Any, kept: dict[str, Any], shape: str, text: str, others: dict[str, Any]
) -> None:
    status, answer = api.call("PATCH", f"/v1/memory/{kept['id']}", "alice", {"text": text, **others})
    assert (status, answer["code"], answer["shape"]) == (422, "credential_refused", shape)
    [stored] = stores.entries.load("alice")[1]
    assert (stored.text, stored.pinned, stored.expires_at) == ("kept entry", False, None)


# ---- forgetting one entry frees its slot; counters equal stored items after every route --------


@pytest.mark.slow
def test_at_the_cap_forgetting_one_entry_frees_its_slot(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    ids = [api.add("alice", f"note {n}")["id"] for n in range(MAX_ACTIVE_ENTRIES)]
    assert assert_counters_match(stores, "alice")["active"] == MAX_ACTIVE_ENTRIES
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "one too many"})
    assert (status, body["code"]) == (409, "limit_reached")
    assert api.call("DELETE", f"/v1/memory/{ids[17]}", "alice")[0] == 204
    assert assert_counters_match(stores, "alice")["active"] == MAX_ACTIVE_ENTRIES - 1
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "fits again"})
    assert status == 201, body
    assert assert_counters_match(stores, "alice")["active"] == MAX_ACTIVE_ENTRIES
    assert api.call("POST", "/v1/memory", "alice", {"text": "full again"})[0] == 409
    assert assert_counters_match(stores, "alice")["active"] == MAX_ACTIVE_ENTRIES


def test_counters_equal_the_stored_items_after_every_route(api: Any, agents: Any, stores: Any, client: Any) -> None:
    def step(method: str, path: str, body: Any = None, expected: int = 200) -> Any:
        status, answer = api.call(method, path, "alice", body)
        assert status == expected, (method, path, answer)
        assert_counters_match(stores, "alice")
        return answer

    step("PUT", "/v1/memory/settings", {"enabled": True})
    first = step("POST", "/v1/memory", {"text": "first"}, 201)
    second = step("POST", "/v1/memory", {"text": "second", "expires_in_days": 1}, 201)
    step("PATCH", f"/v1/memory/{first['id']}", {"text": "first, edited", "pinned": True})
    step("DELETE", f"/v1/memory/{second['id']}", expected=204)
    step("DELETE", f"/v1/memory/{second['id']}", expected=404)
    agents.register("s", "alice")
    agents.propose(
        "s", {"id": "e1", "text": "proposed one"}, {"id": "e2", "text": "proposed two"}, {"id": "e3", "text": "three"}
    )
    assert_counters_match(stores, "alice")
    proposals = [p.id for p in stores.proposals.list("alice")]
    step("POST", f"/v1/memory/{proposals[0]}/accept", expected=201)
    step("POST", f"/v1/memory/{proposals[0]}/accept", expected=404)
    step("POST", f"/v1/memory/{proposals[1]}/reject", expected=204)
    step("PUT", "/v1/memory/settings", {"enabled": False})
    step("POST", f"/v1/memory/{proposals[2]}/accept", expected=409)
    step("PUT", "/v1/memory/settings", {"enabled": True})
    third = step("POST", "/v1/memory", {"text": "third"}, 201)
    assert iam_call(client, "DELETE", f"/v1/operator/memory/{third['id']}?user_id=alice", OPERATOR_ARN)[0] == 204
    assert_counters_match(stores, "alice")
    add_proposal(stores, "alice", "waiting")
    assert step("DELETE", "/v1/memory")["deleted"] == 4  # first (edited), the accepted one, e3, "waiting"
    assert assert_counters_match(stores, "alice") == {"active": 0, "entries": 0, "waiting": 0, "proposals": 0}


# ---- the 2000-byte limit at its exact boundary -------------------------------------------------

BOUNDARY = [
    ("ascii", "a" * MAX_ENTRY_BYTES),
    ("two-byte", "é" * (MAX_ENTRY_BYTES // 2)),
    ("three-byte", "€" * (MAX_ENTRY_BYTES // 3) + "a" * (MAX_ENTRY_BYTES % 3)),
    ("four-byte", "😀" * (MAX_ENTRY_BYTES // 4)),
    ("trimmed", "  " + "b" * MAX_ENTRY_BYTES + "\n"),
]


@pytest.mark.parametrize(("name", "text"), BOUNDARY, ids=[n for n, _ in BOUNDARY])
def test_exactly_2000_bytes_is_kept_and_2001_refused(
    api: Any, stores: Any, kept: dict[str, Any], name: str, text: str
) -> None:
    assert len(text.strip().encode("utf-8")) == MAX_ENTRY_BYTES
    status, body = api.call("POST", "/v1/memory", "alice", {"text": text})
    assert status == 201, body
    assert len(body["text"].encode("utf-8")) == MAX_ENTRY_BYTES
    one_more = text.strip() + "x"
    status, refused = api.call("POST", "/v1/memory", "alice", {"text": one_more})
    assert (status, refused["code"]) == (400, "invalid_request")
    status, refused = api.call("PATCH", f"/v1/memory/{kept['id']}", "alice", {"text": one_more})
    assert (status, refused["code"]) == (400, "invalid_request")
    status, refused = api.call("PATCH", f"/v1/memory/{kept['id']}", "alice", {"text": text})
    assert (status, refused["code"]) == (409, "duplicate")  # the same words as the entry just posted (issue 24)
    assert api.call("DELETE", f"/v1/memory/{body['id']}", "alice")[0] == 204
    status, patched = api.call("PATCH", f"/v1/memory/{kept['id']}", "alice", {"text": text})
    assert status == 200 and patched["text"] == text.strip()
    stored = {e.id: e.text for e in stores.entries.load("alice")[1]}
    assert stored == {kept["id"]: text.strip()}
    assert_counters_match(stores, "alice")


@pytest.mark.parametrize(("name", "text"), BOUNDARY[:4], ids=[n for n, _ in BOUNDARY[:4]])
def test_a_proposal_of_exactly_2000_bytes_waits_and_2001_is_too_long(
    api: Any, agents: Any, stores: Any, name: str, text: str
) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    agents.propose("s", {"id": "fits", "text": text}, {"id": "over", "text": text + "x"})
    outcomes = agents.outcomes("s")
    assert outcomes["fits"]["type"] == "memory.proposed"
    assert outcomes["over"] == {"type": "memory.proposal_refused", "reason": "too_long"}
    assert [p.text for p in stores.proposals.list("alice")] == [text]
