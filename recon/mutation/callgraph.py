"""Which functions of a reference a single edit cannot change: the static half of
sharing work across mutants.

A mutant edits one module-level function F (its ``scope``). Another module-level
function G whose body -- and the bodies of everything G refers to, transitively -- never
names F computes what it computed in the reference's run whenever it is called with the
same arguments, provided it acts only through its arguments and result. The worker then
answers such a call from the reference's recorded calls instead of running it
(:mod:`recon.mutation.worker`), so a mutant late in a pipeline does not pay again for
the stages before it.

The analysis is conservative; a function is left to run when any of these hold for it
or for anything it refers to: it names F (or a class, whose methods may call F); it
names a module-level binding that is not a function, an import or an immutable constant
(a list, a dict, an array: state a mutant could change in place); it declares
``global``/``nonlocal`` or calls ``globals``, ``eval``, ``exec`` or ``__import__``.
Nothing is memoized for an edit outside a module-level function (module constants,
classes) or in a function that declares ``global``.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

__all__ = ["CallGraph"]

_DYNAMIC = frozenset({"globals", "eval", "exec", "__import__", "vars", "locals"})


_READERS = frozenset({"get", "items", "keys", "values", "copy", "index", "count", "shape", "dtype", "ndim",
                      "size", "startswith", "endswith", "format", "join", "split"})


def _parents(tree: ast.Module) -> dict[int, ast.AST]:
    """Each node's parent, by the child's id."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


def _read_only(tree: ast.Module, name: str, parents: dict[int, ast.AST]) -> bool:
    """Whether module-level ``name`` (bound once) is only ever read: each use is an item
    or a non-mutating attribute of it (``X[k]``, ``X.get(k)``, ``X.items()``), an
    iteration over it, a membership test or ``len(X)``; its items are never written or
    called with a method that could change them. Anything else -- passing ``X`` itself
    to a call, aliasing it, writing ``X[k] = v`` -- makes it state."""
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == name
                for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])):
            binding = stmt
            break
    else:
        return False
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == name) or parents.get(id(node)) is binding:
            continue
        if not isinstance(node.ctx, ast.Load):
            return False
        up = parents.get(id(node))
        if isinstance(up, ast.Subscript) and up.value is node:
            # X[k]: read, unless written, deleted or a mutating method is called on the item
            item_up = parents.get(id(up))
            if not isinstance(up.ctx, ast.Load):
                return False
            if isinstance(item_up, ast.Attribute) and item_up.attr not in _READERS:
                return False
            if isinstance(item_up, ast.Subscript) and not isinstance(item_up.ctx, ast.Load):
                return False
            continue
        if isinstance(up, ast.Attribute) and up.value is node and up.attr in _READERS:
            continue
        if isinstance(up, ast.comprehension) and up.iter is node or isinstance(up, ast.For) and up.iter is node:
            continue
        if isinstance(up, ast.Compare) and node in up.comparators and all(
                isinstance(op, (ast.In, ast.NotIn)) for op in up.ops):
            continue
        if (isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id in ("len", "sorted")
                and up.args == [node]):
            continue
        return False
    return True


def _immutable(node: ast.expr) -> bool:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False

    def frozen(v: object) -> bool:
        if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
            return True
        if isinstance(v, (tuple, frozenset)):
            return all(frozen(x) for x in v)
        return False

    return frozen(value)


@dataclass
class CallGraph:
    """The module-level names each module-level function and class of ``source`` refers
    to; :meth:`unaffected` answers for one edited function."""

    source: str
    nodes: dict[str, set[str]] = field(default_factory=dict, repr=False)   # def/class -> names it uses
    functions: set[str] = field(default_factory=set, repr=False)
    classes: set[str] = field(default_factory=set, repr=False)
    state: set[str] = field(default_factory=set, repr=False)     # module-level names a mutant could change in place
    unsafe: set[str] = field(default_factory=set, repr=False)    # declares global, calls eval, ...
    _cache: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        try:
            tree = ast.parse(self.source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return  # no graph: nothing is memoized
        bound: dict[str, int] = {}   # name -> 1 per binding to an immutable constant, 2 per other binding
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef):
                self.functions.add(stmt.name)
                self._node(stmt.name, stmt)
            elif isinstance(stmt, ast.ClassDef):
                self.classes.add(stmt.name)
                self._node(stmt.name, stmt)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    bound.setdefault((alias.asname or alias.name).split(".")[0], 0)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                # (a, b = 1, 2 unpacks immutables into names too)
                ok = _immutable(stmt.value) and all(isinstance(n, (ast.Name, ast.Tuple, ast.Store))
                                                    for t in targets for n in ast.walk(t))
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            bound[n.id] = bound.get(n.id, 0) + (1 if ok else 2)
            else:   # anything else binding a name at module level (async def, for, with, +=): state
                for n in ast.walk(stmt):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        bound[n.id] = bound.get(n.id, 0) + 2
                    elif isinstance(n, ast.AsyncFunctionDef):
                        bound[n.name] = bound.get(n.name, 0) + 2
        # an import, or one binding to an immutable constant, is safe; a table bound once and
        # only ever read (a dict of room sizes) too; anything rebound or written is state
        once = {n for n, c in bound.items() if c == 2}
        parents = _parents(tree) if once else {}
        self.state = ({n for n, c in bound.items() if c > 2} | (set(bound) & (self.functions | self.classes))
                      | {n for n in once if not _read_only(tree, n, parents)})

    def _node(self, name: str, node: ast.AST) -> None:
        used: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                used.add(n.id)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                self.unsafe.add(name)
        if used & _DYNAMIC:
            self.unsafe.add(name)
        self.nodes[name] = used

    def unaffected(self, scope: str) -> frozenset[str]:
        """The module-level functions an edit inside function ``scope`` cannot change
        (see the module docstring); empty for an edit anywhere else."""
        if scope not in self._cache:
            ok = scope in self.functions and scope not in self.unsafe
            self._cache[scope] = frozenset(g for g in self.functions if ok and g != scope and self._closed(g, scope))
        return self._cache[scope]

    def _closed(self, g: str, scope: str) -> bool:
        seen: set[str] = set()
        todo = [g]
        while todo:
            h = todo.pop()
            if h in seen:
                continue
            seen.add(h)
            if h == scope or h in self.classes or h in self.unsafe:
                return False
            for name in self.nodes[h]:
                if name in self.state:
                    return False
                if name in self.functions or name in self.classes:
                    todo.append(name)
        return True
