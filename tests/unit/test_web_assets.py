"""Static checks on the Memory page's assets: served by name only, script-safe, and under a strict CSP."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from chalicelib.web import ASSET_NAMES, SCRIPT_MODULES, content_security_policy, load_asset

WEB_DIR = Path(__file__).resolve().parents[2] / "chalicelib" / "web"


class _PageScan(HTMLParser):
    """Collects what a CSP-safe page must not contain: inline script, inline style, handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.script_bodies: list[str] = []
        self.style_elements = 0
        self.style_attributes: list[str] = []
        self.handlers: list[str] = []
        self.urls: list[str] = []
        self.ids: set[str] = set()
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "script":
            self.scripts.append(named)
            self._in_script = True
        if tag == "style":
            self.style_elements += 1
        for name, value in attrs:
            if name == "style":
                self.style_attributes.append(tag)
            if name.startswith("on"):
                self.handlers.append(f"{tag}.{name}")
            if name in ("src", "href", "action", "formaction") and value is not None:
                self.urls.append(value)
            if name == "id" and value:
                self.ids.add(value)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.script_bodies.append(data)


def _scan_index() -> _PageScan:
    scan = _PageScan()
    scan.feed(load_asset("index.html")[0].decode("utf-8"))
    return scan


def _app_js() -> str:
    """Every script module of the page, one after another (the rules below hold for all of them)."""
    return "\n".join(load_asset(name)[0].decode("utf-8") for name in SCRIPT_MODULES)


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("index.html", "text/html; charset=utf-8"),
        ("app.css", "text/css; charset=utf-8"),
        *((name, "text/javascript; charset=utf-8") for name in SCRIPT_MODULES),
    ],
)
def test_each_asset_is_served_with_its_content_type(name: str, content_type: str) -> None:
    body, served_type = load_asset(name)
    assert served_type == content_type
    assert body == (WEB_DIR / name).read_bytes()
    assert body


def test_assets_are_read_once_and_cached() -> None:
    assert load_asset("app.js") is load_asset("app.js")


@pytest.mark.parametrize(
    "name",
    ["../app.py", "__init__.py", "/etc/passwd", "assets/app.js", "app.js/../__init__.py", "APP.JS", "", "app.js\x00"],
)
def test_names_outside_the_allow_list_are_refused(name: str) -> None:
    with pytest.raises(KeyError):
        load_asset(name)


def test_allow_list_names_the_page_the_styles_and_exactly_the_script_modules_on_disk() -> None:
    assert set(ASSET_NAMES) == {"index.html", "app.css", *SCRIPT_MODULES}
    assert set(SCRIPT_MODULES) == {path.name for path in WEB_DIR.glob("*.js")}


_IMPORT = re.compile(r"""^import\s[^;]*?from\s+["']([^"']+)["'];""", re.MULTILINE | re.DOTALL)


def test_modules_import_only_allow_listed_siblings_and_app_js_reaches_them_all() -> None:
    graph = {name: _IMPORT.findall(load_asset(name)[0].decode("utf-8")) for name in SCRIPT_MODULES}
    for name, targets in graph.items():
        for target in targets:
            assert target.startswith("./") and target[2:] in SCRIPT_MODULES, f"{name} imports {target}"
    seen, todo = set(), ["app.js"]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(t[2:] for t in graph[name])
    assert seen == set(SCRIPT_MODULES)


def test_each_module_stays_small_and_says_why_it_exists() -> None:
    for name in SCRIPT_MODULES:
        text = load_asset(name)[0].decode("utf-8")
        assert text.startswith("/*"), f"{name} has no opening comment"
        assert len(text.splitlines()) <= 250, f"{name} is {len(text.splitlines())} lines"


def test_index_has_no_inline_script() -> None:
    scan = _scan_index()
    assert scan.scripts, "the page must load its script"
    assert all(s.get("src") for s in scan.scripts)
    assert scan.script_bodies == []


def test_index_has_no_inline_styles_or_event_handlers() -> None:
    scan = _scan_index()
    assert scan.style_elements == 0
    assert scan.style_attributes == []
    assert scan.handlers == []


