"""Requests per idle tab-hour: the page's own schedule (live.js, run by node) fed the server's real GET /v1/memory advice.

The page asks `GET /v1/memory` on the schedule the answer's `poll` field advises; an idle tab gets
304s, which keep that advice. So an hour of one open tab is: one GET through the real route (the
advice, for a seeded state), then live.js's `planFrom`/`nextDelay` stepped over 3,600 simulated
seconds, one request per step. Before issue 21 the page asked every 5 s whatever happened (720 an hour).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

WEB = Path(__file__).resolve().parents[1] / "chalicelib" / "web"
BEFORE_POLL_SECONDS = 5  # live.js's fixed POLL_MS before issue 21

_SIMULATE = """
const live = await import(process.argv[2]);  // the page's own live.js
const plan = live.planFrom(JSON.parse(process.argv[3]), 0);
let t = 0, requests = 1;  // the first GET, which brought the advice
for (;;) { t += live.nextDelay(plan, t); if (t >= 3600 * 1000) break; requests += 1; }
console.log(JSON.stringify({ requests, plan }));
"""


def simulate_hour(advice: dict[str, Any]) -> int | None:
    """GETs one visible tab makes in an hour with nothing changing, by the page's own code; None without node."""
    node = shutil.which("node")
    if node is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        for module in WEB.glob("*.js"):
            shutil.copy(module, tmp)
        Path(tmp, "package.json").write_text('{"type": "module"}')  # ES modules, whatever node's default
        script = Path(tmp, "simulate.mjs")
        script.write_text(_SIMULATE)
        done = subprocess.run(
            [node, str(script), Path(tmp, "live.js").as_uri(), json.dumps(advice)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    return int(json.loads(done.stdout)["requests"])


def _set_switched_at(stack: Any, user: str, moment: datetime) -> None:
    """Seeding: pretend the switch was turned on at `moment` (the state item's updated_at)."""
    stack.stores.client.update_item(
        TableName=stack.stores.entries.table,
        Key={"user_id": {"S": user}, "sk": {"S": "#state"}},
        UpdateExpression="SET updated_at = :t",
        ExpressionAttributeValues={":t": {"S": moment.strftime("%Y-%m-%dT%H:%M:%SZ")}},
    )


def poll_figures(stack: Any, figure: Callable[..., Any], at_most: Callable[..., Any]) -> list[Any]:
    """`figure` is bench.run.Figure and `at_most` its helper (passed in: run.py imports this module)."""
    from tests.support.proposals import add_proposal

    def advice(user: str) -> dict[str, Any]:
        status, body, _ = stack.api.tagged_get("/v1/memory", user, None)
        assert status == 200, body
        return dict(body["poll"])

    stack.api.turn_on("poll-idle")
    _set_switched_at(stack, "poll-idle", datetime.now(UTC) - timedelta(hours=1))
    stack.api.turn_on("poll-fresh")
    _set_switched_at(stack, "poll-fresh", datetime.now(UTC) - timedelta(hours=1))
    add_proposal(stack.stores, "poll-fresh", "Likes the sea")  # waiting since just now
    scenarios = {
        "memory on, nothing new": advice("poll-idle"),
        "memory off": advice("poll-never-on"),
        "a suggestion just arrived, then nothing": advice("poll-fresh"),
    }
    before = 3600 // BEFORE_POLL_SECONDS
    figures = [figure(f"GET /v1/memory per visible tab-hour, before issue 21 (every {BEFORE_POLL_SECONDS} s)", before)]
    for name, given in scenarios.items():
        after = simulate_hour(given)
        label = f"GET /v1/memory per visible tab-hour, {name}"
        if after is None:
            figures.append(figure(label, "n/a (node not found)", detail={"advice": given}))
            continue
        limit = 60 if name != "a suggestion just arrived, then nothing" else 120
        figures.append(at_most(label, after, limit, before=before, advice=given, ratio=round(after / before, 3)))
    return figures
