"""The wide frame every test runs below (tests/support/wide_frame.py, tests/conftest.py) keeps a loop that calls
across a stack-chunk boundary from mapping a chunk per call: counted in page faults, which each new chunk costs."""

from __future__ import annotations

import resource
import sys
import threading

from tests.support.wide_frame import call_in_wide_frame

DEPTHS = 400  # deep enough that some depth puts the loop's callee at the start of a fresh 16 KiB chunk
CALLS = 200


def _leaf() -> None:
    return None


def _loop_at(depth: int) -> None:
    if depth:
        return _loop_at(depth - 1)
    for _ in range(CALLS):
        _leaf()
    return None


def _page_faults_of_a_sweep() -> int:
    """This thread's own page faults (RUSAGE_THREAD: another thread's allocations are not counted)."""
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    for depth in range(DEPTHS):
        _loop_at(depth)
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before


def test_a_loop_at_a_chunk_boundary_maps_no_chunk_per_call_below_the_wide_frame() -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * DEPTHS))
    try:
        # The bare sweep runs at the bottom of a new thread, with no wide frame below it (this test itself runs
        # below one: conftest).
        bare: list[int] = []
        thread = threading.Thread(target=lambda: bare.append(_page_faults_of_a_sweep()))
        thread.start()
        thread.join()
        wide = call_in_wide_frame(_page_faults_of_a_sweep)
    finally:
        sys.setrecursionlimit(limit)
    assert wide < 100, wide
    if sys.version_info[:2] == (3, 11) or sys.version_info[:3] == (3, 13, 0):  # gh-142183 unfixed in both
        assert bare[0] > 10 * max(wide, 1), (bare, wide)


def test_every_test_runs_below_the_wide_frame() -> None:
    frame = sys._getframe()
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    assert "wide_frame" in names, names
