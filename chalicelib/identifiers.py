"""The one shape every id and name an agent or host supplies must have, so no field skips the rules.

Session ids, event ids, `message_id`, `thread_id` and `agent` are stored and shown back (in an
entry's source, in the journal, to the worker). Each is an identifier: 1 to 128 characters of
ASCII letters, digits and `. _ : -`, not only dots, and never credential-shaped (a token is not an id,
however well it fits the pattern). Anything else is refused before it reaches DynamoDB.

Not only dots (issue 37): `.`, `..` and `...` fit the characters, but a URL resolves `.` and `..` as path
steps (RFC 3986, 5.2.4) and clients drop or rewrite them, so a session, agent or event so named could be
stored and then never be reached again in a path (`/v1/sessions/../memory`). Refused everywhere alike.
"""

from __future__ import annotations

import re

from chalicelib.errors import CredentialRefused, InvalidRequest

__all__ = [
    "IDENTIFIER_PATTERN",
    "MAX_IDENTIFIER_LENGTH",
    "USER_ID_PATTERN",
    "check_identifier",
    "check_user_id",
    "only_dots",
]

MAX_IDENTIFIER_LENGTH = 128
IDENTIFIER_PATTERN = rf"^[A-Za-z0-9._:\-]{{1,{MAX_IDENTIFIER_LENGTH}}}$"
_SHAPE = re.compile(IDENTIFIER_PATTERN)
# A user id a host names for a session is a token's `sub`: the identifier's characters plus the `@`,
# `|` and `+` that OIDC providers put in theirs (`auth0|5f…`, an e-mail address). No space, no control
# or invisible character, no bidi override, nothing that could be a second line in a log or the page.
USER_ID_PATTERN = rf"^[A-Za-z0-9._:@|+\-]{{1,{MAX_IDENTIFIER_LENGTH}}}$"
_USER_ID_SHAPE = re.compile(USER_ID_PATTERN)


def only_dots(value: str) -> bool:
    """`.`, `..`, `...`: the characters fit, but no URL path can carry the id (see above)."""
    return value.strip(".") == ""


def check_identifier(value: str, field: str) -> str:
    """``value`` when it is an identifier; a 400 when it is not one, a 422 when it holds a credential."""
    if not isinstance(value, str) or _SHAPE.fullmatch(value) is None or only_dots(value):
        raise InvalidRequest(
            f"{field}: 1 to {MAX_IDENTIFIER_LENGTH} characters of letters, digits, '.', '_', ':' or '-', not only dots.",
            field=field,
        )
    return _no_credential(value)


def check_user_id(value: str, field: str = "user_id") -> str:
    """A session's user id: a 400 unless it has a token subject's shape, a 422 when it holds a credential."""
    if not isinstance(value, str) or _USER_ID_SHAPE.fullmatch(value) is None or only_dots(value):
        raise InvalidRequest(
            f"{field}: 1 to {MAX_IDENTIFIER_LENGTH} characters of letters, digits, '.', '_', ':', '@', '|', '+' or '-', not only dots.",
            field=field,
        )
    return _no_credential(value)


def _no_credential(value: str) -> str:
    from chalicelib.credentials import find_credential  # compiled on first use, not at cold start

    shape = find_credential(value)
    if shape:
        raise CredentialRefused(shape)
    return value
