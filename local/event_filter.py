"""The stream consumer's event filter, read from the template, applied locally as Lambda's event source mapping does.

Deployed, the mapping's `FilterCriteria` (infra/stack.json: records whose new image is a pending
`memory.propose` event; Lambda filters DynamoDB records on their `dynamodb` key only)
keeps every other record (the consumer's own settle step, TTL deletions) from invoking the consumer;
a filtered-out record counts as processed. moto and `chalice local` have no event source mappings, so
the local stream pump applies the same patterns. Only what the template uses is implemented: nested
keys and lists of exact values (Lambda's content filtering has more operators; they are refused here
rather than misread).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

STACK = Path(__file__).resolve().parent.parent / "infra" / "stack.json"
SOURCE = ("HandleEventsStream", "HandleEventsStreamDynamodbEventSource")


def matches(pattern: Mapping[str, Any], value: Any) -> bool:
    """Whether `value` (a stream record, or part of one) satisfies one filter pattern."""
    if not isinstance(value, Mapping):
        return False
    for key, expected in pattern.items():
        if isinstance(expected, Mapping):
            if not matches(expected, value.get(key)):
                return False
        elif isinstance(expected, list):
            if any(isinstance(option, (dict, list)) for option in expected):
                raise NotImplementedError(f"filter operator under {key!r} is not emulated locally")
            if key not in value or value[key] not in expected:
                return False
        else:
            raise ValueError(f"a filter pattern's leaf must be a list of values, not {expected!r}")
    return True


def template_filter(stack: Path = STACK) -> Callable[[Mapping[str, Any]], bool]:
    """A record predicate for the consumer's FilterCriteria: any of its patterns matches."""
    resources = json.loads(stack.read_text())["Resources"]
    function, source = SOURCE
    criteria = resources[function]["Properties"]["Events"][source]["Properties"].get("FilterCriteria")
    if not criteria:
        return lambda record: True
    patterns = [json.loads(f["Pattern"]) for f in criteria["Filters"]]
    return lambda record: any(matches(p, record) for p in patterns)
