"""Mutants of a reference program: single-edit variants made by standard operators.

The source is parsed once with libcst (a lossless concrete syntax tree: every mutant is
the original text with one span replaced, so line numbers, comments and formatting stay
as the author wrote them, and "before -> after" is exact source text). Each operator
looks at one kind of node and proposes replacement text for the node's span.

The operators follow the classic sets of mutmut (arithmetic and augmented-assignment
swaps, and/or, True/False, is/in keyword swaps, removal of unary operators, keyword
argument removal, break/continue) and cosmic-ray (comparison replacement, condition
negation ``AddNot``, ``NumberReplacer`` +-1, ``ZeroIterationForLoop``), with the
relational replacements restricted to the sufficient set of Kaminski, Ammann and
Offutt (each relational operator is replaced by the two that subsume the others), plus
the ones scientific code needs: statement deletion, an early ``return`` of the
function's final value, off-by-one on slice bounds and ``range`` stops, relative
nudges of float constants, min/max-style function swaps, and the population and sample
forms of a spread (``ddof``: a standard deviation over n or n - 1, the commonest way two
honest implementations of one statistic differ). String literals are not
mutated (in a reference they are dictionary keys and library option names: their
mutants only crash).

Two facts let the analysis skip runs that cannot change anything (both sound for a
single edit of a deterministic program):

- *reach*: a mutant has an effect on a scenario only if the scenario executes one of
  its ``reach`` lines (its own lines; for a module-level assignment, the lines that read
  the names it binds). The reference is traced once per scenario.
- *infection* (weak mutation, Howden 1982): a mutant that swaps the operator of a
  comparison or an arithmetic operation, or drops a unary minus, changes nothing on a
  scenario where the swapped operator yields the same value as the original every
  time the site runs. :func:`instrument` routes those sites through a helper that
  evaluates the operands once and records which variants would differ.
"""
from __future__ import annotations

import ast
import hashlib
import math
import operator as _op
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterable, Iterator, Sequence

__all__ = ["Mutant", "MutantSet", "OPERATORS", "generate_mutants", "instrument", "weak_helper", "WEAK_HELPER",
           "subsample", "same_value"]

WEAK_HELPER = "__recon_weak__"

# name -> what it does (shown by `recon mutate --json` and in the report)
OPERATORS: dict[str, str] = {
    "delete_statement": "replace a statement (or a whole if-statement) by `pass`",
    "compare": "replace a relational operator by the two that subsume the others (< -> <=, !=; ...)",
    "is_in": "swap is / is not and in / not in",
    "arith": "swap an arithmetic operator (+ -, * /, // /, % /, ** *, @ *, << >>, & |, ^ &), also in x op= y",
    "number": "nudge a numeric constant (integers +-1, floats x1.1 and x0.9, 0.0 -> 1.0)",
    "negate": "negate the condition of an if / elif / while / conditional expression",
    "unary": "remove a unary operator (-x -> x, not x -> x, ~x -> x)",
    "and_or": "swap and / or",
    "bool": "swap True / False",
    "drop_kwarg": "drop one keyword argument of a call",
    "return_early": "return the function's final value before an earlier top-level statement",
    "off_by_one": "add or subtract 1 from a non-literal slice bound or range() stop",
    "zero_loop": "make a for loop iterate over nothing",
    "break_continue": "swap break / continue",
    "swap_call": "swap min/max, argmin/argmax, floor/ceil, any/all in a call",
    "ddof": "flip a spread between its population and sample forms (std()/var() gain ddof=1; pstdev <-> stdev, "
            "pvariance <-> variance)",
}

