"""`make package` builds a template that deploys what the design promises: tables, wiring, event source, least privilege.

scripts/package.sh runs once per session (it takes a while); every test reads its output.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from chalicelib.config import load_settings
from chalicelib.errors import Forbidden, Unauthorized
from chalicelib.storage.entry_items import EXPIRY_ATTRIBUTE
from infra import compose_template, layer
from infra.dynamodb_access import UnreadableAccess, by_function, repository_actions, repository_calls
from infra.dynamodb_access import resource as policy_resource
from tests.support.package import Package

ROOT = Path(__file__).resolve().parents[2]
TABLES = ("EntriesTable", "ProposalsTable", "JournalTable", "SessionsTable", "EventsTable", "KeysTable")
TABLE_ENV = {
    "ENTRIES_TABLE": "EntriesTable",
    "PROPOSALS_TABLE": "ProposalsTable",
    "JOURNAL_TABLE": "JournalTable",
    "SESSIONS_TABLE": "SessionsTable",
    "EVENTS_TABLE": "EventsTable",
    "KEYS_TABLE": "KeysTable",
    "KMS_KEY_ID": "MemoryKey",
}
# The wrapped data keys: a backup of them would keep forgotten text readable (docs/encryption.md).
UNRECOVERABLE_TABLES = {"KeysTable"}
JWT_ENV = {"JWT_ISSUER": "JwtIssuer", "JWT_AUDIENCE": "JwtAudience", "JWT_JWKS_URL": "JwtJwksUrl"}
SECRET_ENV = {"LOG_PSEUDONYM_KEY": "LogPseudonymKey"}  # the logs' pseudonym key (chalicelib/logs.py), NoEcho
API_ONLY_ENV = {
    "HOST_ROLE_ARNS": "HostRoleArns",
    "WORKER_ROLE_ARNS": "WorkerRoleArns",
    "OPERATOR_ROLE_ARNS": "OperatorRoleArns",
    "OAUTH_REDIRECT_HOSTS": "OAuthRedirectHosts",  # docs/oauth.md: where an app's redirect URI may point
    "OAUTH_RESERVED_NAMES": "OAuthReservedNames",  # docs/oauth.md: client names kept to their clients' hosts
    "OIDC_AUTHORIZE_URL": "OidcAuthorizeUrl",
    "OIDC_TOKEN_URL": "OidcTokenUrl",
    "OIDC_CLIENT_ID": "OidcClientId",
    "OIDC_REDIRECT_URI": "OidcRedirectUri",
    "OIDC_SCOPE": "OidcScope",
}
# Chalice function name → (template logical id, its role, its log group).
FUNCTIONS = {
    "api_handler": ("APIHandler", "ApiHandlerRole", "ApiHandlerLogGroup"),
    "user_token": ("UserToken", "UserTokenRole", "UserTokenLogGroup"),
    "handle_events_stream": ("HandleEventsStream", "HandleEventsStreamRole", "HandleEventsStreamLogGroup"),
}
EVENT_SOURCE = "HandleEventsStreamDynamodbEventSource"
DLQ = "EventsStreamDeadLetterQueue"
STREAM_READ = {"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}
# The only "*" resources: dynamodb:ListStreams and X-Ray's two write actions have no resource-level
# permission (docs/deploy.md).
XRAY_WRITE = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
STAR_RESOURCE_ALLOWED = {("HandleEventsStreamRole", "dynamodb:ListStreams")} | {
    (role, action) for _, role, _ in FUNCTIONS.values() for action in XRAY_WRITE
}
MAX_APP_ZIP_BYTES = 5_000_000


def _actions(statement: dict[str, Any]) -> list[str]:
    action = statement["Action"]
    return [action] if isinstance(action, str) else list(action)


def _get_att(logical_id: str, attribute: str) -> dict[str, Any]:
    return {"Fn::GetAtt": [logical_id, attribute]}


# ---- tables -------------------------------------------------------------------------------------


def test_every_table_comes_unchanged_from_the_file_the_local_stack_uses(package: Package) -> None:
    source = json.loads((ROOT / "infra" / "tables.json").read_text())["Resources"]
    assert set(source) == set(TABLES)
    for logical_id in TABLES:
        assert package.resource(logical_id) == source[logical_id]


@pytest.mark.parametrize("logical_id", TABLES)
def test_each_table_is_on_demand_encrypted_recoverable_and_retained(package: Package, logical_id: str) -> None:
    table = package.resource(logical_id)
    assert table["Type"] == "AWS::DynamoDB::Table"
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"
    props = table["Properties"]
    assert props["BillingMode"] == "PAY_PER_REQUEST" and "ProvisionedThroughput" not in props
    if (
        logical_id == "KeysTable"
    ):  # AWS's own key: no key of ours can get it archived with a backup (docs/encryption.md)
        assert props["SSESpecification"] == {"SSEEnabled": False}
    else:
        assert props["SSESpecification"] == {
            "SSEEnabled": True,
            "SSEType": "KMS",
            "KMSMasterKeyId": {"Ref": "AtRestKey"},
        }
    recoverable = props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"]
    assert recoverable is (logical_id not in UNRECOVERABLE_TABLES)


def test_entries_expire_by_the_attribute_the_code_writes_and_events_stream_new_images(package: Package) -> None:
    assert package.props("EntriesTable")["TimeToLiveSpecification"] == {
        "AttributeName": EXPIRY_ATTRIBUTE,
        "Enabled": True,
    }
    assert package.props("EventsTable")["TimeToLiveSpecification"]["Enabled"] is True
    assert package.props("EventsTable")["StreamSpecification"] == {"StreamViewType": "NEW_IMAGE"}
    assert all("StreamSpecification" not in package.props(t) for t in TABLES if t != "EventsTable")


def test_the_keys_table_keeps_no_copy_of_a_deleted_key_and_text_keys_expire_with_their_text(package: Package) -> None:
    """Issue 26: what is deleted from the keys table is gone (no PITR, no stream, no global replica); a text key's
    row carries the text's expiry as its TTL, under the attribute the code writes, and sits in the user's partition."""
    from chalicelib.storage import keys

    props = package.props("KeysTable")
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": False}
    assert "StreamSpecification" not in props and "Replicas" not in props and "KinesisStreamSpecification" not in props
    assert props["TimeToLiveSpecification"] == {"AttributeName": keys.EXPIRY_ATTRIBUTE, "Enabled": True}
    assert [k["AttributeName"] for k in props["KeySchema"]] == ["user_id", "sk"]
    assert package.resource("KeysTable")["Type"] == "AWS::DynamoDB::Table"


# ---- functions: environment, logs -------------------------------------------------------------


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_each_function_reads_its_settings_from_refs_and_can_load_them(package: Package, function: str) -> None:
    logical_id = FUNCTIONS[function][0]
    variables = package.props(logical_id)["Environment"]["Variables"]
    expected = {**TABLE_ENV, **JWT_ENV, **SECRET_ENV, **(API_ONLY_ENV if function == "api_handler" else {})}
    assert variables == {name: {"Ref": target} for name, target in expected.items()}
    assert not {"MEMORY_DEV_SIGN_IN", "JWT_JWKS"} & set(variables)  # no dev sign-in, no inline keys deployed
    defaults = {
        name: package.template["Parameters"].get(ref["Ref"], {}).get("Default") for name, ref in variables.items()
    }
    stand_in = {
        name: defaults[name]
        or ("https://issuer.example" if name.startswith("JWT_") else "x" * (43 if name in SECRET_ENV else 1))
        for name in variables
    }
    load_settings(
        stand_in
    )  # the function's config (parameters at their defaults) is complete: no ConfigError at its first request


def test_parameters_exist_jwt_ones_are_required_and_role_lists_default_to_nobody(package: Package) -> None:
    params = package.template["Parameters"]
    referenced = {target for target in {**JWT_ENV, **API_ONLY_ENV}.values()}
    assert referenced <= set(params)
    assert all("Default" not in params[name] for name in JWT_ENV.values())
    for name in ("HostRoleArns", "WorkerRoleArns", "OperatorRoleArns"):
        pattern = re.compile(params[name]["AllowedPattern"])
        assert params[name]["Default"] == ""
        assert pattern.fullmatch("") and pattern.fullmatch(
            "arn:aws:iam::123456789012:role/host, arn:aws:sts::123456789012:assumed-role/host/s1"
        )
        for wrong in ("*", "arn:aws:iam::123456789012:role/*", "arn:aws:iam::123456789012:role/a;rm", "host"):
            assert not pattern.fullmatch(wrong), wrong


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_each_function_logs_to_its_own_group_with_a_retention(package: Package, function: str) -> None:
    logical_id, _, group = FUNCTIONS[function]
    assert package.props(logical_id)["LoggingConfig"]["LogGroup"] == {"Ref": group}
    assert package.resource(group)["Type"] == "AWS::Logs::LogGroup"
    assert package.props(group)["RetentionInDays"] == {"Ref": "LogRetentionInDays"}


# ---- the events stream --------------------------------------------------------------------------


def test_the_consumer_reads_the_events_tables_real_stream_with_partial_failures_and_a_dead_letter_queue(
    package: Package,
) -> None:
    source = package.props("HandleEventsStream")["Events"][EVENT_SOURCE]
    assert source["Type"] == "DynamoDB"
    props = source["Properties"]
    assert props["Stream"] == _get_att("EventsTable", "StreamArn")
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["BisectBatchOnFunctionError"] is True
    assert isinstance(props["MaximumRetryAttempts"], int) and 0 <= props["MaximumRetryAttempts"] <= 10
    assert isinstance(props["MaximumRecordAgeInSeconds"], int) and 60 <= props["MaximumRecordAgeInSeconds"] <= 86_400
    assert props["DestinationConfig"]["OnFailure"]["Destination"] == _get_att(DLQ, "Arn")
    assert package.resource(DLQ)["Type"] == "AWS::SQS::Queue"
    assert package.props(DLQ)["SqsManagedSseEnabled"] is True
    assert "placeholder" not in json.dumps(package.template)


def test_the_deployed_event_source_mapping_keeps_those_settings(package: Package) -> None:
    mappings = [
        r["Properties"]
        for r in package.expanded["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    ]
    assert len(mappings) == 1
    mapping = mappings[0]
    assert mapping["EventSourceArn"] == _get_att("EventsTable", "StreamArn")
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BisectBatchOnFunctionError"] is True
    assert mapping["DestinationConfig"]["OnFailure"]["Destination"] == _get_att(DLQ, "Arn")


# ---- the API: authorization and gateway responses -----------------------------------------------


def test_every_route_has_the_authorization_its_decorator_declares(package: Package) -> None:
    from chalice.app import ChaliceAuthorizer, IAMAuthorizer

    from app import app

    swagger = package.props("RestAPI")["DefinitionBody"]
    schemes = swagger["securityDefinitions"]
    assert schemes["sigv4"]["x-amazon-apigateway-authtype"] == "awsSigv4"  # API Gateway's AWS_IAM
    token = schemes["user_token"]["x-amazon-apigateway-authorizer"]
    assert token["type"] == "token" and schemes["user_token"]["name"] == "Authorization"
    assert "${UserToken.Arn}" in token["authorizerUri"]["Fn::Sub"]
    cors = {path for path, methods in app.routes.items() if any(entry.cors for entry in methods.values())}
    assert cors == OAUTH_CORS_ROUTES  # never a /v1 route (docs/oauth.md: CORS on the OAuth endpoints only)
    assert {path: set(methods) for path, methods in swagger["paths"].items()} == {
        path: {m.lower() for m in methods} | ({"options"} if path in cors else set())
        for path, methods in app.routes.items()
    }
    for path in cors:  # API Gateway answers the preflight itself (a mock integration), before any authorizer
        preflight = swagger["paths"][path]["options"]
        integration = preflight["x-amazon-apigateway-integration"]
        assert preflight.get("security") is None and integration["type"] == "mock"
        allowed = integration["responses"]["default"]["responseParameters"]
        assert allowed["method.response.header.Access-Control-Allow-Origin"] == "'*'"
        assert "Access-Control-Allow-Credentials" not in json.dumps(allowed)
    for path, methods in app.routes.items():
        for method, entry in methods.items():
            security = swagger["paths"][path][method.lower()].get("security")
            if isinstance(entry.authorizer, IAMAuthorizer):
                assert security == [{"sigv4": []}], (method, path)
            elif isinstance(entry.authorizer, ChaliceAuthorizer):
                assert security == [{"user_token": []}], (method, path)
            else:  # public (the page), or a connection token's route, which checks the token in-app (a 401, not 403)
                assert security is None and (not path.startswith("/v1/") or path in CONNECTION_TOKEN_ROUTES), (
                    method,
                    path,
                )


# Routes a browser-based MCP client calls from script (the OAuth discovery documents, token, registration,
# revocation): the only ones with CORS.
OAUTH_CORS_ROUTES = frozenset(
    {
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/.well-known/oauth-protected-resource/mcp",
        "/oauth/token",
        "/oauth/register",
        "/oauth/revoke",
    }
)


# The agent routes take a connection token, checked by the view itself (tests/routes/test_agent_connection.py):
# API Gateway would turn a token authorizer's deny into 403, and the contract wants 401.
CONNECTION_TOKEN_ROUTES = frozenset({"/v1/agent/memory", "/v1/agent/proposals", "/v1/agent/proposals/{event_id}"})


def _gateway_responses(swagger: dict[str, Any]) -> dict[str, tuple[str | None, dict[str, Any]]]:
    found = swagger["x-amazon-apigateway-gateway-responses"]
    return {
        kind: (r.get("statusCode"), json.loads(r["responseTemplates"]["application/json"])) for kind, r in found.items()
    }


def test_gateway_refusals_answer_in_the_contracts_error_shape(package: Package) -> None:
    responses = _gateway_responses(package.props("RestAPI")["DefinitionBody"])
    assert responses["UNAUTHORIZED"] == ("401", {"code": "unauthorized", "message": Unauthorized.default_message})
    for kind in ("ACCESS_DENIED", "MISSING_AUTHENTICATION_TOKEN", "INVALID_SIGNATURE", "EXPIRED_TOKEN"):
        status, body = responses[kind]
        assert status == "403" and body["code"] == "forbidden" and set(body) == {"code", "message"}
    assert responses["ACCESS_DENIED"][1]["message"] == Forbidden.default_message
    assert responses["DEFAULT_4XX"][0] is None and responses["DEFAULT_4XX"][1]["code"] == "invalid_request"
    assert responses["DEFAULT_5XX"][0] is None and responses["DEFAULT_5XX"][1]["code"] == "internal_error"
    deployed = [r for r in package.expanded["Resources"].values() if r["Type"] == "AWS::ApiGateway::RestApi"]
    assert _gateway_responses(deployed[0]["Properties"]["Body"]) == responses  # part of every API deployment


# ---- least privilege ----------------------------------------------------------------------------


def test_each_function_has_its_own_role_from_its_own_policy_file() -> None:
    dev = json.loads((ROOT / ".chalice" / "config.json").read_text())["stages"]["dev"]
    assert dev["autogen_policy"] is False
    files = {name: settings["iam_policy_file"] for name, settings in dev["lambda_functions"].items()}
    assert set(files) == set(FUNCTIONS) and len(set(files.values())) == len(files)


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_no_role_has_a_wildcard_action_or_an_unknown_one(package: Package, function: str) -> None:
    logical_id, role, _ = FUNCTIONS[function]
    assert package.props(logical_id)["Role"] == _get_att(role, "Arn")
    from cfnlint.data.AdditionalSpecs import __path__ as specs

    known = json.loads((Path(specs[0]) / "Policies.json").read_text())
    for statement in package.statements(role):
        assert statement["Effect"] == "Allow" and "NotAction" not in statement and "NotResource" not in statement
        for action in _actions(statement):
            service, _, name = action.partition(":")
            assert "*" not in action and name.lower() in known[service]["Actions"], action
            if statement["Resource"] == "*":
                assert (role, action) in STAR_RESOURCE_ALLOWED
            else:
                assert isinstance(statement["Resource"], dict), statement  # a Ref/GetAtt, never a literal ARN
        assert "dynamodb:Scan" not in _actions(statement)


def _grants(package: Package, role: str) -> dict[str, set[str]]:
    """Resource (as JSON) → actions, over the role's statements."""
    grants: dict[str, set[str]] = {}
    for statement in package.statements(role):
        grants.setdefault(json.dumps(statement["Resource"], sort_keys=True), set()).update(_actions(statement))
    return grants


