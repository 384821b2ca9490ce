"""An outsider's attack on issue 39's `ref` / `replaces` (docs/review.md), through the real routes and moto's stream:
refs in odd spellings, refs across forget-all, an entry put back from a backup after its forget, two updates of one
entry, and what an agent could learn from `replaces`."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from chalicelib.storage import dynamo
from tests.support.calls import dynamodb_calls


def _session(agents: Any, session_id: str, user: str, agent: str = "helper") -> dict[str, str]:
    assert agents.register(session_id, user, agent=agent)[0] in (200, 201)
    return {item["text"]: item["ref"] for item in agents.items(session_id)}


def _view(api: Any, user: str = "alice") -> dict[str, Any]:
    status, view = api.call("GET", "/v1/memory", user)
    assert status == 200, view
    return dict(view)


def _entry_item(stores: Any, user: str, entry_id: str) -> dict[str, Any]:
    raw = stores.client.get_item(
        TableName=stores.entries.table, Key=dynamo.dump({"user_id": user, "sk": f"e#{entry_id}"}), ConsistentRead=True
    )
    return dict(raw["Item"])


def _variants(ref: str) -> dict[str, str]:
    raw = base64.urlsafe_b64decode(ref + "=" * (-len(ref) % 4))
    standard = base64.b64encode(raw).decode()
    return {
        "padded": ref + "=" * (-len(ref) % 4 or 4),
        "standard-alphabet": standard if standard.rstrip("=") != ref else standard + "=",
        "truncated": ref[:-1],
        "extended": ref + "A",
        "spaced": f" {ref} ",
        "fullwidth": "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in ref),
        "other-version": base64.urlsafe_b64encode(bytes([2]) + raw[1:]).decode().rstrip("="),
        "256": (ref * 6)[:256],
        "empty-ish": "\u200b",
    }


def test_a_ref_in_any_other_spelling_makes_an_ordinary_proposal_told_the_same_way(
    api: Any, agents: Any, stores: Any
) -> None:
    """Held on merge: kept as a regression guard for refs.entry_of's one-spelling rule."""
    api.turn_on("alice")
    api.add("alice", "Lives in Lyon")
    variants = _variants(_session(agents, "s-0", "alice")["Lives in Lyon"])
    for n, (name, ref) in enumerate(variants.items()):
        session = f"s-{n + 1}"
        refs = _session(agents, session, "alice")
        assert len(refs) == 1
        assert agents.propose(session, {"id": name, "text": f"Now lives in city {n}", "replaces": ref})[0] == 202
        assert agents.outcomes(session)[name]["type"] == "memory.proposed"
    # even a variant of this session's own ref links nothing
    refs = _session(agents, "s-own", "alice")
    for n, (name, ref) in enumerate(_variants(refs["Lives in Lyon"]).items()):
        if n >= 5:
            break
        agents.propose("s-own", {"id": name, "text": f"Moved to town {n}", "replaces": ref})
    assert [p["replaces"] for p in _view(api)["proposals"]] == [None] * (len(variants) + 5)


def test_a_ref_given_before_forget_all_names_nothing_after_it(api: Any, agents: Any, stores: Any) -> None:
    """Held on merge: forget-all destroys the data key the refs' key comes from."""
    api.turn_on("alice")
    api.add("alice", "Lives in Lyon")
    old = _session(agents, "s-1", "alice")["Lives in Lyon"]
    assert api.call("DELETE", "/v1/memory", "alice")[0] == 200
    api.turn_on("alice")
    api.add("alice", "Lives in Lyon")  # the same words again: a new entry under a new key
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": old})
    assert agents.outcomes("s-1")["e-1"]["type"] == "memory.proposed"
    [proposal] = _view(api)["proposals"]
    assert proposal["replaces"] is None
    assert api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")[0] == 201
    assert sorted(e["text"] for e in _view(api)["items"]) == ["Lives in Lyon", "Now lives in Berlin"]