_COMPARE_SUBSTITUTES = {  # sufficient relational replacements
    "<": ("<=", "!="),
    "<=": ("<", "=="),
    ">": (">=", "!="),
    ">=": (">", "=="),
    "==": ("<=", ">="),
    "!=": ("<", ">"),
}
_ARITH = {
    "+": "-", "-": "+", "*": "/", "/": "*", "//": "/", "%": "/", "**": "*", "@": "*",
    "<<": ">>", ">>": "<<", "&": "|", "|": "&", "^": "&",
}
_SWAP_NAMES = {
    "min": "max", "max": "min", "amin": "amax", "amax": "amin", "nanmin": "nanmax", "nanmax": "nanmin",
    "argmin": "argmax", "argmax": "argmin", "floor": "ceil", "ceil": "floor", "any": "all", "all": "any",
    "minimum": "maximum", "maximum": "minimum",
}
#: numpy's spreads (population by default: ``ddof=0``) and the statistics module's pairs
_SPREADS = ("std", "var", "nanstd", "nanvar")
_SAMPLE_PAIRS = {"pstdev": "stdev", "stdev": "pstdev", "pvariance": "variance", "variance": "pvariance"}
_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "<": _op.lt, "<=": _op.le, ">": _op.gt, ">=": _op.ge, "==": _op.eq, "!=": _op.ne,
    "+": _op.add, "-": _op.sub, "*": _op.mul, "/": _op.truediv, "//": _op.floordiv, "%": _op.mod,
    "**": _op.pow, "@": _op.matmul, "<<": _op.lshift, ">>": _op.rshift, "&": _op.and_, "|": _op.or_,
    "^": _op.xor,
}


@dataclass(frozen=True)
class Mutant:
    """One single-edit variant of the source."""

    id: int
    operator: str
    line: int
    col: int
    function: str          # enclosing function ("" at module level)
    before: str            # the replaced text (one line, shortened)
    after: str             # what replaces it
    source: str = field(repr=False)
    # Lines whose execution the edit needs to have any effect (see the module docstring).
    reach: tuple[int, ...] = ()
    # Weak-mutation key "site|variant" (see instrument()), or None.
    weak: str | None = None
    # The module-level function the edit is in ("" elsewhere): on a scenario where that
    # function, re-run on the arguments it was called with, returns the same values and
    # leaves its arguments the same, the mutant cannot differ (see recon.mutation.worker).
    scope: str = ""

    @property
    def key(self) -> str:
        """The edit itself (where, which operator, what replaces what): the same mutant
        has the same key in every analysis of the same source, whatever its id there."""
        return f"{self.line}:{self.col}:{self.operator}:{self.before}->{self.after}"

    def describe(self) -> str:
        where = f"line {self.line}" + (f" in {self.function}()" if self.function else "")
        return f"{where}: {self.before} -> {self.after} ({self.operator})"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "operator": self.operator, "line": self.line, "col": self.col,
                "function": self.function, "before": self.before, "after": self.after}


@dataclass
class MutantSet:
    mutants: list[Mutant]
    sites_uncovered: int            # mutants not made because no scenario reaches their lines
    capped: int                     # mutants dropped by the per-line cap
    invalid: int                    # candidate edits that did not compile
    uncovered_lines: list[int]      # executable lines no scenario ran


