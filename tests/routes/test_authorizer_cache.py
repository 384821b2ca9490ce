"""The authorizer's answer is cached per token; a cached answer never outlives the token it was given for.

API Gateway developer guide, "Use API Gateway Lambda authorizers": with a TTL above 0 "API Gateway caches
the policy ... for the specified time"; for a TOKEN authorizer the cache key is the identity source (the
Authorization header), so one token's cached answer serves that token alone. The policy returned covers every
route (`routes=["*"]`): a cached policy naming only the first route would 403 the user's next route.

The gateway's cache is replayed here as it works: the real authorizer runs once, and its answer (principal
and context) is handed to the real API function for later requests, as API Gateway does for the TTL.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

import app as app_module
from chalicelib import web_api
from local.lambda_context import lambda_context


def _authorize(client: Any, token: str) -> dict[str, Any]:
    event = {
        "type": "TOKEN",
        "authorizationToken": f"Bearer {token}",
        "methodArn": "arn:aws:execute-api:us-east-1:123456789012:abcdef/api/GET/v1/memory",
    }
    return dict(client.lambda_.invoke("user_token", event).payload)


def _cached_call(answer: dict[str, Any], method: str, path: str, body: Any = None) -> dict[str, Any]:
    """The API function invoked as API Gateway does within the TTL: with the cached principal and context."""
    authorizer = {**answer["context"], "principalId": answer["principalId"]}
    event = {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "isBase64Encoded": False,
        "headers": {"Content-Type": "application/json"},
        "multiValueHeaders": {"Content-Type": ["application/json"]},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "body": json.dumps(body) if body is not None else None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": method,
            "path": "/api" + path,
            "stage": "api",
            "requestId": "req-cached",
            "authorizer": authorizer,
            "identity": {"sourceIp": "127.0.0.1"},
        },
    }
    return dict(app_module.app(event, lambda_context("api_handler")))


def test_the_authorizer_is_cached_for_minutes_and_answers_for_every_route(client: Any, api: Any) -> None:
    assert 60 <= app_module.AUTHORIZER_TTL_SECONDS <= 300
    answer = _authorize(client, api.issuer.mint("alice"))
    [statement] = answer["policyDocument"]["Statement"]
    assert statement["Effect"] == "Allow" and statement["Resource"] == [
        "arn:aws:execute-api:us-east-1:123456789012:abcdef/api/*/*"
    ]


def test_a_cached_answer_works_until_the_token_expires_and_then_is_a_401_that_changes_nothing(
    client: Any, api: Any, stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = api.issuer.mint("alice", lifetime=120)
    answer = _authorize(client, token)
    expires = int(answer["context"]["tokenExpires"])
    assert abs(expires - (time.time() + 120)) < 5  # the token's own exp
    assert _cached_call(answer, "PUT", "/v1/memory/settings", {"enabled": True})["statusCode"] == 200
    # The gateway would go on answering from its cache for up to the TTL; the token has expired by then.
    monkeypatch.setattr(web_api.time, "time", lambda: expires + 1)
    late = _cached_call(answer, "PUT", "/v1/memory/settings", {"enabled": False})
    assert late["statusCode"] == 401 and json.loads(late["body"])["code"] == "unauthorized"
    assert _cached_call(answer, "GET", "/v1/memory")["statusCode"] == 401
    monkeypatch.undo()
    assert stores.entries.get_state("alice").enabled is True  # the late request changed nothing


@pytest.mark.parametrize("expires", [None, "", "soon", "1.5e9", "-1"])
def test_a_cached_context_without_a_usable_expiry_is_refused(client: Any, api: Any, expires: Any) -> None:
    answer = _authorize(client, api.issuer.mint("alice"))
    answer["context"] = {k: v for k, v in answer["context"].items() if k != "tokenExpires"}
    if expires is not None:
        answer["context"]["tokenExpires"] = expires
    assert _cached_call(answer, "GET", "/v1/memory")["statusCode"] == 401
