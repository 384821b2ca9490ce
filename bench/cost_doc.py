"""docs/deploy.md's table of DynamoDB calls and request units per route, written from the bench's own counts.

`python bench/cost_doc.py` runs bench/run.py's `count_operations` (seconds) and rewrites the block between
the markers in docs/deploy.md; `--check` exits 1 if the block differs. tests/tools/test_bench.py checks the
same, so the page cannot drift from what the code does again (issue 37: it said 4 WRU for a POST that
writes 10, $0.88 for what costs more).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DOC = ROOT / "docs" / "deploy.md"
START, END = "<!-- bench/cost_doc.py: start -->", "<!-- bench/cost_doc.py: end -->"

# (label in the doc, the bench's operation name)
ROWS = (
    ("`GET /v1/memory`", "GET /v1/memory"),
    ("`GET /v1/memory`, unchanged (304)", "GET /v1/memory, unchanged (If-None-Match: 304)"),
    ("`GET /v1/inbox`", "GET /v1/inbox"),
    ("`POST /v1/memory`", "POST /v1/memory"),
    ("`PATCH /v1/memory/{id}` (pin)", "PATCH /v1/memory/{id}"),
    ("`PATCH /v1/memory/{id}` (new text)", "PATCH /v1/memory/{id}, a new text (moves its fingerprint)"),
    ("`DELETE /v1/memory/{id}`", "DELETE /v1/memory/{id}"),
    ("`POST /v1/memory/{id}/accept`", "POST /v1/memory/{id}/accept"),
    ("`PUT /v1/memory/settings`", "PUT /v1/memory/settings"),
    ("`GET /v1/sessions/{id}/memory` (host)", "GET /v1/sessions/{id}/memory (context)"),
    ("`POST /v1/sessions/{id}/events` (1 event)", "POST /v1/sessions/{id}/events (1 event)"),
    ("consumer, per propose", "consumer: one memory.propose"),
)
# The user-request mix of the cost estimate, and the other lines of it (assumed, per 1 M; docs/deploy.md).
MIX = {
    "GET /v1/memory": 0.80,
    "POST /v1/memory": 0.10,
    "PATCH /v1/memory/{id}": 0.05,
    "POST /v1/memory/{id}/accept": 0.05,
}
USER_OTHER = {
    "API Gateway": 3.50,
    "API function": 0.33,
    "authorizer (at most once per token per 5 minutes: the 300 s cache)": 0.22,
    "logs (~1.4 KB per request: app line, access log, platform lines)": 0.70,
}
WORKER_OTHER = {"API Gateway": 3.50, "Lambda": 0.33, "logs": 0.50}
CONSUMER_OTHER = {"Lambda": 0.13, "logs": 0.10}


def _dollars(count: Any) -> float:
    from bench.units import RRU_PRICE, WRU_PRICE

    return float(count.rru * RRU_PRICE + count.wru * WRU_PRICE)


def _units(count: Any) -> str:
    parts = [f"{count.rru:g} RRU" if count.rru else "", f"{count.wru:g} WRU" if count.wru else ""]
    return " + ".join(p for p in parts if p) or "0"


def render(counts: dict[str, Any]) -> str:
    """The block: the table, then the DynamoDB lines of the per-million estimates, from `counts`."""
    lines = ["| route | DynamoDB calls | request units | DynamoDB $ per 1 M |", "|---|---|---|---|"]
    for label, name in ROWS:
        count = counts[name]
        lines.append(f"| {label} | {count.summary()} | {_units(count)} | {_dollars(count):.2f} |")
    dynamo = sum(share * _dollars(counts[name]) for name, share in MIX.items())
    user_total = sum(USER_OTHER.values()) + dynamo
    worker = _dollars(counts["POST /v1/sessions/{id}/events (1 event)"])
    consumer = _dollars(counts["consumer: one memory.propose"])
    worker_total, consumer_total = sum(WORKER_OTHER.values()) + worker, sum(CONSUMER_OTHER.values()) + consumer
    mix = ", ".join(f"{share:.0%} `{name.split(' ', 1)[1]}` {name.split(' ', 1)[0]}" for name, share in MIX.items())
    user_parts = " + ".join(f"{k} ${v:.2f}" for k, v in USER_OTHER.items())
    lines += [
        "",
        f"**Per 1 M user requests** ({mix}): {user_parts} + DynamoDB ${dynamo:.2f} = **≈ ${user_total:.2f}**.",
        "**Per 1 M propose events**, posted one per request: the worker side is "
        + " + ".join(f"{k} ${v:.2f}" for k, v in WORKER_OTHER.items())
        + f" + DynamoDB ${worker:.2f} = ${worker_total:.2f}, and the consumer (batches of up to 100) "
        + " + ".join(f"{k} ${v:.2f}" for k, v in CONSUMER_OTHER.items())
        + f" + DynamoDB ${consumer:.2f} = ${consumer_total:.2f}: **≈ ${worker_total + consumer_total:.2f}**.",
    ]
    return "\n".join(lines)


def current(doc: str) -> str:
    """The block now in the page (between the markers, without them)."""
    start, end = doc.index(START) + len(START), doc.index(END)
    return doc[start:end].strip("\n")


def measure() -> dict[str, Any]:
    from bench import run

    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull), run.open_stack() as stack:
        return run.count_operations(stack, batch_size=10)


def main(argv: list[str]) -> int:
    doc = DOC.read_text()
    block = render(measure())
    if "--check" in argv:
        if current(doc) != block:
            print(
                f"{DOC.relative_to(ROOT)}'s cost block differs from the bench's counts: run bench/cost_doc.py",
                file=sys.stderr,
            )
            return 1
        return 0
    start, end = doc.index(START) + len(START), doc.index(END)
    DOC.write_text(doc[:start] + "\n" + block + "\n" + doc[end:])
    print(block)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