def test_two_updates_of_one_entry_both_accepted_replace_it_once_and_delete_nothing_else(
    api: Any, agents: Any, stores: Any
) -> None:
    """Held on merge: the second accept finds its entry gone and is an ordinary accept (no 404, no 500)."""
    api.turn_on("alice")
    api.add("alice", "Lives in Lyon")
    api.add("alice", "Likes tea")
    refs = _session(agents, "s-1", "alice")
    agents.propose(
        "s-1",
        {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]},
        {"id": "e-2", "text": "Now lives in Hamburg", "replaces": refs["Lives in Lyon"]},
    )
    first, second = _view(api)["proposals"]
    assert first["replaces"] == second["replaces"] is not None
    assert api.call("POST", f"/v1/memory/{first['id']}/accept", "alice")[0] == 201
    assert _view(api)["proposals"][0]["replaces"] is None  # the link is gone from the second one's card
    assert api.call("POST", f"/v1/memory/{second['id']}/accept", "alice")[0] == 201
    view = _view(api)
    assert sorted(e["text"] for e in view["items"]) == ["Likes tea", "Now lives in Berlin", "Now lives in Hamburg"]
    assert stores.entries.get_state("alice").active == 3 and view["proposals"] == []


def test_an_entry_put_back_from_a_backup_after_its_forget_is_not_replaced_uncounted(
    api: Any, agents: Any, stores: Any
) -> None:
    """Found: accept's stored link took an entry restored after its forget (its text key shredded) for a live one, so
    the accept counted one in one out while the restored item had been counted out already: `active` fell one below
    the entries stored, and the 200 cap moved up by one each time. A restored item is not the person's entry (its
    forget said so; forgetting it again is a 404): the accept is an ordinary one and leaves it as forget does."""
    api.turn_on("alice")
    lyon = api.add("alice", "Lives in Lyon")
    api.add("alice", "Likes tea")
    refs = _session(agents, "s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]})
    backup = _entry_item(stores, "alice", lyon["id"])
    assert api.call("DELETE", f"/v1/memory/{lyon['id']}", "alice")[0] == 204
    stores.client.put_item(TableName=stores.entries.table, Item=backup)  # put back from a backup
    stores.keyring.cache.drop_prefix("")
    [proposal] = _view(api)["proposals"]
    assert proposal["replaces"] is None  # the person is shown no link
    assert api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")[0] == 201
    view = _view(api)
    assert sorted(e["text"] for e in view["items"]) == ["Likes tea", "Now lives in Berlin"]
    assert stores.entries.get_state("alice").active == len(view["items"]) == 2


def test_an_explicit_replaces_of_an_entry_put_back_after_its_forget_is_a_404_as_its_forget_is(
    api: Any, agents: Any, stores: Any
) -> None:
    """Found (the explicit `replaces` of issue 24, which the link reuses): the same restored item was replaced and
    counted out a second time."""
    api.turn_on("alice")
    lyon = api.add("alice", "Lives in Lyon")
    _session(agents, "s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin"})
    backup = _entry_item(stores, "alice", lyon["id"])
    assert api.call("DELETE", f"/v1/memory/{lyon['id']}", "alice")[0] == 204
    stores.client.put_item(TableName=stores.entries.table, Item=backup)
    stores.keyring.cache.drop_prefix("")
    assert api.call("DELETE", f"/v1/memory/{lyon['id']}", "alice")[0] == 404
    [proposal] = _view(api)["proposals"]
    status, body = api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice", {"replaces": lyon["id"]})
    assert (status, body["code"]) == (404, "not_found") and "Lyon" not in str(body)
    assert stores.entries.get_state("alice").active == 0 and len(_view(api)["proposals"]) == 1


