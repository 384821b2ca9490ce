"""The rules every memory text must pass wherever it enters: user POST/PATCH and agents' proposals."""

from __future__ import annotations

from chalicelib.errors import CredentialRefused, InvalidRequest
from chalicelib.models import MAX_ENTRY_BYTES
from chalicelib.normalize import bad_control, bidi_control, is_blank


def refusal_reason(text: str) -> str | None:
    """`empty`, `invalid_text`, `too_long`, `credential:<shape>`, or None when the (trimmed) text may be kept.

    Empty means nothing visible: white space, zero-width and other invisible characters only.
    Control characters other than tab and newline (NUL, escape, a lone CR) are `invalid_text`, and so
    are bidirectional embedding, override and isolate controls (they make a text show other words).
    """
    clean = text.strip()
    if is_blank(clean):
        return "empty"
    if bad_control(clean) or bidi_control(clean):
        return "invalid_text"
    if len(clean.encode("utf-8")) > MAX_ENTRY_BYTES:
        return "too_long"
    from chalicelib.credentials import find_credential  # its patterns compile on first use, not at cold start

    shape = find_credential(clean)
    if shape:
        return f"credential:{shape}"
    return None


def accepted_text(text: str) -> str:
    """The trimmed text, or the user-facing error saying why it cannot be kept (never quoting it)."""
    reason = refusal_reason(text)
    if reason is None:
        return text.strip()
    if reason == "empty":
        raise InvalidRequest("The text is empty.", field="text")
    if reason == "invalid_text" and bidi_control(text):
        raise InvalidRequest(
            "The text holds bidirectional control characters (U+202A to U+202E, U+2066 to U+2069), which make it "
            "show other words than it holds.",
            field="text",
        )
    if reason == "invalid_text":
        raise InvalidRequest("The text holds control characters (only tab and newline are allowed).", field="text")
    if reason == "too_long":
        raise InvalidRequest(f"The text is longer than {MAX_ENTRY_BYTES} bytes (UTF-8).", field="text")
    raise CredentialRefused(reason.split(":", 1)[1])
