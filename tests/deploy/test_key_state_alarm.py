"""An operator hears of a change that can make either KMS key unusable, days before DynamoDB would archive a table.

AWS's documentation, quoted:
- DynamoDB API Reference, SSEDescription, InaccessibleEncryptionDateTime: "DynamoDB will initiate the table
  archival process when table's AWS KMS key remains inaccessible for more than seven days from this date."
- EventBridge User Guide, "AWS service events delivered via AWS CloudTrail": CloudTrail sends "AWS API Call via
  CloudTrail" events ("Events that represent a request to a public AWS service API") to the default event bus;
  KMS itself sends "KMS CMK Deletion" and "KMS Imported Key Material Expiration" (EventBridge events reference, KMS).
- EventBridge User Guide, "Monitoring Amazon EventBridge": `TriggeredRules` in `AWS/Events`, dimension
  `RuleName` ("Metrics that specify only the RuleName dimension refer to the default event bus").

The rule's pattern is evaluated here by moto's EventBridge pattern matcher, on events shaped as those pages show.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from infra import compose_template

STACK, ACCOUNT, REGION = "personal-memory", "111122223333", "eu-west-1"
KEY_IDS = {"MemoryKey": "1234abcd-12ab-34cd-56ef-1234567890ab", "AtRestKey": "0987dcba-09fe-87dc-65ba-ab0987654321"}
PSEUDO = {"AWS::StackName": STACK, "AWS::AccountId": ACCOUNT, "AWS::Region": REGION, "AWS::Partition": "aws"}


def _arn(key: str) -> str:
    return f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{KEY_IDS[key]}"


def _resolve(node: Any) -> Any:
    """The template's intrinsic functions as CloudFormation resolves them for one stack."""
    if isinstance(node, list):
        return [_resolve(n) for n in node]
    if isinstance(node, dict):
        if set(node) == {"Ref"}:
            return KEY_IDS.get(node["Ref"]) or PSEUDO[node["Ref"]]
        if set(node) == {"Fn::GetAtt"}:
            return _arn(node["Fn::GetAtt"][0])
        if set(node) == {"Fn::Sub"}:
            return re.sub(r"\$\{([^}]+)\}", lambda m: PSEUDO[m.group(1)], node["Fn::Sub"])
        return {k: _resolve(v) for k, v in node.items()}
    return node


def _matches(event: dict[str, Any]) -> bool:
    from moto.events.models import EventPattern

    pattern = _resolve(compose_template.compose()["Resources"]["KeyStateChangeRule"]["Properties"]["EventPattern"])
    return EventPattern(json.dumps(pattern), pattern).matches_event(event)


def _api_call(name: str, key_id: str) -> dict[str, Any]:
    return {
        "version": "0",
        "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
        "detail-type": "AWS API Call via CloudTrail",
        "source": "aws.kms",
        "account": ACCOUNT,
        "time": "2026-12-04T20:00:00Z",
        "region": REGION,
        "resources": [],
        "detail": {
            "eventVersion": "1.08",
            "eventSource": "kms.amazonaws.com",
            "eventName": name,
            "awsRegion": REGION,
            "requestParameters": {"keyId": key_id},
        },
    }


@pytest.mark.parametrize("key", ["MemoryKey", "AtRestKey"])
@pytest.mark.parametrize("name", ["DisableKey", "ScheduleKeyDeletion", "PutKeyPolicy", "RevokeGrant"])
def test_a_change_that_can_make_a_key_unusable_matches_whatever_form_names_the_key(key: str, name: str) -> None:
    alias = {"MemoryKey": "memory", "AtRestKey": "at-rest"}[key]
    for key_id in (
        KEY_IDS[key],
        _arn(key),
        f"alias/{STACK}-{alias}",
        f"arn:aws:kms:{REGION}:{ACCOUNT}:alias/{STACK}-{alias}",
    ):
        assert _matches(_api_call(name, key_id)), (name, key_id)


def test_kms_own_deletion_event_matches_and_ordinary_use_or_other_keys_do_not() -> None:
    deletion = {
        "version": "0",
        "id": "e9ce3425-7d22-412a-a699-e7a5fc3fbc9a",
        "detail-type": "KMS CMK Deletion",
        "source": "aws.kms",
        "account": ACCOUNT,
        "time": "2026-12-04T20:00:00Z",
        "region": REGION,
        "resources": [_arn("MemoryKey")],
        "detail": {"key-id": KEY_IDS["MemoryKey"]},
    }
    assert _matches(deletion)
    assert not _matches({**deletion, "resources": [f"arn:aws:kms:{REGION}:{ACCOUNT}:key/someone-elses"]})
    assert not _matches(_api_call("Decrypt", KEY_IDS["MemoryKey"]))  # the app's own use is no alarm
    assert not _matches(_api_call("EnableKey", KEY_IDS["MemoryKey"]))
    assert not _matches(_api_call("DisableKey", "9999aaaa-0000-1111-2222-333344445555"))  # another key of the account


def test_the_alarm_counts_the_rule_and_notifies_the_topic() -> None:
    resources = compose_template.compose()["Resources"]
    assert resources["KeyStateChangeRule"]["Type"] == "AWS::Events::Rule"
    assert resources["KeyStateChangeRule"]["Properties"]["State"] == "ENABLED"
    alarm = resources["KmsKeyStateAlarm"]["Properties"]
    assert (alarm["Namespace"], alarm["MetricName"]) == ("AWS/Events", "TriggeredRules")
    assert alarm["Dimensions"] == [{"Name": "RuleName", "Value": {"Ref": "KeyStateChangeRule"}}]
    assert (
        alarm["Statistic"] == "Sum"
        and alarm["Threshold"] == 0
        and alarm["ComparisonOperator"] == "GreaterThanThreshold"
    )
    assert alarm["AlarmActions"] == alarm["OKActions"] == [{"Ref": "AlarmTopicArn"}]
