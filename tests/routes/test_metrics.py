"""The operator's counters: CloudWatch EMF lines from the real routes and consumer — the right counts, never text."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from chalicelib import metrics
from chalicelib.models import MAX_ACTIVE_ENTRIES
from tests.support.iam import iam_call
from tests.support.stack import OPERATOR_ARN

DISTINCT = "Counts-the-grey-wagtail-5521"


def _emf(out: str) -> list[dict[str, Any]]:
    docs = [json.loads(line) for line in out.splitlines() if line.startswith("{") and '"_aws"' in line]
    for doc in docs:  # the EMF specification's shape, so CloudWatch turns each into data points
        directive = doc["_aws"]["CloudWatchMetrics"][0]
        assert directive["Namespace"] == metrics.NAMESPACE and isinstance(doc["_aws"]["Timestamp"], int)
        for keys in directive["Dimensions"]:
            assert all(isinstance(doc[key], str) for key in keys)
        for metric in directive["Metrics"]:
            assert isinstance(doc[metric["Name"]], int) and metric["Unit"] == "Count"
    return docs


def _counts(docs: list[dict[str, Any]]) -> Counter[tuple[str, ...]]:
    found: Counter[tuple[str, ...]] = Counter()
    for doc in docs:
        directive = doc["_aws"]["CloudWatchMetrics"][0]
        name = directive["Metrics"][0]["Name"]
        extra = [doc[k] for k in directive["Dimensions"][0] if k != "Service"]
        found[(name, *extra)] += doc[name]
    return found


def test_proposals_refusals_caps_context_and_operator_accesses_are_counted(
    api: Any, agents: Any, client: Any, capsys: Any
) -> None:
    api.turn_on("alice")
    api.add("alice", DISTINCT + " a fact")
    agents.register("s", "alice")
    agents.items("s")
    agents.items("s")
    capsys.readouterr()
    events = [{"id": f"e{n}", "text": f"{DISTINCT} idea {n}"} for n in range(6)]  # the sixth is over the session cap
    agents.propose("s", *events, {"id": "blank", "text": "  "}, {"id": "bad", "text": DISTINCT, "kind": "nope"})
    agents.propose("s", {"id": "e0", "text": DISTINCT})  # a repost: nothing new, nothing counted
    iam_call(client, "GET", "/v1/operator/memory?user_id=alice", OPERATOR_ARN)
    iam_call(client, "DELETE", "/v1/operator/memory/0123456789abcdef0123456789abcdef?user_id=alice", OPERATOR_ARN)
    out = capsys.readouterr().out
    counts = _counts(_emf(out))
    assert counts[("ProposalsCreated",)] == 5
    assert counts[("ProposalsRefused", "session_cap")] == 1
    assert counts[("ProposalsRefused", "empty")] == 1 and counts[("ProposalsRefused", "invalid_kind")] == 1
    assert counts[("CapRefusals", "session_proposals")] == 1
    assert counts[("OperatorAccesses", "read")] == 1 and counts[("OperatorAccesses", "forget")] == 1
    assert DISTINCT not in out
    # what is stored agrees with what was counted
    assert len(api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]) == 5
    assert sorted(o["reason"] for o in agents.outcomes("s").values() if o["type"] == "memory.proposal_refused") == [
        "empty",
        "invalid_kind",
        "session_cap",
    ]


def test_context_fetches_count_only_when_memory_was_read(api: Any, agents: Any, capsys: Any) -> None:
    api.turn_on("alice")
    agents.register("on", "alice")
    agents.register("off", "alice", memory=False)
    capsys.readouterr()
    agents.items("on")
    agents.items("off")  # the manifest did not ask: nothing read, nothing journaled, nothing counted
    counts = _counts(_emf(capsys.readouterr().out))
    assert counts[("ContextFetches",)] == 1


@pytest.mark.slow
def test_the_entry_cap_and_refused_tokens_are_counted(api: Any, client: Any, capsys: Any) -> None:
    api.turn_on("alice")
    for n in range(MAX_ACTIVE_ENTRIES):
        api.add("alice", f"note {n}")
    capsys.readouterr()
    status, body = api.call("POST", "/v1/memory", "alice", {"text": DISTINCT})
    assert (status, body["code"]) == (409, "limit_reached")
    response = client.http.get("/v1/memory", headers={"Authorization": "Bearer not-a-token"})
    assert response.status_code == 401
    out = capsys.readouterr().out
    counts = _counts(_emf(out))
    assert counts[("CapRefusals", "active_entries")] == 1 and counts[("TokenRefused",)] == 1
    assert DISTINCT not in out
    assert len(api.call("GET", "/v1/memory", "alice")[1]["items"]) == MAX_ACTIVE_ENTRIES


def test_a_metric_carries_only_known_names_and_code_values() -> None:
    line = json.loads(metrics.emf_line("ProposalsRefused", ("Reason", "credential:aws_access_key"), now_ms=5))
    assert line["Reason"] == "credential:aws_access_key" and line["_aws"]["Timestamp"] == 5
    assert line["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["Service", "Reason"]]
    for name, dimension in (
        ("Unknown", None),
        ("ProposalsRefused", ("Text", "x")),
        ("ProposalsRefused", ("Reason", "has spaces in it")),
        ("ProposalsRefused", ("Reason", "A" * 3)),
    ):
        with pytest.raises(ValueError):
            metrics.emf_line(name, dimension)
