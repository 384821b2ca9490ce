"""What checking a user's token costs: PyJWT + cryptography on a cold container's first token, and warm.

Reported only (no targets): the import of jwt (which loads cryptography's hazmat backends), the first
token's key building and check, per algorithm, in fresh interpreters; then the per-token cost in a
warm verifier, and how much of it the compact-form checks (size, depth, canonical base64url) take.
`bench/run.py` prints these among its figures; nothing here is asserted.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ALGORITHMS = ("RS256", "ES256")

# Runs in a fresh interpreter: how long each step of the first token takes, and what it loaded.
_COLD = """
import json, sys, time
given = json.load(sys.stdin)
started = time.perf_counter()
from chalicelib.auth.tokens import TokenVerifier
from chalicelib.config import JwtSettings
verifier = TokenVerifier(JwtSettings(given["issuer"], given["audience"], None, given["jwks"]))
imported = time.perf_counter()
import jwt
libraries = time.perf_counter()
assert verifier.user_id("Bearer " + given["token"]) == "alice"
done = time.perf_counter()
print(json.dumps({"verifier_import_ms": (imported - started) * 1e3, "jwt_cryptography_import_ms": (libraries - imported) * 1e3,
                  "first_token_ms": (done - libraries) * 1e3,
                  "loaded": sorted(m for m in ("jwt", "cryptography", "rsa", "ecdsa") if m in sys.modules)}))
"""


def _cold_runs(issuer: Any, algorithm: str, reps: int) -> list[dict[str, Any]]:
    runs = []
    for _ in range(reps):
        given = {
            "jwks": issuer.jwks(),
            "issuer": issuer.issuer,
            "audience": issuer.audience,
            "token": issuer.mint("alice", algorithm=algorithm),
        }
        done = subprocess.run(
            [sys.executable, "-c", _COLD],
            cwd=ROOT,
            input=json.dumps(given),
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return runs


def _median_us(action: Callable[[], object], items: int) -> float:
    samples = []
    for _ in range(items):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def auth_figures(figure: Callable[..., Any], reps: int = 7, warm_tokens: int = 300) -> list[Any]:
    """The figures, built with the caller's Figure class (name, value, detail)."""
    from chalicelib.auth.compact import header_of
    from chalicelib.auth.tokens import TokenVerifier
    from chalicelib.config import JwtSettings
    from local.dev_tokens import DevTokenIssuer

    issuer = DevTokenIssuer()
    figures = []
    for algorithm in ALGORITHMS:
        runs = _cold_runs(issuer, algorithm, reps)
        median = {
            key: statistics.median(run[key] for run in runs)
            for key in ("jwt_cryptography_import_ms", "first_token_ms", "verifier_import_ms")
        }
        figures += [
            figure(
                f"auth cold {algorithm}: import jwt + cryptography ms (fresh interpreter, median)",
                median["jwt_cryptography_import_ms"],
                detail={"reps": reps, "loaded": runs[-1]["loaded"]},
            ),
            figure(f"  auth cold {algorithm}: first token (build the JWKS keys, check) ms", median["first_token_ms"]),
            figure(f"  auth cold {algorithm}: import chalicelib.auth.tokens ms", median["verifier_import_ms"]),
        ]
    verifier = TokenVerifier(JwtSettings(issuer.issuer, issuer.audience, None, issuer.jwks()))
    for algorithm in ALGORITHMS:
        tokens = iter([issuer.mint(f"user-{n}", algorithm=algorithm) for n in range(warm_tokens + 1)])
        verifier.user_id("Bearer " + next(tokens))  # warm: keys built, libraries loaded
        whole = _median_us(lambda tokens=tokens: verifier.user_id("Bearer " + next(tokens)), warm_tokens)
        token = issuer.mint("alice", algorithm=algorithm)
        shape = _median_us(lambda token=token: header_of(token), warm_tokens)
        figures += [
            figure(f"auth warm {algorithm}: one token checked µs (median)", whole, detail={"tokens": warm_tokens}),
            figure(f"  auth warm {algorithm}: of which size/depth/base64url checks µs", shape),
        ]
    return figures
