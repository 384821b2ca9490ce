"""A full flow with a distinctive text: it appears in no log line, no journal row and no error body."""

from __future__ import annotations

import logging
from typing import Any

DISTINCT = "Remembers-the-blue-heron-4417"


def test_text_never_reaches_logs_journal_or_errors(
    api: Any, agents: Any, stores: Any, client: Any, capsys: Any, caplog: Any
) -> None:
    from tests.support.iam import iam_call
    from tests.support.stack import OPERATOR_ARN

    caplog.set_level(logging.INFO)
    api.turn_on("alice")
    entry = api.add("alice", DISTINCT + " entry")
    api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"text": DISTINCT + " edited"})
    errors = [
        api.call("POST", "/v1/memory", "alice", {"text": DISTINCT + "x" * 2100})[1],
        api.call("POST", "/v1/memory", "alice", {"text": DISTINCT, "kind": "bad"})[1],
        api.call("POST", "/v1/memory", "alice", {"text": DISTINCT, "unknown": DISTINCT})[1],
    ]
    agents.register("s", "alice")
    agents.items("s")
    agents.propose("s", {"id": "e1", "text": DISTINCT + " proposed"}, {"id": "e2", "text": DISTINCT, "kind": "nope"})
    iam_call(client, "GET", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)
    proposal = api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"][0]
    api.call("POST", f"/v1/memory/{proposal['id']}/accept", "alice")
    api.call("DELETE", "/v1/memory", "alice")
    logged = capsys.readouterr().out + capsys.readouterr().err + caplog.text
    assert '"msg": "request"' in logged  # the JSON request log did run
    assert DISTINCT not in logged
    assert all(DISTINCT not in repr(e) for e in errors)
    assert DISTINCT not in repr([r.public() for r in stores.journal.all("alice")])
    assert DISTINCT not in repr(agents.events("s"))


def test_an_unknown_field_named_with_text_is_not_echoed(api: Any) -> None:
    api.turn_on("alice")
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "x", DISTINCT + " my diary": 1})
    assert status == 400 and DISTINCT not in repr(body) and "unknown field" in body["message"]
    status, body = api.call("POST", "/v1/memory", "alice", {"text": "x", "colour": 1})
    assert "colour: unknown field" in body["message"]  # plain names still help the caller
