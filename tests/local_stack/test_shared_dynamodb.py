"""`make run` on a DynamoDB Local already running (MEMORY_DYNAMODB_ENDPOINT, MEMORY_TABLE_PREFIX; local/shared_dynamodb.py).

The stack starts no JVM, makes only its prefixed tables there, serves the story (HTTP and the stream
pump) and drops its tables when it stops; two stacks on one DynamoDB Local never see each other's
items, not even through the TTL sweeper's dev clock; a setting the launcher cannot use is refused at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest

from local.process import free_port
from local.shared_dynamodb import Refused, SharedDynamoDB, check_endpoint, from_environment, prefixed
from local.stack import TABLES
from tests.support.live import STREAM_DEADLINE_S, LiveStack, start_live_stack
from tests.support.signing import signed_request

ROOT = Path(__file__).resolve().parents[2]
DAY = 86_400


def _client(endpoint: str) -> Any:
    keys = {"aws_access_key_id": "local", "aws_secret_access_key": "local", "region_name": "us-east-1"}
    return boto3.client("dynamodb", endpoint_url=endpoint, **keys)


def _description(stack: LiveStack) -> dict[str, Any]:
    return dict(json.loads((stack.credentials_file.parent / "stack.json").read_text()))


def _tables(endpoint: str) -> set[str]:
    return set(_client(endpoint).list_tables(Limit=100)["TableNames"])


def _children_named(pid: int, name: str) -> list[int]:
    """The processes whose parent is `pid` and whose command is `name` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        command, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()
        if int(rest[1]) == pid and command == name:
            found.append(int(stat.parent.name))
    return found


def _entry_ids(endpoint: str, table: str, user: str) -> set[str]:
    items = _client(endpoint).query(
        TableName=table,
        KeyConditionExpression="user_id = :u AND begins_with(sk, :e)",
        ExpressionAttributeValues={":u": {"S": user}, ":e": {"S": "e#"}},
        ConsistentRead=True,
    )["Items"]
    return {item["sk"]["S"][2:] for item in items}


def _listed(stack: LiveStack, token: str) -> set[str]:
    status, body, _ = stack.request("GET", "/v1/memory", token=token)
    assert status == 200, body
    return {item["id"] for item in body["items"]}


def _add(stack: LiveStack, token: str, text: str, **fields: Any) -> str:
    assert stack.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    status, entry, _ = stack.request("POST", "/v1/memory", token=token, body={"text": text, **fields})
    assert status == 201, entry
    return str(entry["id"])


def _propose(stack: LiveStack, user: str, text: str) -> dict[str, Any]:
    """The host registers a session, the worker posts a proposal event; the stream pump hands it to the consumer."""
    path = f"/v1/sessions/shared-{uuid.uuid4().hex[:8]}"
    credentials = stack.credentials()
    body = {"user_id": user, "thread_id": "t-1", "agent": "agent", "manifest": {"memory": True}}
    assert signed_request(stack.url, "PUT", path, credentials["host"], body)[0] == 200
    event = {"id": "e1", "type": "memory.propose", "text": text, "kind": "note"}
    assert signed_request(stack.url, "POST", path + "/events", credentials["worker"], {"events": [event]})[0] == 202
    deadline = time.monotonic() + STREAM_DEADLINE_S
    while time.monotonic() < deadline:
        _, answer = signed_request(stack.url, "GET", path + "/events", credentials["worker"])
        if answer["events"] and answer["events"][0].get("outcome"):
            return dict(answer["events"][0]["outcome"])
        time.sleep(0.1)
    raise AssertionError("the stream pump never handed the proposal to the consumer")


