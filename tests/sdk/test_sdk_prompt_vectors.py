"""The Python block against the cases the JavaScript SDK's tests read too: the same items, the same bytes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from personal_memory_sdk import MemoryItem, render_memory_block
from prompt_vectors import VECTORS


def _render(vector: dict[str, Any]) -> str:
    items = [MemoryItem(**item) for item in vector["items"]]
    if "max_entry_chars" in vector:
        return render_memory_block(items, boundary=vector["boundary"], max_entry_chars=vector["max_entry_chars"])
    return render_memory_block(items, boundary=vector["boundary"])


def test_the_vectors_cover_every_group_of_cases() -> None:
    groups = {vector["name"].split(".")[0] for vector in VECTORS}
    assert groups >= {"hostile", "hidden", "kind", "provenance", "empty", "bounds", "boundary"}
    assert len({vector["name"] for vector in VECTORS}) == len(VECTORS)


@pytest.mark.parametrize("vector", [v for v in VECTORS if "block" in v], ids=lambda v: v["name"])
def test_the_block_is_the_vectors_exact_bytes(vector: dict[str, Any]) -> None:
    assert _render(vector) == vector["block"]


@pytest.mark.parametrize("vector", [v for v in VECTORS if "expect" in v], ids=lambda v: v["name"])
def test_a_random_block_has_the_vectors_properties(vector: dict[str, Any]) -> None:
    lines = _render(vector).split("\n")
    match = re.fullmatch(r"<<<MEMORY_NOTES_BEGIN ([0-9A-Za-z_-]+)>>>", lines[0])
    assert match is not None and match[1] != vector["expect"]["boundary_is_not"]
    assert lines[-1] == f"<<<MEMORY_NOTES_END {match[1]}>>>"
    assert len(lines) == vector["expect"]["lines"]
    texts = [json.loads(line.split(" text=", 1)[1]) for line in lines if line.startswith("| [")]
    assert texts == vector["expect"]["entry_texts"]


def test_comparable_gives_the_shared_vectors_forms() -> None:
    from personal_memory_sdk import comparable
    from prompt_vectors import COMPARED

    assert len(COMPARED) >= 10
    assert [comparable(vector["text"]) for vector in COMPARED] == [vector["comparable"] for vector in COMPARED]
