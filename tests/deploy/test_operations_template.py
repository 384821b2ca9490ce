"""The packaged template tells an operator when something breaks: alarms, access logs, tracing, throttling, safe data.

Every alarm named in docs/deploy.md's runbook exists here and notifies the AlarmTopicArn parameter; every
metric an alarm reads is one that AWS or this code (chalicelib/metrics.py) actually emits.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from chalicelib import metrics
from tests.support.package import Package

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = ("APIHandler", "UserToken", "HandleEventsStream")
TABLES = ("EntriesTable", "ProposalsTable", "JournalTable", "SessionsTable", "EventsTable")
ALL_TABLES = (*TABLES, "KeysTable")
EXPECTED_ALARMS = {
    "DeadLetterQueueNotEmptyAlarm",
    "EventsStreamIteratorAgeAlarm",
    "Api5xxRateAlarm",
    "UserTokenErrorsAlarm",
    "APIHandlerErrorsAlarm",
    "HandleEventsStreamErrorsAlarm",
    "APIHandlerThrottlesAlarm",
    "UserTokenThrottlesAlarm",
    "HandleEventsStreamThrottlesAlarm",
    "KmsKeyStateAlarm",
    "APIHandlerServerErrorsAlarm",
    "APIHandlerUnavailableAlarm",
    "HandleEventsStreamRecordFailuresAlarm",
    "AwsThrottlingAlarm",
    "APIHandlerDurationAlarm",
    "UserTokenDurationAlarm",
    "HandleEventsStreamDurationAlarm",
}


def _alarms(package: Package) -> dict[str, dict[str, Any]]:
    return {
        k: r["Properties"] for k, r in package.template["Resources"].items() if r["Type"] == "AWS::CloudWatch::Alarm"
    }


def _metric_of(props: dict[str, Any], metric_id: str | None = None) -> tuple[str, str, list[dict[str, Any]]]:
    if metric_id is None:
        return props["Namespace"], props["MetricName"], props["Dimensions"]
    stat = next(m for m in props["Metrics"] if m["Id"] == metric_id)["MetricStat"]["Metric"]
    return stat["Namespace"], stat["MetricName"], stat["Dimensions"]


def test_every_alarm_notifies_the_topic_parameter_on_alarm_and_on_recovery(package: Package) -> None:
    alarms = _alarms(package)
    assert set(alarms) == EXPECTED_ALARMS
    assert package.template["Parameters"]["AlarmTopicArn"]["Type"] == "String"
    assert "Default" not in package.template["Parameters"]["AlarmTopicArn"]  # an operator must name one
    for name, props in alarms.items():
        assert props["AlarmActions"] == props["OKActions"] == [{"Ref": "AlarmTopicArn"}], name
        assert props["ActionsEnabled"] is True and props["TreatMissingData"] == "notBreaching", name
        assert props["ComparisonOperator"] == "GreaterThanThreshold", name


def test_the_dead_letter_queue_alarm_fires_on_its_first_message(package: Package) -> None:
    props = _alarms(package)["DeadLetterQueueNotEmptyAlarm"]
    assert _metric_of(props) == (
        "AWS/SQS",
        "ApproximateNumberOfMessagesVisible",
        [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["EventsStreamDeadLetterQueue", "QueueName"]}}],
    )
    assert props["Threshold"] == 0 and props["Statistic"] == "Maximum" and props["EvaluationPeriods"] == 1


def test_iterator_age_errors_and_throttles_watch_each_function(package: Package) -> None:
    alarms = _alarms(package)
    age = alarms["EventsStreamIteratorAgeAlarm"]
    assert _metric_of(age) == (
        "AWS/Lambda",
        "IteratorAge",
        [{"Name": "FunctionName", "Value": {"Ref": "HandleEventsStream"}}],
    )
    assert age["Statistic"] == "Maximum" and 60_000 <= age["Threshold"] <= 3_600_000  # milliseconds behind
    for function in FUNCTIONS:
        throttles = alarms[f"{function}ThrottlesAlarm"]
        assert _metric_of(throttles) == (
            "AWS/Lambda",
            "Throttles",
            [{"Name": "FunctionName", "Value": {"Ref": function}}],
        )
        assert throttles["Statistic"] == "Sum" and throttles["Threshold"] == 0
    for function in ("APIHandler", "HandleEventsStream"):
        errors = alarms[f"{function}ErrorsAlarm"]
        assert _metric_of(errors) == ("AWS/Lambda", "Errors", [{"Name": "FunctionName", "Value": {"Ref": function}}])
        assert errors["Statistic"] == "Sum" and errors["Threshold"] == 0


def test_the_authorizer_alarm_leaves_out_the_tokens_it_refused_on_purpose(package: Package) -> None:
    props = _alarms(package)["UserTokenErrorsAlarm"]
    assert _metric_of(props, "errors") == (
        "AWS/Lambda",
        "Errors",
        [{"Name": "FunctionName", "Value": {"Ref": "UserToken"}}],
    )
    emitted = json.loads(metrics.emf_line("TokenRefused"))
    directive = emitted["_aws"]["CloudWatchMetrics"][0]
    dimensions = [{"Name": k, "Value": emitted[k]} for k in directive["Dimensions"][0]]
    assert _metric_of(props, "refused") == (directive["Namespace"], "TokenRefused", dimensions)  # what the code emits
    returned = [m for m in props["Metrics"] if m.get("ReturnData", True)]
    assert len(returned) == 1 and returned[0]["Expression"] == "FILL(errors, 0) - FILL(refused, 0)"
    assert props["Threshold"] == 0


def test_the_5xx_alarm_reads_this_apis_stage_by_the_name_the_template_gives_it(package: Package) -> None:
    props = _alarms(package)["Api5xxRateAlarm"]
    rest = package.props("RestAPI")
    assert _metric_of(props) == (
        "AWS/ApiGateway",
        "5XXError",
        [{"Name": "ApiName", "Value": rest["Name"]}, {"Name": "Stage", "Value": rest["StageName"]}],
    )
    assert props["Statistic"] == "Average" and 0 < props["Threshold"] < 0.1  # a rate: 5XXError is 0/1 per request


def test_every_alarm_has_a_runbook_section() -> None:
    runbook = (ROOT / "docs" / "deploy.md").read_text()
    for name in EXPECTED_ALARMS:
        assert re.search(rf"^#### `?{name}`?$", runbook, re.MULTILINE), name


def test_access_logs_are_json_without_text_with_request_id_and_caller_kind(package: Package) -> None:
    rest = package.props("RestAPI")
    setting = rest["AccessLogSetting"]
    assert setting["DestinationArn"] == {"Fn::GetAtt": ["ApiAccessLogGroup", "Arn"]}
    assert package.props("ApiAccessLogGroup")["RetentionInDays"] == {"Ref": "LogRetentionInDays"}
    fields = json.loads(setting["Format"])
    assert fields["requestId"] == "$context.requestId" and fields["callerKind"] == "$context.authorizer.callerKind"
    assert fields["route"] == "$context.resourcePath"  # the template path (/v1/memory/{id}), never the ids in it
    assert all(isinstance(v, str) and v.startswith("$context.") for v in fields.values())
    allowed = (
        "$context.requestId",
        "$context.extendedRequestId",
        "$context.requestTime",
        "$context.httpMethod",
        "$context.resourcePath",
        "$context.status",
        "$context.responseLatency",
        "$context.integrationLatency",
        "$context.responseLength",
        "$context.error.responseType",
        "$context.authorizer.",
        "$context.identity.userArn",
    )
    assert all(v.startswith(allowed) for v in fields.values()), fields
    for leaky in (
        "$context.path",
        "$input",
        "$context.identity.sourceIp",
        "querystring",
        "$context.authorizer.principalId",
    ):
        assert leaky not in setting["Format"]
    assert len(setting["Format"]) < 1024  # API Gateway truncates log events over 1024 bytes


def test_the_authorizer_puts_a_caller_kind_and_a_pseudonym_in_the_context(api: Any, client: Any) -> None:
    from chalicelib.logs import user_hash

    event = {
        "type": "TOKEN",
        "authorizationToken": api.headers("alice")["Authorization"],
        "methodArn": "arn:aws:execute-api:us-east-1:123456789012:abcdef/api/GET/v1/memory",
    }
    answer = client.lambda_.invoke("user_token", event).payload
    assert answer["principalId"] == "alice"
    expires = answer["context"].pop("tokenExpires")  # the token's exp: a cached answer never outlives it (app.py)
    assert int(expires) > 0
    assert answer["context"] == {"callerKind": "user", "userHash": user_hash("alice")} and user_hash("alice") != "alice"


def test_tracing_is_active_on_every_function_and_the_stage(package: Package) -> None:
    for function in FUNCTIONS:
        assert package.props(function)["Tracing"] == "Active"
    assert package.props("RestAPI")["TracingEnabled"] is True
    stages = [r["Properties"] for r in package.expanded["Resources"].values() if r["Type"] == "AWS::ApiGateway::Stage"]
    assert len(stages) == 1 and stages[0]["TracingEnabled"] is True


def test_the_stage_is_throttled_by_parameters(package: Package) -> None:
    (setting,) = package.props("RestAPI")["MethodSettings"]
    assert (setting["ResourcePath"], setting["HttpMethod"]) == ("/*", "*")
    assert setting["ThrottlingBurstLimit"] == {"Ref": "ApiThrottlingBurstLimit"}
    assert setting["ThrottlingRateLimit"] == {"Ref": "ApiThrottlingRateLimit"}
    assert setting["DataTraceEnabled"] is False  # execution logs with full requests would hold entry text
    params = package.template["Parameters"]
    assert params["ApiThrottlingBurstLimit"]["Type"] == params["ApiThrottlingRateLimit"]["Type"] == "Number"
    (stage,) = [
        r["Properties"] for r in package.expanded["Resources"].values() if r["Type"] == "AWS::ApiGateway::Stage"
    ]
    assert stage["MethodSettings"][0]["ThrottlingRateLimit"] == {"Ref": "ApiThrottlingRateLimit"}


def test_there_is_one_stage_and_no_extra_stage_named_stage(package: Package) -> None:
    expanded = package.expanded["Resources"]
    stages = [r["Properties"]["StageName"] for r in expanded.values() if r["Type"] == "AWS::ApiGateway::Stage"]
    assert stages == ["api"]
    deployments = [r["Properties"] for r in expanded.values() if r["Type"] == "AWS::ApiGateway::Deployment"]
    assert len(deployments) == 1 and "StageName" not in deployments[0]  # StageName here makes the extra "Stage"


def test_the_account_logging_role_is_set_by_default_and_outlives_the_stack(package: Package) -> None:
    """API Gateway developer guide, "Set up CloudWatch logging for REST APIs": to enable logging, API Gateway
    needs an IAM role ARN set on the account ("CloudWatch log role ARN", per Region) — a stage with access
    logging fails to create in an account and Region without it. So a fresh account's first deploy needs it
    by default. The role is retained on stack deletion: the account setting (AWS::ApiGateway::Account is
    one per account and Region) keeps pointing at a role that exists, so other APIs keep logging."""
    resources = package.template["Resources"]
    assert (
        resources["ApiGatewayAccount"]["Condition"]
        == resources["ApiGatewayLoggingRole"]["Condition"]
        == "CreateApiGatewayLoggingRole"
    )
    assert package.template["Parameters"]["ConfigureApiGatewayLoggingRole"]["Default"] == "true"
    role = resources["ApiGatewayLoggingRole"]
    assert role["DeletionPolicy"] == role["UpdateReplacePolicy"] == "Retain"
    # A stage with access logs fails unless the account's role is set first: when this stack sets it,
    # the API refers to it (so the deployment and the stage come after it).
    condition, when_set, _ = package.props("RestAPI")["Description"]["Fn::If"]
    assert (
        condition == "CreateApiGatewayLoggingRole" and {"Ref": "ApiGatewayAccount"} in when_set["Fn::Sub"][1].values()
    )
    (stage,) = [
        r["Properties"] for r in package.expanded["Resources"].values() if r["Type"] == "AWS::ApiGateway::Stage"
    ]
    assert stage["RestApiId"] == {"Ref": "RestAPI"}


@pytest.mark.parametrize("table", ALL_TABLES)
def test_every_table_refuses_deletion(package: Package, table: str) -> None:
    """All six, the keys table above all: it holds the only copy of every wrapped data key (no backups by
    design), so a DeleteTable there would unreadably shred every user's memory at once."""
    assert package.props(table)["DeletionProtectionEnabled"] is True


