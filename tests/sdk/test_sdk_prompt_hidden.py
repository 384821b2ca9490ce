"""The prompt block escapes every character a person cannot see and every look-alike of its delimiters."""

from __future__ import annotations

import json
import re
import sys
import unicodedata

import pytest
from personal_memory_sdk import MemoryItem, render_memory_block
from personal_memory_sdk.prompt import escape_text
from prompt_vectors import texts_of

from chalicelib.normalize import _INVISIBLE_CLASS

FIXED = "0123456789abcdef0123456789abcdef"
_INVISIBLE = re.compile(f"[{_INVISIBLE_CLASS}]")

# The shared vectors' hidden and look-alike cases (sdk/vectors/memory_block.json), which the JS SDK's tests read too.
PROBES = texts_of("hidden")


def _entry_text(block: str) -> str:
    line = next(line for line in block.splitlines() if line.startswith("| [1]"))
    return line.split(" text=", 1)[1]


@pytest.mark.parametrize("name", sorted(PROBES))
def test_hidden_and_lookalike_characters_are_escaped_and_decode_back(name: str) -> None:
    text = PROBES[name]
    block = render_memory_block([MemoryItem(text=text, kind="note", pinned=False, tainted=False)], boundary=FIXED)
    shown = _entry_text(block)
    assert shown.isascii(), [c for c in shown if not c.isascii()]
    assert json.loads(shown) == text
    lines = block.splitlines()
    boundary = lines[0].split()[-1].rstrip(">")
    ends = [
        i
        for i, line in enumerate(lines)
        if "MEMORY_NOTES_END" in unicodedata.normalize("NFKC", line) and boundary in line and line.startswith("<")
    ]
    assert ends == [len(lines) - 1]  # only the real END line closes the block


def test_every_default_ignorable_code_point_is_escaped() -> None:
    hidden = [chr(c) for c in range(sys.maxunicode + 1) if _INVISIBLE.match(chr(c))]
    assert len(hidden) > 4000  # the tag and variation-selector blocks are in
    escaped = escape_text("".join(hidden))
    assert not _INVISIBLE.search(escaped)
    assert json.loads(escaped) == "".join(hidden)


def test_every_character_that_folds_to_an_angle_bracket_is_escaped() -> None:
    folding = [
        chr(c)
        for c in range(0x80, sys.maxunicode + 1)
        if not 0xD800 <= c <= 0xDFFF and any(b in unicodedata.normalize("NFKC", chr(c)) for b in "<>")
    ]
    assert "\uff1c" in folding and "\ufe65" in folding
    escaped = escape_text("".join(folding))
    assert escaped.isascii()


def test_unicode_confusables_of_the_brackets_are_escaped() -> None:
    data = json.loads(
        __import__("importlib.resources")
        .resources.files("confusable_homoglyphs")
        .joinpath("confusables.json")
        .read_text("utf-8")
    )
    lookalikes = "".join(g["c"] for bracket in "<>" for g in data[bracket] if len(g["c"]) == 1)
    assert len(lookalikes) >= 10
    assert escape_text(lookalikes).isascii()


def test_ordinary_text_in_other_scripts_is_left_readable() -> None:
    text = "Привет · Γειά · مرحبا · שלום · नमस्ते · สวัสดี · 你好（世界）！ · 👩‍💻"
    shown = escape_text(text)
    assert "Привет" in shown and "你好（世界）！" in shown and "สวัสดี" in shown
    assert json.loads(shown) == text
