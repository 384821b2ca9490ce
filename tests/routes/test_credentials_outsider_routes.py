"""Issue 37 item 19 through the real routes against moto: each category an outsider's corpus found missed is
refused by shape on POST, PATCH and agents' proposals, the refusal never quotes the text, and nothing of it is
stored; the benign notes beside those rules are kept as typed."""

from __future__ import annotations

from typing import Any

from tests.support.raw_storage import every_item, plaintext_hits

_UUID = "9f3c2a1e-7b4d-4c8a-b2e1-5d6f7a8b9c0d"
# name -> (text as a person would write it, the shape named in the refusal)
PROBES: dict[str, tuple[str, str]] = {
    "heroku_full_width": (f"ｈｅｒｏｋｕ {_UUID}", "heroku_api_key"),
    "heroku_line_broken": (f"my heroku key {_UUID[:18]}\n{_UUID[18:]}", "heroku_api_key"),
    "note_pair": ("my bank login is maria / Tr0ub4dor&3", "username_password"),
    "seed_no_checksum": (
        "abandon again announce assume barely blame bridge call celery claim comic cream",
        "seed_phrase",
    ),
    "vault_legacy": ("vault login s.Ga4VHWcQdwP8xZrXWPLUJkq3", "vault_token"),
    "generic_key": ("openweather key 8f2b9c4d1e7a6f3b5c9d2e8a4f1b7c3d", "secret_assignment"),
    "command_line": ("docker login -u maria -p Tr0ub4dor3 registry.example.com", "command_line_password"),
    "hf_homoglyph": ("hf_jRNzQGgWkbyKPGvqhXCjmfUuEɑdLaKtRTr", "huggingface_token"),
}
BENIGN = [
    f"Order {_UUID} arrives Tuesday.",
    "Deployed the blog to Heroku today.",
    "mkdir -p ~/notes then ssh -p 2222 pi@home",
    "The wifi password is on the fridge.",
    "milk, eggs, bread, butter, cheese, apples, coffee, rice",
    "I like to walk the dog and read a book in the morning.",
    "House key is under the blue pot.",
]
SECRETS = [
    _UUID,
    "Tr0ub4dor&3",
    "s.Ga4VHWcQdwP8xZrXWPLUJkq3",
    "8f2b9c4d1e7a6f3b5c9d2e8a4f1b7c3d",
    "Tr0ub4dor3",
    "jRNzQGgWkbyKPGvqhXCjmfUuE",
    "celery claim comic",
]


def _refused(status: int, body: Any, shape: str) -> bool:
    return status == 422 and body == {"code": "credential_refused", "message": body["message"], "shape": shape}


def test_post_refuses_each_category_by_shape_and_stores_none_of_it(api: Any, dynamodb: Any) -> None:
    api.turn_on("alice")
    for name, (text, shape) in PROBES.items():
        status, body = api.call("POST", "/v1/memory", "alice", {"text": text})
        assert _refused(status, body, shape), (name, status, body)
        assert not any(secret in repr(body) for secret in SECRETS)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert view["items"] == []
    assert plaintext_hits(SECRETS, every_item(dynamodb)) == []


def test_patch_refuses_each_category_and_keeps_the_entry_as_it_was(api: Any, dynamodb: Any) -> None:
    api.turn_on("alice")
    entry = api.add("alice", "prefers window seats")
    for name, (text, shape) in PROBES.items():
        status, body = api.call("PATCH", f"/v1/memory/{entry['id']}", "alice", {"text": text})
        assert _refused(status, body, shape), (name, status, body)
    _, view = api.call("GET", "/v1/memory", "alice")
    assert [i["text"] for i in view["items"]] == ["prefers window seats"]
    assert plaintext_hits(SECRETS, every_item(dynamodb)) == []


def test_proposals_holding_a_category_are_refused_through_the_consumer(api: Any, agents: Any, dynamodb: Any) -> None:
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
    assert plaintext_hits(SECRETS, every_item(dynamodb)) == []


def test_benign_notes_beside_the_new_rules_are_kept_as_typed(api: Any) -> None:
    api.turn_on("alice")
    for text in BENIGN:
        assert api.add("alice", text)["text"] == text
    _, view = api.call("GET", "/v1/memory", "alice")
    assert sorted(i["text"] for i in view["items"]) == sorted(BENIGN)