def test_the_stream_invokes_the_consumer_only_for_pending_propose_events(package: Package) -> None:
    (mapping,) = [
        r["Properties"]
        for r in package.expanded["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    ]
    (only,) = mapping["FilterCriteria"]["Filters"]
    assert json.loads(only["Pattern"]) == {
        "dynamodb": {"NewImage": {"type": {"S": ["memory.propose"]}, "status": {"S": ["pending"]}}}
    }


def test_every_stream_filter_reads_only_the_dynamodb_key(package: Package) -> None:
    """AWS Lambda Developer Guide, "Using event filtering with a DynamoDB event source" (current): "DynamoDB
    event source mappings only support filtering on the dynamodb key." A record that matches no filter is
    dropped without an error, so a pattern on `eventName` (as older guides showed) could silently starve the
    consumer. The consumer itself skips what it need not handle (chalicelib/services/consumer.py)."""
    mappings = [
        r["Properties"]
        for r in package.expanded["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    ]
    assert mappings
    for mapping in mappings:
        for pattern in mapping["FilterCriteria"]["Filters"]:
            assert set(json.loads(pattern["Pattern"])) == {"dynamodb"}, pattern


def test_the_api_is_regional_so_personal_data_stays_in_its_region(package: Package) -> None:
    """API Gateway developer guide, "API endpoint types for REST APIs": an edge-optimized API is reached
    through CloudFront's points of presence; a Regional API is served from its Region. Requests carry
    people's notes: REGIONAL keeps them where the tables are."""
    (api,) = [
        r["Properties"] for r in package.expanded["Resources"].values() if r["Type"] == "AWS::ApiGateway::RestApi"
    ]
    assert api["EndpointConfiguration"] == {"Types": ["REGIONAL"]} or api["EndpointConfiguration"] == "REGIONAL"


def test_the_dependency_layer_is_named_after_its_stack(package: Package) -> None:
    """Two stacks in one Region must not publish versions of one shared layer name."""
    assert package.props("DependenciesLayer")["LayerName"] == {"Fn::Sub": "${AWS::StackName}-dependencies"}


def test_the_dead_letter_queue_says_what_a_deleted_stack_does_with_it(package: Package) -> None:
    """cfn-lint I3011: a stateful resource states its DeletionPolicy and UpdateReplacePolicy. The queue holds
    shard ids and sequence numbers of failed batches (never record data), which expire with the stream."""
    queue = package.resource("EventsStreamDeadLetterQueue")
    assert queue["DeletionPolicy"] == queue["UpdateReplacePolicy"] == "Delete"


def _emitted(name: str, dimension: tuple[str, str] | None = None) -> tuple[str, str, list[dict[str, Any]]]:
    """The metric (namespace, name, dimensions) CloudWatch makes of the EMF line the code writes."""
    emitted = json.loads(metrics.emf_line(name, dimension))
    directive = emitted["_aws"]["CloudWatchMetrics"][0]
    return directive["Namespace"], name, [{"Name": k, "Value": emitted[k]} for k in directive["Dimensions"][0]]


def test_500s_503s_and_failed_records_alarm_on_what_the_code_emits(package: Package) -> None:
    """Handled errors never reach Lambda's Errors: these alarms read the app's own counts (tests/faults/test_alarm_metrics.py)."""
    alarms = _alarms(package)
    for alarm, name in (
        ("APIHandlerServerErrorsAlarm", "ServerErrors"),
        ("APIHandlerUnavailableAlarm", "Unavailable"),
        ("HandleEventsStreamRecordFailuresAlarm", "RecordFailures"),
    ):
        props = alarms[alarm]
        assert _metric_of(props) == _emitted(name), alarm
        assert props["Statistic"] == "Sum" and props["Threshold"] == 0, alarm
    assert alarms["APIHandlerServerErrorsAlarm"]["EvaluationPeriods"] == 1  # one 500 is a bug: at once


def test_dynamodb_and_kms_throttling_alarm_together(package: Package) -> None:
    props = _alarms(package)["AwsThrottlingAlarm"]
    assert _metric_of(props, "dynamodb") == _emitted("Throttled", ("Api", "dynamodb"))
    assert _metric_of(props, "kms") == _emitted("Throttled", ("Api", "kms"))
    [returned] = [m for m in props["Metrics"] if m.get("ReturnData", True)]
    assert returned["Expression"] == "FILL(dynamodb, 0) + FILL(kms, 0)" and props["Threshold"] == 0


def test_each_function_alarms_before_its_timeout(package: Package) -> None:
    config = json.loads((ROOT / ".chalice" / "config.json").read_text())["stages"]["dev"]
    timeouts = {"APIHandler": "api_handler", "UserToken": "user_token", "HandleEventsStream": "handle_events_stream"}
    for function, name in timeouts.items():
        seconds = config["lambda_functions"][name].get("lambda_timeout", config["lambda_timeout"])
        props = _alarms(package)[f"{function}DurationAlarm"]
        assert _metric_of(props) == ("AWS/Lambda", "Duration", [{"Name": "FunctionName", "Value": {"Ref": function}}])
        assert props["Statistic"] == "Maximum"
        assert 0.6 * seconds * 1000 <= props["Threshold"] < seconds * 1000, function  # milliseconds, below the timeout


def test_each_caller_is_rate_limited_by_token_and_by_ip_on_this_stage(package: Package) -> None:
    """AWS WAF developer guide, "Rate-based rule statement": a rate-based rule counts requests per aggregation key
    (here the Authorization header; and the source IP) over the evaluation window and applies its action to a
    key over the limit. "If a web request doesn't contain the custom key, AWS WAF doesn't apply the rule" — so
    the per-IP rule covers requests without a token, and IAM-signed ones (their SigV4 header differs each time)."""
    acl = package.props("ApiWebAcl")
    assert acl["Scope"] == "REGIONAL" and acl["DefaultAction"] == {"Allow": {}}
    rules = {r["Name"]: r for r in acl["Rules"]}
    token = rules["PerToken"]["Statement"]["RateBasedStatement"]
    assert token["AggregateKeyType"] == "CUSTOM_KEYS" and token["Limit"] == {"Ref": "PerTokenRateLimit"}
    assert [k["Header"]["Name"].lower() for k in token["CustomKeys"]] == ["authorization"]
    ip = rules["PerIp"]["Statement"]["RateBasedStatement"]
    assert ip["AggregateKeyType"] == "IP" and ip["Limit"] == {"Ref": "PerIpRateLimit"}
    for rule in rules.values():
        assert rule["Action"]["Block"]["CustomResponse"]["ResponseCode"] == 429
        assert rule["VisibilityConfig"]["SampledRequestsEnabled"] is False  # sampled requests keep headers: tokens
    body = json.loads(acl["CustomResponseBodies"]["rate-limited"]["Content"])
    assert set(body) == {"code", "message"} and body["code"] == "rate_limited"
    assert acl["VisibilityConfig"]["SampledRequestsEnabled"] is False
    params = package.template["Parameters"]
    assert 10 <= params["PerTokenRateLimit"]["Default"] <= params["PerIpRateLimit"]["Default"]
    # The association names this API's one stage (the SAM expansion resolves the stage reference).
    association = next(
        r["Properties"] for r in package.expanded["Resources"].values() if r["Type"] == "AWS::WAFv2::WebACLAssociation"
    )
    (stage_id,) = [k for k, r in package.expanded["Resources"].items() if r["Type"] == "AWS::ApiGateway::Stage"]
    arn = json.dumps(association["ResourceArn"])
    assert "${RestAPI}" in arn and (f"${{{stage_id}}}" in arn or stage_id in arn), arn
    assert association["WebACLArn"] == {"Fn::GetAtt": ["ApiWebAcl", "Arn"]}


def test_the_consumer_reserves_concurrency_by_default_so_api_traffic_cannot_starve_it(package: Package) -> None:
    assert package.template["Parameters"]["StreamReservedConcurrency"]["Default"] > 0
    reserved = package.props("HandleEventsStream")["ReservedConcurrentExecutions"]["Fn::If"]
    assert reserved[1] == {"Ref": "StreamReservedConcurrency"}