@pytest.mark.parametrize("target", ["live", "forgotten", "another-users", "forged"])
def test_the_consumers_work_and_answer_do_not_depend_on_whether_the_ref_names_a_kept_entry(
    api: Any, agents: Any, stores: Any, target: str
) -> None:
    """Held on merge (a guard against an oracle): the same calls, by kind, and the same outcome shape and event item
    whatever the ref names, so an agent cannot learn whether the person still keeps an entry."""
    api.turn_on("alice")
    api.turn_on("bob")
    lyon = api.add("alice", "Lives in Lyon")
    api.add("bob", "Lives in Lyon")
    refs = _session(agents, "s-1", "alice")
    ref = {
        "live": refs["Lives in Lyon"],
        "forgotten": refs["Lives in Lyon"],
        "another-users": _session(agents, "s-b", "bob")["Lives in Lyon"],
        "forged": refs["Lives in Lyon"][:-2] + ("AA" if not refs["Lives in Lyon"].endswith("AA") else "BA"),
    }[target]
    if target == "forgotten":
        assert api.call("DELETE", f"/v1/memory/{lyon['id']}", "alice")[0] == 204
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": ref}, pump=False)
    with dynamodb_calls(stores.client) as calls:
        agents.stream.drain()
    assert dict(calls) == {"GetItem": 2, "TransactWriteItems": 1}
    [event] = agents.events("s-1")
    outcome = event.get("outcome")
    assert set(outcome) == {"type", "proposal_id"} and outcome["type"] == "memory.proposed"
    assert "replaces" not in str(event) and ref not in str(event)
    stored = stores.client.get_item(
        TableName=stores.events.table, Key=dynamo.dump({"session_id": "s-1", "event_id": "e-1"})
    )["Item"]
    assert "replaces" not in stored and "Berlin" not in str(stored)


def _mcp_call(client: Any, token: str, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    import json

    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments or {}},
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
    }
    response = client.http.post("/mcp", headers=headers, body=json.dumps(message))
    assert response.status_code == 200, response.body
    return dict(json.loads(response.body)["result"])


def test_a_connections_ref_names_nothing_for_another_connection_nor_in_the_next_hour(
    api: Any, client: Any, stream: Any, clock: Any
) -> None:
    """Held on merge: over remote /mcp, a ref is its connection's conversation's (one hour) and nobody else's."""
    from chalicelib.services import connections as connections_service

    connections_service.forget_cache()
    api.turn_on("alice")
    api.add("alice", "Uses an Android phone")
    tokens = [api.call("POST", "/v1/connections", "alice", {"agent": "claude-code"})[1]["token"] for _ in range(2)]
    clock.advance(seconds=3600 - clock().timestamp() % 3600 - 120)  # two minutes before the hour turns
    ref = _mcp_call(client, tokens[0], "memory_context")["structuredContent"]["items"][0]["ref"]
    other = _mcp_call(client, tokens[1], "memory_context")["structuredContent"]["items"][0]["ref"]
    assert other != ref
    sent = _mcp_call(client, tokens[1], "memory_propose", {"text": "Uses a Pixel", "kind": "fact", "replaces": ref})
    assert sent.get("isError") is not True
    clock.advance(seconds=240)  # the next hour: the same connection, another conversation
    sent = _mcp_call(client, tokens[0], "memory_propose", {"text": "Uses an iPhone", "kind": "fact", "replaces": ref})
    assert sent.get("isError") is not True
    stream.drain()
    view = _view(api)
    assert sorted((p["text"], p["replaces"]) for p in view["proposals"]) == [
        ("Uses a Pixel", None),
        ("Uses an iPhone", None),
    ]


def test_a_linked_accept_puts_no_text_ref_or_entry_id_in_the_journal_logs_or_the_operators_view(
    api: Any, agents: Any, client: Any, stores: Any, capsys: Any
) -> None:
    """Found (the operator part): `GET /v1/operator/memory` gave each proposal `replaces {id, text}`, though DESIGN.md
    shows the link to the person only and openapi.yaml's OperatorMemoryView allows no such field. Held: the journal
    and the logs carry neither text, nor ref, nor the replaced entry's id; the operator reads texts (DESIGN.md)."""
    from tests.support.iam import iam_call
    from tests.support.stack import OPERATOR_ARN

    api.turn_on("alice")
    lyon = api.add("alice", "Lives in Lyon")
    ref = _session(agents, "s-1", "alice")["Lives in Lyon"]
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": ref})
    status, seen = iam_call(client, "GET", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)
    # the operator reads the texts (DESIGN.md, Operator API), never the link nor the ref
    assert status == 200 and [p["text"] for p in seen["proposals"]] == ["Now lives in Berlin"]
    assert "replaces" not in str(seen) and ref not in str(seen)
    capsys.readouterr()
    [proposal] = _view(api)["proposals"]
    assert api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")[0] == 201
    journal = str([row.public() for row in stores.journal.all("alice") if row.action != "keep.memory.operator_access"])
    logs = capsys.readouterr()
    for secret in ("Lyon", "Berlin", ref, lyon["id"]):
        assert secret not in journal and secret not in logs.out and secret not in logs.err


