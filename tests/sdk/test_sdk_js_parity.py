"""The two SDKs' prompt blocks escape the same characters: every code point, not only the shared vectors.

The vectors (sdk/vectors/memory_block.json) pin chosen cases byte for byte; this sweeps all 1,114,112 code
points through both `escape_text` (Python) and `escapeText` (sdk/js/src/prompt.js, under node). Each side
decides by its own Unicode tables: Python 3.11's are Unicode 14.0, Node 20's ICU is newer (17.0 here), so
characters assigned since 14.0 are unassigned (escaped) for Python and may be shown by JavaScript. Every
other code point must be treated alike, and JavaScript must never show one that Python escapes otherwise.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from personal_memory_sdk.prompt import escape_text

pytestmark = pytest.mark.slow  # a sweep of every code point in both languages: ~5 CPU-seconds

PROMPT_JS = Path(__file__).resolve().parents[2] / "sdk" / "js" / "src" / "prompt.js"
# The code points escapeText writes as \uXXXX, as [first, last] ranges (prompt.js needs no installed package).
SWEEP = """
import { escapeText } from %s;
const ranges = [];
for (let c = 0; c <= 0x10ffff; c++) {
  if (!escapeText(String.fromCodePoint(c)).includes("\\\\u")) continue;
  const last = ranges.at(-1);
  if (last && last[1] === c - 1) last[1] = c; else ranges.push([c, c]);
}
process.stdout.write(JSON.stringify(ranges));
"""


def _escaped_by_javascript() -> set[int]:
    node = shutil.which("node")
    assert node, "node (20+) is needed to compare the JavaScript SDK"
    script = SWEEP % json.dumps(PROMPT_JS.as_uri())
    done = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=120, check=True
    )
    return {code for first, last in json.loads(done.stdout) for code in range(first, last + 1)}


def test_both_sdks_escape_the_same_characters_but_those_assigned_after_pythons_unicode() -> None:
    python = {code for code in range(sys.maxunicode + 1) if "\\u" in escape_text(chr(code))}
    javascript = _escaped_by_javascript()
    assert len(python) > 900_000  # unassigned, private use, surrogates, controls, format, look-alikes
    assert javascript - python == set()
    newer = python - javascript
    assert all(unicodedata.category(chr(code)) == "Cn" for code in newer)
    assert len(newer) < 20_000  # Unicode 15.0-17.0 assigned about 17,000 characters
