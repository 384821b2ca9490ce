"""Fixtures in layers: credentials → moto → tables → settings → stores → Chalice test client.

Tiers (markers registered in pytest.ini) are set here from what a test needs, so a new test lands in
the right tier by itself: `server` (a local stack process), `browser` (Chromium), `package` (the built
Lambda package). `slow` marks what takes seconds on its own: by hand (`@pytest.mark.slow`) or in
`_SLOW` below, for every test whose call is over ~1 s on a quiet machine (`--durations=40` in the quick
tier): caps of 200, corpus sweeps, Hypothesis runs of hundreds of examples, thread bursts, subprocesses.
Per-test fixture setup is not a reason (it is shared by all). `make check` runs the rest; `make test` runs
everything, in parallel (pytest-xdist), the package's tests on one worker.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from chalicelib.config import TableNames, load_settings, reset_settings  # noqa: E402
from local.dev_tokens import DevTokenIssuer  # noqa: E402
from tests.support import ddb_local  # noqa: E402
from tests.support.moto import fresh_local_key, fresh_moto, lent_client, share_unused_rsa_keys  # noqa: E402
from tests.support.package import package  # noqa: E402, F401 - one package build per session
from tests.support.stack import HOST_ARN, OPERATOR_ARN, WORKER_ARN, Clock, settings_env  # noqa: E402
from tests.support.wide_frame import call_in_wide_frame  # noqa: E402

_SERVER_FIXTURES = frozenset({"live", "stack", "stored"})

# Tests (every parametrization) whose call takes over ~1 s on its own (measured with `--durations` in the
# quick tier, 2 workers): left to `make test`. A name here that its collected file no longer holds is an error.
_SLOW = {
    "tests/routes/test_duplicates.py::test_accept_with_replaces_at_the_cap_forgets_the_old_entry_in_the_same_transaction": "cap of 200",  # noqa: E501
    "tests/routes/test_duplicates.py::test_the_recount_at_the_cap_purges_expired_entries_with_their_fingerprints": "cap of 200",  # noqa: E501
    "tests/routes/test_duplicates.py::test_forgetting_an_agent_releases_the_fingerprints_of_what_it_deleted": "many writes",  # noqa: E501
    "tests/routes/test_encryption.py::test_no_table_and_no_stream_record_holds_a_written_text_at_any_step_of_the_story": "every table, every step",  # noqa: E501
    "tests/routes/test_agent_grants.py::test_concurrent_forgets_of_one_agent_never_double_count": "thread burst",
    "tests/routes/test_agent_grants.py::test_forgetting_an_agent_removes_exactly_its_entries_and_waiting_proposals": "many writes",  # noqa: E501
    "tests/routes/test_orphans.py::test_at_the_waiting_cap_orphaned_proposals_make_room_for_an_agents_proposal": "waiting cap",  # noqa: E501
    "tests/routes/test_orphans.py::test_at_the_waiting_cap_with_no_orphan_the_proposal_is_refused_and_nothing_deleted": "waiting cap",  # noqa: E501
    "tests/routes/test_agents.py::test_fifty_waiting_is_the_most": "waiting cap",
    "tests/routes/test_agents.py::test_context_is_pinned_first_newest_next_and_bounded": "context cap",
    "tests/routes/test_freshness.py::test_every_write_that_changes_the_view_changes_the_tag": "every write route",
    "tests/routes/test_credentials_routes.py::test_proposals_refuse_every_probe_through_the_consumer": "probe sweep",
    "tests/faults/test_faults_agents.py::test_forget_agent_interrupted_midway_says_so_and_a_retry_finishes_it": "cap-sized forget",  # noqa: E501
    "tests/faults/test_invocation_deadline.py::test_a_hanging_dynamodb_gets_the_contracts_503_before_the_api_functions_deadline": "waits out a deadline",  # noqa: E501
    "tests/faults/test_invocation_deadline.py::test_a_hanging_dynamodb_leaves_every_record_in_batch_item_failures_before_the_consumers_deadline": "waits out a deadline",  # noqa: E501
    "tests/local_stack/test_embedded_aws.py::test_refused_transactions_racing_with_writes_never_undo_or_resurrect_them": "thread burst",  # noqa: E501
    "tests/tools/test_bench.py::test_the_agents_grants_add_no_call_and_forgetting_an_agents_200_entries_with_their_fingerprints_is_16_calls": "bench workload",  # noqa: E501
    "tests/tools/test_bench.py::test_the_cap_path_refused_is_the_key_read_the_transaction_one_query_and_the_key_again_and_repairs_a_counter_ttl_left_high": "cap of 200",  # noqa: E501
    "tests/tools/test_bench.py::test_the_counter_sees_each_call_by_operation_name": "bench workload",
    "tests/sdk/test_sdk_prompt.py::test_any_text_round_trips_inside_a_well_formed_block": "Hypothesis, 300 examples",
    "tests/sdk/test_sdk_prompt_lines.py::test_no_note_can_produce_a_line_that_begins_like_the_blocks_own": "Hypothesis, 400 examples",  # noqa: E501
    "tests/sdk/test_sdk_prompt_hidden.py::test_every_character_that_folds_to_an_angle_bracket_is_escaped": "all of Unicode",  # noqa: E501
    "tests/unit/test_credentials.py::test_corpus_is_reproducible": "builds the corpus twice",
    "tests/unit/test_sealing.py::test_the_associated_data_is_byte_for_byte_the_canonical_json_it_always_was": "Hypothesis, every field",  # noqa: E501
    "tests/unit/test_sealing.py::test_items_decode_as_boto3_decodes_them_numbers_as_integers": "Hypothesis, nested items",  # noqa: E501
    "tests/unit/test_credentials_issue21.py::test_recall_is_one_on_every_corpus": "corpus sweep",
    "tests/unit/test_credentials_issue21.py::test_no_benign_category_has_a_false_alarm": "corpus sweep",
}
# Whole files: every test reads one cached sweep that takes seconds.
_SLOW_FILES = {"tests/unit/test_credentials_compare.py": "one detect-secrets comparison over the corpus"}
# Files whose many cheap tests share one cached corpus sweep (seconds) per process: one worker runs each
# file (--dist loadgroup), so the sweep is paid once, not once a worker.
_SWEEP_FILES = frozenset({"tests/unit/test_credentials.py", "tests/unit/test_credentials_evasion.py"})
_FOLDER_TIERS = {"browser": "browser", "http": "server", "deploy": "package"}
# The storage-facing suites (tests/support/ddb_local.py): on DynamoDB Local in `make test`, on moto in
# `make check`. Whole folders (streams, the consumer, faults) and the files of the cap and concurrency races.
_STORAGE_FOLDERS = frozenset({"stream", "faults"})
_STORAGE_FILES = frozenset(
    {
        "tests/routes/test_agent_grants.py",
        "tests/routes/test_agent_rows_cap.py",
        "tests/routes/test_connection_attacks.py",
        "tests/routes/test_duplicates.py",
        "tests/routes/test_orphans.py",
        "tests/routes/test_proposals.py",
    }
)


# tryfirst: pytest-xdist's worker turns the xdist_group marks into node ids in this same hook, registered
# after this conftest (so called before it); marks added later were never seen and no group ever formed.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    modules: dict[str, Any] = {}
    for item in items:
        name = item.nodeid.split("[")[0]
        modules.setdefault(name.split("::")[0], getattr(item, "module", None))
        if name in _SLOW or name.split("::")[0] in _SLOW_FILES:
            item.add_marker("slow")
        if name.split("::")[0] in _SWEEP_FILES:
            item.add_marker(pytest.mark.xdist_group(name.split("::")[0]))
        fixtures = set(getattr(item, "fixturenames", ()))
        folder = Path(str(item.fspath)).parent.name
        if folder in _FOLDER_TIERS:
            item.add_marker(_FOLDER_TIERS[folder])
        if "dynamodb" in fixtures and (folder in _STORAGE_FOLDERS or name.split("::")[0] in _STORAGE_FILES):
            item.add_marker("storage")
        if item.get_closest_marker("dynamodb_local") is not None:
            item.add_marker("server")  # it needs a JVM: never in the quick tier
        if fixtures & _SERVER_FIXTURES:
            item.add_marker("server")
        if "package" in fixtures:
            item.add_marker("package")
            item.add_marker(pytest.mark.xdist_group("package"))  # one worker builds it once, for all of them
        elif folder == "browser":
            # The browser tests mostly wait (the page's poll, undo windows): one worker runs them all, with
            # one Chromium and one stack, while the others keep both cores busy with the rest.
            item.add_marker(pytest.mark.xdist_group("browser"))
    stale = [name for name in _SLOW if not hasattr(modules.get(name.split("::")[0]), name.split("::")[1])]
    stale = [name for name in stale if name.split("::")[0] in modules]
    if stale:
        raise pytest.UsageError(f"tests/conftest.py _SLOW names tests that are gone: {stale}")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    """Each test, its fixtures and its teardown run below one wide frame (tests/support/wide_frame.py): on the
    CPython 3.13.0 the venv has here, a loop calling across a stack-chunk boundary mapped and unmapped a chunk
    per call (gh-142183), a quarter of the quick tier's CPU. The rest is _pytest.runner's own protocol."""
    from _pytest.runner import runtestprotocol

    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    call_in_wide_frame(lambda: runtestprotocol(item, nextitem=nextitem))
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Name the JavaScript SDK's `node --test` counts (tests/http/test_js_sdk.py), which pytest counts as one test."""
    for report in terminalreporter.stats.get("passed", []):
        for name, value in getattr(report, "user_properties", ()):
            if name == "js_sdk_tests" and report.when == "call":
                terminalreporter.write_line(f"JavaScript SDK (node --test): {value} passed")


