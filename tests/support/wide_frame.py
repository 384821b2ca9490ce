"""Runs a call below one wide frame, so that CPython 3.13.0 stops mapping and unmapping a stack chunk per call.

CPython keeps its frames in 16 KiB chunks of a per-thread data stack and frees a chunk as soon as its first
frame returns (Python/pystate.c, `_PyThreadState_PopFrame`). A loop whose callee lands just past a chunk's
end therefore maps and unmaps a fresh chunk on every call: CPython issue gh-142183, "Calls across stack chunks
perform badly", fixed after 3.13.0 by keeping one spare chunk per thread. The 3.13.0 that `.venv` runs on
here (pyenv's, as on CI) has the bug: one worker running tests/routes/test_agent_names.py made 378,000
mmap/munmap pairs and 416,000 page faults (2.9 s of system time in 12 s).

`call_in_wide_frame` calls its target from a function with 40,000 local slots (320 KB). That frame does not
fit the current chunk, so CPython maps a chunk for it of 512 KiB (doubling 16 KiB until it holds the frame
and some overhead): the ~190 KiB left after it holds every frame the target's calls push, so none of them
starts a chunk. What runs inside behaves exactly as outside; only where its frames live changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")

SLOTS = 40_000  # 8 bytes each: a 320 KB frame, in a 512 KiB chunk

_NAMES = " = ".join(f"slot{n}" for n in range(SLOTS))
_SOURCE = f"""
def wide_frame(target):
    if target is None:  # never: the assignment only declares the slots that make the frame wide
        {_NAMES} = None
    return target()
"""
_namespace: dict[str, object] = {}
exec(compile(_SOURCE, "<wide frame>", "exec"), _namespace)  # noqa: S102 - generated here, from constants only


def call_in_wide_frame(target: Callable[[], _T]) -> _T:
    """`target()`, called from a frame wide enough that the frames below it never cross a stack-chunk boundary."""
    wide: Callable[[Callable[[], _T]], _T] = _namespace["wide_frame"]  # type: ignore[assignment]
    return wide(target)
