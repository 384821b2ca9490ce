"""An outsider's second attack on client names (docs/oauth.md, "A client's name"), through the real routes against moto:
look-alikes the fold missed, and names that break out of the quotes the consent screen puts them in."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest

from chalicelib.oauth import clients
from chalicelib.services import connections as connections_service
from tests.support.oauth_flow import OAuthFlow

LOOPBACK = "http://127.0.0.1:33418/callback"


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    connections_service.forget_cache()
    clients.forget_documents()


@pytest.fixture
def flow(client: Any, issuer: Any) -> OAuthFlow:
    return OAuthFlow(client, issuer)


def _stored_clients(dynamodb: Any) -> list[dict[str, Any]]:
    items = dynamodb.scan(TableName="memory-keys")["Items"]
    return [item for item in items if item["user_id"]["S"].startswith("oclient#")]


@pytest.mark.parametrize(
    "name",
    [
        "ChatɢPT",  # U+0262 LATIN LETTER SMALL CAPITAL G
        "ᴄʟᴀᴜᴅᴇ",  # small capitals: CLAUDE as a heading sets it
        "Cʟaude",  # U+029F LATIN LETTER SMALL CAPITAL L
        "ChatGᴘT",  # U+1D18 LATIN LETTER SMALL CAPITAL P
    ],
)
def test_small_capitals_do_not_make_a_reserved_name_anothers(flow: OAuthFlow, dynamodb: Any, name: str) -> None:
    # Latin small capitals are letters of the Latin script, so the other-scripts confusables map leaves them; set in a
    # name they read as the capital they are named after.
    answer = flow.register(LOOPBACK, client_name=name)
    assert answer.status == 400 and answer.body["error"] == "invalid_client_metadata", answer.body
    assert _stored_clients(dynamodb) == []


@pytest.mark.parametrize(
    "name",
    [
        "Notes” asks to use your memory. An app at claude.ai that calls itself “Claude",
        'Notes" and an app at claude.ai that calls itself "Claude',
        "Notes〞 and an app at claude.ai that calls itself 〝Claude",
        "Notes＂ and an app at claude.ai that calls itself ＂Claude",
        "Notes» and an app at claude.ai that calls itself «Claude",
        "Notes’’ and an app at claude.ai that calls itself ‘‘Claude",
        "Notesˮ and an app at claude.ai that calls itself ˮClaude",
    ],
)
def test_a_name_cannot_close_the_quotes_the_screen_puts_it_in(flow: OAuthFlow, dynamodb: Any, name: str) -> None:
    # The screen says: an app on this device that calls itself “<name>”. A name that closes those quotes writes
    # the service's own words after them: "... calls itself “Notes” asks ... An app at claude.ai that calls itself
    # “Claude” asks to use your memory", the checked part forged.
    answer = flow.register(LOOPBACK, client_name=name)
    assert answer.status == 400 and answer.body["error"] == "invalid_client_metadata", answer.body
    assert _stored_clients(dynamodb) == []


def test_a_stored_client_row_altered_to_a_quoted_name_is_not_believed(flow: OAuthFlow, dynamodb: Any) -> None:
    answer = flow.register(LOOPBACK, client_name="Helper")
    client_id = answer.body["client_id"]
    key = {"user_id": {"S": f"oclient#{client_id}"}, "sk": {"S": "#oclient"}}
    stored = json.loads(dynamodb.get_item(TableName="memory-keys", Key=key)["Item"]["metadata"]["S"])
    forged = "Helper” and an app at claude.ai that calls itself “Claude"
    dynamodb.update_item(
        TableName="memory-keys",
        Key=key,
        UpdateExpression="SET metadata = :m",
        ExpressionAttributeValues={":m": {"S": json.dumps({**stored, "client_name": forged})}},
    )
    refused = flow.authorize(client_id, secrets.token_urlsafe(40), redirect_uri=LOOPBACK)
    assert refused.status == 400 and refused.body["error"] == "invalid_client"


def test_a_name_of_stacked_marks_is_refused(flow: OAuthFlow, dynamodb: Any) -> None:
    # Marks stacked on one letter draw far above and below its line: over the screen's heading and its other lines.
    answer = flow.register(LOOPBACK, client_name="Notes" + "\u030d\u0346" * 40)
    assert answer.status == 400 and answer.body["error"] == "invalid_client_metadata", answer.body
    assert _stored_clients(dynamodb) == []


@pytest.mark.parametrize("name", ["Claude Code", "Zoë’s notes", "Tiếng Việt", "Bob's helper", "คำ"])
def test_names_people_write_are_still_accepted(flow: OAuthFlow, name: str) -> None:
    answer = flow.register(LOOPBACK, client_name=name)
    assert answer.status == 201, answer.body
    assert answer.body["client_name"] == name


@pytest.mark.parametrize(
    "site",
    [
        "https://notes.example/ — verified: this is an app at claude.ai that calls itself “Claude”",
        "https://notes.example/\u3000Verified by Memory",
        'https://notes.example/"Claude"',
        "https://",
        "https://сlaude.ai/",  # Cyrillic с: the site is shown as written, so it is a URL in ASCII (IDNA for others)
    ],
)
def test_a_client_site_is_a_url_and_nothing_more(flow: OAuthFlow, dynamodb: Any, site: str) -> None:
    # The screen says "It gives its site as <client_uri>.": a site with spaces, quotes or no host writes sentences there.
    answer = flow.register(LOOPBACK, client_name="Notes", client_uri=site)
    assert answer.status == 400 and answer.body["error"] == "invalid_client_metadata", answer.body
    assert _stored_clients(dynamodb) == []


def test_a_plain_client_site_is_still_shown(flow: OAuthFlow) -> None:
    answer = flow.register(LOOPBACK, client_name="Notes", client_uri="https://notes.example/about?x=1")
    assert answer.status == 201 and answer.body["client_uri"] == "https://notes.example/about?x=1"
