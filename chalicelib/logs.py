"""Structured JSON logs: one line per request or stream record, from an allow-list of fields — never text.

The formatter drops every attribute it does not know, so an accidental `extra={"text": ...}` or a
message built from data cannot reach the logs; messages themselves are fixed strings of ours.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import sys
import time
from typing import Any

FIELDS = (
    "route",
    "method",
    "status",
    "caller",
    "user",
    "latency_ms",
    "request_id",
    "outcome",
    "reason",
    "error_type",
    "sequence",
    "records",
    "failures",
    "operator",
    "erased",  # an operator's account erasure (services/erasure.py): their ARN and counts per table
)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created)),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.msg if isinstance(record.msg, str) else "log",
        }
        for name in FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        return json.dumps(line, sort_keys=True)


class _StdoutHandler(logging.Handler):
    """Writes to whatever sys.stdout is at the time (Lambda's, or a test's capture)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stdout.write(self.format(record) + "\n")
        except Exception:  # noqa: BLE001 - logging never breaks the caller
            self.handleError(record)


def get_logger(name: str = "personal_memory") -> logging.Logger:
    """The service's logger, writing JSON lines to stdout (CloudWatch in Lambda)."""
    root = logging.getLogger("personal_memory")
    if not getattr(root, "_json_configured", False):
        handler = _StdoutHandler()
        handler.setFormatter(JsonFormatter())
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        root.propagate = False
        root._json_configured = True  # type: ignore[attr-defined]
    return logging.getLogger(name)


def user_hash(user_id: str | None, key: bytes | None = None) -> str | None:
    """A stable pseudonym for correlating a user's log lines without writing their id.

    An HMAC-SHA256 under the stage's secret `LOG_PSEUDONYM_KEY` (`key` None: the settings' one), cut to 64
    bits: whoever reads the logs, without that key, cannot test a guessed id against a pseudonym (an unkeyed
    hash with a public salt let anyone who knows an id find every line of it). Stable while the key is.
    """
    if not user_id:
        return None
    if key is None:
        from chalicelib.config import get_settings  # read once per process, on first use

        key = get_settings().log_pseudonym_key
    return hmac.new(key, b"personal-memory-log:" + user_id.encode(), hashlib.sha256).hexdigest()[:16]
