"""The two keys' policies, evaluated the way AWS's documentation says IAM evaluates them, against the calls they must let through.

MemoryKey wraps the users' data keys and nothing else; AtRestKey encrypts the five data tables and the log
groups (DynamoDB and CloudWatch Logs use it, nobody calls it directly). The keys table uses neither: see
test_the_keys_table_is_under_no_key_of_ours below for why (DynamoDB archives a table whose key is unusable).

moto's KMS does not evaluate key policies, so these tests hold the template to AWS's rules, quoted:

- AWS KMS guide, "Grants in AWS KMS" (docs.aws.amazon.com/kms/latest/developerguide/grants.html):
  "A grant is a policy instrument that allows AWS principals or AWS service principals to use KMS keys
  in cryptographic operations ... When authorizing access to a KMS key, grants are considered along
  with key policies and IAM policies." and "Grants are commonly used by AWS services that integrate
  with AWS KMS to encrypt your data at rest." A grant cannot outvote an explicit Deny in the key
  policy (IAM guide, "Policy evaluation logic": an explicit deny in any policy overrides any allow).
- IAM guide, "IAM JSON policy elements: Condition operators": "If the key that you specify in a policy
  condition is not present in the request context, the values do not match and the condition is
  false. If the policy condition requires that the key is not matched, such as StringNotLike or
  ArnNotLike, and the right key is not present, the condition is true." — so a Deny whose only
  exemption is `kms:ViaService` or `aws:PrincipalArn` (…NotEquals) catches DynamoDB's and CloudWatch
  Logs' own service-principal calls, which carry neither.
- IAM guide, "AWS global condition context keys": `aws:PrincipalIsAWSService` tells whether the call
  is made by an AWS service principal (e.g. `dynamodb.amazonaws.com`, `logs.<region>.amazonaws.com`).
  Both Deny statements now apply only where it is false (`BoolIfExists`: absent counts as not a service).
"""

from __future__ import annotations

import fnmatch
import json
import re
from typing import Any

import pytest

from infra import compose_template

STACK, ACCOUNT, REGION = "personal-memory", "111122223333", "eu-west-1"
API_ROLE = f"arn:aws:iam::{ACCOUNT}:role/{STACK}-api"
STREAM_ROLE = f"arn:aws:iam::{ACCOUNT}:role/{STACK}-stream"
OTHER_ROLE = f"arn:aws:iam::{ACCOUNT}:role/memory-support"
LOG_GROUP = f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:{STACK}-ApiAccessLogGroup-AbC123"
PSEUDO = {"AWS::StackName": STACK, "AWS::AccountId": ACCOUNT, "AWS::Region": REGION, "AWS::Partition": "aws"}


def _value(value: Any) -> Any:
    if isinstance(value, list):
        return [_value(v) for v in value]
    if isinstance(value, dict) and "Fn::Sub" in value:
        return re.sub(r"\$\{([^}]+)\}", lambda m: PSEUDO[m.group(1)], value["Fn::Sub"])
    if isinstance(value, dict) and "Ref" in value:
        return PSEUDO[value["Ref"]]
    return value


def _condition(operator: str, key: str, wanted: Any, context: dict[str, Any]) -> bool:
    """One condition, with the missing-key rules quoted in the module docstring."""
    wanted = [str(v) for v in (_value(wanted) if isinstance(_value(wanted), list) else [_value(wanted)])]
    present = key in context
    if operator == "Null":
        return (not present) == (wanted == ["true"])
    if operator.startswith("ForAllValues:"):
        return all(v in wanted for v in context.get(key, []))
    base, if_exists = (operator[:-8], True) if operator.endswith("IfExists") else (operator, False)
    if not present:
        return if_exists or "Not" in base
    actual = str(context[key]).lower() if base == "Bool" else str(context[key])
    if base in ("StringEquals", "ArnEquals", "Bool"):
        return actual in [w.lower() if base == "Bool" else w for w in wanted]
    if base in ("StringNotEquals", "ArnNotEquals"):
        return actual not in wanted
    if base in ("ArnLike", "StringLike"):
        return any(fnmatch.fnmatchcase(actual, w) for w in wanted)
    raise NotImplementedError(operator)


def _applies(statement: dict[str, Any], action: str, context: dict[str, Any]) -> bool:
    actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
    if not any(fnmatch.fnmatchcase(action, a) for a in actions):
        return False
    return all(
        _condition(op, key, wanted, context)
        for op, keys in statement.get("Condition", {}).items()
        for key, wanted in keys.items()
    )


