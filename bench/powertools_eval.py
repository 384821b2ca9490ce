"""What Powertools for AWS Lambda (Python) would cost this app: cold-import ratios and layer size, as `make bench` measures.

Powertools does what chalicelib/logs.py (JSON logs), chalicelib/metrics.py (EMF counters) and the
consumer's partial batch response do by hand. This measures, with bench/run.py's method (medians of
interleaved fresh interpreters, as a ratio to a bare Chalice app), `import app` with and without each
Powertools utility the app would import, and the dependency layer built for the Lambda target
(infra/layer.py) with and without it. Writes bench/results/powertools.json; docs/deploy.md quotes it.

    .venv/bin/python bench/powertools_eval.py   # fetches the wheels from PyPI, like `make package`
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.run import HELLO, interleaved_medians  # noqa: E402
from infra import layer  # noqa: E402

POWERTOOLS = "aws-lambda-powertools==3.37.0"
RESULTS = ROOT / "bench" / "results" / "powertools.json"
IMPORTS = {
    "app only (today)": "import app",
    "app + Metrics": "import app; from aws_lambda_powertools.metrics import Metrics",
    "app + Logger": "import app; from aws_lambda_powertools import Logger",
    "app + BatchProcessor": "import app; from aws_lambda_powertools.utilities.batch import BatchProcessor",
}


def _importing(code: str, cwd: str, path: str) -> Callable[[], None]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["PYTHONPATH"] = path
    command = [sys.executable, "-c", code]
    return lambda: subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)


def import_ratios(site: str, reps: int) -> dict[str, dict[str, float]]:
    ratios: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as hello_dir:
        Path(hello_dir, "app.py").write_text(HELLO)
        hello = _importing("import app", hello_dir, site)
        for name, code in IMPORTS.items():
            timing = interleaved_medians(_importing(code, str(ROOT), site), hello, reps)
            ratios[name] = {
                "ratio": round(timing.ratio, 2),
                "cpu_ratio": round(timing.cpu_ratio, 2),
                "median_ms": round(timing.wall[0] * 1e3, 1),
                "hello_median_ms": round(timing.wall[1] * 1e3, 1),
            }
    return ratios


def layer_sizes(work: Path) -> dict[str, float]:
    base = (ROOT / "requirements.txt").read_text()
    sizes: dict[str, float] = {}
    for name, extra in (("layer today", ""), ("layer + Powertools", POWERTOOLS + "\n")):
        requirements = work / f"{len(extra)}.txt"
        requirements.write_text(base + extra)
        out = work / f"{len(extra)}.zip"
        layer.build(requirements, out, work / f"site-{len(extra)}")
        sizes[f"{name} MB (zip)"] = round(out.stat().st_size / 1e6, 2)
        unzipped = sum(p.stat().st_size for p in (work / f"site-{len(extra)}").rglob("*") if p.is_file())
        sizes[f"{name} MB (unzipped)"] = round(unzipped / 1e6, 2)
    return sizes


def main() -> int:
    reps = int(os.environ.get("POWERTOOLS_EVAL_REPS", "9"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        site = work / "host-site"  # Powertools for this interpreter, to import it
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(site), POWERTOOLS], check=True)
        figures = {"reps": reps, "import / Chalice hello world": import_ratios(str(site), reps), **layer_sizes(work)}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
