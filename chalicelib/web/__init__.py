"""Serves the Memory page's static assets and the Content-Security-Policy that keeps it script-safe."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["ASSET_NAMES", "SCRIPT_MODULES", "load_asset", "content_security_policy"]

_HERE = Path(__file__).resolve().parent

# The only files this module will ever read: a fixed allow-list, so no request path can reach
# anything else in the package (no "../", no absolute paths, no other extensions).
# The page's ES modules (app.js imports the others by relative URL, so they all live under /assets/).
SCRIPT_MODULES = (
    "app.js",
    "add-form.js",
    "agent-item.js",
    "agents-view.js",
    "api.js",
    "connect-form.js",
    "consent-view.js",
    "connections.js",
    "dialogs.js",
    "dom.js",
    "entries-view.js",
    "filter.js",
    "item.js",
    "journal-view.js",
    "likely-update.js",
    "live.js",
    "memory.js",
    "proposal-row.js",
    "proposals-view.js",
    "review-bulk.js",
    "review-groups.js",
    "session.js",
    "similar.js",
    "status.js",
    "store.js",
    "tabs.js",
    "undo.js",
    "words.js",
)

ASSET_NAMES: dict[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    **{name: "text/javascript; charset=utf-8" for name in SCRIPT_MODULES},
}

_cache: dict[str, tuple[bytes, str]] = {}


def load_asset(name: str) -> tuple[bytes, str]:
    """Return (bytes, content type) of one page asset, read once per process.

    Raises KeyError for any name outside the allow-list, so callers can map it to a 404.
    """
    if name not in ASSET_NAMES:
        raise KeyError(name)
    cached = _cache.get(name)
    if cached is None:
        cached = ((_HERE / name).read_bytes(), ASSET_NAMES[name])
        _cache[name] = cached
    return cached


def _origin(url: str) -> str:
    """Reduce a configured URL to its origin, refusing anything that could smuggle a directive."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError("extra_connect must be an http(s) URL or origin")
    # A netloc with credentials, spaces, quotes or semicolons would change the policy's meaning.
    if "@" in parts.netloc or any(c in parts.netloc for c in " \t\r\n;,'\""):
        raise ValueError("extra_connect must be a plain origin")
    return f"{parts.scheme}://{parts.netloc.lower()}"


def content_security_policy(extra_connect: str = "") -> str:
    """The page's CSP: own-origin scripts and styles only, nothing inline, nothing remote.

    `extra_connect` is the OIDC token endpoint (URL or origin); the page exchanges its sign-in code
    there with fetch, so that one origin joins `connect-src`. Empty on the local stack.
    """
    connect = "'self'"
    if extra_connect.strip():
        connect += " " + _origin(extra_connect)
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src {connect}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )
