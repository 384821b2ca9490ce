"""OAuth for /mcp (issue 42): what the authorize route adds to a cold start, and the tokens' sizes.

Run: `.venv/bin/python -m bench.oauth_bench` (prints JSON). The cold start is measured as bench/run.py measures
`import app` and cryptography's first use: fresh interpreters, medians. The authorize route loads, beyond
`import app`, the OAuth service (Authlib, joserfc) and builds Authlib's server; the other routes never load
Authlib (a token check on /mcp needs PyJWT only, already loaded by the user routes' authorizer).
The calls per token check are a test's assertion (tests/routes/test_oauth_flow.py): 1 GetItem, 0 cached.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_TIMED = "import time; t = time.perf_counter(); {body}; print((time.perf_counter() - t) * 1000)"
APP = "import app"
# What any route that touches storage loads anyway (the /mcp route with a connection token, for one).
ROUTE = "import app; import chalicelib.bootstrap; import chalicelib.services.connections"
AUTHORIZE = (
    "import app; import chalicelib.services.oauth as o; from chalicelib.oauth.server import Server, Context; "
    "Server(Context('https://x/mcp', int, lambda c: None, None, None, None, None, None))"
)
TOKEN_CHECK = "import app; from chalicelib.oauth import access"


def _median_ms(body: str, reps: int) -> tuple[float, list[float]]:
    runs = []
    for _ in range(reps):
        done = subprocess.run(
            [sys.executable, "-c", _TIMED.format(body=body)], cwd=ROOT, capture_output=True, text=True, check=True
        )
        runs.append(round(float(done.stdout.strip().splitlines()[-1]), 1))
    return statistics.median(runs), runs


def token_sizes() -> dict[str, int]:
    from chalicelib.oauth import access

    token = access.issue(
        bytes(32),
        connection_mac="0" * 64,
        resource="https://abcdefghij.execute-api.eu-west-1.amazonaws.com/api/mcp",
        now=1_800_000_000,
        lifetime=3600,
    )
    return {"access_token_bytes": len(token), "refresh_token_bytes": len("pmr_") + 43, "connection_token_bytes": 55}


def main(reps: int = 7) -> dict[str, object]:
    app_ms, app_runs = _median_ms(APP, reps)
    route_ms, route_runs = _median_ms(ROUTE, reps)
    authorize_ms, authorize_runs = _median_ms(AUTHORIZE, reps)
    check_ms, check_runs = _median_ms(TOKEN_CHECK, reps)
    return {
        "import app (ms, median)": app_ms,
        "import app + a storage route's code (ms, median)": route_ms,
        "import app + the authorize route's code and Authlib's server (ms, median)": authorize_ms,
        "authorize route's cold-start addition over a storage route (ms)": round(authorize_ms - route_ms, 1),
        "import app + the access-token check (ms, median)": check_ms,
        "access-token check's addition over import app (PyJWT, ms)": round(check_ms - app_ms, 1),
        "runs_ms": {"app": app_runs, "route": route_runs, "authorize": authorize_runs, "token_check": check_runs},
        **token_sizes(),
    }


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