@pytest.fixture(scope="session")
def issuer() -> DevTokenIssuer:
    return DevTokenIssuer()


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and region; no endpoint override (it would win over mock_aws)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCOUNT_ID_ENDPOINT_MODE", "disabled")
    for variable in ddb_local.ENDPOINT_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture(scope="session", autouse=True)
def _stop_dynamodb_local() -> Iterator[None]:
    """Stops this test process's DynamoDB Local at the session's end, if a test started it. Autouse: set up
    first, so torn down last, after every session stack (`live`) that keeps its tables there."""
    yield
    ddb_local.stop_shared()


@pytest.fixture(scope="session")
def dynamodb_local() -> Any:
    """This test process's DynamoDB Local (tests/support/ddb_local.py), started by the first test or stack that needs it."""
    return ddb_local.shared()


@pytest.fixture
def dynamodb(aws_credentials: None, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[Any]:
    import boto3

    from chalicelib.storage.retries import client_config, guarded

    endpoint = None
    if ddb_local.on_dynamodb_local(request.node):
        # DynamoDB Local serializes on its own: no lock of ours anywhere on this path. Every client the test
        # makes (the app's, the stream's) reaches it through the environment; moto's stubber lets those
        # requests through (it answers only AWS's own hosts) and keeps serving KMS.
        endpoint = request.getfixturevalue("dynamodb_local").endpoint
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS", endpoint)
    else:
        from local import embedded_aws

        embedded_aws.install()  # one lock around moto, as DynamoDB serializes (threads in tests race too)
    with fresh_moto(monkeypatch):  # the app's own client configuration: standard retries, bounded attempts
        make = lambda: guarded(boto3.client("dynamodb", region_name="us-east-1", config=client_config())).unguarded  # noqa: E731
        with lent_client(f"dynamodb@{endpoint}", make) as client:
            yield client


@pytest.fixture
def table_names(request: pytest.FixtureRequest) -> TableNames:
    if ddb_local.on_dynamodb_local(request.node):
        return ddb_local.table_names_for()  # one DynamoDB Local serves the worker's tests: names of its own
    return TableNames(
        entries="t-entries", proposals="t-proposals", journal="t-journal", sessions="t-sessions", events="t-events"
    )


@pytest.fixture
def kms(dynamodb: Any) -> Iterator[Any]:
    """moto's KMS (same mock as the tables) holding the template's key under the local alias."""
    import boto3

    from chalicelib.storage.retries import guarded

    share_unused_rsa_keys()
    with lent_client("kms", lambda: guarded(boto3.client("kms", region_name="us-east-1")).unguarded) as client:
        fresh_local_key(client)
        yield client


@pytest.fixture
def tables(
    dynamodb: Any, table_names: TableNames, kms: Any, request: pytest.FixtureRequest
) -> Iterator[dict[str, str]]:
    if not ddb_local.on_dynamodb_local(request.node):
        yield _fresh_tables(dynamodb, table_names)
        return
    from local.tables import create_tables

    try:
        yield create_tables(dynamodb, table_names)
    finally:
        ddb_local.drop_tables(dynamodb, table_names)


_PRISTINE: dict[TableNames, tuple[dict[str, Any], dict[str, str]]] = {}


def _fresh_tables(dynamodb: Any, names: TableNames) -> dict[str, str]:
    """The template's tables, empty. Created through the API once per process (~50 ms, ten calls into moto);
    every later test gets a deep copy of those just-created tables in its own fresh moto backend (~0.5 ms)."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    from local.tables import create_tables

    backend = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    wanted = [names.entries, names.proposals, names.journal, names.sessions, names.events, names.keys]
    if names not in _PRISTINE:
        created = create_tables(dynamodb, names)
        _PRISTINE[names] = (copy.deepcopy({name: backend.tables[name] for name in wanted}), created)
        return dict(created)
    pristine, created = _PRISTINE[names]
    assert not set(wanted) & set(backend.tables), "moto's backend was not fresh"
    backend.tables.update(copy.deepcopy(pristine))
    return dict(created)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, table_names: TableNames, issuer: DevTokenIssuer) -> dict[str, str]:
    values = settings_env(table_names, issuer)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    reset_settings()
    yield values
    reset_settings()


@pytest.fixture
def stores(dynamodb: Any, tables: dict[str, str], env: dict[str, str], clock: Clock, kms: Any) -> Iterator[Any]:
    from chalicelib.bootstrap import build_stores, reset_stores

    built = build_stores(load_settings(env), dynamodb, clock=clock, kms_client=kms)
    reset_stores(built)
    yield built
    reset_stores(None)


@pytest.fixture
def client(stores: Any) -> Iterator[Any]:
    from chalice.test import Client

    from app import app

    with Client(app, stage_name="local", project_dir=str(ROOT)) as test_client:
        yield test_client


@pytest.fixture
def api(client: Any, issuer: DevTokenIssuer) -> Any:
    from tests.support.api import Api

    return Api(client, issuer)


__all__ = ["HOST_ARN", "WORKER_ARN", "OPERATOR_ARN", "os"]


@pytest.fixture
def stream(dynamodb: Any, tables: dict[str, str], client: Any) -> Iterator[Any]:
    """moto's real DynamoDB stream of the events table, pumped into the consumer through the test client."""
    from local.event_filter import template_filter
    from local.lambda_context import invoke_consumer
    from local.stream_pump import StreamPump, create_streams_client

    def deliver(payload: dict[str, Any]) -> Any:
        return invoke_consumer(payload)  # the consumer's real timeout (local/lambda_context.py)

    with lent_client(
        f"dynamodbstreams@{os.environ.get('AWS_ENDPOINT_URL_DYNAMODB_STREAMS')}", create_streams_client
    ) as streams:
        yield StreamPump(streams, tables["events_stream"], deliver, record_filter=template_filter())


@pytest.fixture
def agents(client: Any, stream: Any) -> Any:
    from tests.support.agents import Agents

    return Agents(client, stream)


@pytest.fixture
def faults(stores: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A fault injector on the app's DynamoDB client (no rule: inert); backoff sleeps are counted, not slept."""
    import botocore.endpoint

    from chalicelib.storage import retries
    from local.faults import FaultInjector

    slept: list[float] = []
    monkeypatch.setattr(botocore.endpoint, "time", _CountingTime(slept))
    monkeypatch.setattr(retries, "sleep", slept.append)
    injector = FaultInjector(seed=1234)
    injector.slept = slept  # type: ignore[attr-defined]
    injector.attach(stores.client.unguarded)
    injector.attach(stores.keyring.kms.client.unguarded)  # KMS too (issue 12's data keys)
    yield injector
    injector.detach()


class _CountingTime:
    """Stands in for the `time` module inside botocore.endpoint (it only sleeps between retries)."""

    def __init__(self, slept: list[float]) -> None:
        self.sleep = slept.append


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """`make run`'s stack in a subprocess on a free 127.0.0.1 port, shared by the HTTP tests."""
    from tests.support.live import start_live_stack

    stack = start_live_stack(tmp_path_factory.mktemp("live"))
    yield stack
    stack.stop()
