"""Personal memory's routes: each reads the request, calls one service function and returns. Nothing else."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import AuthResponse, Chalice, CORSConfig, IAMAuthorizer, Response
from chalice.app import Request

from chalicelib.errors import Unauthorized
from chalicelib.lazy import lazy_module
from chalicelib.logs import user_hash
from chalicelib.metrics import count
from chalicelib.oauth.http import answer as oauth_answer
from chalicelib.oauth.http import form as oauth_form
from chalicelib.oauth.http import oauth_errors
from chalicelib.storage.retries import within_the_invocation
from chalicelib.web_api import (
    contract_errors,
    json_response,
    log_requests,
    page_asset,
    path_id,
    query_int,
    refuse_token,
    required_query,
    tagged_response,
    user_id_of,
)

if TYPE_CHECKING:
    from chalicelib import bootstrap, config
    from chalicelib.auth import callers, tokens
    from chalicelib.services import (
        agent_grants,
        agents,
        connected,
        connections,
        consumer,
        freshness,
        memory,
        oauth,
        operators,
    )
else:  # each Lambda function loads only what its handlers touch (see chalicelib/lazy.py)
    bootstrap, config = lazy_module("chalicelib.bootstrap"), lazy_module("chalicelib.config")
    callers, tokens = lazy_module("chalicelib.auth.callers"), lazy_module("chalicelib.auth.tokens")
    agents, consumer = lazy_module("chalicelib.services.agents"), lazy_module("chalicelib.services.consumer")
    memory, operators = lazy_module("chalicelib.services.memory"), lazy_module("chalicelib.services.operators")
    freshness, agent_grants = (
        lazy_module("chalicelib.services.freshness"),
        lazy_module("chalicelib.services.agent_grants"),
    )
    connections, connected = (
        lazy_module("chalicelib.services.connections"),
        lazy_module("chalicelib.services.connected"),
    )
    oauth = lazy_module("chalicelib.services.oauth")


def get_stores() -> bootstrap.Stores:
    return bootstrap.get_stores()


def get_settings() -> config.Settings:
    return config.get_settings()


app = Chalice(app_name="personal-memory")
iam = IAMAuthorizer()
# Every route takes any Content-Type (bodies are parsed as JSON whatever it says), so a wrong header
# gets the contract's answer instead of Chalice's own 415 body.
ANY_BODY = ["*/*"]

app.register_middleware(log_requests, "http")
# Every AWS call a handler makes gives up before the invocation's deadline: a 503 (or a record reported
# in batchItemFailures) rather than Lambda's timeout and API Gateway's 502/504.
app.register_middleware(within_the_invocation, "http")
app.register_middleware(within_the_invocation, "dynamodb")

# Replaced at packaging time by the events table's real stream ARN (see infra/, `make package`).
EVENTS_STREAM_ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/personal-memory-events/stream/placeholder"


# API Gateway caches the authorizer's answer per token (the Authorization header) for this long: a user's
# requests within it skip the authorizer. The answer carries the token's expiry and every user route checks it
# (web_api.user_id_of), so a cached answer never outlives its token (docs/deploy.md, "Authorizer cache").
AUTHORIZER_TTL_SECONDS = 300


@app.authorizer(ttl_seconds=AUTHORIZER_TTL_SECONDS)
def user_token(auth_request):  # type: ignore[no-untyped-def]
    """Chalice built-in authorizer: a valid OIDC JWT lets its `sub` through; anything else is 401."""
    try:
        user_id, expires = tokens.get_verifier(get_settings().jwt).user_and_expiry(auth_request.token)
    except Unauthorized as exc:
        count("TokenRefused")  # Lambda counts the refusal below in Errors; the alarm subtracts these
        refuse_token(exc)
    # The context reaches the access log ($context.authorizer.*): a caller kind and a pseudonym, no id.
    # routes=["*"]: one cached answer serves all of the user's routes (a per-route policy would 403 the next route).
    context = {"callerKind": "user", "userHash": user_hash(user_id) or "", "tokenExpires": str(expires)}
    return AuthResponse(routes=["*"], principal_id=user_id, context=context)


def _request() -> Request:
    """The request being served (Chalice sets it before any view runs; None only outside a request)."""
    request = app.current_request
    if request is None:
        raise RuntimeError("no current request")
    return request


def _user() -> str:
    return user_id_of(_request())


def _body() -> bytes | None:
    raw = _request().raw_body
    return raw.encode("utf-8") if isinstance(raw, str) else raw


def _if_none_match() -> str | None:
    value = _request().headers.get("if-none-match")
    return str(value) if value is not None else None


def _caller(kind: str) -> str:
    """The IAM caller's ARN if it is in the stage's list for `kind`; 403 for anyone else."""
    return callers.require(get_settings(), _request().context, kind)


# ---- the Memory page (public: the data behind it needs a token) ------------------------------


@app.route("/", methods=["GET"], content_types=ANY_BODY)
def page() -> Response:
    path = str(_request().context.get("path") or "/")
    if not path.endswith("/"):  # the stage root without its slash: relative asset URLs need it
        return Response(body="", status_code=301, headers={"Location": path + "/"})
    return page_asset("index.html", get_settings().page)


@app.route("/assets/{name}", methods=["GET"], content_types=ANY_BODY)
def asset(name: str) -> Response:
    return page_asset(name, get_settings().page)


@app.route("/page-config", methods=["GET"], content_types=ANY_BODY)
def page_config() -> Response:
    return json_response(dict(get_settings().page))


# ---- the user's memory (bearer token) --------------------------------------------------------


@app.route("/v1/memory", methods=["GET"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def get_memory():  # type: ignore[no-untyped-def]
    body, etag = freshness.view(get_stores(), _user(), freshness.MEMORY, _if_none_match())
    return tagged_response(body, etag)


@app.route("/v1/memory/settings", methods=["PUT"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def put_settings():  # type: ignore[no-untyped-def]
    from chalicelib.schemas import SettingsBody, parse_body  # pydantic loads on first use, not at cold start

    body = parse_body(SettingsBody, _body())
    return json_response(memory.set_enabled(get_stores(), _user(), body.enabled))


@app.route("/v1/memory", methods=["POST"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def post_entry():  # type: ignore[no-untyped-def]
    from chalicelib.schemas import NewEntryBody, parse_body  # pydantic loads on first use, not at cold start

    body = parse_body(NewEntryBody, _body())
    return json_response(memory.add(get_stores(), _user(), body).public(), 201)


@app.route("/v1/memory/{id}", methods=["PATCH"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def patch_entry(id):  # type: ignore[no-untyped-def]
    from chalicelib.schemas import EntryChangesBody, parse_body  # pydantic loads on first use, not at cold start

    body = parse_body(EntryChangesBody, _body())
    return json_response(memory.edit(get_stores(), _user(), id, body).public())


@app.route("/v1/memory/{id}", methods=["DELETE"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def delete_entry(id):  # type: ignore[no-untyped-def]
    memory.forget(get_stores(), _user(), id)
    return json_response(None, 204)


@app.route("/v1/memory", methods=["DELETE"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def delete_all():  # type: ignore[no-untyped-def]
    return json_response(memory.forget_all(get_stores(), _user()))


@app.route("/v1/memory/{id}/accept", methods=["POST"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def accept_proposal(id):  # type: ignore[no-untyped-def]
    from chalicelib.schemas import AcceptBody, parse_body  # pydantic loads on first use, not at cold start

    raw = _body()
    body = parse_body(AcceptBody, raw) if raw else None  # no body: accepted as proposed
    return json_response(memory.accept(get_stores(), _user(), id, body).public(), 201)


@app.route("/v1/memory/{id}/reject", methods=["POST"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def reject_proposal(id):  # type: ignore[no-untyped-def]
    memory.reject(get_stores(), _user(), id)
    return json_response(None, 204)


@app.route("/v1/memory/journal", methods=["GET"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def get_journal():  # type: ignore[no-untyped-def]
    request = _request()
    cursor = request.query_params.get("cursor") if request.query_params else None
    limit = query_int(request, "limit", default=50, low=1, high=100)
    return json_response(memory.journal_page(get_stores(), _user(), cursor, limit))


@app.route("/v1/memory/export", methods=["GET"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def get_export():  # type: ignore[no-untyped-def]
    return json_response(memory.export(get_stores(), _user()))


@app.route("/v1/inbox", methods=["GET"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def get_inbox():  # type: ignore[no-untyped-def]
    body, etag = freshness.view(get_stores(), _user(), freshness.INBOX, _if_none_match())
    return tagged_response(body, etag)


# ---- the agents the user allows (bearer token) --------------------------------------------------


@app.route("/v1/agents", methods=["GET"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def get_agents():  # type: ignore[no-untyped-def]
    request = _request()
    cursor = request.query_params.get("next") if request.query_params else None
    limit = query_int(request, "limit", default=agent_grants.DEFAULT_PAGE, low=1, high=agent_grants.MAX_PAGE)
    return json_response(agent_grants.list_agents(get_stores(), _user(), limit=limit, cursor=cursor))


@app.route("/v1/agents/{id}", methods=["PUT"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def put_agent(id):  # type: ignore[no-untyped-def]
    from chalicelib.schemas import AgentSwitchesBody, parse_body  # pydantic loads on first use, not at cold start

    body = parse_body(AgentSwitchesBody, _body())
    return json_response(
        agent_grants.set_switches(get_stores(), _user(), path_id(id), read=body.read, propose=body.propose)
    )


@app.route("/v1/agents/{id}/forget", methods=["POST"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def forget_agent(id):  # type: ignore[no-untyped-def]
    from chalicelib.schemas import ForgetAgentBody, parse_body  # pydantic loads on first use, not at cold start

    raw = _body()
    body = parse_body(ForgetAgentBody, raw) if raw else ForgetAgentBody()  # no body: everything from the agent
    return json_response(agent_grants.forget_agent(get_stores(), _user(), path_id(id), body.session_id))


# ---- the person's connections for their own agents (bearer token) --------------------------------


@app.route("/v1/connections", methods=["POST"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def post_connection():  # type: ignore[no-untyped-def]
    from chalicelib.schemas import ConnectionBody, parse_body  # pydantic loads on first use, not at cold start

    body = parse_body(ConnectionBody, _body())
    return json_response(connections.create(get_stores(), _user(), body), 201)


@app.route("/v1/connections", methods=["GET"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def get_connections():  # type: ignore[no-untyped-def]
    return json_response(connections.list_connections(get_stores(), _user()))


@app.route("/v1/connections/{id}", methods=["DELETE"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def delete_connection(id):  # type: ignore[no-untyped-def]
    connections.revoke(get_stores(), _user(), path_id(id))
    return json_response(None, 204)


# ---- a person's own agent, by its connection token (checked here: API Gateway would make a deny 403) ----


def _connection():  # type: ignore[no-untyped-def]
    """The live connection the bearer token names; 401 for anything else (a person's sign-in token too)."""
    try:
        return connections.authenticate(get_stores(), connections.bearer(_request().headers))
    except Unauthorized as exc:
        exc.challenge = 'Bearer realm="personal-memory"'
        raise


@app.route("/v1/agent/memory", methods=["GET"], content_types=ANY_BODY)
@contract_errors
def get_agent_memory():  # type: ignore[no-untyped-def]
    return json_response(connected.context(get_stores(), _connection()))


@app.route("/v1/agent/proposals", methods=["POST"], content_types=ANY_BODY)
@contract_errors
def post_agent_proposal():  # type: ignore[no-untyped-def]
    from chalicelib.schemas import AgentProposalBody, parse_body  # pydantic loads on first use, not at cold start

    connection = _connection()
    body = parse_body(AgentProposalBody, _body())
    return json_response(connected.propose(get_stores(), connection, body.text, body.kind, body.replaces), 202)


@app.route("/v1/agent/proposals/{event_id}", methods=["GET"], content_types=ANY_BODY)
@contract_errors
def get_agent_proposal(event_id):  # type: ignore[no-untyped-def]
    return json_response(connected.outcome(get_stores(), _connection(), path_id(event_id)))


# ---- remote MCP (Streamable HTTP, stateless, JSON responses), by connection token -------------------

MCP_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"
# MCP clients that run in a browser page (the MCP Inspector) reach the OAuth endpoints they call from script: the
# discovery documents, token, registration and revocation. No cookie is read on these (Allow-Credentials is never
# sent), so any origin may call them. Not the page's `/v1` routes, nor `/oauth/authorize` (a navigation).
OAUTH_CORS = CORSConfig(
    allow_origin="*",
    allow_headers=["Authorization", "Content-Type", "MCP-Protocol-Version"],
    expose_headers=["WWW-Authenticate"],
    max_age=600,
)


def _base_url() -> str:
    from chalicelib.web_api import base_url

    return base_url(_request())


@app.route("/mcp", methods=["POST"], content_types=ANY_BODY)
@contract_errors
def post_mcp():  # type: ignore[no-untyped-def]
    base = _base_url()
    try:  # a connection token, or an OAuth access token issued for this very resource (RFC 8707)
        connection = connections.for_mcp(get_stores(), f"{base}/mcp", connections.bearer(_request().headers))
    except Unauthorized as exc:
        exc.challenge = f'Bearer resource_metadata="{base}{MCP_METADATA_PATH}"'
        raise
    from chalicelib.mcp.server import handle  # the MCP code loads on this route only

    status, answer = handle(get_stores(), connection, _body(), _request().headers.get("mcp-protocol-version"))
    return json_response(answer, status)


@app.route("/mcp", methods=["GET", "DELETE"], content_types=ANY_BODY)
def mcp_no_stream() -> Response:
    """A stateless server offers no stream to GET and no session to DELETE."""
    return Response(body="", status_code=405, headers={"Allow": "POST", "Cache-Control": "no-store"})


@app.route(MCP_METADATA_PATH, methods=["GET"], content_types=ANY_BODY, cors=OAUTH_CORS)
def mcp_resource_metadata() -> Response:
    """RFC 9728 protected resource metadata for `/mcp`: this service is its authorization server."""
    return json_response(oauth.resource_metadata(_base_url()))


# ---- OAuth: the service is the authorization server of its own /mcp (docs/oauth.md) -------------------
# No authorizer on these: API Gateway would turn a refusal into its own 403; errors are RFC 6749's shape.


@app.route("/.well-known/oauth-authorization-server", methods=["GET"], content_types=ANY_BODY, cors=OAUTH_CORS)
def oauth_metadata() -> Response:
    """RFC 8414 authorization server metadata."""
    return json_response(oauth.metadata(_base_url()))


@app.route("/.well-known/openid-configuration", methods=["GET"], content_types=ANY_BODY, cors=OAUTH_CORS)
def oauth_metadata_for_a_path() -> Response:
    """The same, where clients look for an issuer with a path (the API's stage name: docs/oauth.md)."""
    return json_response(oauth.metadata(_base_url()))


@app.route("/oauth/authorize", methods=["GET"], content_types=ANY_BODY)
@oauth_errors
def oauth_authorize():  # type: ignore[no-untyped-def]
    request = _request()
    query = request.query_params
    params = {k: list(query.getlist(k)) for k in query} if query is not None else {}
    return oauth_answer(*oauth.authorize(get_stores(), get_settings(), _base_url(), params))


@app.route("/oauth/token", methods=["POST"], content_types=ANY_BODY, cors=OAUTH_CORS)
@oauth_errors
def oauth_token():  # type: ignore[no-untyped-def]
    request = _request()
    params = oauth_form(_body(), request.headers.get("content-type"))
    return oauth_answer(*oauth.token(get_stores(), get_settings(), _base_url(), params, dict(request.headers)))


@app.route("/oauth/revoke", methods=["POST"], content_types=ANY_BODY, cors=OAUTH_CORS)
@oauth_errors
def oauth_revoke():  # type: ignore[no-untyped-def]
    """RFC 7009 token revocation: a client ends its own connection (docs/oauth.md)."""
    from chalicelib.services.oauth_revocation import revoke

    request = _request()
    params = oauth_form(_body(), request.headers.get("content-type"))
    return oauth_answer(*revoke(get_stores(), get_settings(), _base_url(), params, dict(request.headers)))


@app.route("/oauth/register", methods=["POST"], content_types=ANY_BODY, cors=OAUTH_CORS)
@oauth_errors
def oauth_register():  # type: ignore[no-untyped-def]
    from chalicelib.schemas import parse_json

    raw = _body() or b""
    body = parse_json(raw) if len(raw) <= 16_384 else None
    return oauth_answer(*oauth.register(get_stores(), get_settings(), _base_url(), body))


@app.route("/v1/oauth/requests/{id}", methods=["GET"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def get_oauth_request(id):  # type: ignore[no-untyped-def]
    return json_response(oauth.open_request(get_stores(), get_settings(), _base_url(), _user(), path_id(id)))


@app.route("/v1/oauth/requests/{id}", methods=["POST"], authorizer=user_token, content_types=ANY_BODY)
@contract_errors
def decide_oauth_request(id):  # type: ignore[no-untyped-def]
    from chalicelib.schemas import OAuthDecisionBody, parse_body  # pydantic loads on first use, not at cold start

    body = parse_body(OAuthDecisionBody, _body())
    return json_response(oauth.decide(get_stores(), get_settings(), _base_url(), _user(), path_id(id), body))


# ---- hosts and workers (IAM) ------------------------------------------------------------------


@app.route("/v1/sessions/{session_id}", methods=["PUT"], authorizer=iam, content_types=ANY_BODY)
@contract_errors
def put_session(session_id):  # type: ignore[no-untyped-def]
    from chalicelib.schemas import SessionBody, parse_body  # pydantic loads on first use, not at cold start

    _caller(callers.HOST)
    body = parse_body(SessionBody, _body())
    return json_response(agents.register_session(get_stores(), path_id(session_id), body).public())


@app.route("/v1/sessions/{session_id}/untrusted", methods=["POST"], authorizer=iam, content_types=ANY_BODY)
@contract_errors
def post_untrusted(session_id):  # type: ignore[no-untyped-def]
    _caller(callers.HOST)
    return json_response(agents.mark_untrusted(get_stores(), path_id(session_id)).public())


@app.route("/v1/sessions/{session_id}/memory", methods=["GET"], authorizer=iam, content_types=ANY_BODY)
@contract_errors
def get_session_memory(session_id):  # type: ignore[no-untyped-def]
    _caller(callers.HOST)
    return json_response(agents.context(get_stores(), path_id(session_id)))


@app.route("/v1/sessions/{session_id}/events", methods=["POST"], authorizer=iam, content_types=ANY_BODY)
@contract_errors
def post_events(session_id):  # type: ignore[no-untyped-def]
    from chalicelib.schemas import EventsBody, parse_body  # pydantic loads on first use, not at cold start

    _caller(callers.WORKER)
    body = parse_body(EventsBody, _body())
    return json_response(agents.post_events(get_stores(), path_id(session_id), body), 202)


@app.route("/v1/sessions/{session_id}/events", methods=["GET"], authorizer=iam, content_types=ANY_BODY)
@contract_errors
def get_events(session_id):  # type: ignore[no-untyped-def]
    _caller(callers.WORKER)
    return json_response(agents.list_events(get_stores(), path_id(session_id)))


# ---- operators (IAM): read and forget a named user's memory, every access journaled -------------


def _operator_request() -> tuple[str, str, str]:
    operator = _caller(callers.OPERATOR)
    request = _request()
    return operator, required_query(request, "user_id"), str(request.context.get("requestId", ""))


@app.route("/v1/operator/memory", methods=["GET"], authorizer=iam, content_types=ANY_BODY)
@contract_errors
def operator_view():  # type: ignore[no-untyped-def]
    operator, user_id, request_id = _operator_request()
    return json_response(operators.view(get_stores(), operator, user_id, request_id))


@app.route("/v1/operator/memory/{id}", methods=["DELETE"], authorizer=iam, content_types=ANY_BODY)
@contract_errors
def operator_forget(id):  # type: ignore[no-untyped-def]
    operator, user_id, request_id = _operator_request()
    operators.forget(get_stores(), operator, user_id, id, request_id)
    return json_response(None, 204)


@app.route("/v1/operator/memory", methods=["DELETE"], authorizer=iam, content_types=ANY_BODY)
@contract_errors
def operator_forget_all():  # type: ignore[no-untyped-def]
    operator, user_id, request_id = _operator_request()
    return json_response(operators.forget_all(get_stores(), operator, user_id, request_id))


@app.route("/v1/operator/account", methods=["DELETE"], authorizer=iam, content_types=ANY_BODY)
@contract_errors
def operator_erase_account():  # type: ignore[no-untyped-def]
    operator, user_id, request_id = _operator_request()
    return json_response(operators.erase_account(get_stores(), operator, user_id, request_id))


# ---- the events stream ------------------------------------------------------------------------


@app.on_dynamodb_record(stream_arn=EVENTS_STREAM_ARN, batch_size=100, starting_position="TRIM_HORIZON")
def handle_events_stream(event):  # type: ignore[no-untyped-def]
    """Partial batch response: Lambda retries exactly the records reported as failed."""
    raw = event.to_dict()
    if "redrive" in raw:  # scripts/redrive.py: keys of events a failed batch left pending (docs/deploy.md)
        return consumer.redrive(get_stores(), (raw["redrive"] or {}).get("events"))
    return consumer.handle_batch(get_stores(), raw.get("Records", []))
