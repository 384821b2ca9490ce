"""Wires settings, the DynamoDB client and the repositories together, once per process, on first use."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib.config import Settings, get_settings
from chalicelib.crypto.connection_key import ConnectionMacKey
from chalicelib.crypto.keyring import Keyring
from chalicelib.crypto.kms import Kms
from chalicelib.models import utc_now
from chalicelib.storage import dynamo
from chalicelib.storage.agents import AgentsRepository
from chalicelib.storage.connections import ConnectionsRepository
from chalicelib.storage.entries import EntriesRepository
from chalicelib.storage.events import EventsRepository
from chalicelib.storage.journal import JournalRepository
from chalicelib.storage.keys import KeysRepository
from chalicelib.storage.oauth import OAuthRepository
from chalicelib.storage.proposals import ProposalsRepository
from chalicelib.storage.retries import guarded
from chalicelib.storage.sessions import SessionsRepository
from chalicelib.storage.text import TextSeal


@dataclass(frozen=True)
class Stores:
    """Everything a service needs to touch storage; tests build one around moto."""

    client: Any
    entries: EntriesRepository
    proposals: ProposalsRepository
    journal: JournalRepository
    sessions: SessionsRepository
    events: EventsRepository
    keyring: Keyring
    agents: AgentsRepository  # the user's grants per agent, in the entries table
    connections: ConnectionsRepository  # the person's connections, in the keys table
    connection_key: ConnectionMacKey  # the service's key for connection tokens' MACs
    oauth: OAuthRepository  # OAuth's clients, pending requests, codes and refresh tokens, in the keys table
    clock: Callable[[], datetime] = utc_now


def build_stores(
    settings: Settings, client: Any, clock: Callable[[], datetime] = utc_now, kms_client: Any = None
) -> Stores:
    """`kms_client` None: the process's KMS client (chalicelib/crypto/kms.py), built on first use."""
    tables = settings.tables
    client = guarded(client)  # exhausted retries become Unavailable here, at the storage boundary
    journal = JournalRepository(client, tables.journal)
    kms = Kms(settings.kms_key_id, kms_client)
    keyring = Keyring(client, KeysRepository(client, tables.keys), journal, kms, clock)
    connections = ConnectionsRepository(client, tables.keys)
    return Stores(
        client=client,
        entries=EntriesRepository(client, tables.entries, TextSeal(keyring, "entries")),
        proposals=ProposalsRepository(client, tables.proposals, TextSeal(keyring, "proposals")),
        journal=journal,
        sessions=SessionsRepository(client, tables.sessions),
        events=EventsRepository(client, tables.events, TextSeal(keyring, "events")),
        keyring=keyring,
        agents=AgentsRepository(tables.entries),
        connections=connections,
        connection_key=ConnectionMacKey(connections, kms, clock),
        oauth=OAuthRepository(client, tables.keys),
        clock=clock,
    )


_lock = threading.Lock()
_stores: Stores | None = None


def get_stores() -> Stores:
    global _stores
    if _stores is None:
        with _lock:
            if _stores is None:
                _stores = build_stores(get_settings(), dynamo.get_client())
    return _stores


def reset_stores(stores: Stores | None = None) -> None:
    """Forget (or replace) the process's stores: tests and the local launcher call this."""
    global _stores
    with _lock:
        _stores = stores
