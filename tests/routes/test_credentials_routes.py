"""Issue 13's probes through the real routes: POST, PATCH and proposals (through moto's stream and the
consumer) refuse disguised and newly covered credentials by shape, ids and names obey one shape,
invisible-only text is empty, control characters are refused, and stored state is read back."""

from __future__ import annotations

import random
import string
from typing import Any

import pytest
from mnemonic import Mnemonic

from tests.support.iam import iam_call
from tests.support.stack import HOST_ARN, WORKER_ARN

_R = random.Random(13)
_ALNUM = string.ascii_letters + string.digits


def _s(alphabet: str, n: int) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


_GH = "ghp_" + _s(_ALNUM, 36)
_CYRILLIC = str.maketrans({"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х"})
_SEED = Mnemonic("english")

# name -> (text as an attacker would send it, the shape named in the refusal)
PROBES: dict[str, tuple[str, str]] = {
    "zero_width": (f"my token {_GH[:9]}\u200b{_GH[9:20]}\u200d{_GH[20:]}", "github_token"),
    "soft_hyphen": (f"token: {_GH[:12]}\u00ad{_GH[12:]}", "github_token"),
    "cyrillic": (f"token {_GH.translate(_CYRILLIC)}", "github_token"),
    "full_width": ("".join(chr(ord(c) + 0xFEE0) for c in _GH), "github_token"),
    "line_break": (f"the token is {_GH[:17]}\n{_GH[17:]}", "github_token"),
    "spaces": (" ".join(_GH[i : i + 4] for i in range(0, len(_GH), 4)), "github_token"),
    "vault": (f"VAULT_TOKEN=hvs.{_s(_ALNUM, 90)}", "vault_token"),
    "gcp_oauth": (f"access token ya29.{_s(_ALNUM + '-_', 120)}", "gcp_oauth_token"),
    "azure_sas": (
        "https://acct.blob.core.windows.net/c/f.csv?sv=2022-11-02&ss=b&srt=o&sp=r"
        f"&se=2026-01-01T00:00:00Z&sig={_s(_ALNUM, 43)}%3D",
        "azure_sas_token",
    ),
    "twilio": (f"Twilio API key SK{_s('0123456789abcdef', 32)}", "twilio_key"),
    "mailchimp": (f"mailchimp {_s('0123456789abcdef', 32)}-us12", "mailchimp_key"),
    "datadog": (f"DD_APP_KEY={_s('0123456789abcdef', 40)}", "datadog_key"),
    "seed_12": (_SEED.to_mnemonic(_R.randbytes(16)), "seed_phrase"),
    "seed_24": ("recovery phrase: " + _SEED.to_mnemonic(_R.randbytes(32)), "seed_phrase"),
    "sshpass": ("sshpass -p 'tr0ub4dor&3' ssh pi@raspberry", "command_line_password"),
    "mysql": ("mysql -u root -pTr0ub4dor3x prod", "command_line_password"),
    "pgpassword": ("PGPASSWORD=hunter22 psql -h db -U app", "command_line_password"),
    "pem_odd_case": (
        "----- begin rsa private key -----\nMIIEowIBAAKCAQEA" + _s(_ALNUM + "+/", 48) + "\n" + _s(_ALNUM + "+/", 64),
        "private_key",
    ),
    "pem_no_header": ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + _s(_ALNUM + "+/", 200), "private_key"),
    "login_without_password_word": ("login for the bank: hunter2Xy!9", "password_assignment"),
}


def _refused(status: int, body: Any, shape: str) -> bool:
    return status == 422 and body == {"code": "credential_refused", "message": body["message"], "shape": shape}


def test_post_refuses_every_probe_by_shape_and_stores_nothing(api: Any) -> None:
    api.turn_on("alice")
    for name, (text, shape) in PROBES.items():
        status, body = api.call("POST", "/v1/memory", "alice", {"text": text})
        assert _refused(status, body, shape), (name, status, body)
        assert text not in repr(body)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["items"] == []


def test_patch_refuses_every_probe_and_keeps_the_text(api: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "prefers window seats")
    for name, (text, shape) in PROBES.items():
        status, body = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"text": text})
        assert _refused(status, body, shape), (name, status, body)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [i["text"] for i in view["items"]] == ["prefers window seats"]


def test_proposals_refuse_every_probe_through_the_consumer(api: Any, agents: Any, stores: Any) -> None:
    api.turn_on("alice")
    for n, (text, _shape) in enumerate(PROBES.values()):
        session = f"s-{n}"
        agents.register(session, "alice")
        agents.propose(session, {"id": "e1", "text": text}, pump=False)
    agents.stream.drain()
    for n, (name, (text, shape)) in enumerate(PROBES.items()):
        [event] = agents.events(f"s-{n}")
        assert event["outcome"] == {"type": "memory.proposal_refused", "reason": f"credential:{shape}"}, name
        assert text not in repr(event)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["proposals"] == [] and view["items"] == []
    assert not any(text in repr(r.public()) for r in stores.journal.all("alice") for text, _ in PROBES.values())


# --- text with nothing visible, and control characters ----------------------------------------

INVISIBLE_ONLY = "\u200b\u200c\u200d\ufeff"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (INVISIBLE_ONLY, "empty"),
        (" \u2800\u3164\u00ad\u2060 ", "empty"),
        ("likes tea\x00", "invalid_text"),
        ("bell\x07", "invalid_text"),
        ("a lone\rreturn", "invalid_text"),
        ("c1 \x85 control", "invalid_text"),
    ],
)
def test_invisible_or_control_text_is_refused_everywhere(api: Any, agents: Any, text: str, reason: str) -> None:
    api.turn_on("alice")
    status, body = api.call("POST", "/v1/memory", "alice", {"text": text})
    assert status == 400 and body["code"] == "invalid_request" and body.get("field") == "text"
    entry = api.add("alice", "likes tea")
    status, body = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"text": text})
    assert status == 400 and body["code"] == "invalid_request"
    agents.register("s", "alice")
    agents.propose("s", {"id": "e1", "text": text})
    assert agents.outcomes("s") == {"e1": {"type": "memory.proposal_refused", "reason": reason}}
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [i["text"] for i in view["items"]] == ["likes tea"] and view["proposals"] == []


