"""An outsider's second attack on codes (docs/oauth.md, "Codes"), through the real routes against moto: what a code's
interceptor, who lacks the PKCE verifier, can still do to the person's new connection, and what guessing costs."""

from __future__ import annotations

import secrets
import threading
from typing import Any

import pytest

from chalicelib.oauth import clients, server
from chalicelib.services import connections as connections_service
from tests.support.oauth_flow import Answer, OAuthFlow
from tests.support.raw_storage import every_item


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    connections_service.forget_cache()
    clients.forget_documents()


@pytest.fixture
def flow(client: Any, issuer: Any) -> OAuthFlow:
    return OAuthFlow(client, issuer)


def _refused(answer: Answer) -> None:
    # RFC 6749 §5.2: "invalid_grant: The provided authorization grant (e.g., authorization code ...) is invalid,
    # expired, revoked, does not match the redirection URI used in the authorization request, or was issued to
    # another client." Status 400, a JSON body with "error" (and here always "error_description").
    assert answer.status == 400, answer.body
    assert answer.body["error"] == "invalid_grant" and answer.body["error_description"]


def _code_row(dynamodb: Any) -> dict[str, Any]:
    rows = [i for i in every_item(dynamodb)["memory-keys"] if i["user_id"]["S"].startswith("ocode#")]
    assert len(rows) == 1
    return rows[0]


def _connections(api: Any) -> list[Any]:
    return list(api.call("GET", "/v1/connections", "alice")[1]["connections"])


def test_a_wrong_verifier_does_not_cost_the_client_its_exchange(flow: OAuthFlow, api: Any, dynamodb: Any) -> None:
    # RFC 7636 §4.6: "If the values are not equal, an error response indicating "invalid_grant" as described in
    # Section 5.2 of [RFC6749] MUST be returned." Returned, and nothing more: the code is not spent by it, so the
    # client's own exchange is no replay (RFC 6749 §4.1.2's revoke is for a code "used more than once").
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    code = flow.code(client_id, verifier)
    _refused(flow.exchange(client_id, code, secrets.token_urlsafe(40)))  # the interceptor has no verifier
    row = _code_row(dynamodb)
    assert "spent" not in row and row["attempts"] == {"N": "1"}  # counted, not spent
    traded = flow.exchange(client_id, code, verifier)
    assert traded.status == 200, traded.body
    assert len(_connections(api)) == 1
    assert flow.mcp(traded.body["access_token"]).status == 200
    row = _code_row(dynamodb)
    assert row["spent"] == {"BOOL": True} and row["attempts"] == {"N": "2"}


def test_three_failed_exchanges_end_the_code_and_revoke_nothing(flow: OAuthFlow, api: Any, dynamodb: Any) -> None:
    # RFC 6749 §10.10: "The probability of an attacker guessing generated tokens (and other credentials not intended
    # for handling by end-users) MUST be less than or equal to 2^(-128)": a client's verifier may be weaker than RFC
    # 7636 §4.1 asks ("a minimum length of 43 characters" of 256 bits' entropy), so a code takes 3 failed exchanges
    # (a wrong verifier or a wrong redirect URI, RFC 6749 §4.1.3: "ensure that the "redirect_uri" parameter is
    # present ... and ... identical") and then refuses every exchange, even a right one: it issued nothing, so
    # RFC 6749 §4.1.2's revoke has nothing to end, and the person's connection stays.
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    code = flow.code(client_id, verifier)
    _refused(flow.exchange(client_id, code, secrets.token_urlsafe(40)))
    _refused(flow.exchange(client_id, code, verifier, redirect_uri="https://claude.ai/other"))
    _refused(flow.exchange(client_id, code, "a" * 43))
    _refused(flow.exchange(client_id, code, verifier))  # the 4th, right in every way: too late
    _refused(flow.exchange(client_id, code, verifier))
    assert len(_connections(api)) == 1  # nothing revoked: the code never issued anything
    row = _code_row(dynamodb)
    assert "spent" not in row and row["attempts"] == {"N": "3"}


