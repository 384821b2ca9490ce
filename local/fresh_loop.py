"""Run a coroutine to completion on its own event loop in its own thread.

`asyncio.run` refuses to start while the calling thread already has a running loop — as it does in a
test process once Playwright's sync API is open (its dispatcher keeps a loop running in that thread).
The demo's MCP steps and the MCP tests share processes with the browser tests, so they run here instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

_T = TypeVar("_T")


def run_apart(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """`asyncio.run(coroutine)` in a new thread: works whether or not this thread has a running loop."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="fresh-loop") as pool:
        return pool.submit(asyncio.run, coroutine).result()
