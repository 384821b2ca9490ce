"""Request bodies, validated by pydantic: unknown fields, wrong types and out-of-range values are 400s.

Errors are rebuilt from pydantic's locations and types only, never from the submitted input, so an
error body can never echo a memory's text.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from chalicelib.crypto.refs import MAX_REF_CHARACTERS
from chalicelib.errors import InvalidRequest
from chalicelib.identifiers import check_identifier, check_user_id
from chalicelib.models import MAX_EXPIRY_DAYS, MIN_EXPIRY_DAYS

Kind = Literal["preference", "fact", "note"]


def _whole_number(value: Any) -> Any:
    """JSON has one number type: 30, 30.0 and 3e1 are the same value, an `integer` to JSON Schema (openapi.yaml)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# A whole number (1.5, "7", true, NaN and infinities stay 400s); the range is checked where it is used.
ExpiryDays = Annotated[StrictInt, BeforeValidator(_whole_number)]


def _checked_as(field: str) -> AfterValidator:
    """An id or name that is stored and shown: chalicelib/identifiers.py's shape, never a credential."""
    return AfterValidator(lambda value: check_identifier(value, field))


# Type aliases (not calls in annotations) so a type checker reads them as the strings they are.
ThreadId = Annotated[StrictStr, _checked_as("thread_id")]


def _addressable(value: str) -> str:
    """An agent named only by dots could never be named in `/v1/agents/{id}` (URLs resolve "." and ".."),
    so its user could never stop it: refused at registration."""
    if value.strip(".") == "":
        raise InvalidRequest("agent: an agent's name needs a letter, a digit or one of '_', ':', '-'.", field="agent")
    return value


AgentId = Annotated[StrictStr, _checked_as("agent"), AfterValidator(_addressable)]
EventId = Annotated[StrictStr, _checked_as("id")]
MessageId = Annotated[StrictStr, _checked_as("message_id")]
UserId = Annotated[StrictStr, AfterValidator(check_user_id)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SettingsBody(_Body):
    enabled: StrictBool


class NewEntryBody(_Body):
    text: StrictStr
    kind: Kind = "note"
    pinned: StrictBool = False
    expires_in_days: ExpiryDays | None = Field(default=None, ge=MIN_EXPIRY_DAYS, le=MAX_EXPIRY_DAYS)


class EntryChangesBody(_Body):
    """`expires_in_days: null` removes the expiry; a field left out is left alone (see model_fields_set)."""

    text: StrictStr | None = None
    kind: Kind | None = None
    pinned: StrictBool | None = None
    expires_in_days: ExpiryDays | None = Field(default=None, ge=MIN_EXPIRY_DAYS, le=MAX_EXPIRY_DAYS)


class AcceptBody(_Body):
    """Corrections made while accepting a proposal; every field is optional (no body accepts it as proposed)."""

    text: StrictStr | None = None
    kind: Kind | None = None
    pinned: StrictBool | None = None
    expires_in_days: ExpiryDays | None = Field(default=None, ge=MIN_EXPIRY_DAYS, le=MAX_EXPIRY_DAYS)
    replaces: StrictStr | None = None  # an active entry to forget in the same transaction (issue 24)


class SessionManifest(_Body):
    memory: StrictBool = False


class SessionBody(_Body):
    user_id: UserId | None = None
    thread_id: ThreadId | None = None
    agent: AgentId
    manifest: SessionManifest = SessionManifest()


class ProposeEvent(_Body):
    """Bounded at the door; emptiness, length, kind and credentials are the consumer's refusals."""

    id: EventId
    type: Literal["memory.propose"]
    text: StrictStr = Field(max_length=8000)
    kind: StrictStr = Field(default="note", max_length=64)
    message_id: MessageId | None = None
    replaces: StrictStr | None = Field(default=None, max_length=MAX_REF_CHARACTERS)  # a context item's ref


class EventsBody(_Body):
    events: list[ProposeEvent] = Field(min_length=1, max_length=20)


class AgentSwitchesBody(_Body):
    """`PUT /v1/agents/{id}`: at least one switch, each a boolean (null is no switch position)."""

    read: StrictBool | None = None
    propose: StrictBool | None = None

    @model_validator(mode="after")
    def _one_switch_at_least(self) -> AgentSwitchesBody:
        if not self.model_fields_set:
            raise ValueError("give read, propose or both")
        if any(getattr(self, name) is None for name in self.model_fields_set):
            raise ValueError("read and propose are true or false")
        return self


class ConnectionBody(_Body):
    """`POST /v1/connections`: the agent the connection acts as, whether it is trusted, how long it lives."""

    agent: AgentId
    trusted: StrictBool = False
    expires_in_days: ExpiryDays = Field(default=90, ge=1, le=365)


class OAuthDecisionBody(_Body):
    """`POST /v1/oauth/requests/{id}`: the person's answer to a client's request (docs/oauth.md)."""

    approve: StrictBool
    agent: AgentId | None = None  # the name the client acts under; required to approve
    trusted: StrictBool = False  # the person says the client reads nothing from outside
    read: StrictBool = True
    propose: StrictBool = True

    @model_validator(mode="after")
    def _named_to_approve(self) -> OAuthDecisionBody:
        if self.approve and self.agent is None:
            raise ValueError("approving names the agent")
        return self


class AgentProposalBody(_Body):
    """`POST /v1/agent/proposals`: bounded at the door as a worker's event; the consumer refuses the rest."""

    text: StrictStr = Field(max_length=8000)
    kind: StrictStr = Field(default="note", max_length=64)
    replaces: StrictStr | None = Field(default=None, max_length=MAX_REF_CHARACTERS)  # a context item's ref


class ForgetAgentBody(_Body):
    """`POST /v1/agents/{id}/forget`: only one session's writes when `session_id` is given."""

    session_id: Annotated[StrictStr, _checked_as("session_id")] | None = None


B = TypeVar("B", bound=BaseModel)


def parse_json(raw: bytes | str | None) -> Any:
    """The request body as JSON, or a 400 in the contract's shape (never Chalice's default body)."""
    if raw is None or raw in (b"", ""):
        raise InvalidRequest("The request body must be a JSON object.")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        raise InvalidRequest("The request body is not valid JSON.") from (
            None if isinstance(exc, RecursionError) else exc
        )
    try:
        # JSON may spell lone surrogates (\ud800) that no UTF-8 text, and no table, can hold.
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRequest("The request body holds text that is not valid Unicode.") from None
    return data


def parse_body(model: type[B], raw: bytes | str | None) -> B:
    data = parse_json(raw)
    if not isinstance(data, dict):
        raise InvalidRequest("The request body must be a JSON object.")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InvalidRequest(_describe(exc)) from None


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,40}")


def _safe_part(part: object) -> str:
    """A location part as it may appear in an error: an index or a plain name, else a placeholder.

    Unknown keys are submitted text too: one that is not a plain identifier is never echoed.
    """
    if isinstance(part, int) or (isinstance(part, str) and _PLAIN_NAME.fullmatch(part)):
        return str(part)
    return "<field>"


def _describe(exc: ValidationError) -> str:
    """'field: what is wrong' for each problem, built without the submitted values."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False, include_context=False):
        where = ".".join(_safe_part(part) for part in error.get("loc", ())) or "body"
        kind = error.get("type", "")
        if kind == "extra_forbidden":
            problems.append(f"{where}: unknown field")
        elif kind == "missing":
            problems.append(f"{where}: required")
        else:
            problems.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(problems[:5])
