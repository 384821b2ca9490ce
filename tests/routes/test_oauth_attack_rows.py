"""An outsider's second attack on OAuth's stored rows (docs/oauth.md, "An outsider's attack"): an altered pending
request must not show one client and give the code to another, through the real routes against moto."""

from __future__ import annotations

import json
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from chalicelib.oauth import clients
from chalicelib.services import connections as connections_service
from tests.support.oauth_flow import OAuthFlow


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    connections_service.forget_cache()
    clients.forget_documents()


@pytest.fixture
def flow(client: Any, issuer: Any) -> OAuthFlow:
    return OAuthFlow(client, issuer)


def test_a_pending_request_whose_query_names_another_client_is_not_believed(
    flow: OAuthFlow, dynamodb: Any, api: Any
) -> None:
    # The row keeps the client twice: `client_id` (what the screen shows) and the query (what the decision runs).
    # Altered to differ, the person would approve "Claude" and the code would go to the other client.
    shown, other = flow.client_id(), flow.client_id()
    verifier = secrets.token_urlsafe(40)
    request_id = flow.request_id(flow.authorize(shown, verifier))
    key = {"user_id": {"S": f"oreq#{request_id}"}, "sk": {"S": "#oreq"}}
    stored = json.loads(dynamodb.get_item(TableName="memory-keys", Key=key)["Item"]["query"]["S"])
    dynamodb.update_item(
        TableName="memory-keys",
        Key=key,
        UpdateExpression="SET #q = :q",
        ExpressionAttributeNames={"#q": "query"},
        ExpressionAttributeValues={":q": {"S": json.dumps({**stored, "client_id": other})}},
    )
    opened = flow.get(f"/v1/oauth/requests/{request_id}", "alice")
    decided = flow.decide(request_id, "alice")
    if decided.status == 200:  # what the break looks like: the screen named one client, the code is the other's
        code = parse_qs(urlsplit(decided.body["redirect"]).query)["code"][0]
        traded = flow.exchange(other, code, verifier)
        assert traded.status != 200, (opened.body, traded.body)
    assert opened.status == 404 and decided.status == 404
    assert api.call("GET", "/v1/connections", "alice")[1]["connections"] == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("client_name", "Notes” and an app at claude.ai that calls itself “Claude"),
        ("client_name", "Notes\u202e"),
        ("client_from", "claude.ai\u202e"),
        ("client_from", "claude.ai, checked by Memory, for an app"),
    ],
)
def test_a_connection_row_altered_to_forge_its_client_is_not_shown_as_stored(
    flow: OAuthFlow, dynamodb: Any, api: Any, field: str, value: str
) -> None:
    # The Agents tab says "Signed in from <shown>": what a row says of its client is shown only as consent checked it.
    flow.tokens()
    items = dynamodb.scan(TableName="memory-keys")["Items"]
    (row,) = [item for item in items if "client_name" in item and item["user_id"]["S"] == "alice"]
    dynamodb.update_item(
        TableName="memory-keys",
        Key={"user_id": row["user_id"], "sk": row["sk"]},
        UpdateExpression="SET #f = :v",
        ExpressionAttributeNames={"#f": field},
        ExpressionAttributeValues={":v": {"S": value}},
    )
    connections_service.forget_cache()
    (listed,) = api.call("GET", "/v1/connections", "alice")[1]["connections"]
    assert value not in json.dumps(listed, ensure_ascii=False), listed
    assert "Claude" not in listed["client"]["shown"] or field == "client_from"
    assert api.call("DELETE", f"/v1/connections/{listed['id']}", "alice")[0] in (200, 204)  # still revocable
