"""Find credential-shaped text so memory can refuse it by kind, never echoing it.

A memory is replayed into every later agent prompt, so a pasted key would leak everywhere.
Each rule is a literal-prefixed regex with bounded (mostly possessive) quantifiers, so a scan is
linear on any input; small Python checks (checks.py) then tell a random secret from a placeholder,
a word, a digest or a reference to a secret kept elsewhere. Only a fixed shape name leaves this
package. The rules run in a fixed order, most specific first, and the first shape found is named.

The rules read the text as a person sees it (chalicelib/normalize.py): invisible characters
removed, NFKC, look-alike letters unmasked; where a break splits a token, first with it rejoined
(every reading, where a short word beside it makes the join ambiguous); then, where the text holds
pasted encodings (percent, \\u escapes, HTML entities) or a token's groups with separators, decoded
and read the same ways again.
"""

from __future__ import annotations

from collections.abc import Callable

from chalicelib.credentials.assignments import find_assignment
from chalicelib.credentials.commands import find_command_password
from chalicelib.credentials.http_auth import find_auth_header, find_url_password
from chalicelib.credentials.keys import find_aws_key, find_azure_key, find_jwt, find_private_key
from chalicelib.credentials.nearby import find_heroku_uuid
from chalicelib.credentials.pairs import find_username_password
from chalicelib.credentials.seeds import find_seed_phrase
from chalicelib.credentials.tokens import find_token
from chalicelib.normalize import decoded_views, readable, rejoined, rejoined_views

__all__ = ["find_credential"]

# Each detector takes the text and its same-length lower-case copy and returns a shape name or None.
_DETECTORS: tuple[Callable[[str, str], str | None], ...] = (
    find_private_key,
    find_token,
    find_jwt,
    find_aws_key,
    find_azure_key,
    find_heroku_uuid,
    find_url_password,
    find_auth_header,
    find_command_password,
    find_assignment,
    find_username_password,
    find_seed_phrase,
)


def _lower_same_length(text: str) -> str:
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)  # 'İ' lowers to two


def find_credential(text: str) -> str | None:
    """Return the snake_case name of the first credential shape in ``text``, or None.

    The name is one of a fixed set of labels (``github_token``, ``private_key``...); nothing of
    the text itself is ever returned.
    """
    if not text:
        return None
    view = readable(text)
    readings = rejoined_views(view)
    texts = [*readings[:1], view]
    # A seed phrase is words, not a token: it is looked for as typed, rejoined and decoded, not in the
    # readings that unglue a word from a token nor, in a note with nothing encoded, in closed-up groups.
    for_words, encoded = len(texts), "%" in view or "\\" in view or "&" in view
    for undone in decoded_views(view):  # 'AKIA%51W3R…', '&#65;KIA…', 'AKIA-QW3R-…' after 'key': read the same ways
        undone = readable(undone)
        joined = rejoined(undone)  # the greedy reading only: the views stay a few, whatever the text
        texts += [v for v in (undone, joined) if v is not None and v not in texts]
        for_words = len(texts) if encoded else for_words
    views = [(v, _lower_same_length(v)) for v in texts + [r for r in readings[1:] if r not in texts]]
    # Each rule reads every view before the next rule runs, so the most specific shape is named:
    # 'token is ghp_abc\ndef…' is a GitHub token (rejoined), not a short secret (as typed).
    for detect in _DETECTORS:
        for seen, low in views[:for_words] if detect is find_seed_phrase else views:
            shape = detect(seen, low)
            if shape:
                return shape
    return None
