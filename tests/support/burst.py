"""Run calls at once, as concurrent requests: a barrier releases every thread together."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def burst(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run every call at once; results in call order."""
    results: list[Any] = [None] * len(calls)
    barrier = threading.Barrier(len(calls))

    def run(index: int) -> None:
        barrier.wait()
        results[index] = calls[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
