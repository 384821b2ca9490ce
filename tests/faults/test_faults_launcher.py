"""`MEMORY_FAULT_RATE=… MEMORY_FAULT_SEED=… make run`: the launcher fails that share of the app's DynamoDB calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.live import start_live_stack


@pytest.mark.server
def test_the_launcher_honours_the_fault_rate_and_answers_503_in_the_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_FAULT_RATE", "1")
    monkeypatch.setenv("MEMORY_FAULT_SEED", "5")
    stack = start_live_stack(tmp_path)
    try:
        token = stack.token("faulty")
        status, body, headers = stack.request("PUT", "/v1/memory/settings", token=token, body={"enabled": True})
        assert (status, body["code"]) == (503, "unavailable") and int(headers["Retry-After"]) >= 1
        assert stack.request("GET", "/page-config")[0] == 200  # nothing that needs DynamoDB is touched
        assert "faults:    100% of the app's DynamoDB calls fail" in stack.logs()
    finally:
        stack.stop()