@pytest.mark.server
def test_a_stack_on_a_running_dynamodb_local_starts_no_jvm_makes_only_prefixed_tables_and_serves_the_story(
    dynamodb_local: Any, tmp_path: Path
) -> None:
    endpoint = dynamodb_local.endpoint
    before = _tables(endpoint)
    stack = start_live_stack(tmp_path)
    try:
        assert _children_named(stack.process.process.pid, "java") == []  # no DynamoDB Local of its own
        description = _description(stack)
        names = description["tables"]
        prefix = names["entries"].removesuffix(TABLES.entries)
        assert prefix and names == {field: prefix + name for field, name in vars(TABLES).items()}
        assert description["dynamodb_endpoint"] == description["dynamodbstreams_endpoint"] == endpoint
        assert _tables(endpoint) - before == set(names.values())  # its six tables, nothing unprefixed
        assert f":table/{names['events']}/stream/" in description["events_stream_arn"]

        token = stack.token("alice")
        entry = _add(stack, token, "Takes the train")
        assert _listed(stack, token) == {entry}
        assert _entry_ids(endpoint, names["entries"], "alice") == {entry}  # stored in the prefixed table
        assert _propose(stack, "alice", "Likes tea")["type"] == "memory.proposed"
        status, inbox, _ = stack.request("GET", "/v1/inbox", token=token)
        assert status == 200 and len(inbox["memory_proposals"]) == 1, inbox
        waiting = _client(endpoint).scan(TableName=names["proposals"], ConsistentRead=True)["Items"]
        assert [i["sk"]["S"] for i in waiting if i["sk"]["S"].startswith("p#")] == [
            "p#" + inbox["memory_proposals"][0]["id"]
        ]

        # A second launch with the same prefix is refused: the tables are this stack's.
        again = _launch({"MEMORY_DYNAMODB_ENDPOINT": endpoint, "MEMORY_TABLE_PREFIX": prefix}, tmp_path / "again")
        assert again.returncode != 0 and "MEMORY_TABLE_PREFIX" in again.stderr, again.stderr[-2000:]
        assert _entry_ids(endpoint, names["entries"], "alice") == {entry}  # and it changed nothing
    finally:
        stack.process.stop()  # the launcher's own stop, before the test helper drops anything
    assert _tables(endpoint) == before  # it dropped its tables; the DynamoDB Local it shared still answers
    stack.stop()


@pytest.mark.server
def test_two_stacks_on_one_dynamodb_local_never_see_each_others_items(dynamodb_local: Any, tmp_path: Path) -> None:
    for folder in ("first", "second"):
        (tmp_path / folder).mkdir()
    first = start_live_stack(tmp_path / "first")
    try:
        second = start_live_stack(tmp_path / "second")
        try:
            one, two = _description(first)["tables"], _description(second)["tables"]
            assert _description(first)["dynamodb_endpoint"] == _description(second)["dynamodb_endpoint"]
            assert not set(one.values()) & set(two.values())
            endpoint = dynamodb_local.endpoint
            tokens = first.token("alice"), second.token("alice")  # the same user id on both
            mine = _add(first, tokens[0], "Reads at night", expires_in_days=1)
            theirs = _add(second, tokens[1], "Walks to work", expires_in_days=1)
            assert _listed(first, tokens[0]) == {mine} and _listed(second, tokens[1]) == {theirs}
            assert _entry_ids(endpoint, one["entries"], "alice") == {mine}
            assert _entry_ids(endpoint, two["entries"], "alice") == {theirs}

            # The first stack's clock runs two days on and its TTL sweep deletes what expired by it: its own entry
            # only. The second stack's entry (not expired by its own clock) is still stored and listed.
            assert first.request("POST", "/dev/clock", body={"advance_seconds": 2 * DAY})[0] == 200
            status, swept, _ = first.request("POST", "/dev/ttl-sweep", body={})
            assert status == 200 and swept["deleted"] >= 1, swept
            assert _entry_ids(endpoint, one["entries"], "alice") == set()
            assert _entry_ids(endpoint, two["entries"], "alice") == {theirs}
            assert _listed(second, tokens[1]) == {theirs}
        finally:
            second.stop()
        assert _listed(first, tokens[0]) == set()  # the second stack's end dropped only its own tables
        assert _entry_ids(endpoint, one["entries"], "alice") == set()
    finally:
        first.stop()


def _launch(env: dict[str, str], workdir: Path) -> subprocess.CompletedProcess[str]:
    """`python -m local.run` with these variables; a refused launch exits at once (a started one would serve on)."""
    workdir.mkdir(parents=True, exist_ok=True)
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("AWS_", "MEMORY_"))}
    environment.update({"PORT": "0", "MEMORY_CREDENTIALS_FILE": str(workdir / "credentials.json"), **env})
    return subprocess.run(
        [sys.executable, "-m", "local.run"], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )


@pytest.mark.server
@pytest.mark.parametrize(
    ("variables", "said"),
    [
        ({"MEMORY_DYNAMODB_ENDPOINT": "http://dynamodb.us-east-1.amazonaws.com:80"}, "MEMORY_DYNAMODB_ENDPOINT"),
        ({"MEMORY_DYNAMODB_ENDPOINT": "http://127.0.0.1:{free}"}, "no DynamoDB answers there"),
        ({"MEMORY_DYNAMODB_ENDPOINT": "{shared}", "MEMORY_TABLE_PREFIX": "my stack/"}, "MEMORY_TABLE_PREFIX"),
        ({"MEMORY_DYNAMODB_ENDPOINT": "{shared}", "MEMORY_TABLE_PREFIX": "p" * 240}, "over DynamoDB's 255"),
    ],
)
def test_a_setting_the_launcher_cannot_use_is_refused_at_once_with_a_clear_message(
    dynamodb_local: Any, tmp_path: Path, variables: dict[str, str], said: str
) -> None:
    env = {k: v.format(free=free_port(), shared=dynamodb_local.endpoint) for k, v in variables.items()}
    before = _tables(dynamodb_local.endpoint)
    done = _launch(env, tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith("local stack not started: ") and said in done.stderr
    assert "Traceback" not in done.stderr
    assert _tables(dynamodb_local.endpoint) == before
    assert not (tmp_path / "stack.json").exists()


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://127.0.0.1:8000",
        "http://10.0.0.1:8000",
        "http://example.com:8000",
        "http://127.0.0.1",
        "http://user:pass@127.0.0.1:8000",
        "http://127.0.0.1:8000/path",
        "http://127.0.0.1:8000?x=1",
        "127.0.0.1:8000",
        "http://127.0.0.1:99999",
        "http://127.0.0.1.nip.io:8000",
    ],
)
def test_an_endpoint_off_this_machine_or_not_plain_http_is_refused(endpoint: str) -> None:
    with pytest.raises(Refused, match="MEMORY_DYNAMODB_ENDPOINT"):
        from_environment({"MEMORY_DYNAMODB_ENDPOINT": endpoint})


def test_a_loopback_endpoint_and_a_prefix_name_the_prefixed_tables() -> None:
    assert check_endpoint("http://localhost:8000/") == "http://localhost:8000"
    shared = from_environment({"MEMORY_DYNAMODB_ENDPOINT": "http://127.0.0.1:8000", "MEMORY_TABLE_PREFIX": "dev_1."})
    assert shared == SharedDynamoDB(endpoint="http://127.0.0.1:8000", prefix="dev_1.")
    assert prefixed(TABLES, shared.prefix).keys == "dev_1.memory-keys"
    assert from_environment({}) == SharedDynamoDB(endpoint=None, prefix="")  # unset: the stack's own JVM
    assert prefixed(TABLES, "") == TABLES


@pytest.mark.parametrize("prefix", ["a b", "tables/", "é", "p" * 240])
def test_a_prefix_that_makes_no_dynamodb_table_name_is_refused(prefix: str) -> None:
    with pytest.raises(Refused, match="MEMORY_TABLE_PREFIX"):
        prefixed(TABLES, from_environment({"MEMORY_TABLE_PREFIX": prefix}).prefix)


@pytest.mark.server
def test_a_start_refused_half_way_drops_the_tables_it_made_and_only_those(dynamodb_local: Any, tmp_path: Path) -> None:
    # Someone else's table holds one of the names the stack would make (not its first): the launcher has
    # made the tables before it by then. Refused, it drops those (left, they would refuse every later launch
    # with that prefix) and leaves the other's table and its item as they were.
    endpoint = dynamodb_local.endpoint
    prefix = f"half{uuid.uuid4().hex[:8]}-"
    foreign = prefix + TABLES.events
    client = _client(endpoint)
    client.create_table(
        TableName=foreign,
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        client.put_item(TableName=foreign, Item={"id": {"S": "theirs"}})
        before = _tables(endpoint)
        done = _launch({"MEMORY_DYNAMODB_ENDPOINT": endpoint, "MEMORY_TABLE_PREFIX": prefix}, tmp_path)
        assert done.returncode != 0 and "MEMORY_TABLE_PREFIX" in done.stderr, done.stderr[-2000:]
        assert "Traceback" not in done.stderr
        assert _tables(endpoint) == before  # none of the four it made before the refusal is left
        assert client.scan(TableName=foreign)["Items"] == [{"id": {"S": "theirs"}}]
    finally:
        client.delete_table(TableName=foreign)


@pytest.mark.server
def test_a_start_refused_for_a_taken_prefix_leaves_the_running_stacks_credentials_file_as_it_was(
    dynamodb_local: Any, tmp_path: Path
) -> None:
    # A second `make run` from the same checkout (the same .local/credentials.json) with the running stack's
    # prefix is refused; the file holds the running stack's keys, which its host and worker sign with.
    endpoint = dynamodb_local.endpoint
    prefix = f"taken{uuid.uuid4().hex[:8]}-"
    client = _client(endpoint)
    client.create_table(
        TableName=prefix + TABLES.entries,
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        running = tmp_path / "credentials.json"
        running.write_text('{"host": {"access_key_id": "the running stack\'s"}}')
        done = _launch({"MEMORY_DYNAMODB_ENDPOINT": endpoint, "MEMORY_TABLE_PREFIX": prefix}, tmp_path)
        assert done.returncode != 0 and "MEMORY_TABLE_PREFIX" in done.stderr, done.stderr[-2000:]
        assert running.read_text() == '{"host": {"access_key_id": "the running stack\'s"}}'
    finally:
        client.delete_table(TableName=prefix + TABLES.entries)
