"""Deploy what moto can: the SAM translator's expansion of the packaged template, created in moto's CloudFormation.

moto is not CloudFormation. Left out, each for a reason seen on this machine (moto 5.2.5):
- AWS::ApiGateway::Deployment: moto ignores the RestApi's OpenAPI `Body`, so the API has no methods
  and the deployment fails ("The REST API doesn't contain any methods"); tests/deploy/test_gateway_rules.py
  checks that body against API Gateway's import rules instead;
- AWS::ApiGateway::Stage and AWS::CloudWatch::Alarm: no moto CloudFormation support (it warns and
  skips them). The alarms are created here through moto's CloudWatch API from the template's own
  properties instead, so botocore validates every one of them against the PutMetricAlarm model.
moto's CloudFormation also drops a function's Architectures, Layers and TracingConfig (it creates
x86_64 functions without layers): those are asserted on the template in tests/deploy/test_gateway_rules.py.
"""

from __future__ import annotations

import contextlib
import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.deploy.test_operations_template import EXPECTED_ALARMS
from tests.support.package import Package

# The WAF web ACL and its association: moto's CloudFormation makes neither; test_operations_template checks them.
LEFT_TO_OTHER_TESTS = (
    "AWS::ApiGateway::Deployment",
    "AWS::ApiGateway::Stage",
    "AWS::CloudWatch::Alarm",
    "AWS::WAFv2::WebACL",
    "AWS::WAFv2::WebACLAssociation",
)
STACK = "personal-memory"
BUCKET = "placeholder-bucket"  # where infra/sam_transform.py points the code, as `aws cloudformation package` would


@dataclass(frozen=True)
class Deployed:
    """What the tests read of the stack moto created, taken while its account was alive."""

    stack: dict[str, Any]
    status: str
    tables: dict[str, dict[str, Any]]
    functions: dict[str, dict[str, Any]]
    mappings: list[dict[str, Any]]
    queue_arn: str


@contextlib.contextmanager
def _moto_account() -> Iterator[Any]:
    """A fresh moto account with fake credentials and no endpoint override, for as long as the block runs."""
    import boto3
    from moto import mock_aws

    with pytest.MonkeyPatch.context() as env:
        for key, value in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }.items():
            env.setenv(key, value)
        for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
            env.delenv(key, raising=False)
        with mock_aws():
            yield boto3.session.Session(region_name="us-east-1")


@pytest.fixture(scope="session")
def deployed(package: Package) -> Deployed:
    """Create the stack once (~20 s, more on a busy machine) and keep what the tests read; moto's account
    is gone before any test runs, so no other test ever shares it. Session-scoped: the package's tests
    run on one xdist worker, but other tests come between them there, and a module scope was rebuilt."""
    with _moto_account() as cloud:
        stack = _create_stack(cloud, package)
        dynamodb, lam = cloud.client("dynamodb"), cloud.client("lambda")
        tables = {
            k: dynamodb.describe_table(TableName=stack["resources"][k]["PhysicalResourceId"])["Table"]
            for k, r in stack["template"]["Resources"].items()
            if r["Type"] == "AWS::DynamoDB::Table" and k in stack["resources"]
        }
        functions = {
            k: lam.get_function_configuration(FunctionName=stack["resources"][k]["PhysicalResourceId"])
            for k in ("APIHandler", "UserToken", "HandleEventsStream")
        }
        mappings = lam.list_event_source_mappings(FunctionName=functions["HandleEventsStream"]["FunctionName"])[
            "EventSourceMappings"
        ]
        queue_url = stack["resources"]["EventsStreamDeadLetterQueue"]["PhysicalResourceId"]
        queue_arn = cloud.client("sqs").get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        status = cloud.client("cloudformation").describe_stacks(StackName=STACK)["Stacks"][0]["StackStatus"]
    return Deployed(stack, status, tables, functions, mappings, queue_arn)


def _create_stack(cloud: Any, package: Package) -> dict[str, Any]:
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    for name in ("deployment.zip", "layer-deployment.zip"):
        s3.upload_file(str(package.out / name), BUCKET, name)
    topic = cloud.client("sns").create_topic(Name="memory-alarms")["TopicArn"]
    template = json.loads(json.dumps(package.expanded))
    left_out = {k for k, r in template["Resources"].items() if r["Type"] in LEFT_TO_OTHER_TESTS}
    for logical_id in left_out:
        del template["Resources"][logical_id]
    params = {
        "JwtIssuer": "https://issuer.example",
        "JwtAudience": "client-1",
        "JwtJwksUrl": "https://issuer.example/.well-known/jwks.json",
        "AlarmTopicArn": topic,
        # The account-wide API Gateway logging role (on by default) is asserted on the template in
        # tests/deploy/test_operations_template.py; here the conditional resources stay out.
        "ConfigureApiGatewayLoggingRole": "false",
        "LogPseudonymKey": "k" * 43,
    }  # NoEcho, MinLength 32: make deploy makes one (scripts/deploy.py)
    cfn = cloud.client("cloudformation")
    with warnings.catch_warnings():  # moto warns when it skips a resource type: nothing left in may be skipped
        warnings.simplefilter("error", UserWarning)
        cfn.create_stack(
            StackName=STACK,
            TemplateBody=json.dumps(template),
            Capabilities=["CAPABILITY_IAM"],
            Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in params.items()],
        )
    summaries = cfn.list_stack_resources(StackName=STACK)["StackResourceSummaries"]
    return {
        "template": template,
        "left_out": left_out,
        "topic": topic,
        "resources": {s["LogicalResourceId"]: s for s in summaries if s["LogicalResourceId"]},
    }


