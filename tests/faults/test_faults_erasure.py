"""An account's erasure under AWS's own retryable errors: each 503 is the contract's, a retry finishes the job, nobody else loses anything."""

from __future__ import annotations

import random
from typing import Any

import pytest

from local.faults import FaultInjector
from tests.routes.test_erasure import ERASE, _held_by, _story
from tests.support.iam import iam_call
from tests.support.openapi_check import check
from tests.support.stack import OPERATOR_ARN


@pytest.mark.slow  # two stories and many runs, per seed
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_erasing_under_random_faults_ends_with_nothing_of_the_user_and_all_of_everyone_else(
    client: Any, api: Any, agents: Any, dynamodb: Any, faults: FaultInjector, seed: int
) -> None:
    _story(api, agents, "alice")
    _story(api, agents, "bob")
    bob_before = sorted(map(repr, _held_by(dynamodb, "bob")))
    # First AWS stays busy for good after two deletions: the contract's 503, part erased, the rest findable.
    faults.add(error="ThrottlingException", operation="BatchWriteItem", after=2)
    status, body = iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)
    check("DELETE", "/v1/operator/account", status, body)
    assert (status, body["code"]) == (503, "unavailable")
    assert _held_by(dynamodb, "alice") != []
    faults.clear()
    # Then half of all calls fail at random (botocore's retries absorb most): the operator runs it again until done.
    faults._random = random.Random(seed)  # the fixture's injector, reseeded: a different pattern per seed
    faults.add(
        rate=0.5, errors=("ThrottlingException", "InternalServerError", "ProvisionedThroughputExceededException")
    )
    for _ in range(40):
        status, body = iam_call(client, "DELETE", ERASE.format("alice"), OPERATOR_ARN)
        check("DELETE", "/v1/operator/account", status, body)
        if status == 200:
            break
        assert (status, body["code"]) == (503, "unavailable")
    faults.clear()
    assert status == 200
    assert _held_by(dynamodb, "alice") == []
    assert sorted(map(repr, _held_by(dynamodb, "bob"))) == bob_before
