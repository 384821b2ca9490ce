"""A storage-layer round trip on whatever boto3/botocore this interpreter imports, against a moto server.

Run as `python -m tests.support.sdk_round_trip MOTO_URL` with an old SDK first on PYTHONPATH
(tests/deploy/test_runtime_sdk.py installs it): inside a Lambda-like invocation (the deadline hook of
chalicelib/storage/retries.py active), it creates the tables and the key the way the local stack does,
adds an entry through the memory service, reads it back, and checks what DynamoDB holds is sealed.
It prints one JSON line: the SDK versions and what it found. Text of the entry never leaves it.
"""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

TEXT = "round trip: the dentist is on Tuesday"


def main(moto_url: str) -> int:
    import boto3
    import botocore

    from chalicelib.bootstrap import build_stores
    from chalicelib.config import TableNames, load_settings
    from chalicelib.schemas import NewEntryBody
    from chalicelib.services import memory
    from chalicelib.storage import retries
    from local.kms import create_key
    from local.tables import create_tables

    session = boto3.session.Session(
        aws_access_key_id="offline", aws_secret_access_key="offline", region_name="us-east-1"
    )
    dynamodb = session.client("dynamodb", endpoint_url=moto_url, config=retries.client_config())
    kms = session.client("kms", endpoint_url=moto_url, config=retries.client_config())
    names = TableNames(*(f"sdk-{field}" for field in ("entries", "proposals", "journal", "sessions", "events", "keys")))
    create_tables(dynamodb, names)
    key_arn = create_key(kms)
    settings = load_settings(
        {
            "ENTRIES_TABLE": names.entries,
            "PROPOSALS_TABLE": names.proposals,
            "JOURNAL_TABLE": names.journal,
            "SESSIONS_TABLE": names.sessions,
            "EVENTS_TABLE": names.events,
            "KEYS_TABLE": names.keys,
            "LOG_PSEUDONYM_KEY": "sdk-round-trip-" + "k" * 32,
            "KMS_KEY_ID": key_arn,
            "JWT_ISSUER": "https://issuer.invalid",
            "JWT_AUDIENCE": "a",
            "JWT_JWKS_URL": "https://issuer.invalid/jwks",
        }
    )
    context = SimpleNamespace(get_remaining_time_in_millis=lambda: 28_000)  # the API function's timeout
    with retries.invocation_deadline(context):
        stores = build_stores(settings, dynamodb, kms_client=kms)
        memory.set_enabled(stores, "alice", True)
        entry = memory.add(stores, "alice", NewEntryBody(text=TEXT))
        shown = memory.view(stores, "alice")
    stored = dynamodb.scan(TableName=names.entries)["Items"]
    wrapped = dynamodb.scan(TableName=names.keys)["Items"]
    print(
        json.dumps(
            {
                "boto3": boto3.__version__,
                "botocore": botocore.__version__,
                "botocore_file": botocore.__file__,
                "read_back": [e.get("text") for e in shown["items"]] == [TEXT] and entry.text == TEXT,
                "stored_items": len(stored),
                "plaintext_stored": "dentist" in repr(stored) + repr(wrapped),
                "wrapped_keys": len(wrapped),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
