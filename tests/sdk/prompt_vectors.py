"""The shared cases both SDKs' tests read (sdk/vectors/: the prompt block, the duplicate fold), for the Python tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VECTORS_FILE = Path(__file__).resolve().parents[2] / "sdk" / "vectors" / "memory_block.json"
VECTORS: list[dict[str, Any]] = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))["vectors"]
COMPARED: list[dict[str, str]] = json.loads((VECTORS_FILE.parent / "comparable.json").read_text(encoding="utf-8"))[
    "vectors"
]


def texts_of(group: str) -> dict[str, str]:
    """`{name: text}` of the one-item cases in `group` (e.g. "hostile", "hidden")."""
    return {
        vector["name"].split(".", 1)[1]: vector["items"][0]["text"]
        for vector in VECTORS
        if vector["name"].startswith(group + ".") and len(vector["items"]) == 1
    }