def test_an_update_whose_entry_another_tab_forgets_meanwhile_is_accepted_as_an_ordinary_one(
    api: Any, agents: Any, stores: Any, monkeypatch: Any
) -> None:
    """Found: docs/review.md says a linked accept whose entry went meanwhile is an ordinary accept, "never a 404"; but
    when the entry went between the accept's read and its write (another tab forgetting it, or accepting another
    update of it), the accept answered 404 "No such entry." for a proposal that was there, and a bulk accept
    failed on it. The person did not name that entry: the accept reads again and goes on as the page showed."""
    from chalicelib.services import memory

    api.turn_on("alice")
    lyon = api.add("alice", "Lives in Lyon")
    api.add("alice", "Likes tea")
    refs = _session(agents, "s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]})
    [proposal] = _view(api)["proposals"]
    read = stores.entries.live_ref
    armed = [True]

    def read_then_the_other_tab_forgets(user_id: str, entry_id: str, now_epoch: int) -> Any:
        found = read(user_id, entry_id, now_epoch)
        if armed and entry_id == lyon["id"]:
            armed.clear()
            memory.forget(stores, "alice", entry_id)
        return found

    monkeypatch.setattr(stores.entries, "live_ref", read_then_the_other_tab_forgets)
    status, body = api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")
    assert status == 201, body
    view = _view(api)
    assert sorted(e["text"] for e in view["items"]) == ["Likes tea", "Now lives in Berlin"]
    assert view["proposals"] == [] and stores.entries.get_state("alice").active == 2


def test_an_explicit_replaces_whose_entry_goes_meanwhile_is_still_a_404(
    api: Any, agents: Any, stores: Any, monkeypatch: Any
) -> None:
    """Held (a guard for the fix above): an entry the person named themselves, gone meanwhile, is a 404 that
    changes nothing."""
    from chalicelib.services import memory

    api.turn_on("alice")
    lyon = api.add("alice", "Lives in Lyon")
    _session(agents, "s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin"})
    [proposal] = _view(api)["proposals"]
    read = stores.entries.live_ref
    armed = [True]

    def read_then_the_other_tab_forgets(user_id: str, entry_id: str, now_epoch: int) -> Any:
        found = read(user_id, entry_id, now_epoch)
        if armed and entry_id == lyon["id"]:
            armed.clear()
            memory.forget(stores, "alice", entry_id)
        return found

    monkeypatch.setattr(stores.entries, "live_ref", read_then_the_other_tab_forgets)
    status, body = api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice", {"replaces": lyon["id"]})
    assert (status, body["code"]) == (404, "not_found")
    view = _view(api)
    assert view["items"] == [] and len(view["proposals"]) == 1 and stores.entries.get_state("alice").active == 0


