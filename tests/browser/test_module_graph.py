"""The page's modules point one way (STYLE.md item 13): no import cycle, no view imports a view, nothing imports app.js or session.js back."""

from __future__ import annotations

import re
from pathlib import Path

from chalicelib.web import SCRIPT_MODULES

WEB = Path(__file__).resolve().parents[2] / "chalicelib" / "web"
# `import {...} from "./x.js"`, `import "./x.js"`, `export ... from "./x.js"` and `import("./x.js")`.
_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)["']\./([\w.-]+\.js)["']""")
# Views render from the store and send actions; the services below them import no view.
NAMED_VIEWS = {"add-form.js", "dialogs.js", "filter.js", "live.js", "session.js", "tabs.js", "undo.js"}
NEVER_IMPORTED = {"app.js", "session.js"}


def imports_of(source: str) -> set[str]:
    without_comments = re.sub(r"/\*.*?\*/|//[^\n]*", "", source, flags=re.S)
    return set(_IMPORT.findall(without_comments))


def module_graph() -> dict[str, set[str]]:
    return {path.name: imports_of(path.read_text(encoding="utf-8")) for path in sorted(WEB.glob("*.js"))}


def is_view(name: str) -> bool:
    return name.endswith("-view.js") or name in NAMED_VIEWS


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None: a depth-first search."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for child in sorted(graph.get(node, ())):
            if state.get(child) == 1:
                return path[path.index(child) :] + [child]
            if child not in state and (found := visit(child)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle_and_passes_a_tree() -> None:
    assert find_cycle({"a.js": {"b.js"}, "b.js": {"c.js"}, "c.js": {"a.js"}}) == ["a.js", "b.js", "c.js", "a.js"]
    assert find_cycle({"a.js": {"b.js", "c.js"}, "b.js": {"c.js"}, "c.js": set()}) is None
    assert imports_of(
        'import { x } from "./a.js";\nexport { y } from "./b.js";\n// import "./c.js"\nimport("./d.js")'
    ) == {
        "a.js",
        "b.js",
        "d.js",
    }


def test_the_page_modules_import_each_other_in_no_circle() -> None:
    graph = module_graph()
    assert len(graph) >= 15, graph  # the glob found the page's modules
    assert find_cycle(graph) is None, f"import cycle: {' → '.join(find_cycle(graph) or [])}"


def test_no_view_imports_another_view_and_nothing_imports_app_or_session() -> None:
    graph = module_graph()
    # app.js is the root that wires everything, session.js included; nothing else may point back at either.
    back = {
        (module, target)
        for module, targets in graph.items()
        if module != "app.js"
        for target in targets & NEVER_IMPORTED
    }
    assert back == set(), f"imported back: {sorted(back)}"
    crossing = {
        (module, target)
        for module, targets in graph.items()
        if is_view(module)
        for target in targets
        if is_view(target)
    }
    assert crossing == set(), f"a view imports a view: {sorted(crossing)}"


def test_every_module_imported_is_served_and_every_served_module_exists() -> None:
    graph = module_graph()
    imported = set().union(*graph.values())
    assert imported <= set(SCRIPT_MODULES), sorted(imported - set(SCRIPT_MODULES))
    assert set(graph) == set(SCRIPT_MODULES), sorted(set(graph) ^ set(SCRIPT_MODULES))
