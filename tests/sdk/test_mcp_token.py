"""`personal-memory-mcp --token`: a person's own client by its connection token, over stdio, against the real stack.

No credentials file, no user, no AWS role: the token reaches one person's memory as the agent it names.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from mcp import Client
from mcp_stdio import parameters, run_client, structured, text_of, unique
from personal_memory_sdk.mcp_config import ConfigError, load_config


def _person(live: Any, *texts: str, agent: str = "claude-code", trusted: bool = False) -> tuple[str, dict[str, Any]]:
    user = unique("tok")
    token = live.token(user)
    assert live.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})[0] == 200
    for text in texts:
        assert live.request("POST", "/v1/memory", token=token, body={"text": text})[0] == 201
    status, made, _ = live.request("POST", "/v1/connections", token=token, body={"agent": agent, "trusted": trusted})
    assert status == 201, made
    return token, made


def test_a_token_alone_reads_the_persons_notes_and_leaves_a_suggestion(live: Any) -> None:
    token, made = _person(live, "likes green tea")

    async def use(client: Client) -> tuple[Any, Any]:
        context = await client.call_tool("memory_context", {})
        proposed = await client.call_tool("memory_propose", {"text": "Prefers oolong", "kind": "preference"})
        return context, proposed

    params = parameters(["--base-url", live.url, "--token", made["token"]], env={"HOME": "/nonexistent"})
    context, proposed = run_client(params, use, client_name="Some Other Name")
    seen = structured(context)
    assert [i["text"] for i in seen["items"]] == ["likes green tea"]
    assert seen["agent"] == "claude-code" and seen["session_tainted"] is True  # the connection's, not the client's name
    answer = structured(proposed)
    assert answer["status"] == "waiting_for_review" and answer["agent"] == "claude-code"
    assert made["token"] not in text_of(proposed) + text_of(context)
    view = live.request("GET", "/v1/memory", token=token)[1]
    (waiting,) = view["proposals"]
    assert (waiting["text"], waiting["agent"], waiting["tainted"]) == ("Prefers oolong", "claude-code", True)
    listed = live.request("GET", "/v1/connections", token=token)[1]["connections"]
    assert listed[0]["last_used_at"] is not None


def test_the_token_can_come_from_the_environment_and_a_revoked_one_is_told_in_words(live: Any) -> None:
    token, made = _person(live, "likes green tea")
    assert live.request("DELETE", f"/v1/connections/{made['id']}", token=token)[0] == 204
    time.sleep(0.01)

    async def use(client: Client) -> Any:
        return await client.call_tool("memory_context", {})

    params = parameters(["--base-url", live.url], env={"PERSONAL_MEMORY_TOKEN": made["token"]})
    result = run_client(params, use)
    assert result.is_error and "401" in text_of(result) and made["token"] not in text_of(result)


@pytest.mark.parametrize("extra", [["--user", "alice"], ["--credentials-file", "x.json"], ["--trust-client", "claude"]])
def test_a_token_with_the_trusted_host_flags_is_refused_in_one_line(extra: list[str]) -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(["--base-url", "http://127.0.0.1:8000", "--token", "pmc_" + "a" * 51, *extra], environ={})
    assert extra[0] in str(refused.value) and "pmc_aaaa" not in str(refused.value)


def test_a_token_that_is_not_a_connection_token_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(["--base-url", "http://127.0.0.1:8000", "--token", "ghp_secretsecretsecret"], environ={})
    assert "ghp_secret" not in str(refused.value)
    config = load_config(["--base-url", "http://127.0.0.1:8000"], environ={"PERSONAL_MEMORY_TOKEN": "pmc_" + "b" * 51})
    assert config.token == "pmc_" + "b" * 51 and config.user_id is None and "pmc_" not in repr(config)
