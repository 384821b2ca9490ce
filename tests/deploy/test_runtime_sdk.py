"""The storage layer works on the oldest botocore a python3.13 Lambda runtime can carry, not only on the pinned one.

The layer ships the SDK the suite runs with (requirements.txt; tests/deploy/test_package.py checks it is
there), so the runtime's own copy should never be imported. Should it be (a layer left off, a runtime
that puts its copy first), AWS Lambda's Python guide, "Runtime-included SDK versions", says: "The
version of the AWS SDK included in the Python runtime depends on the runtime version and your AWS
Region." Seen in one Region: botocore 1.43.11, where the deadline hook's `request.context` did not
exist (botocore added it in 1.43.68, read in its source) and every DynamoDB and KMS call raised
AttributeError. This test installs the oldest botocore this project supports (infra/layer.py,
OLDEST_BOTOCORE: the first to declare Python 3.13) from PyPI into a folder of its own and runs a
storage round trip with it, in a subprocess, against a moto server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra import layer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def oldest_sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """boto3 and botocore at OLDEST_BOTOCORE (with what they need), in a folder no other test imports from."""
    target = tmp_path_factory.mktemp("oldest-sdk")
    wanted = [f"boto3=={layer.OLDEST_BOTOCORE}", f"botocore=={layer.OLDEST_BOTOCORE}"]
    uv = Path(sys.executable).parent / "uv"
    if uv.is_file():
        command = [str(uv), "pip", "install", "--quiet", "--target", str(target), "--python", sys.executable, *wanted]
    else:
        command = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
            str(target),
            *wanted,
        ]
    installed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-2000:]
    return target


@pytest.fixture
def moto_url() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.mark.slow
def test_a_storage_round_trip_on_the_oldest_supported_botocore(oldest_sdk: Path, moto_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(oldest_sdk), str(ROOT)]),
        AWS_CONFIG_FILE="/dev/null",
        AWS_SHARED_CREDENTIALS_FILE="/dev/null",
        AWS_EC2_METADATA_DISABLED="true",
    )
    run = subprocess.run(
        [sys.executable, "-m", "tests.support.sdk_round_trip", moto_url],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["botocore"] == found["boto3"] == layer.OLDEST_BOTOCORE
    assert Path(found["botocore_file"]).is_relative_to(oldest_sdk)  # not the venv's pinned copy
    assert found["read_back"] is True
    assert found["stored_items"] >= 2 and found["wrapped_keys"] >= 1  # the entry, its state row; the user's data key
    assert found["plaintext_stored"] is False