def test_text_is_stored_as_typed_while_the_check_reads_it_normalized(api: Any) -> None:
    api.turn_on("alice")
    typed = [
        "می\u200cخواهم کتاب",
        "Donau\u00addampf\u00adschiff",
        "5\u00a0kg of rice",
        "👩\u200d💻 on Fridays",
        "会議は１０時（本社）",
        "tab\tand\nnewline and crlf\r\nend",
    ]
    for text in typed:
        assert api.add("alice", text)["text"] == text
    _, view = api.call("GET", "/v1/memory", "alice")
    assert sorted(i["text"] for i in view["items"]) == sorted(typed)


# --- ids and names ----------------------------------------------------------------------------


def _register(client: Any, session_id: str, **fields: Any) -> tuple[int, Any]:
    body = {"user_id": "alice", "thread_id": "t-1", "agent": "helper", "manifest": {"memory": True}, **fields}
    return iam_call(client, "PUT", f"/v1/sessions/{session_id}", HOST_ARN, body)


@pytest.mark.parametrize("field", ["thread_id", "agent", "user_id"])
def test_session_names_holding_a_credential_are_refused_and_nothing_is_registered(
    client: Any, agents: Any, field: str
) -> None:
    status, body = _register(client, "s", **{field: _GH})
    assert _refused(status, body, "github_token") and _GH not in repr(body)
    assert agents.context("s")[0] == 404


@pytest.mark.parametrize("value", ["has space", "x" * 129, "naïve", "", "tab\there", "a/b", "<script>"])
@pytest.mark.parametrize("field", ["thread_id", "agent"])
def test_session_names_outside_the_identifier_shape_are_400(client: Any, agents: Any, field: str, value: str) -> None:
    status, body = _register(client, "s", **{field: value})
    assert status == 400 and body["code"] == "invalid_request"
    assert not value or value not in body["message"]
    assert agents.context("s")[0] == 404


@pytest.mark.parametrize(
    "value", ["alice\n", "#state", "\u202ealice", "ali ce", "x" * 129, "", "alice\u200b", "<b>", "a\x00"]
)
def test_a_session_user_id_outside_a_token_subjects_shape_is_400(client: Any, agents: Any, value: str) -> None:
    """Red team, issue 21 #13: any 1-128 characters were stored and returned as typed."""
    status, body = _register(client, "s", user_id=value)
    assert status == 400 and body["code"] == "invalid_request"
    assert not value.strip() or value not in body["message"]
    assert agents.context("s")[0] == 404


@pytest.mark.parametrize(
    "value", ["alice", "auth0|5f7c8ec7c33c6c004bbafe82", "alice@example.com", "google-oauth2|1234", "a+b"]
)
def test_a_session_user_id_in_a_token_subjects_shape_registers(client: Any, agents: Any, value: str) -> None:
    assert _register(client, "s", user_id=value)[0] == 200


def test_message_id_holding_a_credential_is_refused_before_anything_is_stored(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    agents.register("s", "alice")
    status, body = agents.propose("s", {"id": "e1", "text": "likes tea", "message_id": _GH})
    assert _refused(status, body, "github_token")
    status, body = agents.propose("s", {"id": "e2", "text": "likes tea", "message_id": "m 1"})
    assert status == 400 and body["code"] == "invalid_request"
    status, body = agents.propose("s", {"id": _GH, "text": "likes tea"})
    assert _refused(status, body, "github_token")
    assert agents.events("s") == []
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["proposals"] == []


def test_accepted_entry_source_holds_only_identifiers(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    agents.register("s-1", "alice", thread_id="thread-9")
    agents.propose("s-1", {"id": "e1", "text": "likes tea", "message_id": "m-42"})
    _, view = api.call("GET", "/v1/memory", "alice")
    status, entry = api.call("POST", f"/v1/memory/{view['proposals'][0]['id']}/accept", "alice")
    assert status == 201 and entry["source"] == {"session_id": "s-1", "thread_id": "thread-9", "message_id": "m-42"}


LONG_SESSION = "s" * 2100


@pytest.mark.parametrize(
    ("method", "path", "arn", "body"),
    [
        (
            "PUT",
            f"/v1/sessions/{LONG_SESSION}",
            HOST_ARN,
            {"user_id": "alice", "agent": "helper", "manifest": {"memory": True}},
        ),
        ("GET", f"/v1/sessions/{LONG_SESSION}/memory", HOST_ARN, None),
        ("POST", f"/v1/sessions/{LONG_SESSION}/untrusted", HOST_ARN, None),
        (
            "POST",
            f"/v1/sessions/{LONG_SESSION}/events",
            WORKER_ARN,
            {"events": [{"id": "e1", "type": "memory.propose", "text": "x"}]},
        ),
        ("GET", f"/v1/sessions/{LONG_SESSION}/events", WORKER_ARN, None),
    ],
)
def test_a_session_id_over_2048_bytes_is_400_not_500(client: Any, method: str, path: str, arn: str, body: Any) -> None:
    status, answer = iam_call(client, method, path, arn, body)
    assert status == 400 and answer["code"] == "invalid_request"
    assert LONG_SESSION not in answer["message"]
