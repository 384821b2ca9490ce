"""The modules of chalicelib/, local/ and bench/ import each other in no circle, deferred imports included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


PACKAGES = ("chalicelib", "local", "bench")


def _ours(module: str, packages: tuple[str, ...]) -> bool:
    return module.split(".")[0] in packages


def import_graph(packages: tuple[str, ...] = ("chalicelib",), *, deferred: bool = False) -> dict[str, set[str]]:
    """Each module of `packages` → the modules of `packages` it imports when it is imported (module level), or,
    with `deferred`, anywhere in it (inside functions and `if TYPE_CHECKING:` too: an import put off to a call
    still ties the two modules together, and only hides the circle from the interpreter)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(p for package in packages for p in (ROOT / package).rglob("*.py")):
        deps: set[str] = set()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree) if deferred else tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and _ours(node.module, packages):
                deps.add(node.module)
                deps |= {
                    f"{node.module}.{a.name}"
                    for a in node.names
                    if (ROOT / f"{node.module}.{a.name}".replace(".", "/")).with_suffix(".py").exists()
                }
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if _ours(a.name, packages)}
        graph[_module(path)] = deps - {_module(path)}
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


def test_chalicelib_local_and_bench_import_in_no_circle_even_through_deferred_imports() -> None:
    graph = import_graph(PACKAGES, deferred=True)
    assert "bench.agents_bench" in graph["bench.run"]  # the reader sees all three packages, imports in functions too
    assert "local.demo_steps" in graph["local.demo_mcp"]
    assert find_cycle(graph) is None, " → ".join(find_cycle(graph) or [])


def test_a_deferred_import_is_read_as_an_import() -> None:
    """The circles this test is for were each closed by an import inside a function."""
    graph = import_graph(("chalicelib",), deferred=True)
    assert "chalicelib.agent_names" in graph["chalicelib.models"]  # MemoryState.grant's import, inside `merged`
    assert "chalicelib.agent_names" not in import_graph(("chalicelib",))["chalicelib.models"]