def _principal_matches(statement: dict[str, Any], context: dict[str, Any]) -> bool:
    principal = statement["Principal"]
    if principal == "*" or principal.get("AWS") == "*":
        return True
    if "Service" in principal:
        return context.get("principal_service") == _value(principal["Service"])
    return context.get("aws:PrincipalAccount") == ACCOUNT  # the account root: IAM policies in the account decide


def decide(action: str, context: dict[str, Any], key: str = "MemoryKey") -> str:
    statements = compose_template.compose()["Resources"][key]["Properties"]["KeyPolicy"]["Statement"]
    matching = [s for s in statements if _principal_matches(s, context) and _applies(s, action, context)]
    if any(s["Effect"] == "Deny" for s in matching):
        return "denied:" + ",".join(s["Sid"] for s in matching if s["Effect"] == "Deny")
    return "allowed" if matching else "not allowed"


def _service(name: str, **context: Any) -> dict[str, Any]:
    return {"aws:PrincipalIsAWSService": "true", "principal_service": name, "kms:CallerAccount": ACCOUNT, **context}


def _role(arn: str, **context: Any) -> dict[str, Any]:
    return {
        "aws:PrincipalIsAWSService": "false",
        "aws:PrincipalArn": arn,
        "aws:PrincipalAccount": ACCOUNT,
        "kms:CallerAccount": ACCOUNT,
        **context,
    }


@pytest.mark.parametrize("action", ["kms:Decrypt", "kms:GenerateDataKey", "kms:Encrypt", "kms:ReEncryptFrom"])
def test_dynamodbs_own_calls_through_its_grant_are_not_denied(action: str) -> None:
    """The at-rest key's background calls come from the service principal, with no kms:ViaService and no role ARN."""
    context = _service(f"dynamodb.{REGION}.amazonaws.com")
    assert not decide(action, context, "AtRestKey").startswith("denied"), decide(action, context, "AtRestKey")
    with_arn = {**context, "aws:PrincipalArn": "dynamodb.amazonaws.com"}
    assert not decide(action, with_arn, "AtRestKey").startswith("denied"), decide(action, with_arn, "AtRestKey")


def test_a_role_using_a_table_through_dynamodb_is_allowed_the_at_rest_key_and_nothing_else() -> None:
    context = _role(OTHER_ROLE, **{"kms:ViaService": f"dynamodb.{REGION}.amazonaws.com"})
    assert decide("kms:Decrypt", context, "AtRestKey") == "allowed"
    assert decide("kms:Decrypt", _role(OTHER_ROLE), "AtRestKey").startswith("denied:OnlyDynamoDBAndCloudWatchLogsUseIt")
    assert decide("kms:Decrypt", _role(API_ROLE), "AtRestKey").startswith(
        "denied"
    )  # not even the app's roles, directly


def test_the_wrapping_key_serves_no_table_and_no_log_group() -> None:
    """No AWS service uses the wrapping key on the stack's behalf: nothing can be archived because of it."""
    through_dynamodb = _role(
        OTHER_ROLE,
        **{
            "kms:ViaService": f"dynamodb.{REGION}.amazonaws.com",
            "kms:EncryptionContext:user_id": "alice",
            "kms:EncryptionContextKeys": ["user_id"],
        },
    )
    assert decide("kms:Decrypt", through_dynamodb).startswith("denied:NobodyElse")
    for action in ("kms:Decrypt", "kms:GenerateDataKey", "kms:CreateGrant"):
        assert decide(action, _service(f"dynamodb.{REGION}.amazonaws.com")) == "not allowed", action
        logs = _service(f"logs.{REGION}.amazonaws.com", **{"kms:EncryptionContext:aws:logs:arn": LOG_GROUP})
        assert decide(action, logs) == "not allowed", action


@pytest.mark.parametrize("action", ["kms:GenerateDataKey", "kms:Decrypt", "kms:Encrypt"])
def test_cloudwatch_logs_encrypts_this_stacks_log_groups_and_no_other(action: str) -> None:
    logs = _service(f"logs.{REGION}.amazonaws.com", **{"kms:EncryptionContext:aws:logs:arn": LOG_GROUP})
    assert decide(action, logs, "AtRestKey") == "allowed"
    elsewhere = {
        **logs,
        "kms:EncryptionContext:aws:logs:arn": f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:someone-else",
    }
    assert decide(action, elsewhere, "AtRestKey") == "not allowed"