def test_index_refers_to_assets_relatively_and_to_no_remote_origin() -> None:
    scan = _scan_index()
    assert [(s.get("src"), s.get("type")) for s in scan.scripts] == [("assets/app.js", "module")]
    assert "assets/app.css" in scan.urls
    for url in scan.urls:
        # Relative (so a stage prefix such as /api/ works), a fragment, or an empty data: icon.
        assert not re.match(r"^([a-z][a-z0-9+.-]*:|//|/)", url) or url == "data:,", url


@pytest.mark.parametrize(
    "pattern",
    [
        r"\binnerHTML\b",
        r"\bouterHTML\b",
        r"insertAdjacentHTML",
        r"document\.write",
        r"\beval\s*\(",
        r"new\s+Function\b",
        r"\bsetTimeout\s*\(\s*['\"`]",
        r"createContextualFragment",
        r"\bsrcdoc\b",
    ],
)
def test_app_js_never_writes_html_or_evaluates_strings(pattern: str) -> None:
    assert re.search(pattern, _app_js()) is None


def test_app_js_keeps_the_token_out_of_local_storage() -> None:
    assert re.search(r"\blocalStorage\s*[.\[]", _app_js()) is None
    assert re.search(r"\bsessionStorage\.setItem\(TOKEN_KEY", _app_js())


def test_app_js_names_no_remote_origin() -> None:
    # Every request is relative to the page, except the OIDC endpoints that come from page-config.
    assert re.search(r"https?://", _app_js()) is None


def test_app_js_uses_relative_api_urls() -> None:
    js = _app_js()
    assert '"v1/memory"' in js and '"page-config"' in js and '"dev/token"' in js
    assert re.search(r"""["'`]/v1/""", js) is None


def test_css_loads_nothing_remote() -> None:
    css = load_asset("app.css")[0].decode("utf-8")
    assert "@import" not in css
    assert re.search(r"url\(", css) is None


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("name", SCRIPT_MODULES)
def test_each_module_parses_as_an_es_module(name: str) -> None:
    source = (WEB_DIR / name).read_text()
    result = subprocess.run(["node", "--input-type=module", "--check"], input=source, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_every_documented_hook_id_exists() -> None:
    js = _app_js()
    header = js.split("*/", 1)[0]
    documented = set(re.findall(r"#([a-z][a-z0-9-]*)", header))
    assert {
        "signin-user",
        "signin-button",
        "memory-enabled",
        "add-text",
        "add-kind",
        "add-pinned",
        "add-expiry",
        "add-submit",
        "status",
        "entries",
        "proposals",
        "forget-all",
        "forget-all-confirm",
        "counts",
        "tab-memory",
        "tab-journal",
        "journal",
        "export",
    } <= documented
    missing = documented - _scan_index().ids
    assert missing == set()


def _directives(policy: str) -> dict[str, list[str]]:
    parts = [p.split() for p in policy.split(";") if p.strip()]
    return {p[0]: p[1:] for p in parts}


def test_csp_forbids_inline_script_and_remote_origins() -> None:
    policy = _directives(content_security_policy())
    assert policy["default-src"] == ["'none'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["connect-src"] == ["'self'"]
    assert policy["img-src"] == ["'self'", "data:"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["base-uri"] == ["'none'"]
    assert policy["form-action"] == ["'self'"]
    for values in policy.values():
        assert "'unsafe-inline'" not in values and "'unsafe-eval'" not in values and "*" not in values


def test_csp_adds_only_the_token_endpoint_origin_to_connect_src() -> None:
    policy = _directives(content_security_policy("https://auth.example.com/oauth2/token?x=1"))
    assert policy["connect-src"] == ["'self'", "https://auth.example.com"]
    assert policy["script-src"] == ["'self'"]


@pytest.mark.parametrize(
    "extra",
    [
        "https://a.example; script-src *",
        "javascript:alert(1)",
        "*",
        "https://user:pw@a.example",
        "a.example",
        "https://a.example'unsafe-inline'",
    ],
)
def test_csp_refuses_an_extra_origin_that_could_change_the_policy(extra: str) -> None:
    with pytest.raises(ValueError):
        content_security_policy(extra)
