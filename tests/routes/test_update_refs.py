"""Issue 39: context items carry a per-session `ref`; a proposal may say `replaces: <ref>`; the person sees and accepts
the update in one decision. Through the real routes and moto's real stream."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from chalicelib.models import MAX_ACTIVE_ENTRIES
from chalicelib.storage import dynamo
from tests.support.calls import dynamodb_calls


def _on_with(api: Any, user: str, *texts: str) -> list[dict[str, Any]]:
    api.turn_on(user)
    return [api.add(user, text) for text in texts]


def _session(agents: Any, session_id: str, user: str, agent: str = "helper") -> dict[str, str]:
    """{entry text: ref} of a new session's context."""
    assert agents.register(session_id, user, agent=agent)[0] in (200, 201)
    return {item["text"]: item["ref"] for item in agents.items(session_id)}


def _waiting(api: Any, user: str) -> list[dict[str, Any]]:
    status, view = api.call("GET", "/v1/memory", user)
    assert status == 200, view
    return list(view["proposals"])


def _stored_proposals(stores: Any, user: str) -> list[dict[str, Any]]:
    page = stores.client.query(
        TableName=stores.proposals.table,
        KeyConditionExpression="user_id = :u AND begins_with(sk, :p)",
        ExpressionAttributeValues=dynamo.values(u=user, p="p#"),
    )
    return [dynamo.load(item) for item in page["Items"]]


def test_every_context_item_has_a_ref_that_names_no_id_and_differs_per_session(api: Any, agents: Any) -> None:
    entry = _on_with(api, "alice", "Lives in Lyon")[0]
    first = _session(agents, "s-1", "alice")
    again = {item["text"]: item["ref"] for item in agents.items("s-1")}
    second = _session(agents, "s-2", "alice")  # same agent, same person, another session
    ref = first["Lives in Lyon"]
    assert again == first  # one session gets one handle per entry
    assert second["Lives in Lyon"] != ref
    raw = base64.urlsafe_b64decode(ref + "=" * (-len(ref) % 4))
    assert entry["id"] not in ref and bytes.fromhex(entry["id"]) not in raw and entry["id"] not in raw.hex()


def test_a_proposal_that_replaces_a_ref_shows_the_entry_and_accepting_replaces_it(
    api: Any, agents: Any, stores: Any
) -> None:
    old = _on_with(api, "alice", "Lives in Lyon", "Likes tea")[0]
    refs = _session(agents, "s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]})
    assert agents.outcomes("s-1")["e-1"]["type"] == "memory.proposed"
    [proposal] = _waiting(api, "alice")
    assert proposal["replaces"] == {"id": old["id"], "text": "Lives in Lyon"}
    inbox = api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]
    assert inbox[0]["replaces"] == {"id": old["id"], "text": "Lives in Lyon"}
    [stored] = _stored_proposals(stores, "alice")
    assert stored["replaces"] == old["id"]  # what the consumer resolved; the event keeps no ref once handled
    assert all("replaces" not in e for e in stores.client.scan(TableName=stores.events.table)["Items"])

    status, entry = api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")
    assert status == 201, entry
    _, view = api.call("GET", "/v1/memory", "alice")
    assert sorted(e["text"] for e in view["items"]) == ["Likes tea", "Now lives in Berlin"]
    assert view["proposals"] == [] and stores.entries.get_state("alice").active == 2
    assert api.call("GET", f"/v1/memory/{old['id']}", "alice")[0] in (403, 404, 405)
    assert stores.entries.raw_entry("alice", old["id"]) is None


