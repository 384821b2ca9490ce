"""A consent decision the service refuses leaves the request waiting (docs/oauth.md), and a pending request's row
never names the person who opened it, through the real routes against moto."""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from chalicelib.oauth import clients
from chalicelib.services import connections as connections_service
from chalicelib.storage import dynamo
from chalicelib.storage.agents import ROW_CAP
from tests.support.oauth_flow import REDIRECT, OAuthFlow
from tests.support.raw_storage import every_item


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    connections_service.forget_cache()
    clients.forget_documents()


@pytest.fixture
def flow(client: Any, issuer: Any) -> OAuthFlow:
    return OAuthFlow(client, issuer)


def _requests(dynamodb: Any) -> list[dict[str, Any]]:
    return [i for i in every_item(dynamodb)["memory-keys"] if i["user_id"]["S"].startswith("oreq#")]


def _fill_agent_rows(api: Any, stores: Any) -> None:
    """The person has an agent `claude` and, by the counter, all ROW_CAP agent rows taken."""
    assert api.call("PUT", "/v1/agents/claude", "alice", {"read": True})[0] == 200
    stores.client.update_item(
        TableName=stores.entries.table,
        Key=dynamo.dump({"user_id": "alice", "sk": "#state"}),
        UpdateExpression="SET agent_rows = :c",
        ExpressionAttributeValues=dynamo.values(c=ROW_CAP),
    )


def _opened(flow: OAuthFlow) -> str:
    request_id = flow.request_id(flow.authorize(flow.client_id(), secrets.token_urlsafe(40)))
    assert flow.get(f"/v1/oauth/requests/{request_id}", "alice").status == 200
    return request_id


def test_an_approval_refused_at_the_agent_cap_leaves_the_request_decidable(
    flow: OAuthFlow, api: Any, stores: Any, dynamodb: Any
) -> None:
    _fill_agent_rows(api, stores)
    request_id = _opened(flow)
    refused = flow.decide(request_id, "alice", agent="a-new-one")
    assert refused.status == 409 and refused.body["code"] == "limit_reached", refused.body
    assert len(_requests(dynamodb)) == 1  # still waiting
    assert api.call("GET", "/v1/connections", "alice")[1]["connections"] == []
    assert flow.get(f"/v1/oauth/requests/{request_id}", "alice").status == 200  # the screen can show it again
    approved = flow.decide(request_id, "alice", agent="claude")  # an agent the person has
    assert approved.status == 200, approved.body
    assert "code" in parse_qs(urlsplit(approved.body["redirect"]).query)
    assert _requests(dynamodb) == []  # decided once
    (made,) = api.call("GET", "/v1/connections", "alice")[1]["connections"]
    assert made["agent"] == "claude"
    assert flow.decide(request_id, "alice", agent="claude").status == 404


def test_after_a_refused_approval_the_person_may_deny(flow: OAuthFlow, api: Any, stores: Any, dynamodb: Any) -> None:
    _fill_agent_rows(api, stores)
    request_id = _opened(flow)
    assert flow.decide(request_id, "alice", agent="a-new-one").status == 409
    denied = flow.decide(request_id, "alice", approve=False)
    assert denied.status == 200
    redirect = urlsplit(denied.body["redirect"])
    # RFC 6749 §4.1.2.1: the person denied the request: `access_denied`, with the client's state.
    assert redirect._replace(query="").geturl() == REDIRECT
    answered = parse_qs(redirect.query)
    assert answered["error"] == ["access_denied"] and answered["state"] == ["st-1"] and "code" not in answered
    assert _requests(dynamodb) == [] and api.call("GET", "/v1/connections", "alice")[1]["connections"] == []


def test_two_approvals_of_one_request_make_one_connection(flow: OAuthFlow, api: Any) -> None:
    request_id = _opened(flow)
    assert flow.decide(request_id, "alice").status == 200
    assert flow.decide(request_id, "alice").status == 404
    assert len(api.call("GET", "/v1/connections", "alice")[1]["connections"]) == 1


def test_a_pending_request_row_never_names_the_person(flow: OAuthFlow, dynamodb: Any, stores: Any) -> None:
    from chalicelib.services import operators

    person = "alice-7f3e"
    request_id = flow.request_id(flow.authorize(flow.client_id(), secrets.token_urlsafe(40)))
    assert flow.get(f"/v1/oauth/requests/{request_id}", person).status == 200
    (row,) = _requests(dynamodb)
    assert person not in str(row)  # the opener is kept as a keyed MAC, never the id
    assert len(row["opened_by"]["S"]) == 64
    operators.erase_account(stores, "op", person, "req-1")
    assert person not in str(every_item(dynamodb)["memory-keys"])  # erased: nothing in the keys table names them
    # the binding still holds: another person is refused, the opener decides
    assert flow.get(f"/v1/oauth/requests/{request_id}", "bob").status == 404
    assert flow.decide(request_id, "bob").status == 404
