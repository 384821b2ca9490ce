"""ETag / If-None-Match on GET /v1/memory and /v1/inbox: 304 for one GetItem while nothing shown changed."""

from __future__ import annotations

from typing import Any

from tests.support.calls import dynamodb_calls
from tests.support.proposals import add_proposal


def get(api: Any, path: str, user: str, etag: str | None = None) -> tuple[int, Any, str]:
    return api.tagged_get(path, user, etag)


def test_an_unchanged_memory_is_304_for_one_dynamodb_read(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "Likes tea")
    status, body, etag = get(api, "/v1/memory", "alice")
    assert status == 200 and etag and len(body["items"]) == 1
    with dynamodb_calls(stores.client) as calls:
        status, body, again = get(api, "/v1/memory", "alice", etag)
    assert (status, body, again) == (304, None, etag)
    assert dict(calls) == {"GetItem": 1}


def test_every_write_that_changes_the_view_changes_the_tag(api: Any, stores: Any, agents: Any) -> None:
    _, _, etag = get(api, "/v1/memory", "alice")
    seen = {etag}

    def changed(step: str) -> None:
        status, _, new = get(api, "/v1/memory", "alice", etag_now[0])
        assert status == 200 and new not in seen, f"{step} left the tag unchanged"
        seen.add(new)
        etag_now[0] = new

    etag_now = [etag]
    api.turn_on("alice")
    changed("turning memory on")
    entry = api.add("alice", "Walks at noon")
    changed("adding")
    api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"pinned": True})
    changed("pinning")
    api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"kind": "fact"})
    changed("changing the kind")
    agents.register("s-1", "alice", agent="memory-agent")
    agents.propose("s-1", {"id": "e1", "text": "Likes maps"}, {"id": "e2", "text": "Likes rain"})
    changed("an agent's proposal (the stream consumer)")
    first, second = (p["id"] for p in api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"])
    api.call("POST", f"/v1/memory/{first}/accept", "alice", {"text": "Likes old maps"})
    changed("accepting")
    api.call("POST", f"/v1/memory/{second}/reject", "alice")
    changed("rejecting")
    api.call("DELETE", f"/v1/memory/{entry['id']}", "alice")
    changed("forgetting one")
    api.call("DELETE", "/v1/memory", "alice")
    changed("forgetting everything")
    api.call("PUT", "/v1/memory/settings", "alice", {"enabled": False})
    changed("turning memory off")
    assert get(api, "/v1/memory", "alice", etag_now[0])[0] == 304


def test_a_refused_write_keeps_the_tag(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    _, _, etag = get(api, "/v1/memory", "alice")
    assert api.call("POST", "/v1/memory", "alice", {"text": "   "})[0] == 400
    assert api.call("PATCH", "/v1/memory/" + "0" * 32, "alice", {"pinned": True})[0] == 404
    assert api.call("PUT", "/v1/memory/settings", "alice", {"enabled": True})[0] == 200  # already on: no write
    assert get(api, "/v1/memory", "alice", etag)[0] == 304


def test_an_expiry_changes_the_view_without_a_write_and_the_tag_stops_matching(api: Any, clock: Any) -> None:
    api.turn_on("alice")
    api.add("alice", "Trip in May", expires_in_days=2)
    api.add("alice", "Keeps", expires_in_days=30)
    _, body, etag = get(api, "/v1/memory", "alice")
    assert len(body["items"]) == 2
    clock.advance(days=1)
    assert get(api, "/v1/memory", "alice", etag)[0] == 304  # nothing has expired yet
    clock.advance(days=1, seconds=1)
    status, body, after = get(api, "/v1/memory", "alice", etag)
    assert status == 200 and [i["text"] for i in body["items"]] == ["Keeps"] and after != etag
    assert get(api, "/v1/memory", "alice", after)[0] == 304  # the new tag names the next expiry, 28 days on
    clock.advance(days=29)
    assert get(api, "/v1/memory", "alice", after)[1]["items"] == []


def test_the_inbox_answers_304_until_a_proposal_arrives(api: Any, stores: Any) -> None:
    api.turn_on("alice")
    status, body, etag = get(api, "/v1/inbox", "alice")
    assert status == 200 and body == {"memory_proposals": [], "repeats": []}
    with dynamodb_calls(stores.client) as calls:
        assert get(api, "/v1/inbox", "alice", etag)[0] == 304
    assert dict(calls) == {"GetItem": 1}
    add_proposal(stores, "alice", "Likes maps")
    status, body, after = get(api, "/v1/inbox", "alice", etag)
    assert status == 200 and len(body["memory_proposals"]) == 1 and after != etag


def test_a_tag_never_matches_another_user_or_the_other_route(api: Any) -> None:
    api.turn_on("alice")
    api.turn_on("bob")  # both at the same version number
    _, _, alices = get(api, "/v1/memory", "alice")
    _, _, bobs = get(api, "/v1/memory", "bob")
    assert alices != bobs
    assert get(api, "/v1/memory", "bob", alices)[0] == 200
    assert get(api, "/v1/inbox", "alice", alices)[0] == 200
    for junk in ("*", '"m1.0.zz"', "W/" + alices, alices + ", " + bobs):
        status = get(api, "/v1/memory", "alice", junk)[0]
        assert status == (304 if alices in junk else 200), junk


def test_304_over_the_real_http_server(live: Any) -> None:
    token = live.token("fresh-http")
    live.request("PUT", "/v1/memory/settings", body={"enabled": True}, token=token)
    tags = {}
    for path in ("/v1/memory", "/v1/inbox"):
        status, body, headers = live.request("GET", path, token=token)
        etag = {k.lower(): v for k, v in headers.items()}["etag"]
        assert status == 200 and body is not None
        status, body, headers = live.request("GET", path, token=token, headers={"If-None-Match": etag})
        assert (status, body) == (304, None) and {k.lower(): v for k, v in headers.items()}["etag"] == etag
        tags[path] = etag
    live.request("POST", "/v1/memory", body={"text": "Likes tea"}, token=token)
    assert live.request("GET", "/v1/memory", token=token, headers={"If-None-Match": tags["/v1/memory"]})[0] == 200


def test_a_304_carries_the_current_tag_never_what_the_client_sent(live: Any) -> None:
    """Red team, issue 21 #9: the whole If-None-Match header came back as the 304's ETag."""
    token = live.token("fresh-echo")
    live.request("PUT", "/v1/memory/settings", body={"enabled": True}, token=token)
    _, _, headers = live.request("GET", "/v1/memory", token=token)
    current = {k.lower(): v for k, v in headers.items()}["etag"]
    for sent in (f"{current}, <script>x</script>", f'"m0.0.00000000", {current}', f"W/{current}", f"  {current}  "):
        status, body, headers = live.request("GET", "/v1/memory", token=token, headers={"If-None-Match": sent})
        assert (status, body) == (304, None), sent
        assert {k.lower(): v for k, v in headers.items()}["etag"] == current, sent