def test_the_stack_and_every_resource_moto_supports_reach_create_complete(deployed: Deployed, package: Package) -> None:
    assert deployed.status == "CREATE_COMPLETE"
    conditional = {
        k for k, r in deployed.stack["template"]["Resources"].items() if "Condition" in r
    }  # turned off above
    expected = set(deployed.stack["template"]["Resources"]) - conditional
    created = deployed.stack["resources"]
    assert set(created) == expected
    assert {k: s["ResourceStatus"] for k, s in created.items()} == dict.fromkeys(expected, "CREATE_COMPLETE")
    left = {r["Type"] for k, r in package.expanded["Resources"].items() if k in deployed.stack["left_out"]}
    assert left == set(LEFT_TO_OTHER_TESTS)  # nothing else had to be taken out


def test_the_tables_exist_with_keys_stream_and_deletion_protection(deployed: Deployed) -> None:
    for logical_id in ("EntriesTable", "ProposalsTable", "JournalTable", "SessionsTable", "EventsTable", "KeysTable"):
        table = deployed.tables[logical_id]
        assert table["TableStatus"] == "ACTIVE" and table["DeletionProtectionEnabled"] is True, logical_id
        assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    events = deployed.tables["EventsTable"]
    assert events["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}


def test_the_functions_the_mapping_and_the_dead_letter_queue_are_wired(deployed: Deployed) -> None:
    for logical_id, config in deployed.functions.items():
        assert config["Runtime"] == "python3.13", logical_id
    assert deployed.functions["APIHandler"]["Timeout"] == 28
    (mapping,) = deployed.mappings
    stream = deployed.tables["EventsTable"]["LatestStreamArn"]
    assert mapping["EventSourceArn"] == stream and mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["DestinationConfig"]["OnFailure"]["Destination"] == deployed.queue_arn
    assert set(json.loads(mapping["FilterCriteria"]["Filters"][0]["Pattern"])) == {"dynamodb"}


def _resolve(value: Any, refs: dict[str, str], attributes: dict[tuple[str, str], str]) -> Any:
    """The few intrinsic functions the alarms use, resolved against the created stack."""
    if isinstance(value, list):
        return [_resolve(v, refs, attributes) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"Ref"}:
        return refs[value["Ref"]]
    if set(value) == {"Fn::GetAtt"}:
        return attributes[tuple(value["Fn::GetAtt"])]
    if set(value) == {"Fn::Sub"}:
        return re.sub(r"\$\{([\w:]+)\}", lambda m: refs[m.group(1)], value["Fn::Sub"])
    return {k: _resolve(v, refs, attributes) for k, v in value.items()}


def test_every_alarm_is_accepted_by_cloudwatch_and_notifies_the_topic(deployed: Deployed, package: Package) -> None:
    with _moto_account() as cloud:
        _put_every_alarm(cloud, deployed.stack, package)


def _put_every_alarm(cloud: Any, stack: dict[str, Any], package: Package) -> None:
    refs = {k: s["PhysicalResourceId"] for k, s in stack["resources"].items()}
    refs.update({"AlarmTopicArn": stack["topic"], "AWS::StackName": STACK})
    queue_url = refs["EventsStreamDeadLetterQueue"]
    attributes = {("EventsStreamDeadLetterQueue", "QueueName"): queue_url.rsplit("/", 1)[1]}
    cloudwatch = cloud.client("cloudwatch")
    alarms = {
        k: r["Properties"] for k, r in package.expanded["Resources"].items() if r["Type"] == "AWS::CloudWatch::Alarm"
    }
    assert set(alarms) == EXPECTED_ALARMS
    for logical_id, props in alarms.items():
        cloudwatch.put_metric_alarm(AlarmName=logical_id, **_resolve(props, refs, attributes))  # botocore validates
    described = {a["AlarmName"]: a for a in cloudwatch.describe_alarms()["MetricAlarms"]}
    assert set(described) == set(alarms)
    for alarm in described.values():
        assert alarm["AlarmActions"] == alarm["OKActions"] == [stack["topic"]]
    dlq = described["DeadLetterQueueNotEmptyAlarm"]
    assert dlq["Dimensions"] == [
        {"Name": "QueueName", "Value": attributes[("EventsStreamDeadLetterQueue", "QueueName")]}
    ]
    assert described["Api5xxRateAlarm"]["Dimensions"][0] == {"Name": "ApiName", "Value": f"{STACK}-api"}
