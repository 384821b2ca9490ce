"""Builds the one template `chalice package --merge-template` takes from the tables file and the stack file.

infra/tables.json stays tables only, because the local stack and the tests create their tables from
it; infra/stack.json holds the rest (parameters, queue, log groups, the generated functions'
environment and event source, gateway responses); infra/encryption.json the KMS key, its alias and
policy, the role names the policy names, and the key settings (docs/encryption.md). No two parts may
set the same value: a clash is an error here rather than a silent win for one of them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

INFRA = Path(__file__).resolve().parent
PARTS = (INFRA / "tables.json", INFRA / "stack.json", INFRA / "encryption.json")


def merge(base: dict[str, Any], extra: dict[str, Any], path: str = "") -> dict[str, Any]:
    """Deep-merge two JSON objects; the same leaf in both is refused."""
    merged = dict(base)
    for key, value in extra.items():
        where = f"{path}.{key}" if path else key
        if key not in merged:
            merged[key] = value
        elif isinstance(merged[key], dict) and isinstance(value, dict):
            merged[key] = merge(merged[key], value, where)
        else:
            raise ValueError(f"both template parts set {where}")
    return merged


def compose(parts: tuple[Path, ...] = PARTS) -> dict[str, Any]:
    template: dict[str, Any] = {}
    for part in parts:
        template = merge(template, json.loads(part.read_text()))
    return template


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: compose_template.py OUTPUT.json", file=sys.stderr)
        return 2
    Path(argv[1]).write_text(json.dumps(compose(), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
