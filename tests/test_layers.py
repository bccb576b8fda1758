"""The layers of docs/architecture.md, enforced: every module under engines/, stages/,
artifacts/, flows/, games/ and api/ is parsed (imports at module level and inside functions,
relative ones resolved) and checked against the tables below, without importing anything.

A failure names the module, its file and line, and the import that breaks a rule."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE = "gameforge"
PARTS = ("engines", "stages", "artifacts", "flows", "games", "api")
# Each folder is the sub-package of `gameforge` of its name, except api/: `gameforge` itself (the
# notebook API), whose modules are `gameforge` and `gameforge._<module>`.
TOP = "api"

# --- The rules (docs/architecture.md, "Layers") ---------------------------------------------

# Which parts of gameforge a part may import. Imports point down only:
# flows -> stages -> engines, and only stages and flows use the store, which uses no other part.
# The games' declarations (module names, no code) import no other part; stages and flows read
# them to build their registries. The notebook API (`gameforge` itself) is a facade over every
# part, and no part imports it.
LAYER_MAY_IMPORT: dict[str, frozenset[str]] = {
    "engines": frozenset({"engines"}),
    "stages": frozenset({"stages", "engines", "artifacts", "games"}),
    "artifacts": frozenset({"artifacts"}),
    "flows": frozenset({"flows", "stages", "engines", "artifacts", "games"}),
    "games": frozenset({"games"}),
    "api": frozenset(PARTS),
}

# Which other game packages an engine package may import (its own is always allowed).
ENGINE_MAY_IMPORT: dict[str, frozenset[str]] = {
    "common": frozenset(),
    "poker": frozenset({"common"}),
    "nlhe": frozenset({"common", "poker"}),
    "hearts": frozenset({"common"}),
    "blokus": frozenset({"common"}),
}

# Third-party libraries a part must not import (by top-level package name).
FORBIDDEN_LIBRARIES: dict[str, frozenset[str]] = {
    "engines": frozenset({"zarr", "prefect", "dask", "distributed", "typer", "matplotlib"}),
    "stages": frozenset({"prefect", "typer", "matplotlib"}),
    "artifacts": frozenset(),
    "flows": frozenset(),
    "games": frozenset({"numpy", "numba", "torch", "zarr", "prefect", "dask", "distributed"}),
    "api": frozenset(),
}


# --- The checker ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Module:
    """One module's source: its dotted name, its file (for messages) and whether it is a
    package's `__init__` (relative imports resolve from the package itself then)."""

    name: str
    path: str
    source: str
    is_package: bool = False


@dataclass(frozen=True)
class Import:
    """One imported name as written at `line` of `module`, resolved to an absolute name."""

    module: Module
    line: int
    target: str

    def where(self) -> str:
        """`module (file:line)`, for a message."""
        return f"{self.module.name} ({self.module.path}:{self.line})"


def imports_of(module: Module, known: set[str]) -> Iterator[Import]:
    """Every import in `module`, wherever it stands (module level, functions, `if` blocks),
    resolved: `from p import m` gives `p.m` when that is a module in `known`, else `p`."""
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    for node in ast.walk(ast.parse(module.source, module.path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - (node.level - 1)])
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield Import(module, node.lineno, sub if sub in known else base)


def part_of(name: str) -> str | None:
    """The part (`engines`, ...) a gameforge module belongs to, None outside gameforge: `api`
    for `gameforge` itself and its own modules."""
    pieces = name.split(".")
    if pieces[0] != NAMESPACE:
        return None
    if len(pieces) >= 2 and pieces[1] in PARTS and pieces[1] != TOP:
        return pieces[1]
    return TOP


def engine_package(name: str) -> str | None:
    """The game package (`poker`, ...) of an engines module, None for `gameforge.engines`."""
    pieces = name.split(".")
    return pieces[2] if len(pieces) >= 3 and part_of(name) == "engines" else None


def layer_violations(imports: list[Import]) -> list[str]:
    """Imports that break LAYER_MAY_IMPORT, ENGINE_MAY_IMPORT or FORBIDDEN_LIBRARIES."""
    found = []
    for imp in imports:
        source = part_of(imp.module.name)
        assert source is not None, imp.module.name
        target = part_of(imp.target)
        if target is None:
            library = imp.target.split(".")[0]
            if library in FORBIDDEN_LIBRARIES[source]:
                found.append(f"{imp.where()} imports {imp.target}: {source} may not use {library}")
            continue
        if target not in LAYER_MAY_IMPORT[source]:
            allowed = ", ".join(sorted(LAYER_MAY_IMPORT[source]))
            found.append(f"{imp.where()} imports {imp.target}: {source} may import only {allowed}")
            continue
        game, other = engine_package(imp.module.name), engine_package(imp.target)
        if game and other and other != game and other not in ENGINE_MAY_IMPORT[game]:
            allowed = ", ".join(sorted(ENGINE_MAY_IMPORT[game])) or "no other game package"
            found.append(f"{imp.where()} imports {imp.target}: engines.{game} may import {allowed}")
    return found