def test_accepting_with_replaces_null_keeps_the_entry(api: Any, agents: Any, stores: Any) -> None:
    _on_with(api, "alice", "Lives in Lyon")
    refs = _session(agents, "s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Has a flat in Berlin", "replaces": refs["Lives in Lyon"]})
    [proposal] = _waiting(api, "alice")
    assert api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice", {"replaces": None})[0] == 201
    texts = sorted(e["text"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"])
    assert texts == ["Has a flat in Berlin", "Lives in Lyon"]


def _forged(ref: str) -> str:
    raw = bytearray(base64.urlsafe_b64decode(ref + "=" * (-len(ref) % 4)))
    raw[-1] ^= 1
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


def test_a_ref_of_another_session_user_or_a_forged_one_makes_an_ordinary_proposal(
    api: Any, agents: Any, stores: Any
) -> None:
    _on_with(api, "alice", "Lives in Lyon")
    _on_with(api, "bob", "Lives in Lyon")
    alices = _session(agents, "s-a1", "alice")["Lives in Lyon"]
    bobs = _session(agents, "s-b", "bob")["Lives in Lyon"]
    _session(agents, "s-a2", "alice")
    sent = {
        "e-other-session": alices,  # valid, but for s-a1
        "e-other-user": bobs,
        "e-forged": _forged(alices),
        "e-garbage": "not a ref",
        "e-id": "0" * 32,
    }
    for n, (event_id, ref) in enumerate(sent.items()):
        agents.propose("s-a2", {"id": event_id, "text": f"Now lives in city {n}", "replaces": ref}, pump=False)
    agents.stream.drain()  # five: the session's cap
    outcomes = agents.outcomes("s-a2")
    assert {o["type"] for o in outcomes.values()} == {"memory.proposed"}
    assert all(set(o) == {"type", "proposal_id"} for o in outcomes.values())  # the same shape as any proposal
    assert [p["replaces"] for p in _waiting(api, "alice")] == [None] * 5
    assert all("replaces" not in p for p in _stored_proposals(stores, "alice"))


def test_a_ref_to_an_entry_forgotten_before_the_proposal_makes_an_ordinary_one(api: Any, agents: Any) -> None:
    old = _on_with(api, "alice", "Lives in Lyon")[0]
    refs = _session(agents, "s-1", "alice")
    assert api.call("DELETE", f"/v1/memory/{old['id']}", "alice")[0] == 204
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]})
    assert [p["replaces"] for p in _waiting(api, "alice")] == [None]


def test_an_entry_forgotten_while_the_proposal_waits_drops_the_link_and_accept_still_works(
    api: Any, agents: Any, stores: Any
) -> None:
    old = _on_with(api, "alice", "Lives in Lyon", "Likes tea")[0]
    refs = _session(agents, "s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]})
    assert api.call("DELETE", f"/v1/memory/{old['id']}", "alice")[0] == 204
    [proposal] = _waiting(api, "alice")
    assert proposal["replaces"] is None
    assert api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"][0]["replaces"] is None
    assert api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")[0] == 201
    texts = sorted(e["text"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"])
    assert texts == ["Likes tea", "Now lives in Berlin"] and stores.entries.get_state("alice").active == 2


def test_a_stored_link_altered_or_copied_is_not_believed(api: Any, agents: Any, stores: Any) -> None:
    lyon, tea = _on_with(api, "alice", "Lives in Lyon", "Likes tea")
    refs = _session(agents, "s-1", "alice")
    agents.propose(
        "s-1",
        {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]},
        {"id": "e-2", "text": "Likes coffee"},
    )
    linked, plain = sorted(_stored_proposals(stores, "alice"), key=lambda p: "replaces" in p, reverse=True)
    # The link pointed at another entry, and copied onto a proposal that had none.
    for item, target in ((linked, tea["id"]), (plain, lyon["id"])):
        stores.client.update_item(
            TableName=stores.proposals.table,
            Key=dynamo.dump({"user_id": "alice", "sk": item["sk"]}),
            UpdateExpression="SET #r = :r",
            ExpressionAttributeNames={"#r": "replaces"},
            ExpressionAttributeValues=dynamo.values(r=target),
        )
    status, view = api.call("GET", "/v1/memory", "alice")
    assert status == 200 and view["proposals"] == []  # altered items are absent, never believed, never a 500
    for item in (linked, plain):
        assert api.call("POST", f"/v1/memory/{item['id']}/accept", "alice")[0] == 404
    assert sorted(e["text"] for e in view["items"]) == ["Likes tea", "Lives in Lyon"]


def test_a_link_copied_into_another_users_proposal_is_not_believed(api: Any, agents: Any, stores: Any) -> None:
    _on_with(api, "alice", "Lives in Lyon")
    bobs = _on_with(api, "bob", "Lives in Paris")[0]
    refs = _session(agents, "s-a", "alice")
    agents.propose("s-a", {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]})
    [item] = _stored_proposals(stores, "alice")
    copied = {**item, "user_id": "bob", "replaces": bobs["id"]}
    stores.client.put_item(TableName=stores.proposals.table, Item=dynamo.dump(copied))
    assert _waiting(api, "bob") == []
    assert api.call("POST", f"/v1/memory/{item['id']}/accept", "bob")[0] == 404
    assert [e["text"] for e in api.call("GET", "/v1/memory", "bob")[1]["items"]] == ["Lives in Paris"]


def test_replaces_costs_one_dynamodb_call_at_most_and_none_when_absent(api: Any, agents: Any, stores: Any) -> None:
    _on_with(api, "alice", "Lives in Lyon", "Is vegetarian")
    refs = _session(agents, "s-1", "alice")

    def consumer_calls(event: dict[str, Any]) -> int:
        agents.propose("s-1", event, pump=False)
        with dynamodb_calls(stores.client) as calls:
            agents.stream.drain()
        return sum(calls.values())

    plain = consumer_calls({"id": "e-1", "text": "Likes trains"})
    linked = consumer_calls({"id": "e-2", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]})
    forged = consumer_calls({"id": "e-3", "text": "Is vegan now", "replaces": _forged(refs["Is vegetarian"])})
    assert linked == plain + 1 and forged == plain + 1  # one GetItem, whether or not the ref opens
    with dynamodb_calls(stores.client) as calls:
        agents.items("s-1")
    assert dict(calls) == {"GetItem": 1, "Query": 1, "TransactWriteItems": 1}  # session, entries, journal: as before


