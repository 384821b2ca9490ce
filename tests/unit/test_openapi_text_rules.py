"""openapi.yaml's pattern for an entry's text says exactly what the server keeps, so a client (or a fuzzer)
that trusts the schema is neither refused for valid text nor let through with invalid text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chalicelib.text_rules import refusal_reason

SCHEMAS = yaml.safe_load((Path(__file__).resolve().parents[2] / "openapi.yaml").read_text())["components"]["schemas"]
PATTERN = SCHEMAS["NewEntry"]["properties"]["text"]["pattern"]
# Characters at the edges of the rules: every kind of white space, controls kept and refused, invisible
# and blank-looking ones, and ordinary letters.
EDGES = "\t\n\x0b\x0c\r\x1c\x1f \x00\x07\x7f\x85\x9f\xa0\u1680\u2000\u200b\u200d\u200f\u2028\u202a\u202e\u202f\u2060\u2066\u2069\u2800\u3000\u3164\ufeffaé你"


def _server_keeps(text: str) -> bool:
    reason = refusal_reason(text)
    return reason is None or reason.startswith("credential:")  # a 422 is about content, not shape


def test_edits_and_accepts_use_the_same_pattern() -> None:
    assert SCHEMAS["EntryChanges"]["properties"]["text"]["pattern"] == PATTERN
    assert SCHEMAS["AcceptChanges"]["properties"]["text"]["pattern"] == PATTERN


@pytest.mark.slow  # each example runs the credential detector
@settings(max_examples=1500, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(st.sampled_from(EDGES), st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"])),
        max_size=10,
    )
)
@example("a\x13")  # the control character schemathesis found refused but allowed by the schema
@example(" \r\n a \r\n ")
@example("a\rb")
@example("\u200b\u2800")
def test_the_pattern_matches_exactly_the_text_the_server_keeps(text: str) -> None:
    assert (re.search(PATTERN, text) is not None) == _server_keeps(text), repr(text)
