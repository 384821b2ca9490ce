"""Modules loaded on first attribute use, safely under concurrent first use.

All three Lambda functions (the authorizer, the API, the stream consumer) import app.py; each should
pay at cold start only for the modules it actually runs, not for every route's dependencies.

The standard library's LazyLoader is not thread-safe before Python 3.12.3 (CPython gh-114763): a second
thread reading an attribute while the first is still running the module sees a half-built module
(AttributeError, a 500). Lambda runs one request at a time, but the local threaded server does not,
and the chaos test hit it. So a stand-in module imports the real one under a lock on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

_lock = threading.RLock()


class _Deferred(ModuleType):
    """Stands in for a module until an attribute is read, then forwards every read to the real module."""

    def __getattr__(self, attribute: str) -> Any:
        real = self.__dict__.get("_deferred_real")
        if real is None:
            with _lock:  # one import at a time; a waiting thread then finds the module complete
                real = importlib.import_module(self.__name__)
                self.__dict__["_deferred_real"] = real
        return getattr(real, attribute)


def lazy_module(name: str) -> ModuleType:
    """`name` as a module object whose code runs the first time one of its attributes is read."""
    if name in sys.modules:
        return sys.modules[name]
    if importlib.util.find_spec(name) is None:
        raise ImportError(f"no module named {name}")
    return _Deferred(name)
