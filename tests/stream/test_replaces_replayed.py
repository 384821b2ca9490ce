"""A `memory.propose` with `replaces: <ref>` delivered again (Lambda's at-least-once) links nothing twice (issue 39)."""

from __future__ import annotations

from typing import Any

from chalicelib.services.consumer import handle_batch
from tests.support.raw_storage import every_stream_record


def test_a_replayed_record_with_a_ref_makes_one_linked_proposal_and_keeps_no_ref(
    api: Any, agents: Any, stores: Any
) -> None:
    api.turn_on("alice")
    old = api.add("alice", "Lives in Lyon")
    agents.register("s-1", "alice")
    [item] = agents.items("s-1")
    agents.propose("s-1", {"id": "e-1", "text": "Now lives in Berlin", "replaces": item["ref"]})
    pump = agents.stream
    raw = every_stream_record(pump._client, pump._stream_arn)  # noqa: SLF001 - the records Lambda got, again
    records = [pump._to_lambda_record(r) for r in raw]  # noqa: SLF001
    inserts = [r for r in records if r["eventName"] == "INSERT"]
    assert len(inserts) == 1 and inserts[0]["dynamodb"]["NewImage"]["replaces"] == {"S": item["ref"]}
    assert handle_batch(stores, inserts * 2) == {"batchItemFailures": []}
    [proposal] = api.call("GET", "/v1/memory", "alice")[1]["proposals"]
    assert proposal["replaces"] == {"id": old["id"], "text": "Lives in Lyon"}
    assert stores.entries.get_state("alice").waiting == 1
    [event] = stores.client.scan(TableName=stores.events.table)["Items"]
    assert "replaces" not in event and "sealed_text" not in event  # handled: no text, no ref