def test_the_context_path_makes_no_extra_call_on_a_cold_key_cache(api: Any, agents: Any, stores: Any) -> None:
    _on_with(api, "alice", "Lives in Lyon")
    assert agents.register("s-1", "alice")[0] in (200, 201)
    stores.keyring.cache.drop("alice")
    stores.keyring.cache.drop_prefix("alice/")
    with dynamodb_calls(stores.client) as calls:
        items = agents.items("s-1")
    assert items[0]["ref"] and dict(calls) == {"GetItem": 1, "Query": 2, "TransactWriteItems": 1}  # + the keys' Query


@pytest.mark.slow
def test_accepting_an_update_works_at_the_cap(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    for n in range(MAX_ACTIVE_ENTRIES - 1):
        api.add("alice", f"entry {n}")
    old = api.add("alice", "Is vegetarian")
    refs = _session(agents, "s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Is vegan now", "replaces": refs["Is vegetarian"]})
    [proposal] = _waiting(api, "alice")
    assert proposal["replaces"]["id"] == old["id"]
    assert api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")[0] == 201
    texts = {e["text"] for e in api.call("GET", "/v1/memory", "alice")[1]["items"]}
    assert "Is vegan now" in texts and "Is vegetarian" not in texts
    assert len(texts) == MAX_ACTIVE_ENTRIES == stores.entries.get_state("alice").active


def test_a_connection_gets_refs_and_its_suggestion_replaces(api: Any, client: Any, stream: Any) -> None:
    import json

    old = _on_with(api, "alice", "Uses an Android phone")[0]
    status, made = api.call("POST", "/v1/connections", "alice", {"agent": "claude-code"})
    assert status == 201
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {made['token']}"}
    items = json.loads(client.http.get("/v1/agent/memory", headers=headers).body)["items"]
    body = {"text": "Uses an iPhone now", "kind": "fact", "replaces": items[0]["ref"]}
    response = client.http.post("/v1/agent/proposals", headers=headers, body=json.dumps(body))
    assert response.status_code == 202
    stream.drain()
    [proposal] = _waiting(api, "alice")
    assert proposal["replaces"] == {"id": old["id"], "text": "Uses an Android phone"}


def test_a_ref_to_an_entry_that_expired_makes_an_ordinary_proposal(api: Any, agents: Any, clock: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "Is in Lisbon this week", expires_in_days=1)
    api.add("alice", "Likes tea")
    refs = _session(agents, "s-1", "alice")
    clock.advance(days=2)
    agents.propose("s-1", {"id": "e-1", "text": "Is back home", "replaces": refs["Is in Lisbon this week"]})
    agents.propose("s-1", {"id": "e-2", "text": "Likes green tea", "replaces": refs["Likes tea"]})
    assert {p["text"]: p["replaces"] for p in _waiting(api, "alice")} == {
        "Is back home": None,
        "Likes green tea": {"id": _ids(api, "alice")["Likes tea"], "text": "Likes tea"},
    }


