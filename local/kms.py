"""Creates the customer-managed KMS key of infra/encryption.json — the template deployment merges — in a local KMS (moto).

The key's usage, spec, description and rotation come from the template; its policy does not (moto
does not evaluate key policies, and the policy names the deployed roles). An alias gives the key a
name the local settings can carry before the key exists, as `KMS_KEY_ID`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TEMPLATE = Path(__file__).resolve().parent.parent / "infra" / "encryption.json"
KEY_LOGICAL_ID = "MemoryKey"
LOCAL_ALIAS = "alias/personal-memory-local"


def key_definition() -> dict[str, Any]:
    return dict(json.loads(TEMPLATE.read_text())["Resources"][KEY_LOGICAL_ID]["Properties"])


def create_key(client: Any, alias: str = LOCAL_ALIAS) -> str:
    """Create the key and its alias; returns the key's ARN."""
    props = key_definition()
    metadata = client.create_key(
        Description=props["Description"], KeyUsage=props["KeyUsage"], KeySpec=props["KeySpec"]
    )["KeyMetadata"]
    if props.get("EnableKeyRotation"):
        client.enable_key_rotation(KeyId=metadata["KeyId"])
    client.create_alias(AliasName=alias, TargetKeyId=metadata["KeyId"])
    return str(metadata["Arn"])


def create_local_key(endpoint_url: str) -> str:
    """The key in the embedded KMS at `endpoint_url`; the app's KMS client is rebuilt to talk to it."""
    import boto3

    from chalicelib.crypto import kms

    arn = create_key(boto3.client("kms", endpoint_url=endpoint_url, region_name="us-east-1"))
    kms.reset_client()
    return arn
