"""In-process moto for the tests: fresh per test, cheap to start (one boto3 session, one shared unused RSA key,
URL matchers built once, the local KMS key copied in rather than created through the API, clients lent)."""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest


@contextlib.contextmanager
def fresh_moto(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fresh in-process moto (`mock_aws`) whose boto3 clients come from the process's one session.

    moto would drop boto3's default session at each start; building one costs ~0.25 s a test (two
    clients' endpoint rules and models), so the process keeps one, made after moto's hooks exist.
    """
    import boto3
    from moto import mock_aws

    _build_url_matchers_once()
    with mock_aws(config={"core": {"reset_boto3_session": False}}):
        monkeypatch.setattr(boto3, "DEFAULT_SESSION", _moto_session())
        yield


@functools.cache
def _moto_session() -> Any:
    """One boto3 session per test process, created after moto registered its botocore hooks."""
    import boto3
    import moto  # noqa: F401 - its before-send hook must be in botocore's handlers before the session

    return boto3.session.Session()


@functools.cache
def share_unused_rsa_keys() -> None:
    """moto makes an RSA-2048 private key for every KMS key, symmetric ones too, where it is never used
    (~50 ms a test). The tests' symmetric keys share one; asymmetric key specs still get their own."""
    from moto.kms import models

    original = models.generate_private_key
    shared = functools.cache(original)

    def generate(key_spec: str) -> Any:
        return shared(key_spec) if key_spec == "SYMMETRIC_DEFAULT" else original(key_spec)

    models.generate_private_key = generate


@functools.cache
def _build_url_matchers_once() -> None:
    """moto registers a `requests` URL matcher per backend URL pattern and HTTP method (1,288) at every start,
    building each anew (~10 ms a test). They hold no test's data, only a pattern and moto's one callback;
    the process builds each once and moto registers those same objects at every start."""
    from moto.core import models

    models.CallbackResponse = functools.cache(models.CallbackResponse)  # keyword arguments: method, url, callback


_PRISTINE_KEYS: dict[str, Any] = {}


def fresh_local_key(client: Any) -> None:
    """The template's key under the local alias, in this test's fresh KMS backend (local/kms.py).

    Created through the API once per process (three calls into moto); every later test gets a deep copy
    of that just-created key (its id and material too: nothing a test encrypts outlives its backend).
    """
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.kms.models import kms_backends

    from local.kms import create_key

    backend = kms_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    if not _PRISTINE_KEYS:
        create_key(client)
        _PRISTINE_KEYS.update(_copy_keys(backend.keys))
        return
    assert not backend.keys, "moto's KMS backend was not fresh"
    backend.keys.update(_copy_keys(_PRISTINE_KEYS))


def _copy_keys(keys: dict[str, Any]) -> dict[str, Any]:
    """A deep copy, sharing only the keys' RSA objects (unused for symmetric keys, and not copyable)."""
    memo = {id(key.private_key): key.private_key for key in keys.values()}
    return copy.deepcopy(keys, memo)


# ---- clients lent from test to test ----------------------------------------------------------------------

_LENDABLE: dict[str, Any] = {}


@contextlib.contextmanager
def lent_client(name: str, make: Callable[[], Any]) -> Iterator[Any]:
    """This process's boto3 client `name` (made by `make` the first time), lent to a test and taken back only as found.

    Making a client costs ~3 ms (its model, endpoint rules and handlers copied from the session), two or three
    a test, and a client keeps nothing of moto's backend: a reused one reaches each test's fresh moto as a new
    one would. What a client does keep between calls is taken back only as it was lent: a test that left a
    handler registered or unregistered on it (a fault injector, a call counter), an attribute set or replaced
    on it (a monkeypatched method, still set when this fixture ends), or any of its standard-retry quota spent
    (a bucket that retries drain and a success only partly refills) leaves a client no later test gets; the next test gets a new one. `make`
    returns the client as the app leaves it (the app's own hooks, which it registers once, already on).
    """
    client = _LENDABLE.pop(name, None)
    if client is None:
        client = make()
        client.exceptions  # noqa: B018 - made on first use and kept on the client: made before the first look
    lent = _looks(client)
    try:
        yield client
    finally:
        if lent is not None and _looks(client) == lent and _retry_quota_full(client):
            _LENDABLE[name] = client


class _Same:
    """An object compared by identity: a handler or attribute equals only itself, not an equal copy."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


def _looks(client: Any) -> Any:
    """Every attribute of the client and every handler on its emitter (botocore.hooks.HierarchicalEmitter),
    each by identity; None where the emitter is not as botocore 1.x keeps it (then the client is never lent again)."""
    emitter = getattr(client.meta.events, "_emitter", None)
    root = getattr(getattr(emitter, "_handlers", None), "_root", None)
    unique = getattr(emitter, "_unique_id_handlers", None)
    if not isinstance(root, dict) or not isinstance(unique, dict):
        return None
    handlers: list[tuple[tuple[str, ...], tuple[_Same, ...]]] = []
    nodes = [((), root)]
    while nodes:
        path, node = nodes.pop()
        found = tuple(_Same(handler) for section in node.get("values") or () for handler in section)
        if found:  # a node whose last handler was unregistered stays, empty: the same as no node
            handlers.append((path, found))
        nodes.extend((path + (chunk,), child) for chunk, child in node["children"].items())
    attributes = {key: _Same(value) for key, value in vars(client).items()}
    return attributes, sorted(handlers, key=lambda item: item[0]), sorted(unique)


def _retry_quota_full(client: Any) -> bool:
    """Whether the client's standard-retry quota (botocore.retries.quota.RetryQuota) is whole; read only, and
    a client whose retry handler is not where botocore 1.x keeps it counts as spent (never lent again)."""
    handlers = getattr(client.meta.events._emitter, "_unique_id_handlers", {})
    for unique_id, entry in handlers.items():
        if not unique_id.startswith("retry-config-"):
            continue
        checker = getattr(getattr(entry.get("handler"), "__self__", None), "_retry_quota", None)
        if checker is None:
            continue  # legacy mode: its retry handler keeps no state between calls
        quota = getattr(checker, "_quota", None)
        if quota is None or quota.available_capacity != quota._max_capacity:
            return False
    return True
