"""In-process moto for the tests: fresh per test, cheap to start (one boto3 session, one shared unused RSA key,
URL matchers built once, the local KMS key copied in rather than created through the API)."""
from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Iterator
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
