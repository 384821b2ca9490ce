"""Ids made only of dots fit the identifier characters but no URL path can carry them: refused everywhere, 400.

RFC 3986, 5.2.4 ("Remove Dot Segments"): a client resolves `.` and `..` segments before sending, so
`/v1/sessions/../memory` never reaches the session `..`; an encoded `%2E%2E` does reach the server, which
decodes it (chalicelib/web_api.py, `path_id`) into the id it could store but nobody could name again.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.iam import iam_call
from tests.support.stack import HOST_ARN, WORKER_ARN

DOTS = [".", "..", "..."]
ENCODED = {".": "%2E", "..": "%2E%2E", "...": "%2E%2E%2E"}


def _session(user_id: Any = "alice", **fields: Any) -> dict[str, Any]:
    return {"user_id": user_id, "thread_id": "t-1", "agent": "helper", "manifest": {"memory": True}, **fields}


def _refused(status: int, body: Any) -> bool:
    return status == 400 and body["code"] == "invalid_request"


@pytest.mark.parametrize("dots", DOTS)
def test_a_session_id_of_dots_is_refused_on_every_session_route_and_nothing_is_stored(
    client: Any, stores: Any, dots: str
) -> None:
    sid = ENCODED[dots]
    assert _refused(*iam_call(client, "PUT", f"/v1/sessions/{sid}", HOST_ARN, _session()))
    for method, path, arn, body in (
        ("GET", f"/v1/sessions/{sid}/memory", HOST_ARN, None),
        ("POST", f"/v1/sessions/{sid}/untrusted", HOST_ARN, None),
        (
            "POST",
            f"/v1/sessions/{sid}/events",
            WORKER_ARN,
            {"events": [{"id": "e1", "type": "memory.propose", "text": "x"}]},
        ),
        ("GET", f"/v1/sessions/{sid}/events", WORKER_ARN, None),
    ):
        assert _refused(*iam_call(client, method, path, arn, body)), path
    assert stores.sessions.get(dots) is None


@pytest.mark.parametrize("dots", DOTS)
@pytest.mark.parametrize("field", ["thread_id", "user_id"])
def test_a_thread_or_user_id_of_dots_is_refused_at_registration(
    client: Any, stores: Any, dots: str, field: str
) -> None:
    assert _refused(*iam_call(client, "PUT", "/v1/sessions/s-1", HOST_ARN, _session(**{field: dots})))
    assert stores.sessions.get("s-1") is None
    assert iam_call(client, "PUT", "/v1/sessions/s-1", HOST_ARN, _session(**{field: f"a{dots}b"}))[0] == 200


@pytest.mark.parametrize("dots", DOTS)
@pytest.mark.parametrize("field", ["id", "message_id"])
def test_an_event_or_message_id_of_dots_is_refused_and_no_event_is_stored(
    api: Any, agents: Any, stores: Any, dots: str, field: str
) -> None:
    api.turn_on("alice")
    assert agents.register("s-1", "alice")[0] == 200
    event = {"id": "e1", "text": "likes tea", field: dots}
    assert _refused(*agents.propose("s-1", event))
    assert stores.events.list("s-1") == []


@pytest.mark.parametrize("dots", DOTS)
def test_an_agent_id_of_dots_is_refused_on_the_agent_routes(api: Any, stores: Any, dots: str) -> None:
    api.turn_on("alice")
    assert _refused(*api.call("PUT", f"/v1/agents/{ENCODED[dots]}", "alice", {"read": False}))
    assert _refused(*api.call("POST", f"/v1/agents/{ENCODED[dots]}/forget", "alice", {}))
    assert _refused(*api.call("POST", "/v1/agents/helper/forget", "alice", {"session_id": dots}))
    assert stores.entries.load("alice")[0].agents == ()
