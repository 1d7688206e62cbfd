"""The floor plan stays true: no import cycle, no import from a lower layer to a higher one.

Every import counts, at module level, inside a function or under `TYPE_CHECKING`: a lazy
import is still a dependency. The layers, lowest first (a module may import its own layer
and the ones below):

- the domain's shared words (errors, limits, actors, the base command, the record's topics);
- the card game (`domain.game`), which never imports a table;
- one table (`domain.table`); the bank auction and the dispute; a tournament; the bots;
- infra's errors and settings; the store (`infra.store`); the record's proofs and verify
  (`infra.audit`), which rebuilds views through a port the projections give it; the
  application services (`infra.services`);
- the projections, the workers, the API and CLI.

Also here: the size of the plan (at most 12 entries at the top of `domain/` and `infra/`, no
module over 600 lines) and no link out of the repository.
"""

from __future__ import annotations

import ast
import functools
import re
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("domain", "infra", "projections", "workers", "api")
LAYERS: tuple[tuple[str, ...], ...] = (
    ("domain.errors",),
    ("domain.limits",),
    ("domain.actors", "domain.commands", "domain.topics"),
    ("domain.game",),
    ("domain.table",),
    ("domain.auction", "domain.dispute"),
    ("domain.tournament",),
    ("domain.bots",),
    ("infra.errors",),
    ("infra.settings",),
    ("infra.store",),
    ("infra.audit",),
    ("infra.services",),
    ("projections",),
    ("workers",),
    ("api",),
)
MAX_ENTRIES = 12
MAX_LINES = 600


def modules(root: Path) -> dict[str, Path]:
    """Every module of the packages under `root`, by dotted name."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once however many checks (and copies) read it."""
    return _parsed(path.read_text())


@functools.cache
def _parsed(text: str) -> ast.Module:
    return ast.parse(text)


@functools.cache
def imports(root: Path) -> dict[str, set[str]]:
    """Each module's imports of the project's own modules (whatever the import's place);
    read once a root (the checks read, never change, the graph)."""
    known = modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str | None] = set()
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Import):
                targets |= {resolve(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                targets |= {resolve(f"{base}.{alias.name}") for alias in node.names}
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str) -> int:
    for number, layer in enumerate(LAYERS):
        if any(module == unit or module.startswith(unit + ".") for unit in layer):
            return number
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def upward(graph: Mapping[str, set[str]]) -> list[str]:
    return [f"{module} -> {target}" for module, targets in sorted(graph.items())
            for target in sorted(targets) if layer_of(target) > layer_of(module)]


def test_the_graph_counts_every_import() -> None:
    """A module-level import, and one under `TYPE_CHECKING`, are both edges of the graph."""
    graph = imports(ROOT)
    assert "api.view_reader" in graph["api.metrics"]
    assert "api.metrics" in graph["api.routes_tables"]  # under TYPE_CHECKING


def test_no_import_cycles() -> None:
    assert cycles(imports(ROOT)) == []


def test_no_import_from_a_lower_layer_to_a_higher_one() -> None:
    assert upward(imports(ROOT)) == []


def test_a_cycle_or_an_upward_import_made_on_purpose_is_caught(tmp_path: Path) -> None:
    """A scratch copy of the packages where the card game imports the table: the checks see
    both the cycle it closes and the upward import."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("static", "__pycache__"))
    cards = tmp_path / "domain" / "game" / "cards.py"
    cards.write_text(cards.read_text() + "\nfrom domain.table.state import TableState\n")
    graph = imports(tmp_path)
    assert any("domain.game.cards" in component for component in cycles(graph))
    assert "domain.game.cards -> domain.table.state" in upward(graph)


def test_domain_and_infra_have_few_entries_at_their_top() -> None:
    for package in ("domain", "infra"):
        entries = [p.name for p in (ROOT / package).iterdir()
                   if p.name != "__pycache__" and (p.is_dir() or p.suffix == ".py")]
        assert len(entries) <= MAX_ENTRIES, (package, sorted(entries))


def test_every_package_says_what_it_holds() -> None:
    for path in modules(ROOT).values():
        assert ast.get_docstring(parsed(path)), f"{path} has no docstring"


def python_files() -> Iterator[Path]:
    for top in (*PACKAGES, "tests"):
        yield from (ROOT / top).rglob("*.py")


def test_no_module_over_600_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in python_files()
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


LINK = re.compile(r"\]\(([^)#\s]+)")


def test_no_link_leaves_the_repository() -> None:
    """Every relative link of the documentation resolves to a file inside the repository."""
    pages = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    outside = []
    for page in pages:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            resolved = (page.parent / target).resolve()
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                outside.append(f"{page.relative_to(ROOT)}: {target}")
    assert outside == []