def cycles(imports: list[Import]) -> list[str]:
    """Every import cycle among the modules, one message each: the modules around it, with the
    line that imports the next. Only the module named is an edge, not the packages above it:
    every `gameforge.x.y` import runs `gameforge.x`'s `__init__` first, which is harmless."""
    modules = {imp.module.name for imp in imports}
    edges: dict[str, dict[str, Import]] = {name: {} for name in modules}
    for imp in imports:
        if imp.target in modules and imp.target != imp.module.name:
            edges[imp.module.name].setdefault(imp.target, imp)
    found = []
    for component in _strongly_connected(edges):
        if len(component) < 2:
            continue
        start = min(component)
        path = _shortest_cycle(edges, start, component)
        steps = [
            f"{a} ({edges[a][b].module.path}:{edges[a][b].line}) -> {b}"
            for a, b in zip(path, path[1:], strict=False)
        ]
        found.append("import cycle: " + "; ".join(steps))
    return found


def _strongly_connected(edges: dict[str, dict[str, Import]]) -> list[set[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


def _shortest_cycle(edges: dict[str, dict[str, Import]], start: str, within: set[str]) -> list[str]:
    """The shortest path start -> ... -> start inside one strongly connected component."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        after = []
        for node in frontier:
            for child in sorted(edges[node]):
                if child not in within:
                    continue
                if child == start:
                    path = [start, node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return path[::-1]
                if child not in previous:
                    previous[child] = node
                    after.append(child)
        frontier = after
    raise AssertionError(f"{start} is in a component without a cycle")


def project_modules() -> list[Module]:
    """Every module of the six parts, named as installed (`engines/poker/x.py` is
    `gameforge.engines.poker.x`, `api/_store.py` is `gameforge._store`)."""
    found = []
    for part in PARTS:
        for path in sorted((ROOT / part).rglob("*.py")):
            relative = path.relative_to(ROOT)
            inside = relative.relative_to(TOP) if part == TOP else relative
            pieces = [NAMESPACE, *inside.with_suffix("").parts]
            is_package = pieces[-1] == "__init__"
            if is_package:
                pieces.pop()
            found.append(Module(".".join(pieces), str(relative), path.read_text(), is_package))
    return found


def all_imports(modules: list[Module]) -> list[Import]:
    """The imports of every module, resolved against the others."""
    known = {m.name for m in modules}
    return [imp for module in modules for imp in imports_of(module, known)]


# --- The repository obeys them --------------------------------------------------------------


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    """The imports of every module of the repository's six parts."""
    modules = project_modules()
    assert {part_of(m.name) for m in modules} == set(PARTS)
    return all_imports(modules)


def test_every_part_has_its_rules():
    """The tables cover every part and every engine package (a new one needs its row)."""
    assert set(LAYER_MAY_IMPORT) == set(FORBIDDEN_LIBRARIES) == set(PARTS)
    games = {p.name for p in (ROOT / "engines").iterdir() if (p / "__init__.py").exists()}
    assert games == set(ENGINE_MAY_IMPORT), "a new engine package needs its row"


def test_imports_follow_the_layers(imports):
    """No module imports a part, a game package or a library its rules forbid."""
    found = layer_violations(imports)
    assert not found, "\n".join(found)


def test_no_import_cycle(imports):
    """No two modules import each other, directly or around a longer loop."""
    found = cycles(imports)
    assert not found, "\n".join(found)


# --- The checker catches what it should ------------------------------------------------------


def _fake(*modules: tuple[str, str]) -> list[Import]:
    """The imports of made-up modules, given as (dotted name, source)."""
    return all_imports(
        [Module(name, name.replace(".", "/") + ".py", source) for name, source in modules]
    )


def test_the_checker_reports_a_broken_layer():
    """Each kind of rule, broken once in made-up modules, is reported; nlhe -> poker is not."""
    found = layer_violations(
        _fake(
            ("gameforge.engines.poker.bad", "def f():\n    from gameforge.flows import cli\n"),
            ("gameforge.engines.hearts.bad", "from ..blokus import game\n"),
            ("gameforge.engines.blokus.game", ""),
            ("gameforge.engines.common.bad", "import zarr.codecs\n"),
            ("gameforge.artifacts.bad", "from gameforge.stages.base import Stage\n"),
            ("gameforge.stages.bad", "import prefect\nfrom gameforge.artifacts import store\n"),
            ("gameforge.engines.nlhe.ok", "from gameforge.engines.poker import bad\n"),
        )
    )
    assert found == [
        "gameforge.engines.poker.bad (gameforge/engines/poker/bad.py:2) imports "
        "gameforge.flows: engines may import only engines",
        "gameforge.engines.hearts.bad (gameforge/engines/hearts/bad.py:1) imports "
        "gameforge.engines.blokus.game: engines.hearts may import common",
        "gameforge.engines.common.bad (gameforge/engines/common/bad.py:1) imports "
        "zarr.codecs: engines may not use zarr",
        "gameforge.artifacts.bad (gameforge/artifacts/bad.py:1) imports "
        "gameforge.stages.base: artifacts may import only artifacts",
        "gameforge.stages.bad (gameforge/stages/bad.py:1) imports prefect: "
        "stages may not use prefect",
    ]


def test_the_checker_reports_a_cycle_through_a_function_level_import():
    """A two-module cycle closed inside a function is reported; a module leading into it
    without being part of it is not."""
    found = cycles(
        _fake(
            ("gameforge.artifacts.a", "from gameforge.artifacts.b import B\n"),
            ("gameforge.artifacts.b", "def f():\n    from . import a\n"),
            ("gameforge.artifacts.c", "from gameforge.artifacts import a\n"),
        )
    )
    assert found == [
        "import cycle: gameforge.artifacts.a (gameforge/artifacts/a.py:1) -> "
        "gameforge.artifacts.b; gameforge.artifacts.b (gameforge/artifacts/b.py:2) -> "
        "gameforge.artifacts.a"
    ]
