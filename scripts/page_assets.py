"""The page's assets as docs/screenshots/ last showed them: a SHA-256 per file of chalicelib/web/, recorded in
docs/screenshots/assets.sha256 (sha256sum's format: `sha256sum -c` checks it from the repository's root)."""

from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "chalicelib" / "web"
RECORD = ROOT / "docs" / "screenshots" / "assets.sha256"

__all__ = ["RECORD", "asset_digests", "read_record", "record_line", "write_record"]


def asset_digests(web: Path = WEB) -> dict[str, str]:
    """Each file the page is served from (not the Python that serves it) → its SHA-256, by repository path."""
    return {
        path.relative_to(web.parent.parent).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(web.iterdir())
        if path.is_file() and path.suffix in {".html", ".css", ".js", ".svg", ".png", ".ico"}
    }


def record_line(name: str, digest: str) -> str:
    return f"{digest}  {name}"


def write_record(record: Path = RECORD, web: Path = WEB) -> None:
    record.write_text("".join(record_line(n, d) + "\n" for n, d in asset_digests(web).items()))


def read_record(record: Path = RECORD) -> dict[str, str]:
    """The recorded digests by path; {} when nothing was recorded."""
    if not record.exists():
        return {}
    pairs = (line.split("  ", 1) for line in record.read_text().splitlines() if line.strip())
    return {name: digest for digest, name in pairs}
