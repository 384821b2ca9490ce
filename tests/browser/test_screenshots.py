"""The screenshot script still captures every documented state (into a temporary folder, not docs/)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser

from scripts.screenshots import SCHEMES, STATES, WIDTHS, capture
from tests.browser.browser_support import new_user

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _png_width(path: Path) -> int:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return int(struct.unpack(">I", head[16:20])[0])


def test_screenshots_of_every_state_scheme_and_width_are_written(
    live: Any, person_browser: Browser, tmp_path: Path
) -> None:
    written = capture(live, person_browser, tmp_path, user=new_user("shots"))
    expected = {f"{state}-{scheme}-{size}.png" for state in STATES for scheme in SCHEMES for size in WIDTHS}
    assert {path.name for path in written} == expected
    for path in written:
        # Device scale 1: a 375 px page is a 375 px wide picture.
        assert _png_width(path) == WIDTHS[path.stem.rsplit("-", 1)[1]]
    # The committed set (the README links it) names the same files.
    assert {path.name for path in DOCS.glob("*.png")} == expected