def _ids(api: Any, user: str) -> dict[str, str]:
    return {e["text"]: e["id"] for e in api.call("GET", "/v1/memory", user)[1]["items"]}


@pytest.mark.parametrize("replaces", [5, True, ["r"], {"r": 1}, "r" * 257])
def test_a_replaces_that_is_not_a_ref_shaped_string_is_400_and_stores_nothing(
    api: Any, agents: Any, stores: Any, replaces: Any
) -> None:
    _on_with(api, "alice", "Lives in Lyon")
    _session(agents, "s-1", "alice")
    status, body = agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": replaces})
    assert (status, body["code"]) == (400, "invalid_request") and "Berlin" not in str(body)
    assert agents.events("s-1") == [] and _waiting(api, "alice") == []
    status, made = api.call("POST", "/v1/connections", "alice", {"agent": "claude-code"})
    import json

    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {made['token']}"}
    sent = {"text": "Now lives in Berlin", "replaces": replaces}
    response = agents.client.http.post("/v1/agent/proposals", headers=headers, body=json.dumps(sent))
    assert response.status_code == 400 and json.loads(response.body)["code"] == "invalid_request"
    assert agents.propose("s-1", {"id": "e-2", "text": "Now lives in Berlin", "replaces": "any string"})[0] == 202
    assert [e["id"] for e in agents.events("s-1")] == ["e-2"]  # a string of any content is taken: the consumer judges


def test_an_events_ref_altered_in_storage_is_refused_unreadable_and_links_nothing(
    api: Any, agents: Any, stores: Any
) -> None:
    """The ref is bound into the pending event's sealed associated data: swapped for another of the session's refs
    (or removed) while it waits, the event no longer opens, as any event altered in storage."""
    from chalicelib.services.consumer import redrive

    _on_with(api, "alice", "Lives in Lyon", "Likes tea")
    refs = _session(agents, "s-1", "alice")
    sent = [
        {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]},
        {"id": "e-2", "text": "Likes coffee", "replaces": refs["Likes tea"]},
    ]
    agents.propose("s-1", *sent, pump=False)
    key = {"session_id": "s-1"}
    stores.client.update_item(
        TableName=stores.events.table,
        Key=dynamo.dump({**key, "event_id": "e-1"}),
        UpdateExpression="SET #r = :r",
        ExpressionAttributeNames={"#r": "replaces"},
        ExpressionAttributeValues=dynamo.values(r=refs["Likes tea"]),
    )
    stores.client.update_item(
        TableName=stores.events.table,
        Key=dynamo.dump({**key, "event_id": "e-2"}),
        UpdateExpression="REMOVE #r",
        ExpressionAttributeNames={"#r": "replaces"},
    )
    assert redrive(stores, [{**key, "event_id": "e-1"}, {**key, "event_id": "e-2"}])["batchItemFailures"] == []
    outcomes = agents.outcomes("s-1")
    assert outcomes["e-1"] == outcomes["e-2"] == {"type": "memory.proposal_refused", "reason": "unreadable"}
    assert _waiting(api, "alice") == []


def test_the_operators_view_of_a_linked_proposal_is_the_contracts_shape(api: Any, agents: Any, client: Any) -> None:
    """Which entry a suggestion updates is the person's decision aid: the operator's view (openapi.yaml's
    OperatorMemoryView, additionalProperties: false) shows the proposal without it."""
    from tests.support.iam import iam_call
    from tests.support.openapi_check import check
    from tests.support.stack import OPERATOR_ARN

    _on_with(api, "alice", "Lives in Lyon")
    refs = _session(agents, "s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]})
    assert _waiting(api, "alice")[0]["replaces"] is not None
    status, body = iam_call(client, "GET", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)
    assert status == 200 and [p["text"] for p in body["proposals"]] == ["Now lives in Berlin"]
    check("GET", "/v1/operator/memory", status, body)