def _expected(tables: dict[str, set[str]], group: str, extra: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    expected = {
        json.dumps(policy_resource(t), sort_keys=True): {f"dynamodb:{a}" for a in acts} for t, acts in tables.items()
    }
    expected[json.dumps(_get_att(group, "Arn"), sort_keys=True)] = {"logs:CreateLogStream", "logs:PutLogEvents"}
    expected[json.dumps("*")] = set(XRAY_WRITE)  # active tracing: every function sends its segments
    for resource, actions in (extra or {}).items():
        expected[resource] = expected.get(resource, set()) | actions
    return expected


MEMORY_KEY = {json.dumps(_get_att("MemoryKey", "Arn"), sort_keys=True): {"kms:Decrypt", "kms:GenerateDataKey"}}


def test_the_api_role_reaches_exactly_the_tables_and_actions_its_code_uses(package: Package) -> None:
    assert _grants(package, "ApiHandlerRole") == _expected(
        by_function()["api_handler"], "ApiHandlerLogGroup", MEMORY_KEY
    )


def test_the_consumer_role_reaches_its_stream_its_tables_and_the_dead_letter_queue_only(package: Package) -> None:
    extra = {
        json.dumps(_get_att("EventsTable", "StreamArn"), sort_keys=True): STREAM_READ,
        json.dumps("*"): {"dynamodb:ListStreams"},
        json.dumps(_get_att(DLQ, "Arn"), sort_keys=True): {"sqs:SendMessage"},
        **MEMORY_KEY,
    }
    expected = _expected(by_function()["handle_events_stream"], "HandleEventsStreamLogGroup", extra)
    assert _grants(package, "HandleEventsStreamRole") == expected


def test_the_authorizer_role_can_only_write_its_logs(package: Package) -> None:
    assert _grants(package, "UserTokenRole") == _expected({}, "UserTokenLogGroup")


def test_the_code_reader_sees_transactions_and_refuses_what_it_cannot_attribute(tmp_path: Path) -> None:
    repo = tmp_path / "things.py"
    repo.write_text(
        "class ThingsRepository:\n"
        "    def drop(self, key):\n        return {'Delete': {'Key': key}}\n"
        "    def wipe(self, key):\n        self._client.delete_item(Key=key)\n        return self.drop(key)\n"
    )
    assert repository_actions(repo) == {"drop": {"DeleteItem"}, "wipe": {"DeleteItem"}}
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("def f(stores):\n    table = stores.entries\n    return table.load('u')\n")
    with pytest.raises(UnreadableAccess):
        repository_calls(sneaky)


# ---- lint, zips, composition --------------------------------------------------------------------


def test_cfn_lint_finds_nothing_in_the_template_or_its_expansion(package: Package) -> None:
    """package.sh ran cfn-lint on both (any finding, informational too, fails the build) and kept what it said."""
    findings = package.build / "lint" / "cfn-lint.json"
    assert json.loads(findings.read_text()) == [], findings.read_text()[:3000]


def test_the_layer_carries_the_pinned_sdk_and_the_app_zip_carries_only_the_app(package: Package) -> None:
    """The functions import the boto3/botocore the tests run with, never the runtime's copy (its version varies
    by Region and date; 1.43.11 was seen, older than what the deadline hook used: docs/deploy.md, "The AWS SDK")."""
    app_zip, layer_zip = package.out / "deployment.zip", package.out / "layer-deployment.zip"
    names = {path.name: zipfile.ZipFile(path).namelist() for path in (app_zip, layer_zip)}
    app_tops = {n.split("/")[0] for n in names["deployment.zip"]}
    assert not {"boto3", "botocore", "s3transfer"} & app_tops
    for listing in names.values():
        assert not any(n.endswith("chalice/local.py") or "__pycache__" in n for n in listing)
    assert "app.py" in names["deployment.zip"]
    site = layer.SITE
    listing = names["layer-deployment.zip"]
    import boto3
    import botocore

    assert layer.sdk_problems(layer_zip, ROOT / "requirements.txt") == []
    pins = layer.pinned_versions(ROOT / "requirements.txt")
    assert pins == {"boto3": boto3.__version__, "botocore": botocore.__version__}  # the versions this suite runs
    assert f"{site}botocore-{botocore.__version__}.dist-info/METADATA" in listing
    assert any(n.startswith(site + "jwt/") for n in listing)
    assert any(
        n.startswith(site + "cryptography/hazmat/bindings/_rust") for n in listing
    )  # AES-GCM and PyJWT[crypto]: one crypto library
    assert not any(n.startswith(site + p) for n in listing for p in ("rsa/", "ecdsa/", "pyasn1/"))
    assert app_zip.stat().st_size < MAX_APP_ZIP_BYTES
    # Measured: 7.96 MB zipped without the SDK, 25.6 MB with it (botocore alone ~30 MB unzipped).
    assert app_zip.stat().st_size + layer_zip.stat().st_size < 35_000_000
    unzipped = sum(i.file_size for path in (app_zip, layer_zip) for i in zipfile.ZipFile(path).infolist())
    assert unzipped < 250_000_000  # Lambda's limit for a function and its layers
    assert "deployment.zip:" in package.log and "layer-deployment.zip:" in package.log


def test_a_layer_without_the_pinned_sdk_fails_the_package_check(tmp_path: Path) -> None:
    """`make package` (step 6) refuses a layer that would leave the functions on the runtime's SDK."""
    bare = tmp_path / "layer.zip"
    with zipfile.ZipFile(bare, "w") as archive:
        archive.writestr(f"{layer.SITE}jwt/__init__.py", "")
        archive.writestr(f"{layer.SITE}botocore/__init__.py", "")
        archive.writestr(f"{layer.SITE}botocore-1.43.11.dist-info/METADATA", "")
    problems = layer.sdk_problems(bare, ROOT / "requirements.txt")
    assert any("boto3" in p for p in problems) and any("botocore" in p for p in problems)
    checked = subprocess.run(
        [sys.executable, str(ROOT / "infra" / "layer.py"), "check-sdk", str(bare), str(ROOT / "requirements.txt")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 1 and "botocore" in checked.stderr


def test_the_zips_alone_verify_both_token_algorithms(package: Package, issuer: Any, tmp_path: Path) -> None:
    """The function zip and the layer's distributions check RS256 and ES256 tokens in an interpreter that
    sees nothing but them and the standard library.

    The layer's binaries are for python3.13 on arm64 and cannot load here (infra/layer.py checks them);
    the same distributions, at the same versions, built for this interpreter stand in for them.
    """
    zipfile.ZipFile(package.out / "deployment.zip").extractall(tmp_path / "task")
    task = tmp_path / "task"
    host_site = task / "python/lib/python3.11/site-packages"
    # uv (the venv's installer, Makefile) when it is there: ~2 s against pip's ~20 s; the same pinned wheels.
    uv = Path(sys.executable).with_name("uv")
    installer = (
        [str(uv), "pip", "install", "--python", sys.executable]
        if uv.exists()
        else [sys.executable, "-m", "pip", "install"]
    )
    subprocess.run(
        [*installer, "-q", "--target", str(host_site), "--only-binary", ":all:", "-r", str(ROOT / "requirements.txt")],
        check=True,
        capture_output=True,
        timeout=600,
    )
    layer_dists = {
        n.split("/")[4]
        for n in zipfile.ZipFile(package.out / "layer-deployment.zip").namelist()
        if n.split("/")[4].endswith(".dist-info")
    }
    assert layer_dists == {p.name for p in host_site.iterdir() if p.name.endswith(".dist-info")}
    given = {
        "jwks": issuer.jwks(),
        "issuer": issuer.issuer,
        "audience": issuer.audience,
        "tokens": [issuer.mint("alice"), issuer.mint("alice", algorithm="ES256"), issuer.mint("alice") + "=="],
    }
    probe = (
        "import json, sys\n"
        f"sys.path[:0] = [{str(task)!r}, {str(task / 'python/lib/python3.11/site-packages')!r}]\n"
        "from chalicelib.auth.tokens import TokenVerifier\nfrom chalicelib.config import JwtSettings\n"
        "from chalicelib.errors import Unauthorized\n"
        "given = json.load(sys.stdin)\n"
        "verifier = TokenVerifier(JwtSettings(given['issuer'], given['audience'], None, given['jwks']))\n"
        "def user(token):\n"
        "    try:\n        return verifier.user_id('Bearer ' + token)\n"
        "    except Unauthorized:\n        return None\n"
        "import cryptography\n"
        "print(json.dumps({'users': [user(t) for t in given['tokens']], 'cryptography': cryptography.__file__,\n"
        "                  'unwanted': sorted(m for m in ('rsa', 'ecdsa', 'boto3') if m in sys.modules)}))"
    )
    run = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe], input=json.dumps(given), capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout)
    assert seen["users"] == ["alice", "alice", None]
    assert seen["cryptography"].startswith(str(task)) and seen["unwanted"] == []


def test_the_two_template_parts_may_not_set_the_same_value() -> None:
    assert compose_template.merge({"a": {"b": 1}}, {"a": {"c": 2}}) == {"a": {"b": 1, "c": 2}}
    with pytest.raises(ValueError, match="a.b"):
        compose_template.merge({"a": {"b": 1}}, {"a": {"b": 2}})


# ---- the KMS key: per-user data keys, the tables' encryption at rest ------------------------------


def _key_statements(package: Package) -> dict[str, dict[str, Any]]:
    return {s["Sid"]: s for s in package.props("MemoryKey")["KeyPolicy"]["Statement"]}


def test_the_memory_key_rotates_and_only_the_api_and_consumer_roles_get_data_keys_with_a_user_context(
    package: Package,
) -> None:
    key = package.resource("MemoryKey")
    assert key["Type"] == "AWS::KMS::Key" and key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"
    statements = _key_statements(package)
    names = {role: package.props(role)["RoleName"]["Fn::Sub"] for role in ("ApiHandlerRole", "HandleEventsStreamRole")}
    arns = [{"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/" + name} for name in names.values()]
    allow = statements["DataKeysForTheApiAndConsumerRolesWithAUserContext"]
    assert allow["Effect"] == "Allow" and set(allow["Action"]) == {"kms:GenerateDataKey", "kms:Decrypt"}
    assert allow["Condition"]["ArnEquals"]["aws:PrincipalArn"] == arns
    assert allow["Condition"]["ForAllValues:StringEquals"] == {"kms:EncryptionContextKeys": ["user_id"]}
    assert allow["Condition"]["Null"] == {"kms:EncryptionContext:user_id": "false"}
    deny = statements["NobodyElseUnwrapsOrMakesDataKeys"]
    assert deny["Effect"] == "Deny" and {"kms:Decrypt", "kms:GenerateDataKey"} <= set(deny["Action"])
    assert deny["Condition"]["ArnNotEquals"]["aws:PrincipalArn"] == arns
    no_context = statements["NoDataKeyWithoutAUserContext"]
    assert no_context["Effect"] == "Deny" and no_context["Condition"]["Null"] == {
        "kms:EncryptionContext:user_id": "true"
    }
    admin = statements["AccountAdministersTheKeyButCannotUseIt"]
    assert not {"kms:Decrypt", "kms:GenerateDataKey", "kms:Encrypt", "kms:*"} & set(admin["Action"])
    # No AWS service uses the wrapping key: tables and logs are under AtRestKey (tests/deploy/test_key_policy.py).
    assert not any(
        "Service" in s["Principal"] or "kms:ViaService" in json.dumps(s.get("Condition", {}))
        for s in statements.values()
    )


def test_no_role_but_the_api_and_consumer_may_use_the_memory_key(package: Package) -> None:
    for role in ("UserTokenRole",):
        assert not any(a.startswith("kms:") for s in package.statements(role) for a in _actions(s))
    for role in ("ApiHandlerRole", "HandleEventsStreamRole"):
        [kms] = [s for s in package.statements(role) if any(a.startswith("kms:") for a in _actions(s))]
        assert kms["Resource"] == _get_att("MemoryKey", "Arn")
        assert kms["Condition"]["ForAllValues:StringEquals"] == {"kms:EncryptionContextKeys": ["user_id"]}
