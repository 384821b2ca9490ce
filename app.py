"""Personal memory's routes: each reads the request, calls one service function and returns. Nothing else."""
from __future__ import annotations

from chalice import AuthResponse, Chalice

from chalicelib.auth.tokens import get_verifier
from chalicelib.bootstrap import get_stores
from chalicelib.config import get_settings
from chalicelib.errors import Unauthorized
from chalicelib.schemas import EntryChangesBody, NewEntryBody, SettingsBody, parse_body
from chalicelib.services import memory
from chalicelib.web_api import contract_errors, json_response, refuse_token, user_id_of

app = Chalice(app_name="personal-memory")


@app.authorizer(ttl_seconds=0)
def user_token(auth_request):  # type: ignore[no-untyped-def]
    """Chalice built-in authorizer: a valid OIDC JWT lets its `sub` through; anything else is 401."""
    try:
        user_id = get_verifier(get_settings().jwt).user_id(auth_request.token)
    except Unauthorized as exc:
        refuse_token(exc)
    return AuthResponse(routes=["*"], principal_id=user_id)


def _user() -> str:
    return user_id_of(app.current_request)


def _body() -> bytes | None:
    return app.current_request.raw_body


# ---- the user's memory (bearer token) --------------------------------------------------------


@app.route("/v1/memory", methods=["GET"], authorizer=user_token)
@contract_errors
def get_memory():  # type: ignore[no-untyped-def]
    return json_response(memory.view(get_stores(), _user()))


@app.route("/v1/memory/settings", methods=["PUT"], authorizer=user_token)
@contract_errors
def put_settings():  # type: ignore[no-untyped-def]
    body = parse_body(SettingsBody, _body())
    return json_response(memory.set_enabled(get_stores(), _user(), body.enabled))


@app.route("/v1/memory", methods=["POST"], authorizer=user_token)
@contract_errors
def post_entry():  # type: ignore[no-untyped-def]
    body = parse_body(NewEntryBody, _body())
    return json_response(memory.add(get_stores(), _user(), body).public(), 201)


@app.route("/v1/memory/{entry_id}", methods=["PATCH"], authorizer=user_token)
@contract_errors
def patch_entry(entry_id):  # type: ignore[no-untyped-def]
    body = parse_body(EntryChangesBody, _body())
    return json_response(memory.edit(get_stores(), _user(), entry_id, body).public())


@app.route("/v1/memory/{entry_id}", methods=["DELETE"], authorizer=user_token)
@contract_errors
def delete_entry(entry_id):  # type: ignore[no-untyped-def]
    memory.forget(get_stores(), _user(), entry_id)
    return json_response(None, 204)


@app.route("/v1/memory", methods=["DELETE"], authorizer=user_token)
@contract_errors
def delete_all():  # type: ignore[no-untyped-def]
    return json_response(memory.forget_all(get_stores(), _user()))


@app.route("/v1/memory/{proposal_id}/accept", methods=["POST"], authorizer=user_token)
@contract_errors
def accept_proposal(proposal_id):  # type: ignore[no-untyped-def]
    return json_response(memory.accept(get_stores(), _user(), proposal_id).public(), 201)


@app.route("/v1/memory/{proposal_id}/reject", methods=["POST"], authorizer=user_token)
@contract_errors
def reject_proposal(proposal_id):  # type: ignore[no-untyped-def]
    memory.reject(get_stores(), _user(), proposal_id)
    return json_response(None, 204)


@app.route("/v1/inbox", methods=["GET"], authorizer=user_token)
@contract_errors
def get_inbox():  # type: ignore[no-untyped-def]
    return json_response(memory.inbox(get_stores(), _user()))
