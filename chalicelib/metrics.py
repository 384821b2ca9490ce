"""Counts an operator needs, as CloudWatch Embedded Metric Format lines on stdout: no API call, no client, no text.

Lambda sends stdout to CloudWatch Logs, which turns each EMF line into metric data points
(namespace `PersonalMemory`, dimension `Service`, plus at most one of ours). Dimension values are
fixed codes of ours (a refusal reason, an operation), never user data, so a metric cannot carry text
and its cardinality stays bounded. Powertools' `Metrics` does the same and more; docs/deploy.md says
why this project writes its five counters itself (bench figures).
"""

from __future__ import annotations

import json
import re
import sys
import time

NAMESPACE = "PersonalMemory"
SERVICE = "personal-memory"
# The only metric names and dimension keys this service emits (the template's alarms and the runbook use them).
# ServerErrors / Unavailable: every 500 / 503 the API answers (handled or not: Lambda's Errors never sees them);
# RecordFailures: stream records the consumer reported failed; Throttled: AWS answers "slow down" (per Api).
NAMES = frozenset(
    {
        "ProposalsCreated",
        "ProposalsRefused",
        "CapRefusals",
        "ContextFetches",
        "OperatorAccesses",
        "TokenRefused",
        "ServerErrors",
        "Unavailable",
        "RecordFailures",
        "Throttled",
    }
)
DIMENSIONS = frozenset({"Reason", "Cap", "Operation", "Api"})
_CODE = re.compile(r"[a-z0-9_:]{1,64}")  # a reason like `credential:aws_access_key`, never free text


def emf_line(name: str, dimension: tuple[str, str] | None = None, value: int = 1, now_ms: int | None = None) -> str:
    """One EMF document counting `value` of `name` (optionally per one dimension)."""
    if name not in NAMES:
        raise ValueError(f"unknown metric {name}")
    keys = ["Service"]
    document: dict[str, object] = {"Service": SERVICE, name: value}
    if dimension is not None:
        key, code = dimension
        if key not in DIMENSIONS or not _CODE.fullmatch(code):
            raise ValueError(f"metric dimension {key} must be a known key with a code value")
        keys.append(key)
        document[key] = code
    document["_aws"] = {
        "Timestamp": int(time.time() * 1000) if now_ms is None else now_ms,
        "CloudWatchMetrics": [
            {"Namespace": NAMESPACE, "Dimensions": [keys], "Metrics": [{"Name": name, "Unit": "Count"}]}
        ],
    }
    return json.dumps(document, sort_keys=True)


def count(name: str, dimension: tuple[str, str] | None = None, value: int = 1) -> None:
    """Emit one counter; a metric never breaks the request that counts it."""
    try:
        sys.stdout.write(emf_line(name, dimension, value) + "\n")
    except Exception:  # noqa: BLE001 - observability must not change behaviour
        pass
