"""chalicelib's modules import each other in no circle (issue 26 broke the one between the keyring and text sealing)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def import_graph() -> dict[str, set[str]]:
    """Each chalicelib module → the chalicelib modules it imports when it is imported (module level, not
    inside functions or `if TYPE_CHECKING:`, which do not run at import)."""
    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / "chalicelib").rglob("*.py")):
        deps: set[str] = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("chalicelib"):
                deps.add(node.module)
                deps |= {
                    f"{node.module}.{a.name}"
                    for a in node.names
                    if (ROOT / f"{node.module}.{a.name}".replace(".", "/")).with_suffix(".py").exists()
                }
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("chalicelib")}
        graph[_module(path)] = deps
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        for dep in sorted(graph.get(module, ())):
            if (found := visit(dep, [*path, module])) is not None:
                return found
        done.add(module)
        return None

    for module in sorted(graph):
        if (found := visit(module, [])) is not None:
            return found
    return None


def test_the_cycle_finder_finds_a_cycle_and_passes_a_tree() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_chalicelib_imports_in_no_circle_and_the_keyring_knows_nothing_of_text_sealing() -> None:
    graph = import_graph()
    assert "chalicelib.storage.keys" in graph["chalicelib.crypto.keyring"]  # the reader sees the imports
    assert find_cycle(graph) is None, " → ".join(find_cycle(graph) or [])
    assert "chalicelib.storage.text" not in graph["chalicelib.crypto.keyring"]
