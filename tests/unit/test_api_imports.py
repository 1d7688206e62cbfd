"""No module of `api` is in an import cycle: module-level imports, those under
`if TYPE_CHECKING` included (a cycle there is a cycle of concepts, and one refactor away from a
runtime one). Read from the source with `ast`, so nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted([*ROOT.glob("api/*.py"), *ROOT.glob("api/commands/*.py")]):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imported(name: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _statements(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The module-level imports, also those in an `if`, `try` or `with` at module level."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If | ast.With):
            found += _statements(node.body) + _statements(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            found += _statements(node.body) + _statements(node.orelse)
            found += _statements(node.finalbody)
            for handler in node.handlers:
                found += _statements(handler.body)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in _statements(ast.parse(path.read_text()).body):
            for target in _imported(name, path, node):
                while target and target not in modules:  # `api.x.Thing` is `api.x`
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return cycles


def test_the_graph_is_read() -> None:
    graph = _graph()
    assert "api.view_reader" in graph["api.metrics"]
    assert "api.metrics" in graph["api.routes_tables"]  # under TYPE_CHECKING


def test_no_module_of_api_is_in_an_import_cycle() -> None:
    assert _cycles(_graph()) == []


def test_a_cycle_is_found() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
