"""The consumer's FilterCriteria, emulated locally: only pending `memory.propose` events reach it, as deployed."""

from __future__ import annotations

from typing import Any

import pytest

from local.event_filter import matches, template_filter


def _record(event_name: str, image: dict[str, Any] | None) -> dict[str, Any]:
    dynamodb: dict[str, Any] = {"Keys": {"session_id": {"S": "s"}, "event_id": {"S": "e"}}, "SequenceNumber": "1"}
    if image is not None:
        dynamodb["NewImage"] = image
    return {"eventName": event_name, "dynamodb": dynamodb}


def test_the_template_filter_keeps_pending_propose_events_only() -> None:
    accepts = template_filter()
    propose = {"type": {"S": "memory.propose"}, "status": {"S": "pending"}}
    assert accepts(_record("INSERT", propose))
    assert not accepts(_record("MODIFY", {**propose, "status": {"S": "handled"}}))  # the consumer's own settle step
    assert not accepts(_record("REMOVE", None))  # TTL deleting a 30-day-old event
    assert not accepts(_record("INSERT", {"type": {"S": "memory.other"}, "status": {"S": "pending"}}))
    assert not accepts(_record("INSERT", None))
    # Only the `dynamodb` key decides (Lambda filters on nothing else for DynamoDB): eventName is not read.
    assert accepts({k: v for k, v in _record("INSERT", propose).items() if k != "eventName"})


def test_patterns_match_nested_keys_against_lists_of_values_and_refuse_other_operators() -> None:
    assert matches({"a": {"b": ["x", "y"]}}, {"a": {"b": "y", "c": 1}})
    assert not matches({"a": {"b": ["x"]}}, {"a": {"c": "x"}})
    assert not matches({"a": ["x"]}, {"a": {"b": "x"}})
    with pytest.raises(NotImplementedError):
        matches({"a": [{"prefix": "x"}]}, {"a": "xy"})
    with pytest.raises(ValueError):
        matches({"a": "x"}, {"a": "x"})


def test_the_local_stream_delivers_only_what_the_filter_keeps_and_moves_past_the_rest(
    api: Any, agents: Any, stores: Any, tables: dict[str, str], client: Any
) -> None:
    from local.event_filter import template_filter
    from local.stream_pump import StreamPump, create_streams_client

    delivered: list[dict[str, Any]] = []

    def deliver(payload: dict[str, Any]) -> Any:
        delivered.extend(payload["Records"])
        return client.lambda_.invoke("handle_events_stream", payload).payload

    pump = StreamPump(create_streams_client(), tables["events_stream"], deliver, record_filter=template_filter())
    api.turn_on("alice")
    agents.register("s", "alice")
    agents.propose("s", {"id": "e1", "text": "likes green tea"}, {"id": "e2", "text": "  "}, pump=False)
    pump.drain()  # two INSERTs delivered; the consumer's two settle MODIFYs follow on the stream
    pump.drain()
    assert sorted(r["eventName"] for r in delivered) == ["INSERT", "INSERT"]
    assert pump.pump_once() == 0  # nothing left: the MODIFY records were checkpointed without a delivery
    outcomes = agents.outcomes("s")
    assert outcomes["e1"]["type"] == "memory.proposed" and outcomes["e2"]["reason"] == "empty"
    assert [p["text"] for p in api.call("GET", "/v1/inbox", "alice")[1]["memory_proposals"]] == ["likes green tea"]
