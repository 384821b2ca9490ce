"""`make bench`'s DynamoDB call counts, run small: every operation stays within issue 7's targets.

Counts are deterministic, so they are asserted; the bench's timings never are.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench import run

BATCH = 10


@pytest.fixture(scope="module")
def bench_stack() -> Iterator[run.Stack]:
    """One stack for the DynamoDB counts, the KMS counts and the cap path (two open at once would share one moto)."""
    with run.open_stack() as stack:
        yield stack


@pytest.fixture(scope="module")
def measured(bench_stack: run.Stack) -> tuple[dict[str, run.OpCount], list[run.Figure]]:
    return run.count_operations(bench_stack, batch_size=BATCH), run.kms_figures(bench_stack)


@pytest.fixture
def counts(measured: tuple[dict[str, run.OpCount], list[run.Figure]]) -> dict[str, run.OpCount]:
    return measured[0]


def test_the_counter_sees_each_call_by_operation_name() -> None:
    with run.open_stack() as stack, stack.counter.counting() as calls:
        stack.stores.entries.get_state("someone")
        stack.stores.proposals.list("someone")
    assert calls == ["GetItem", "Query"]


def test_get_memory_reads_in_at_most_two_calls(counts: dict[str, run.OpCount]) -> None:
    assert 1 <= counts["GET /v1/memory"].calls <= 2
    assert counts["GET /v1/memory"].writes == 0


def test_an_unchanged_poll_is_a_304_for_one_get_item(counts: dict[str, run.OpCount]) -> None:
    for route in ("/v1/memory", "/v1/inbox"):
        assert counts[f"GET {route}, unchanged (If-None-Match: 304)"].operations == ["GetItem"]


def test_context_fetch_is_at_most_three_calls_including_its_journal_write(counts: dict[str, run.OpCount]) -> None:
    context = counts["GET /v1/sessions/{id}/memory (context)"]
    assert context.calls <= 3
    assert context.writes == 1  # the keep.memory.context row


def test_adding_an_entry_is_one_write_call(counts: dict[str, run.OpCount]) -> None:
    assert counts["POST /v1/memory"].writes == 1


def test_each_propose_through_the_consumer_is_at_most_three_calls(counts: dict[str, run.OpCount]) -> None:
    one = counts["consumer: one memory.propose"]
    batch = counts[f"consumer: batch of {BATCH} memory.propose, per propose"]
    assert 1 <= one.calls <= 3
    assert batch.per == BATCH and 1 <= batch.calls <= 3


def test_a_connection_costs_one_get_item_at_most_and_mcp_stays_within_issue_38s_counts(
    counts: dict[str, run.OpCount],
) -> None:
    context, cold = counts[run.MCP_CONTEXT], counts[run.MCP_CONTEXT_COLD]
    propose, propose_cold = counts[run.MCP_PROPOSE], counts[run.MCP_PROPOSE_COLD]
    assert context.calls <= 4 and propose.calls <= 2
    assert cold.calls - context.calls <= 1 and propose_cold.calls - propose.calls <= 1
    assert context.writes == 1 and propose.writes == 1  # one transaction each: the connection's check rides on it
    assert counts["POST /mcp tools/list (the lookup cached)"].calls == 0


def test_every_counted_operation_meets_its_target(counts: dict[str, run.OpCount]) -> None:
    figures = run.count_figures(counts)
    assert len(figures) == len(counts)
    assert [f.name for f in figures if f.met is False] == []


def test_a_count_over_its_target_is_reported_missed() -> None:
    (figure,) = run.count_figures({"GET /v1/memory": run.OpCount(["Query", "Query", "GetItem"])})
    assert figure.met is False
    assert figure.line().endswith("(target: <= 2, MISSED)")


def test_the_cap_path_refused_is_the_key_read_the_transaction_one_query_and_the_key_again_and_repairs_a_counter_ttl_left_high(
    bench_stack: run.Stack,
) -> None:
    from bench import local_stack_bench

    full, after_ttl = local_stack_bench.cap_path_counts(bench_stack, run.seed_user)
    state = bench_stack.stores.entries.get_state("cap-ttl")
    # GetItem: the user's key row, read before sealing the text (issue 12); the last one is the
    # recount's Query of the user's keys (issue 26: every text's key, the data key among them), after
    # the Query of the entries, to tell items whose key is gone (none here).
    assert full[3]["operations"] == ["GetItem", "TransactWriteItems", "Query", "Query"]
    assert after_ttl[3]["operations"] == ["GetItem", "TransactWriteItems", "Query", "UpdateItem", "TransactWriteItems"]
    assert state.active == 1  # the counter TTL had left at 200 was corrected, then the new entry counted


def test_kms_calls_per_route_meet_issue_12s_targets_cold_and_warm(
    measured: tuple[dict[str, run.OpCount], list[run.Figure]],
) -> None:
    figures = {f.name: f for f in measured[1]}
    assert figures["kms calls: POST /v1/memory, the user's first text"].value == 1  # GenerateDataKey
    for route in ("GET /v1/memory", "POST /v1/memory"):
        cold, warm = figures[f"kms calls: {route} (cold key cache)"], figures[f"kms calls: {route} (warm key cache)"]
        assert (cold.value, warm.value) == (1, 0) and cold.met and warm.met
        assert cold.detail["operations"] == ["Decrypt"]


def test_the_users_first_text_costs_one_more_write_for_their_key(counts: dict[str, run.OpCount]) -> None:
    assert counts[run.FIRST_POST].writes == 2 and counts["POST /v1/memory"].writes == 1


def test_the_agents_grants_add_no_call_and_forgetting_an_agents_200_entries_with_their_fingerprints_is_16_calls(
    bench_stack: run.Stack,
) -> None:
    from bench import agents_bench

    results = {
        name: (value, limit)
        for name, value, limit, _ in agents_bench.agent_counts(bench_stack, run.seed_user, run.seed_journal, 300)
    }
    assert results["dynamodb calls: context fetch, agent with a grant set"][0] <= 3
    assert results["dynamodb calls: context fetch, agent stopped reading"][0] <= 3
    assert results["dynamodb calls: consumer: one memory.propose, agent allowed"][0] <= 3
    assert results["dynamodb calls: GET /v1/agents, 300 journal rows"][0] <= 3
    # Issue 37: seeded as the product stores them (fingerprints included), 200 entries' forget is 8 BatchWriteItem
    # (their keys), 5 transactions (each entry with its fingerprint) and 3 Queries: 16 calls, every call full;
    # plus what only an agent's forget makes (its spellings, its row, the pending cut-off, the keys' receipt): 21.
    assert agents_bench.forget_call_bound(200) == 16 and agents_bench.AGENT_FORGET_EXTRA == 5
    assert results["dynamodb calls: POST /v1/agents/{id}/forget, 200 entries"][0] <= 21
    # Every counted figure within its own target (`make bench` on a fresh clone reports 0 missed): forget-all's
    # bound counts its data key's transaction and its closing check of the waiting counter.
    missed = {name: got for name, got in results.items() if got[1] is not None and not got[0] <= got[1]}
    assert not missed, missed
    assert results["dynamodb calls: DELETE /v1/memory, 200 entries and 50 proposals"][1] == 22
    assert (
        results["  Query calls of that forget"][0] <= 6 and results["  TransactWriteItems calls of that forget"][0] <= 6
    )


def test_the_cost_block_in_docs_deploy_md_is_what_the_bench_measures(counts: dict[str, run.OpCount]) -> None:
    """Issue 37: the page's per-route units had drifted (4 WRU for a POST that writes 10); bench/cost_doc.py writes it."""
    from bench import cost_doc

    assert cost_doc.current(cost_doc.DOC.read_text()) == cost_doc.render(counts)


def test_the_bench_reports_request_units_beside_the_calls(counts: dict[str, run.OpCount]) -> None:
    post = counts["POST /v1/memory"]
    # The entry (~600 B), its fingerprint and its text's key row, each a transactional write of 1 KB or less
    # (2 WRU), plus the state item's counters (its key row read first: 1 RRU, strongly consistent).
    assert (post.rru, post.wru) >= (1, 8)
    figure = next(f for f in run.count_figures(counts) if f.name.startswith("dynamodb write calls: POST /v1/memory ["))
    assert f"{post.wru:g} WRU" in figure.name and figure.detail["wru"] == post.wru


def test_a_propose_naming_the_entry_it_updates_costs_one_call_more(counts: dict[str, run.OpCount]) -> None:
    """Issue 39: `replaces: <ref>` is one GetItem in the consumer; no call without it; accepting replaces in one go."""
    plain, marked = counts["consumer: one memory.propose"], counts[run.CONSUMER_REPLACES]
    assert marked.calls == plain.calls + 1 and sorted(marked.operations) == sorted([*plain.operations, "GetItem"])
    assert counts[run.ACCEPT_MARKED].writes == counts["POST /v1/memory/{id}/accept, replacing an entry"].writes == 1