def test_an_update_of_a_pinned_entry_stays_pinned_unless_the_person_says_otherwise(
    api: Any, agents: Any, stores: Any
) -> None:
    """Found: accepting an agent's update of a pinned entry (alone or in "Accept all") unpinned the person's fact
    without a word: the card says "Update of: <text>", never that the pin goes. The update now keeps the pin; an
    accept that sets `pinned` decides. The same for an explicit `replaces` (the one path both take)."""
    api.turn_on("alice")
    api.add("alice", "Lives in Lyon", pinned=True)
    api.add("alice", "Is vegetarian", pinned=True)
    tea = api.add("alice", "Likes tea", pinned=True)
    refs = _session(agents, "s-1", "alice")
    agents.propose(
        "s-1",
        {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]},
        {"id": "e-2", "text": "Is vegan now", "replaces": refs["Is vegetarian"]},
        {"id": "e-3", "text": "Likes green tea"},
    )
    waiting = {p["text"]: p["id"] for p in _view(api)["proposals"]}
    status, made = api.call("POST", f"/v1/memory/{waiting['Now lives in Berlin']}/accept", "alice")
    assert status == 201 and made["pinned"] is True
    assert api.call("POST", f"/v1/memory/{waiting['Is vegan now']}/accept", "alice", {"pinned": False})[0] == 201
    status, made = api.call("POST", f"/v1/memory/{waiting['Likes green tea']}/accept", "alice", {"replaces": tea["id"]})
    assert status == 201 and made["pinned"] is True
    pins = {e["text"]: e["pinned"] for e in _view(api)["items"]}
    assert pins == {"Now lives in Berlin": True, "Is vegan now": False, "Likes green tea": True}


def test_a_replaces_that_is_no_ref_is_never_stored_as_plaintext_in_the_events_table_or_stream(
    api: Any, agents: Any, client: Any, stores: Any
) -> None:
    """Found: the door takes any string of at most 256 characters as `replaces`, and the pending event stored it as it
    came, unsealed, in the events table (and so on its stream, 24 h, and any dead letter). An agent that passes the
    note's text instead of its ref (an easy mistake for a model) put the person's text there in plaintext, where
    DESIGN.md says tables and the stream hold none. A string that is not of a ref's shape now names nothing at
    the door: the suggestion is an ordinary one, as for any ref that names nothing, and nothing of it is kept."""
    import json

    api.turn_on("alice")
    api.add("alice", "Lives in Lyon")
    ref = _session(agents, "s-1", "alice")["Lives in Lyon"]
    text_as_ref = "Lives in Lyon"
    assert agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": text_as_ref}, pump=False)[0]
    assert agents.propose("s-1", {"id": "e-2", "text": "Likes tea", "replaces": ref}, pump=False)[0] == 202
    token = api.call("POST", "/v1/connections", "alice", {"agent": "claude-code"})[1]["token"]
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    sent = {"text": "Now lives in Paris", "replaces": "the note Lives in Lyon"}
    assert client.http.post("/v1/agent/proposals", headers=headers, body=json.dumps(sent)).status_code == 202
    _mcp_call(client, token, "memory_propose", {"text": "Now in Rome", "kind": "fact", "replaces": "Lives in Lyon!"})
    pending = str(stores.client.scan(TableName=stores.events.table)["Items"])
    assert "Lyon" not in pending and ref in pending  # a real ref (ciphertext) still waits with its event
    agents.stream.drain()
    shown = {p["text"]: p["replaces"] for p in _view(api)["proposals"]}
    assert shown["Now lives in Berlin"] is None and shown["Now lives in Paris"] is None
    assert shown["Now in Rome"] is None and shown["Likes tea"] is not None


def test_an_entry_edited_while_its_update_waits_is_shown_as_it_is_now_and_that_is_what_accept_replaces(
    api: Any, agents: Any, stores: Any
) -> None:
    """Held on merge: the card names the entry's text at the time of the view, never the text the agent saw, so
    the person decides on what will go; the accept replaces that entry (its id), edited or not."""
    api.turn_on("alice")
    lyon = api.add("alice", "Lives in Lyon")
    refs = _session(agents, "s-1", "alice")
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": refs["Lives in Lyon"]})
    edited = "Lives in Lyon, moving to Berlin in May"
    assert api.call("PATCH", f"/v1/memory/{lyon['id']}", "alice", {"text": edited})[0] == 200
    [proposal] = _view(api)["proposals"]
    assert proposal["replaces"] == {"id": lyon["id"], "text": edited}
    inbox = api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]
    assert inbox[0]["replaces"] == {"id": lyon["id"], "text": edited}
    assert api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")[0] == 201
    assert [e["text"] for e in _view(api)["items"]] == ["Now lives in Berlin"]
    assert stores.entries.get_state("alice").active == 1
