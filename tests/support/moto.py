"""In-process moto for the tests: fresh per test, cheap to start (one boto3 session, one shared unused RSA key)."""
from __future__ import annotations

import contextlib
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