def test_the_exemption_is_for_aws_services_only_every_other_caller_is_still_denied() -> None:
    user = {"kms:EncryptionContext:user_id": "alice", "kms:EncryptionContextKeys": ["user_id"]}
    assert decide("kms:Decrypt", _role(API_ROLE, **user)) == "allowed"
    assert decide("kms:GenerateDataKey", _role(STREAM_ROLE, **user)) == "allowed"
    assert decide("kms:Decrypt", _role(OTHER_ROLE, **user)).startswith("denied:NobodyElse")
    assert decide("kms:GenerateDataKey", _role(API_ROLE)).startswith("denied:NoDataKeyWithoutAUserContext")
    # A request that somehow lacked aws:PrincipalIsAWSService is treated as not a service (BoolIfExists).
    unknown = {k: v for k, v in _role(OTHER_ROLE, **user).items() if k != "aws:PrincipalIsAWSService"}
    assert decide("kms:Decrypt", unknown).startswith("denied")
    # An AWS service principal gets only what an Allow gives it: SQS, say, gets nothing.
    assert decide("kms:Decrypt", _service(f"sqs.{REGION}.amazonaws.com", **user)) == "not allowed"


@pytest.mark.parametrize(
    "log_group", ["ApiHandlerLogGroup", "UserTokenLogGroup", "HandleEventsStreamLogGroup", "ApiAccessLogGroup"]
)
def test_every_log_group_is_encrypted_with_the_at_rest_key(log_group: str) -> None:
    """The access log holds identity.userArn (staff names in role session names); the functions' logs ids.

    CloudWatch Logs guide, "Encrypt log data in CloudWatch Logs using AWS KMS": a log group's
    `KmsKeyId` names the key, and the key policy must let `logs.<region>.amazonaws.com` use it under
    the condition `kms:EncryptionContext:aws:logs:arn` (the log group's ARN). CloudFormation names an
    unnamed log group `<stack>-<logical id>-<suffix>`, which the key policy's pattern covers.
    """
    resource = compose_template.compose()["Resources"][log_group]
    assert resource["Properties"]["KmsKeyId"] == {"Fn::GetAtt": ["AtRestKey", "Arn"]}
    assert "LogGroupName" not in resource["Properties"]


def test_the_keys_table_is_under_no_key_of_ours_and_the_data_tables_under_the_at_rest_key() -> None:
    """DynamoDB API Reference, ArchivalSummary, ArchivalReason: "INACCESSIBLE_ENCRYPTION_CREDENTIALS - The table
    was archived due to the table's AWS KMS key being inaccessible for more than seven days. An On-Demand backup
    was created at the archival time." (and SSEDescription, InaccessibleEncryptionDateTime: "DynamoDB will initiate
    the table archival process when table's AWS KMS key remains inaccessible for more than seven days").

    With one key for both jobs, a wrapping key left disabled for a week would have made DynamoDB back up the keys
    table, the one table that must have no copy (a forgotten user's wrapped key would live on in that backup).
    So the keys table is encrypted with AWS's own key (SSEEnabled false: no customer key, nothing to archive it
    for; its items are wrapped keys, already ciphertext under MemoryKey), and the five data tables with AtRestKey,
    which wraps nothing: archiving them keeps only ciphertext of text whose keys stay in the keys table.
    """
    template = compose_template.compose()
    resources = template["Resources"]
    tables = {k: r["Properties"] for k, r in resources.items() if r.get("Type") == "AWS::DynamoDB::Table"}
    assert tables["KeysTable"]["SSESpecification"] == {"SSEEnabled": False}
    for name, props in tables.items():
        if name != "KeysTable":
            assert props["SSESpecification"] == {
                "SSEEnabled": True,
                "SSEType": "KMS",
                "KMSMasterKeyId": {"Ref": "AtRestKey"},
            }, name
    assert "MemoryKey" not in json.dumps(tables)
    # The wrapping key is what the functions name; the at-rest key is never given to them.
    for function in ("APIHandler", "UserToken", "HandleEventsStream"):
        assert resources[function]["Properties"]["Environment"]["Variables"]["KMS_KEY_ID"] == {"Ref": "MemoryKey"}
    assert "AtRestKey" not in json.dumps([resources[f] for f in ("APIHandler", "UserToken", "HandleEventsStream")])
    for key in ("MemoryKey", "AtRestKey"):
        assert (
            resources[key]["DeletionPolicy"] == "Retain" and resources[key]["Properties"]["EnableKeyRotation"] is True
        )
