"""Issue 21 through the real routes against moto: a word before a split token and pasted encodings are refused
by shape on POST, PATCH and agents' proposals, the refusal never quotes the text, and nothing of it is stored;
benign encoded text is kept as typed."""

from __future__ import annotations

import random
import string
from typing import Any

from tests.support.raw_storage import every_item, plaintext_hits

_R = random.Random(2121)
_ALNUM = string.ascii_letters + string.digits
_GH = "ghp_" + "".join(_R.choice(_ALNUM) for _ in range(36))

# name -> (text as a user would paste it, the shape named in the refusal)
PROBES: dict[str, tuple[str, str]] = {
    "aws_key_spaced": ("aws key AKIA QW3R T5YU 7IOP AS2D", "aws_access_key_id"),
    "my_key_line_break": (f"my key {_GH[:24]}\n{_GH[24:]}", "github_token"),
    "bot_spaced": ("bot AKIA QW3R T5YU 7IOP AS2D", "aws_access_key_id"),
    "percent": ("AKIA%51W3RT5YU7IOPAS2D", "aws_access_key_id"),
    "percent_all": ("".join(f"%{ord(c):02X}" for c in _GH), "github_token"),
    "json_escape": ('{"key": "\\u0041KIAQW3RT5YU7IOPAS2D"}', "aws_access_key_id"),
    "html_decimal": ("&#65;KIAQW3RT5YU7IOPAS2D", "aws_access_key_id"),
    "html_hex": ("&#x41;KIAQW3RT5YU7IOPAS2D", "aws_access_key_id"),
    "html_named": (_GH.replace("_", "&lowbar;"), "github_token"),
    "dash_groups": ("aws key AKIA-QW3R-T5YU-7IOP-AS2D", "aws_access_key_id"),
    "bar_groups": ("token " + "|".join(_GH[i : i + 4] for i in range(0, 40, 4)), "github_token"),
    "middle_dot_groups": (
        "key: " + "\u00b7".join("AKIAQW3RT5YU7IOPAS2D"[i : i + 4] for i in range(0, 20, 4)),
        "aws_access_key_id",
    ),
}
BENIGN = [
    "café: caf%C3%A9 is 100% good",
    "Tom &amp; Jerry &lt;3",
    "key dates: 2024-05-01 and 2025-06-30",
    "na\\u00efve \\u00e9t\\u00e9",
    "token server at 10.0.0.12, version 1.2.3.4",
]


def _refused(status: int, body: Any, shape: str) -> bool:
    return status == 422 and body == {"code": "credential_refused", "message": body["message"], "shape": shape}


def test_post_refuses_each_probe_by_shape_and_stores_none_of_it(api: Any, dynamodb: Any) -> None:
    api.turn_on("alice")
    for name, (text, shape) in PROBES.items():
        status, body = api.call("POST", "/v1/memory", "alice", {"text": text})
        assert _refused(status, body, shape), (name, status, body)
        assert text not in repr(body) and "AKIA" not in body["message"] and "ghp_" not in body["message"]
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["items"] == []
    secrets = [text for text, _ in PROBES.values()] + ["AKIAQW3RT5YU7IOPAS2D", _GH, "QW3R T5YU"]
    assert plaintext_hits(secrets, every_item(dynamodb)) == []


def test_patch_refuses_each_probe_and_keeps_the_entry_as_it_was(api: Any, dynamodb: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "prefers window seats")
    for name, (text, shape) in PROBES.items():
        status, body = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"text": text})
        assert _refused(status, body, shape), (name, status, body)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [i["text"] for i in view["items"]] == ["prefers window seats"]
    assert plaintext_hits([text for text, _ in PROBES.values()], every_item(dynamodb)) == []


def test_proposals_holding_a_probe_are_refused_through_the_consumer(api: Any, agents: Any) -> None:
    api.turn_on("alice")
    for n, (text, _shape) in enumerate(PROBES.values()):
        agents.register(f"s-{n}", "alice")
        agents.propose(f"s-{n}", {"id": "e1", "text": text}, pump=False)
    agents.stream.drain()
    for n, (name, (text, shape)) in enumerate(PROBES.items()):
        [event] = agents.events(f"s-{n}")
        assert event["outcome"] == {"type": "memory.proposal_refused", "reason": f"credential:{shape}"}, name
        assert text not in repr(event)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["proposals"] == [] and view["items"] == []


def test_benign_encoded_text_is_kept_as_typed(api: Any) -> None:
    api.turn_on("alice")
    for text in BENIGN:
        assert api.add("alice", text)["text"] == text
    _, view = api.call("GET", "/v1/memory", "alice")
    assert sorted(i["text"] for i in view["items"]) == sorted(BENIGN)
