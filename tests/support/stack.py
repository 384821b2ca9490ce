"""Settings for a test stack and a clock tests can move forward (expiry) without sleeping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.config import TableNames
from local.dev_tokens import DevTokenIssuer
from local.kms import LOCAL_ALIAS

HOST_ARN = "arn:aws:iam::111122223333:role/memory-host"
WORKER_ARN = "arn:aws:iam::111122223333:role/memory-worker"
OPERATOR_ARN = "arn:aws:iam::111122223333:role/memory-operator"
TEST_PSEUDONYM_KEY = "test-log-pseudonym-key-0123456789abcdef"  # the stage secret of the logs' pseudonyms


def settings_env(names: TableNames, issuer: DevTokenIssuer) -> dict[str, str]:
    return {
        "ENTRIES_TABLE": names.entries,
        "PROPOSALS_TABLE": names.proposals,
        "JOURNAL_TABLE": names.journal,
        "SESSIONS_TABLE": names.sessions,
        "EVENTS_TABLE": names.events,
        "KEYS_TABLE": names.keys,
        "KMS_KEY_ID": LOCAL_ALIAS,
        "JWT_ISSUER": issuer.issuer,
        "JWT_AUDIENCE": issuer.audience,
        "JWT_JWKS": issuer.jwks_json(),
        "JWT_JWKS_URL": "",
        "HOST_ROLE_ARNS": HOST_ARN,
        "WORKER_ROLE_ARNS": WORKER_ARN,
        "OPERATOR_ROLE_ARNS": OPERATOR_ARN,
        "MEMORY_DEV_SIGN_IN": "1",
        "OAUTH_INSECURE_METADATA_HOSTS": "127.0.0.1",
        "LOG_PSEUDONYM_KEY": TEST_PSEUDONYM_KEY,
    }


class Clock:
    """Real time plus an offset the test can move forward."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, **delta: float) -> None:
        self.offset += timedelta(**delta)
