"""The whole product on one machine, no cloud account: DynamoDB Local and moto's KMS on 127.0.0.1, the tables, the stream pump, the API and page.

Used by `make run` (local/run.py), `make demo`, and the tests that need the real HTTP server.
DynamoDB and its streams are AWS's own DynamoDB Local (local/dynamodb_local.py), the stack's own, or one
already running that MEMORY_DYNAMODB_ENDPOINT names, with MEMORY_TABLE_PREFIX before every table name
(local/shared_dynamodb.py); KMS is moto's server;
one dev clock (local/dev_clock.py) drives the app, the stream's timestamps and the TTL sweeper
(local/ttl_sweeper.py); `.local/stack.json` (beside the credentials file) names the endpoints.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chalicelib.config import TableNames, get_settings, reset_settings
from local.dev_clock import DevClock
from local.dev_tokens import DevTokenIssuer
from local.kms import LOCAL_ALIAS, create_local_key
from local.ttl_sweeper import TtlSweeper

ROOT = Path(__file__).resolve().parent.parent
CREDENTIALS_FILE = ROOT / ".local" / "credentials.json"
STAGE = "local"
TABLES = TableNames(
    entries="memory-entries",
    proposals="memory-proposals",
    journal="memory-journal",
    sessions="memory-sessions",
    events="memory-events",
)


def _names(tables: TableNames) -> tuple[str, ...]:
    return tuple(getattr(tables, f.name) for f in dataclasses.fields(tables))


def _server_class() -> type:
    from chalice.local import ThreadedHTTPServer

    class Server(ThreadedHTTPServer):
        request_queue_size = 128  # the default 5 resets connections when a browser or a test bursts
        allow_reuse_address = True

    return Server


def _Server(*args: Any, **kwargs: Any) -> Any:
    return _server_class()(*args, **kwargs)


def _load_lazy_modules() -> None:
    """Load app.py's lazy modules before the threaded server starts.

    A Lambda container serves one request at a time, so app.py defers its imports
    (chalicelib/lazy.py). The local server is threaded, and Python 3.11's LazyLoader is not
    thread-safe: two first requests at once saw a half-loaded module (AttributeError, a 500).
    """
    import importlib
    from types import ModuleType

    app_module = importlib.import_module("app")
    for value in vars(app_module).values():
        if isinstance(value, ModuleType) and value.__name__.startswith("chalicelib."):
            vars(value)  # any attribute access runs a lazy module's code


@dataclass
class LocalStack:
    host: str = "127.0.0.1"
    port: int = 8000
    credentials_file: Path = CREDENTIALS_FILE
    issuer: DevTokenIssuer = field(default_factory=DevTokenIssuer)
    clock: DevClock = field(default_factory=DevClock)
    ttl_lag_seconds: int = 60
    tables: TableNames = field(default=TABLES, init=False)  # TABLES, behind MEMORY_TABLE_PREFIX if set

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> LocalStack:
        from moto.server import ThreadedMotoServer

        from local import dynamodb_local
        from local.shared_dynamodb import Refused, from_environment, prefixed

        shared = from_environment()  # a refused setting stops the launch before anything starts
        self.tables = prefixed(TABLES, shared.prefix)
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._ddb: dynamodb_local.DynamoDBLocal | None = None
        if shared.endpoint is None:
            self._ddb = dynamodb_local.start()  # AWS's DynamoDB Local: DynamoDB and its streams
            self.dynamodb_url = self._ddb.endpoint
        elif dynamodb_local.answers(shared.endpoint):
            self.dynamodb_url = shared.endpoint  # one already running: no JVM of ours
        else:
            raise Refused(f"MEMORY_DYNAMODB_ENDPOINT={shared.endpoint}: no DynamoDB answers there")
        self._moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)  # KMS only
        self._moto.start()
        moto_host, moto_port = self._moto.get_host_and_port()
        self.moto_url = f"http://{moto_host}:{moto_port}"
        # The tables first: a start refused there (another stack's tables) has not yet replaced the credentials
        # file, which a stack running from the same checkout wrote and its host and worker sign with.
        self._create_tables()
        self._set_environment()
        self.sweeper = TtlSweeper(
            self._dynamodb_client(), self.clock, tables=_names(self.tables), lag_seconds=self.ttl_lag_seconds
        )
        self.kms_key_arn = create_local_key(self.moto_url)  # the template's KMS key, in moto's KMS
        self._start_api()
        self._start_pump()
        self.sweeper.start()
        self._write_stack_file()
        return self

    @property
    def shares_dynamodb(self) -> bool:
        """Whether the tables live on a DynamoDB already running (MEMORY_DYNAMODB_ENDPOINT), not the stack's own."""
        return self._ddb is None

    def _dynamodb_client(self) -> Any:
        import boto3

        keys = {"aws_access_key_id": "local", "aws_secret_access_key": "local"}  # before _set_environment too
        return boto3.client("dynamodb", endpoint_url=self.dynamodb_url, region_name="us-east-1", **keys)

    @property
    def stack_file(self) -> Path:
        return self.credentials_file.parent / "stack.json"

    def _write_stack_file(self) -> None:
        """What a person needs to look at the raw tables with the AWS CLI or boto3 (README)."""
        description = {
            "api": self.url,
            "dynamodb_endpoint": self.dynamodb_url,
            "dynamodbstreams_endpoint": self.dynamodb_url,
            "kms_endpoint": self.moto_url,
            "region": "us-east-1",
            "aws_access_key_id": "local",
            "aws_secret_access_key": "local",
            "tables": {
                name: getattr(self.tables, name)
                for name in ("entries", "proposals", "journal", "sessions", "events", "keys")
            },
            "kms_key": self.kms_key_arn,
            "events_stream_arn": self.stream_arn,
            "credentials_file": str(self.credentials_file),
        }
        self.stack_file.parent.mkdir(parents=True, exist_ok=True)
        partial = self.stack_file.with_suffix(".json.partial")  # renamed whole: a reader never sees half of it
        partial.write_text(json.dumps(description, indent=2) + "\n")
        partial.replace(self.stack_file)

    def _set_environment(self) -> None:
        from local.sigv4 import generate_principals, write_credentials

        self.principals = generate_principals()
        write_credentials(self.credentials_file, self.principals)
        env = {
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_DEFAULT_REGION": "us-east-1",
            # Per service (botocore's AWS_ENDPOINT_URL_<SERVICE_ID>): DynamoDB Local for DynamoDB and its
            # streams, moto for KMS and anything else.
            "AWS_ENDPOINT_URL": self.moto_url,
            "AWS_ENDPOINT_URL_DYNAMODB": self.dynamodb_url,
            "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": self.dynamodb_url,
            "AWS_ENDPOINT_URL_KMS": self.moto_url,
            "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
            "ENTRIES_TABLE": self.tables.entries,
            "PROPOSALS_TABLE": self.tables.proposals,
            "JOURNAL_TABLE": self.tables.journal,
            "SESSIONS_TABLE": self.tables.sessions,
            "EVENTS_TABLE": self.tables.events,
            "KEYS_TABLE": self.tables.keys,
            "KMS_KEY_ID": LOCAL_ALIAS,
            "JWT_ISSUER": self.issuer.issuer,
            "JWT_AUDIENCE": self.issuer.audience,
            "JWT_JWKS": self.issuer.jwks_json(),
            "JWT_JWKS_URL": "",
            "HOST_ROLE_ARNS": self.principals["host"].arn,
            "WORKER_ROLE_ARNS": self.principals["worker"].arn,
            "OPERATOR_ROLE_ARNS": self.principals["operator"].arn,
            # The page's dev sign-in form, unless the environment names an OIDC provider for the page (a test's, on
            # 127.0.0.1: tests/browser/test_oauth_oidc_sign_in.py); `/dev/token` is there either way.
            "MEMORY_DEV_SIGN_IN": "" if os.environ.get("OIDC_AUTHORIZE_URL") else "1",
            "OAUTH_INSECURE_METADATA_HOSTS": "127.0.0.1",  # the tests serve client metadata documents on loopback
            # ... over https too, with a certificate a test made: the CA file it names is trusted for those hosts only
            "OAUTH_METADATA_CA_FILE": os.environ.get("OAUTH_METADATA_CA_FILE", ""),
            "LOG_PSEUDONYM_KEY": secrets.token_urlsafe(32),  # a new one per launch: nothing outlives the stack
        }
        os.environ.update(env)
        reset_settings()
        from chalicelib.bootstrap import build_stores, reset_stores
        from chalicelib.storage.dynamo import get_client, reset_client

        reset_client()
        reset_stores(build_stores(get_settings(), get_client(), clock=self.clock))
        from local.faults import from_environment

        # MEMORY_FAULT_RATE / MEMORY_FAULT_SEED: that share of the app's DynamoDB and KMS calls fails (inert unset).
        self.faults = from_environment()
        if self.faults is not None:
            from chalicelib.crypto import kms

            self.faults.attach(get_client())
            self.faults.attach(kms.get_client())

    def _create_tables(self) -> None:
        from local.shared_dynamodb import Refused
        from local.tables import create_tables

        client = self._dynamodb_client()
        try:
            self.stream_arn = create_tables(client, self.tables)["events_stream"]
        except client.exceptions.ResourceInUseException:
            raise Refused(
                f"{self.dynamodb_url} already has a table named {self.tables.entries} or like it (another stack's?): "
                "set MEMORY_TABLE_PREFIX to a prefix of this stack's own"
            ) from None

    def _start_api(self) -> None:
        from chalice.cli import CLIFactory
        from chalice.local import CustomLocalChalice, LocalChalice, LocalDevServer

        from local.gateway import DevRoutes, MemoryRequestHandler

        config = CLIFactory(str(ROOT), environ=os.environ).create_config_obj(chalice_stage_name=STAGE)
        self.app = config.chalice_app
        _load_lazy_modules()
        if not isinstance(self.app, LocalChalice):
            # As `chalice local` does: the current request becomes thread-local, so concurrent
            # requests on the threaded server never see each other's request.
            CustomLocalChalice.__bases__ = (LocalChalice, type(self.app))
            self.app.__class__ = CustomLocalChalice
        dev = DevRoutes(mint=self.issuer.mint, clock=self.clock, sweeper=self.sweeper)
        handler = functools.partial(MemoryRequestHandler, principals=self.principals, dev=dev)
        self._server = LocalDevServer(self.app, config, self.host, self.port, handler_cls=handler, server_cls=_Server)
        self.port = self._server.server.server_address[1]
        if os.environ.get("OIDC_AUTHORIZE_URL") and not os.environ.get("OIDC_REDIRECT_URI"):
            os.environ["OIDC_REDIRECT_URI"] = self.url + "/"  # the page itself, once its port is known
            reset_settings()
        thread = threading.Thread(target=self._server.server.serve_forever, name="api", daemon=True)
        thread.start()

    def _start_pump(self) -> None:
        import importlib

        from chalicelib.storage.dynamo import get_client
        from local.lambda_context import consumer_context
        from local.stream_pump import StreamPump, create_streams_client, wake_on_events_write

        consumer = importlib.import_module("app").handle_events_stream

        def deliver(event: dict[str, Any]) -> Any:
            return consumer(event, consumer_context())  # a fresh context (and deadline) per batch, as Lambda's

        from local.event_filter import template_filter  # the event source mapping's FilterCriteria

        self.pump = StreamPump(
            create_streams_client(self.dynamodb_url),
            self.stream_arn,
            deliver,
            record_filter=template_filter(),
            clock=self.clock,
        )
        # Polled as soon as the app has written to the events table (its records come only from the app's
        # writes and the TTL sweeper's), and every few seconds besides, as a backstop.
        wake_on_events_write(get_client(), self.tables.events, self.pump.wake)
        self.pump.start(interval=3.0)

    def token(self, user_id: str) -> str:
        return self.issuer.mint(user_id)

    def stop(self) -> None:
        self.sweeper.stop()
        self.pump.stop()
        self._server.server.shutdown()
        self._server.server.server_close()
        self._moto.stop()
        if self._ddb is not None:
            self._ddb.stop()
        else:  # on a DynamoDB we share, the tables go as an in-memory DynamoDB Local's would (their KMS key just did)
            from local.tables import delete_tables

            delete_tables(self._dynamodb_client(), self.tables)
