"""Python SDK for Personal memory: hosts register sessions and fetch context, agents propose.

Kept outside `chalicelib/` so it is never bundled into the Lambda; it needs only botocore.
"""

from __future__ import annotations

from .context import AgentContext, AgentMemory, EventPoster, load_context
from .credentials import CallerCredentials, load_credentials_file
from .errors import (
    ApiError,
    ConflictError,
    CredentialRefusedError,
    CredentialsFileError,
    ForbiddenError,
    InvalidRequestError,
    LimitReachedError,
    MemoryOffError,
    MemorySdkError,
    NotFoundError,
    ProtocolError,
    RateLimitedError,
    ServerError,
    TransportError,
    UnauthorizedError,
)
from .host import HostClient, Session
from .memory import KINDS, MemoryItem, MemoryItems, comparable
from .prompt import render_memory_block
from .transport import RetryPolicy
from .worker import DUPLICATE, EventOutcome, EventRecord, ProposeEvent, WorkerClient, new_event_id

__version__ = "0.1.0"

__all__ = [
    "DUPLICATE",
    "KINDS",
    "AgentContext",
    "AgentMemory",
    "ApiError",
    "CallerCredentials",
    "ConflictError",
    "CredentialRefusedError",
    "CredentialsFileError",
    "EventOutcome",
    "EventPoster",
    "EventRecord",
    "ForbiddenError",
    "HostClient",
    "InvalidRequestError",
    "LimitReachedError",
    "MemoryItem",
    "MemoryItems",
    "MemoryOffError",
    "MemorySdkError",
    "NotFoundError",
    "ProposeEvent",
    "ProtocolError",
    "RateLimitedError",
    "RetryPolicy",
    "ServerError",
    "Session",
    "TransportError",
    "UnauthorizedError",
    "WorkerClient",
    "comparable",
    "load_context",
    "load_credentials_file",
    "new_event_id",
    "render_memory_block",
]
