"""The package's layers import only downward, and its imports close no cycle.

Every ``import`` of a recon module counts, function-level ones included: a lazy import
hides a dependency from the reader, not from the design. The layers, bottom to top:

    declarations -> engine -> quality -> packaging -> reading -> cli

A module may import its own layer and the layers below it. A function-level import of a
recon module is allowed only where it saves start-up time, and its line says so."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "recon"

LAYERS: dict[str, tuple[str, ...]] = {
    # what an author declares, and the plain utilities everything shares
    "declarations": ("recon", "recon._version", "recon.errors", "recon.canonjson", "recon.compare", "recon.axes",
                     "recon.outputs", "recon.evidence", "recon.baselines", "recon.oracle", "recon.registry",
                     "recon.fsutil"),
    # sweeping, running untrusted code, grading
    "engine": ("recon.sweep", "recon.runtimes", "recon.checks", "recon.ladder", "recon.task", "recon.grader",
               "recon.run"),
    # attacking a task before anyone else does
    "quality": ("recon.mutation", "recon.leaks", "recon.audit", "recon.validate"),
    # making tasks
    "packaging": ("recon.instruction", "recon.checkpoints", "recon.build", "recon.dataset", "recon.scaffold"),
    # reading gradings and tasks back
    "reading": ("recon.history", "recon.report", "recon.results", "recon._harborjobs", "recon._plot", "recon.stats"),
    "cli": ("recon.cli", "recon.__main__"),
}
ORDER = list(LAYERS)


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "templates" not in p.parts}


def layer_of(module: str) -> str:
    best = ""
    found = None
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, found = prefix, layer
    if found is None:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS in {__file__}")
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int, bool, str]]:
    """(imported recon module, line, at function level, the line's text) for every import."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    lines = path.read_text(encoding="utf-8").splitlines()
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    nested: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nested.update(id(n) for n in ast.walk(node) if n is not node)
    found = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # `from pkg import sub` depends on the submodule; `from mod import name` on mod
            subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in known]
            targets = subs if len(subs) == len(node.names) else [mod, *subs]
        for t in targets:
            while t and t not in known:
                t = t.rsplit(".", 1)[0] if "." in t else ""
            if t and t != name:
                found.append((t, node.lineno, id(node) in nested, lines[node.lineno - 1]))
    return found


GRAPH = {name: imports(name, path, modules()) for name, path in modules().items()}


def test_every_module_has_a_layer() -> None:
    for name in GRAPH:
        layer_of(name)


def test_no_import_climbs_a_layer() -> None:
    climbs = [f"{src} ({layer_of(src)}) line {line} imports {dst} ({layer_of(dst)})"
              for src, edges in GRAPH.items() for dst, line, _, _ in edges
              if ORDER.index(layer_of(dst)) > ORDER.index(layer_of(src))]
    assert climbs == []


def test_no_import_closes_a_cycle() -> None:
    # Tarjan's strongly connected components over the module graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in {dst for dst, _, _, _ in GRAPH.get(v, [])}:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert cycles == []


def test_a_lazy_import_of_recon_says_it_saves_start_up() -> None:
    unexplained = [f"{src} line {line}: {text.strip()}" for src, edges in GRAPH.items()
                   for _, line, lazy, text in edges if lazy and "start-up" not in text]
    assert unexplained == []


@pytest.mark.parametrize("layer", ORDER)
def test_layers_are_not_empty(layer: str) -> None:
    assert any(layer_of(name) == layer for name in GRAPH), f"no module in layer {layer}"