def test_a_spent_code_ends_its_connection_only_when_replayed_with_its_verifier(
    flow: OAuthFlow, api: Any, dynamodb: Any
) -> None:
    # RFC 6749 §4.1.2: "If an authorization code is used more than once, the authorization server MUST deny the
    # request and SHOULD revoke (when possible) all tokens previously issued based on that authorization code."
    # Denied always. Revoked when the second use passes every check (its holder has the verifier, RFC 7636 §4.6:
    # whoever exchanged it first may have been them); a second use with a wrong verifier denies and revokes
    # nothing, or whoever intercepted the code could end the connection once the client had traded it.
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    code = flow.code(client_id, verifier)
    first = flow.exchange(client_id, code, verifier)
    assert first.status == 200
    _refused(flow.exchange(client_id, code, secrets.token_urlsafe(40)))
    assert len(_connections(api)) == 1 and flow.mcp(first.body["access_token"]).status == 200
    assert _code_row(dynamodb)["attempts"] == {"N": "2"}
    _refused(flow.exchange(client_id, code, verifier))  # the 3rd exchange: a replay that proves the verifier
    assert _connections(api) == []
    assert flow.mcp(first.body["access_token"]).status == 401


def test_a_spent_code_out_of_exchanges_is_refused_and_revokes_nothing(flow: OAuthFlow, api: Any) -> None:
    # The count holds for a spent code too, so replays cannot guess a weak verifier into a revoke (RFC 6749 §10.10).
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    code = flow.code(client_id, verifier)
    assert flow.exchange(client_id, code, verifier).status == 200
    _refused(flow.exchange(client_id, code, "a" * 43))
    _refused(flow.exchange(client_id, code, "b" * 43))
    _refused(flow.exchange(client_id, code, verifier))  # the 4th: no exchange left, so no replay counted either
    assert len(_connections(api)) == 1


def test_two_concurrent_right_exchanges_make_one_token_set(
    flow: OAuthFlow, api: Any, dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # RFC 6749 §4.1.2: "The client MUST NOT use the authorization code more than once." Two exchanges both past
    # every check (held at the PKCE check until both reach it): the conditional write that spends the code lets
    # one win; the other issues nothing and, since it too proved the verifier, revokes nothing.
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    code = flow.code(client_id, verifier)
    both = threading.Barrier(2, timeout=5)
    checked = server.S256Only.validate_code_verifier

    def held(self: Any, grant: Any, result: Any) -> None:
        checked(self, grant, result)
        try:
            both.wait()
        except threading.BrokenBarrierError:
            pass

    monkeypatch.setattr(server.S256Only, "validate_code_verifier", held)
    answers: list[Answer] = []
    threads = [threading.Thread(target=lambda: answers.append(flow.exchange(client_id, code, verifier))) for _ in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(a.status for a in answers) == [200, 400]
    won = next(a for a in answers if a.status == 200)
    _refused(next(a for a in answers if a.status == 400))
    assert len(_connections(api)) == 1
    assert flow.mcp(won.body["access_token"]).status == 200
    assert flow.refresh(client_id, won.body["refresh_token"]).status == 200
    row = _code_row(dynamodb)
    assert row["spent"] == {"BOOL": True} and row["attempts"] == {"N": "2"}


@pytest.mark.parametrize(
    "change",
    [
        {"UpdateExpression": "REMOVE attempts"},
        {"UpdateExpression": "SET attempts = :a", "ExpressionAttributeValues": {":a": {"S": "0"}}},
    ],
)
def test_a_code_row_whose_count_was_altered_is_not_believed(
    flow: OAuthFlow, api: Any, dynamodb: Any, change: dict[str, Any]
) -> None:
    # Stored data is hostile: a count removed or made no number (a row altered or half-written) refuses the code
    # (RFC 6749 §5.2 invalid_grant) and revokes nothing; it never starts the count again.
    client_id, verifier = flow.client_id(), secrets.token_urlsafe(40)
    code = flow.code(client_id, verifier)
    row = _code_row(dynamodb)
    dynamodb.update_item(TableName="memory-keys", Key={"user_id": row["user_id"], "sk": row["sk"]}, **change)
    _refused(flow.exchange(client_id, code, verifier))
    assert "spent" not in _code_row(dynamodb)
    assert len(_connections(api)) == 1