def _short(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


@dataclass(frozen=True)
class _Edit:
    operator: str
    line: int
    col: int
    start: int
    end: int
    text: str
    before: str
    function: str
    reach: tuple[int, ...]
    weak: str | None = None
    scope: str = ""


def _code(module: Any, node: Any) -> str:
    """The node's code without its own parentheses (positions exclude them)."""
    if getattr(node, "lpar", None) or getattr(node, "rpar", None):
        node = node.with_changes(lpar=[], rpar=[])
    return str(module.code_for_node(node))


def _site_key(positions: Any, node: Any) -> str:
    r = positions[node]
    return f"{r.start.line}:{r.start.column}:{r.end.line}:{r.end.column}"


def _op_symbol(op: Any) -> str:
    import libcst as cst  # noqa: PLC0415

    table: dict[type, str] = {
        cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">=",
        cst.Equal: "==", cst.NotEqual: "!=", cst.Is: "is", cst.IsNot: "is not", cst.In: "in", cst.NotIn: "not in",
        cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
        cst.Modulo: "%", cst.Power: "**", cst.MatrixMultiply: "@", cst.LeftShift: "<<", cst.RightShift: ">>",
        cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^",
        cst.AddAssign: "+=", cst.SubtractAssign: "-=", cst.MultiplyAssign: "*=", cst.DivideAssign: "/=",
        cst.FloorDivideAssign: "//=", cst.ModuloAssign: "%=", cst.PowerAssign: "**=",
        cst.MatrixMultiplyAssign: "@=", cst.LeftShiftAssign: "<<=", cst.RightShiftAssign: ">>=",
        cst.BitAndAssign: "&=", cst.BitOrAssign: "|=", cst.BitXorAssign: "^=",
    }
    return table.get(type(op), "")


def _ws(op: Any) -> dict[str, Any]:
    return {"whitespace_before": op.whitespace_before, "whitespace_after": op.whitespace_after}


def _make_compare(sym: str, like: Any) -> Any:
    import libcst as cst  # noqa: PLC0415

    cls = {"<": cst.LessThan, "<=": cst.LessThanEqual, ">": cst.GreaterThan, ">=": cst.GreaterThanEqual,
           "==": cst.Equal, "!=": cst.NotEqual, "is": cst.Is, "in": cst.In}
    if sym in cls:
        return cls[sym](**_ws(like))
    between = cst.SimpleWhitespace(" ")
    if sym == "is not":
        return cst.IsNot(whitespace_between=between, **_ws(like))
    return cst.NotIn(whitespace_between=between, **_ws(like))


def _make_binary(sym: str, like: Any) -> Any:
    import libcst as cst  # noqa: PLC0415

    cls: dict[str, Any] = {"+": cst.Add, "-": cst.Subtract, "*": cst.Multiply, "/": cst.Divide,
                           "<<": cst.LeftShift, ">>": cst.RightShift, "&": cst.BitAnd, "|": cst.BitOr}
    return cls[sym](**_ws(like))


def _make_aug(sym: str, like: Any) -> Any:
    import libcst as cst  # noqa: PLC0415

    cls: dict[str, Any] = {"+": cst.AddAssign, "-": cst.SubtractAssign, "*": cst.MultiplyAssign,
                           "/": cst.DivideAssign, "<<": cst.LeftShiftAssign, ">>": cst.RightShiftAssign,
                           "&": cst.BitAndAssign, "|": cst.BitOrAssign}
    return cls[sym](**_ws(like))


def _name_loads(source: str) -> dict[str, set[int]]:
    """name -> lines on which it is read (stdlib ast: Name nodes in a Load context)."""
    loads: dict[str, set[int]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.setdefault(node.id, set()).add(node.lineno)
    return loads


def _edits(source: str) -> Iterator[_Edit]:
    import libcst as cst  # noqa: PLC0415 - only mutation analysis needs it
    from libcst.metadata import MetadataWrapper, PositionProvider  # noqa: PLC0415

    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    starts = [0]
    for ln in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(ln))
    loads = _name_loads(source)

    def offset(pos: Any) -> int:
        return starts[pos.line - 1] + pos.column

    out: list[_Edit] = []
    funcs: list[str] = []
    kinds: list[str] = []   # "def" or "class", parallel to funcs
    elifs: set[int] = set()
    module_reach: list[tuple[int, ...] | None] = [None]  # reach of the current module-level assignment

    def span(node: Any) -> tuple[int, int, int, int]:
        r = positions[node]
        return offset(r.start), offset(r.end), r.start.line, r.start.column

    def add(op: str, node: Any, text: str, weak: str | None = None) -> None:
        a, b, line, col = span(node)
        before = source[a:b]
        if text == before:
            return
        r = positions[node]
        reach = module_reach[-1] if module_reach[-1] is not None else tuple(range(r.start.line, r.end.line + 1))
        out.append(_Edit(op, line, col, a, b, text, _short(before), funcs[-1] if funcs else "", reach, weak, scope()))

    def scope() -> str:
        return funcs[0] if funcs and kinds[0] == "def" else ""

    def replace_with(op: str, node: Any, new: Any, weak: str | None = None) -> None:
        a, b, _, _ = span(node)
        if _code(module, node) != source[a:b]:  # the splice would not reproduce the node: skip
            return
        add(op, node, _code(module, new), weak)

    def is_docstring(stmt: Any) -> bool:
        return isinstance(stmt, cst.Expr) and isinstance(stmt.value, (cst.SimpleString, cst.ConcatenatedString))

    def bound_names(target: Any) -> set[str]:
        names: set[str] = set()
        if isinstance(target, cst.Name):
            names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                names |= bound_names(el.value)
        elif isinstance(target, cst.StarredElement):
            names |= bound_names(target.value)
        return names

    def stmt_binds(stmt: Any) -> set[str]:
        names: set[str] = set()
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        names |= bound_names(t.target)
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    names |= bound_names(small.target)
                elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        if alias.asname is not None:
                            names |= bound_names(alias.asname.name)
                        else:
                            full = cst.helpers.get_full_name_for_node(alias.name) or ""
                            names.add(full.split(".")[0])
        elif isinstance(stmt, cst.For):
            names |= bound_names(stmt.target)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        return names

    def loaded_names(node: Any) -> set[str]:
        found: set[str] = set()

        class _Names(cst.CSTVisitor):
            def visit_Name(self, n: Any) -> None:
                found.add(n.value)

            def visit_Attribute(self, n: Any) -> bool:
                n.value.visit(self)
                return False

            def visit_Arg(self, n: Any) -> bool:
                n.value.visit(self)
                return False

        node.visit(_Names())
        return found

    def params_of(fn: Any) -> set[str]:
        p = fn.params
        names = {x.name.value for x in [*p.posonly_params, *p.params, *p.kwonly_params]}
        for star in (p.star_arg, p.star_kwarg):
            if isinstance(star, cst.Param):
                names.add(star.name.value)
        return names

    import builtins  # noqa: PLC0415

    known = set(dir(builtins))
    module_names: set[str] = set()
    for st in module.body:
        module_names |= stmt_binds(st)

    def return_early(fn: Any) -> None:
        body = list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []
        if len(body) < 2:
            return
        last = body[-1]
        if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1
                and isinstance(last.body[0], cst.Return) and last.body[0].value is not None):
            return
        value = last.body[0].value
        need = loaded_names(value)
        bound = params_of(fn)
        expr = str(module.code_for_node(value))
        if "\n" in expr:
            return
        for k, st in enumerate(body[:-1]):
            if k > 0 and need <= (bound | known | module_names) and not is_docstring(st):
                a, _, line, col = span(st)
                indent = source[starts[line - 1]:a]
                if indent.strip() == "":
                    first = source[a:starts[line]].rstrip("\n")
                    out.append(_Edit("return_early", line, col, a, a, f"return {expr}\n{indent}",
                                     _short(first), fn.name.value, (line,), None, scope()))
            bound |= stmt_binds(st)

    class _Visitor(cst.CSTVisitor):
        def visit_Annotation(self, node: Any) -> bool:
            return False  # annotations compute nothing

        def visit_FunctionDef(self, node: Any) -> None:
            funcs.append(node.name.value)
            kinds.append("def")
            return_early(node)

        def leave_FunctionDef(self, original_node: Any) -> None:
            funcs.pop()
            kinds.pop()

        def visit_ClassDef(self, node: Any) -> None:
            funcs.append(node.name.value)
            kinds.append("class")

        def leave_ClassDef(self, original_node: Any) -> None:
            funcs.pop()
            kinds.pop()

        # -- statements ----------------------------------------------------------------
        def visit_SimpleStatementLine(self, node: Any) -> None:
            if not funcs:
                # A module-level assignment matters only where its names are read.
                names = stmt_binds(node)
                if names and all(isinstance(s, (cst.Assign, cst.AnnAssign)) for s in node.body):
                    line = positions[node].start.line
                    reach = sorted({ln for n in names for ln in loads.get(n, set())} - {line})
                    module_reach.append(tuple(reach))
                else:
                    module_reach.append(None)
            for small in node.body:
                if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Raise, cst.Assert, cst.Del)) or (
                        isinstance(small, cst.Expr) and not is_docstring(small)):
                    if isinstance(small, cst.AnnAssign) and small.value is None:
                        continue
                    if not funcs and isinstance(small, (cst.Assign, cst.AnnAssign)):
                        continue  # deleting a module constant only raises NameError
                    add("delete_statement", small, "pass")

        def leave_SimpleStatementLine(self, original_node: Any) -> None:
            if not funcs:
                module_reach.pop()

        def visit_If(self, node: Any) -> bool:
            if not funcs and "__name__" in loaded_names(node.test):
                return False  # the `if __name__ == "__main__":` block: main() reads stdin
            add("negate", node.test, f"not ({_code(module, node.test)})")
            if isinstance(node.orelse, cst.If):
                elifs.add(id(node.orelse))
            if funcs and id(node) not in elifs:  # an elif cannot be replaced on its own
                a, b, _, _ = span(node)
                # keep the line count, so that every later line keeps its number
                add("delete_statement", node, "pass" + "\n" * source[a:b].count("\n"))
            return True

        def visit_While(self, node: Any) -> None:
            add("negate", node.test, f"not ({_code(module, node.test)})")

        def visit_For(self, node: Any) -> None:
            add("zero_loop", node.iter, "[]")

        def visit_Break(self, node: Any) -> None:
            add("break_continue", node, "continue")

        def visit_Continue(self, node: Any) -> None:
            add("break_continue", node, "break")

        # -- expressions ---------------------------------------------------------------
        def visit_IfExp(self, node: Any) -> None:
            add("negate", node.test, f"not ({_code(module, node.test)})")

        def visit_Comparison(self, node: Any) -> None:
            single = len(node.comparisons) == 1
            key = _site_key(positions, node)
            for i, target in enumerate(node.comparisons):
                op = target.operator
                sym = _op_symbol(op)
                if sym in _COMPARE_SUBSTITUTES:
                    for new_sym in _COMPARE_SUBSTITUTES[sym]:
                        comps = list(node.comparisons)
                        comps[i] = target.with_changes(operator=_make_compare(new_sym, op))
                        replace_with("compare", node, node.with_changes(comparisons=comps),
                                     f"{key}|{new_sym}" if single else None)
                elif sym in ("is", "is not", "in", "not in"):
                    other = {"is": "is not", "is not": "is", "in": "not in", "not in": "in"}[sym]
                    comps = list(node.comparisons)
                    comps[i] = target.with_changes(operator=_make_compare(other, op))
                    replace_with("is_in", node, node.with_changes(comparisons=comps))

        def visit_BinaryOperation(self, node: Any) -> None:
            sym = _op_symbol(node.operator)
            if sym in _ARITH:
                new_op = _make_binary(_ARITH[sym], node.operator)
                replace_with("arith", node, node.with_changes(operator=new_op),
                             f"{_site_key(positions, node)}|{_ARITH[sym]}")

        def visit_AugAssign(self, node: Any) -> None:
            sym = _op_symbol(node.operator).rstrip("=")
            if sym in _ARITH:
                replace_with("arith", node, node.with_changes(operator=_make_aug(_ARITH[sym], node.operator)))

        def visit_BooleanOperation(self, node: Any) -> None:
            cls = cst.Or if isinstance(node.operator, cst.And) else cst.And
            replace_with("and_or", node, node.with_changes(operator=cls(**_ws(node.operator))))

        def visit_UnaryOperation(self, node: Any) -> None:
            if isinstance(node.operator, (cst.Minus, cst.Not, cst.BitInvert)):
                inner = node.expression
                text = str(module.code_for_node(inner))
                if isinstance(inner, cst.UnaryOperation) or (
                        isinstance(node.operator, cst.Not) and isinstance(inner, (cst.BooleanOperation, cst.Comparison))
                        and not inner.lpar):
                    text = f"({text})"
                weak = f"{_site_key(positions, node)}|unary" if isinstance(node.operator, cst.Minus) else None
                add("unary", node, text, weak)

        def visit_Name(self, node: Any) -> None:
            if node.value in ("True", "False"):
                add("bool", node, "False" if node.value == "True" else "True")

        def visit_Integer(self, node: Any) -> None:
            v = int(node.evaluated_value)
            for new in (v + 1, v - 1):
                if new >= 0:
                    add("number", node, str(new))

        def visit_Float(self, node: Any) -> None:
            v = float(node.evaluated_value)
            if v == 0.0:
                add("number", node, "1.0")
            elif math.isfinite(v):
                for new in (v * 1.1, v * 0.9):
                    add("number", node, repr(float(f"{new:.12g}")))

        def visit_Call(self, node: Any) -> None:
            for i, arg in enumerate(node.args):
                if arg.keyword is not None and not arg.star:
                    args = list(node.args)
                    del args[i]
                    if args and i == len(args):  # dropped the last: keep the call tidy
                        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                    replace_with("drop_kwarg", node, node.with_changes(args=args))
            func = node.func
            name = func.value if isinstance(func, cst.Name) else (
                func.attr.value if isinstance(func, cst.Attribute) else None)
            if name in _SWAP_NAMES:
                add("swap_call", func if isinstance(func, cst.Name) else func.attr, _SWAP_NAMES[name])
            if name in _SAMPLE_PAIRS:
                add("ddof", func if isinstance(func, cst.Name) else func.attr, _SAMPLE_PAIRS[name])
            if name in _SPREADS and not any(a.star or (a.keyword is not None and a.keyword.value == "ddof")
                                            for a in node.args):
                # the sample form (an explicit ddof loses it by drop_kwarg)
                args = list(node.args)
                if args:
                    args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                no_space = cst.SimpleWhitespace("")
                args.append(cst.Arg(keyword=cst.Name("ddof"), value=cst.Integer("1"),
                                    equal=cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space)))
                replace_with("ddof", node, node.with_changes(args=args))
            if name == "range" and node.args and not any(a.keyword or a.star for a in node.args):
                stop = node.args[0 if len(node.args) == 1 else 1].value
                if not isinstance(stop, cst.Integer):  # a literal stop is nudged by "number"
                    code = str(module.code_for_node(stop))
                    simple = isinstance(stop, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
                    for sign in ("+", "-"):
                        add("off_by_one", stop, f"{code} {sign} 1" if simple else f"({code}) {sign} 1")

        def visit_Slice(self, node: Any) -> None:
            for bound in (node.lower, node.upper):
                if bound is None or isinstance(bound, cst.Integer):
                    continue
                code = str(module.code_for_node(bound))
                simple = isinstance(bound, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
                for sign in ("+", "-"):
                    add("off_by_one", bound, f"{code} {sign} 1" if simple else f"({code}) {sign} 1")

    module.visit(_Visitor())
    yield from out


def instrument(source: str) -> str:
    """``source`` with every weakly checkable site routed through ``__recon_weak__``.

    ``a < b`` becomes ``__recon_weak__("site", "<", a, b)``, ``a + b`` likewise, and
    ``-x`` becomes ``__recon_weak__("site", "neg", x, None)``: the operands are evaluated
    once, in the original order, the original result is returned, and the helper
    (:func:`weak_helper`) records which mutant variants would have yielded a different
    value. Line numbers are unchanged, so the same line tracing applies. Chained
    comparisons and annotations are left alone.
    """
    import libcst as cst  # noqa: PLC0415
    from libcst.metadata import MetadataWrapper, PositionProvider  # noqa: PLC0415

    wrapper = MetadataWrapper(cst.parse_module(source))

    class _Instrument(cst.CSTTransformer):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def visit_Annotation(self, node: Any) -> bool:
            return False

        def visit_If(self, node: Any) -> bool:
            return True

        def _call(self, original: Any, updated: Any, sym: str, a: Any, b: Any) -> Any:
            key = _site_key(self.metadata[PositionProvider], original)
            args = [cst.Arg(cst.SimpleString(repr(key))), cst.Arg(cst.SimpleString(repr(sym))), cst.Arg(a), cst.Arg(b)]
            return cst.Call(func=cst.Name(WEAK_HELPER), args=args, lpar=updated.lpar, rpar=updated.rpar)

        def leave_Comparison(self, original: Any, updated: Any) -> Any:
            if len(updated.comparisons) != 1:
                return updated
            sym = _op_symbol(updated.comparisons[0].operator)
            if sym not in _COMPARE_SUBSTITUTES:
                return updated
            left = updated.left
            right = updated.comparisons[0].comparator
            return self._call(original, updated, sym, left, right)

        def leave_BinaryOperation(self, original: Any, updated: Any) -> Any:
            sym = _op_symbol(updated.operator)
            if sym not in _ARITH:
                return updated
            return self._call(original, updated, sym, updated.left, updated.right)

        def leave_UnaryOperation(self, original: Any, updated: Any) -> Any:
            if not isinstance(updated.operator, cst.Minus):
                return updated
            return self._call(original, updated, "neg", updated.expression, cst.Name("None"))

    return str(wrapper.visit(_Instrument()).code)


def same_value(x: Any, y: Any) -> bool:
    """Whether two values are interchangeable for the rest of the program (arrays by
    dtype, shape and bits; floats with their sign; containers item by item; anything
    else counts as different)."""
    if type(x) is not type(y):
        return False
    if x is None:
        return True
    if isinstance(x, (tuple, list)):
        return len(x) == len(y) and all(same_value(a, b) for a, b in zip(x, y))
    if isinstance(x, dict):
        return list(x) == list(y) and all(same_value(x[k], y[k]) for k in x)
    return _same(x, y)


def _same(x: Any, y: Any) -> bool:
    """Whether two scalars or arrays are interchangeable (see same_value)."""
    if type(x) is not type(y):
        return False
    np = _numpy()
    if np is not None and isinstance(x, np.ndarray):
        return bool(x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
    if isinstance(x, float):
        if x != x:
            return y != y
        return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
    if isinstance(x, (bool, int, str)) or (np is not None and isinstance(x, (np.bool_, np.integer))):
        return bool(x == y)
    if np is not None and isinstance(x, np.floating):
        return _same(float(x), float(y))
    if isinstance(x, complex):
        return _same(x.real, y.real) and _same(x.imag, y.imag)
    return False  # anything else: assume it differs


def _numpy() -> Any:
    import sys  # noqa: PLC0415

    return sys.modules.get("numpy")


def weak_helper(record: set[str]) -> Callable[[str, str, Any, Any], Any]:
    """The ``__recon_weak__`` function for an instrumented module: returns the original
    result and adds "site|variant" to ``record`` for every variant that differs."""

    def weak(key: str, sym: str, a: Any, b: Any) -> Any:
        if sym == "neg":
            result = -a
            k = f"{key}|unary"
            if k not in record and not _same(result, a):
                record.add(k)
            return result
        result = _OPS[sym](a, b)
        variants = _COMPARE_SUBSTITUTES.get(sym) or (_ARITH[sym],)
        for alt in variants:
            k = f"{key}|{alt}"
            if k in record:
                continue
            try:
                other = _OPS[alt](a, b)
            except Exception:  # noqa: BLE001 - the variant raising is a difference
                record.add(k)
                continue
            if not _same(result, other):
                record.add(k)
        return result

    return weak


def _stable(*parts: Any) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()


def executable_lines(source: str) -> set[int]:
    """Lines that hold code the interpreter can run (for "uncovered lines" reports)."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                                                and isinstance(node.value.value, str)):
            lines.add(node.lineno)
    return lines


def generate_mutants(
    source: str,
    *,
    filename: str = "reference.py",
    lines: Collection[int] | None = None,
    operators: Iterable[str] | None = None,
    max_per_line: int | None = None,
) -> MutantSet:
    """Every single-edit mutant of ``source`` that reaches the given ``lines`` (all when None).

    ``max_per_line`` keeps at most that many mutants per line, chosen deterministically
    and spread over the operators (a long line of arithmetic would otherwise dominate).
    Mutants that do not compile, and mutants whose text equals another's, are dropped.
    """
    wanted = set(OPERATORS if operators is None else operators)
    unknown = sorted(wanted - set(OPERATORS))
    if unknown:
        raise ValueError(f"unknown mutation operators {unknown}; known: {sorted(OPERATORS)}")
    edits = [e for e in _edits(source) if e.operator in wanted]
    uncovered = 0
    if lines is not None:
        keep = set(lines)
        reached = [e for e in edits if keep.intersection(e.reach)]
        uncovered = len(edits) - len(reached)
        edits = reached
    capped = 0
    if max_per_line is not None and max_per_line >= 1:
        by_line: dict[int, list[_Edit]] = {}
        for e in edits:
            by_line.setdefault(e.line, []).append(e)
        chosen: list[_Edit] = []
        for ln in sorted(by_line):
            group = by_line[ln]
            if len(group) <= max_per_line:
                chosen.extend(group)
                continue
            # round-robin over operators, each operator's edits in a stable hashed order
            per_op: dict[str, list[_Edit]] = {}
            for e in sorted(group, key=lambda e: _stable(e.operator, e.col, e.text)):
                per_op.setdefault(e.operator, []).append(e)
            picked: list[_Edit] = []
            while len(picked) < max_per_line:
                for op in sorted(per_op):
                    if per_op[op] and len(picked) < max_per_line:
                        picked.append(per_op[op].pop(0))
            chosen.extend(picked)
            capped += len(group) - len(picked)
        edits = chosen
    edits.sort(key=lambda e: (e.line, e.col, e.operator, e.start, e.end, e.text))
    seen: set[str] = {source}
    mutants: list[Mutant] = []
    invalid = 0
    chunks = _chunks(source)
    for e in edits:
        text = source[: e.start] + e.text + source[e.end:]
        if text in seen:
            continue
        try:
            compile(_compiled_part(source, chunks, e, text), filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            invalid += 1
            continue
        seen.add(text)
        after = _short(f"{e.text.strip()}; {e.before}" if e.operator == "return_early" else e.text.strip())
        mutants.append(Mutant(len(mutants) + 1, e.operator, e.line, e.col, e.function, e.before, after, text,
                              e.reach, e.weak, e.scope))
    unc_lines = sorted(executable_lines(source) - set(lines)) if lines is not None else []
    return MutantSet(mutants, uncovered, capped, invalid, unc_lines)


def _chunks(source: str) -> list[tuple[int, int]]:
    """Character spans of ``source`` that compile on their own as they compile in it: its
    top-level statements, decorators included, as whole lines (statements sharing a line
    share a span), after the last ``from __future__`` import (which must stay first).
    Whether an edit inside one compiles is decided by that span alone: the compiler's
    errors are local to a statement and the scopes nested in it. Empty when the source has
    a line ending other than newline (then every mutant compiles whole)."""
    if "\r" in source:
        return []
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return []
    starts = [0]
    for line in source.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    first = 0   # statements up to the last __future__ import are not split off
    for i, node in enumerate(body):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            first = i + 1
    spans: list[list[int]] = []
    for node in body[first:]:
        lo = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        hi = node.end_lineno or node.lineno
        if spans and lo <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    return [(starts[lo - 1], min(starts[hi], len(source))) for lo, hi in spans]


def _compiled_part(source: str, chunks: Sequence[tuple[int, int]], e: _Edit, text: str) -> str:
    """What to compile to know whether ``text`` (``source`` with edit ``e``) compiles: the
    edited top-level statement alone when one holds the edit (:func:`_chunks`), else all of it."""
    for lo, hi in chunks:
        if lo <= e.start and e.end <= hi:
            return source[lo:e.start] + e.text + source[e.end:hi]
    return text


def subsample(mutants: Sequence[Mutant], limit: int) -> list[Mutant]:
    """At most ``limit`` mutants, a deterministic sample spread over the file."""
    if limit >= len(mutants):
        return list(mutants)
    ranked = sorted(mutants, key=lambda m: _stable(m.operator, m.line, m.col, m.after))
    keep = {m.id for m in ranked[:limit]}
    return [m for m in mutants if m.id in keep]
