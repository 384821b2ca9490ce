"""The context Lambda hands a function: a fresh one per invocation, with the function's own timeout.

chalice's `LambdaContext` defaults to 3 s (and the test client's `lambda_.invoke` uses that default),
while the deployed consumer has the timeout in .chalice/config.json. The app bounds its AWS calls by
`get_remaining_time_in_millis()` (chalicelib/storage/retries.py), so a stand-in must say what Lambda says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONFIG = Path(__file__).resolve().parent.parent / ".chalice" / "config.json"


def function_timeout_ms(function: str) -> int:
    stage = json.loads(CONFIG.read_text())["stages"]["dev"]
    scoped = stage.get("lambda_functions", {}).get(function, {})
    return int(scoped.get("lambda_timeout", stage.get("lambda_timeout", 60))) * 1000


def lambda_context(function: str = "api_handler") -> Any:
    """A chalice LambdaContext whose remaining time starts at `function`'s configured timeout."""
    from chalice.local import LambdaContext

    return LambdaContext(function, 512, max_runtime_ms=function_timeout_ms(function))


def consumer_context() -> Any:
    return lambda_context("handle_events_stream")


def invoke_consumer(event: dict[str, Any]) -> Any:
    """What Lambda does with one batch: the real handler, a fresh context."""
    import importlib

    return importlib.import_module("app").handle_events_stream(event, consumer_context())
