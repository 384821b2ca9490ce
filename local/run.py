"""`make run`: starts the local stack and serves until interrupted."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from local.shared_dynamodb import Refused
from local.stack import CREDENTIALS_FILE, LocalStack


def main() -> None:
    credentials = Path(os.environ.get("MEMORY_CREDENTIALS_FILE", str(CREDENTIALS_FILE)))
    try:
        stack = LocalStack(port=int(os.environ.get("PORT", "8000")), credentials_file=credentials).start()
    except Refused as refused:  # MEMORY_DYNAMODB_ENDPOINT or MEMORY_TABLE_PREFIX: the message says which and why
        raise SystemExit(f"local stack not started: {refused}") from None
    print(f"Personal memory is running on {stack.url}  (page: {stack.url}/)")
    print(f'  sign in:   curl -s -X POST {stack.url}/dev/token -d \'{{"user_id": "alice"}}\'')
    print(f"  IAM keys:  {stack.credentials_file} (host, worker, operator)")
    if stack.shares_dynamodb:
        print(f"  DynamoDB:  {stack.dynamodb_url}, tables {stack.tables.entries}, ... (dropped when it stops)")
    if stack.faults is not None:
        rate, seed = os.environ["MEMORY_FAULT_RATE"], os.environ.get("MEMORY_FAULT_SEED", "0")
        print(
            f"  faults:    {float(rate):.0%} of the app's DynamoDB calls fail with AWS's retryable errors (seed {seed})"
        )
    print("Ctrl-C stops it.", flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
