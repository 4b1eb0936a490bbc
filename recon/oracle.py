"""The ``@oracle`` decorator and the :class:`Oracle` object it produces.

A declaration separates WHAT from HOW. What the agent may read is written explicitly
in the decorator: ``description=`` (what the artifact computes and the question it
answers), ``doc=`` on every axis and output (meaning and unit), the tolerances,
``input_docs=`` for every input file and ``evidence=`` for every evidence file. How the
oracle gets its answers -- algorithm, stages, rules, constants, tie-breaks, and the
reasons behind the tolerances -- is the function's docstring, the **recipe**: the place
where an author naturally writes "how" is private by construction. A default build
publishes only the public texts; ``recon build NAME --disclose recipe`` adds the recipe
for an easier variant. ``stages=`` names the recipe's stages (private, counted by
``recon stats``); baselines live in ``baselines/NAME/reconstruct.py`` beside the module.

The decorator validates the whole declaration at decoration time and returns an
:class:`Oracle`: a callable that still behaves like the author's function (call it
with a parameter dict and an evidence directory, get the output dict back) and that
carries everything the sweep, the packager and the grader need. It does not register
anything; a :class:`recon.registry.Registry` finds oracles in the modules it loads.
"""
from __future__ import annotations

import inspect
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from . import canonjson, compare
from .axes import Axis
from .baselines import BASELINES_DIR, INDEPENDENT_DIR, Baseline, discover
from .errors import CanonicalJSONError, OracleRunError, PluginError
from .evidence import DEFAULT_REVEALS, EVIDENCE_LEVELS, Evidence, check_level, level_rank
from .outputs import Output

__all__ = ["oracle", "Oracle", "ENTRY_POINT_GROUP"]

#: the entry-point group third-party packages register their oracle modules under
ENTRY_POINT_GROUP = "recon.oracles"

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
FIELD_RE = re.compile(r"^[a-z_][a-z0-9_]*$")
VERSION_RE = re.compile(r"^\d+\.\d+\.\d+([.-]?[0-9A-Za-z.]+)?$")
PIP_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
INPUT_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Oracle:
    """A validated reference oracle. Call it like the function it decorates.

    Public (what the agent may read): ``title``, ``domain``, ``toolkit``,
    ``description``, the axes and outputs with their ``doc``, ``input_docs``,
    ``evidence``; :meth:`public` gathers them. Private (how): ``recipe`` (the
    function's docstring), ``stages``, the reference solution and the baselines.
    """

    name: str
    version: str
    title: str
    domain: str
    toolkit: tuple[str, ...]
    axes: dict[str, Axis]
    outputs: dict[str, Output]
    fn: Callable[..., dict[str, Any]]
    description: str
    recipe: str
    source_file: str
    source_line: int
    inputs: Callable[[dict[str, Any], Path], None] | None = None
    input_docs: dict[str, str] = field(default_factory=dict)
    reference: Path | None = None
    evidence: dict[str, str] = field(default_factory=dict)
    stages: tuple[str, ...] = ()
    baselines_dir: Path | None = None
    timeout: float = 30.0
    requires: tuple[str, ...] = ()
    evidence_reveals: dict[str, str] = field(default_factory=dict)
    evidence_level: str = "trace"
    upstream: dict[str, frozenset[str]] = field(default_factory=dict)   # field -> every field it is computed from
    same_rule: dict[str, frozenset[str]] = field(default_factory=dict)  # field -> its group (itself included)

    def behaviour(self, name: str) -> str:
        """The behaviour a failure of output ``name`` shows: the field itself, or for a
        field of a ``same_rule`` group the group (its fields joined by ``|``). One rule
        computed for each of several inputs is one behaviour: a published failure of
        either field shows it."""
        group = self.same_rule.get(name)
        return "|".join(sorted(group)) if group else name

    def behaviour_fields(self, behaviour: str) -> frozenset[str]:
        """The outputs whose failures show ``behaviour`` (see :meth:`behaviour`)."""
        return self.same_rule.get(behaviour.split("|", 1)[0], frozenset((behaviour,)))

    def explained(self, name: str, failing: Iterable[str], shown: Iterable[str]) -> bool:
        """Whether a failure of output ``name`` on one scenario is explained by another
        failure there: some field ``name`` is computed from (``upstream=``, transitively)
        fails on that scenario too (``failing``) and is a failure the published scenarios
        show (``shown``). Fixing what they show may well fix ``name`` there; a failure of
        ``name`` with no such companion is a behaviour of its own."""
        ups = self.upstream.get(name, frozenset())
        return not ups.isdisjoint(set(failing) & self.shown_fields(shown))

    def shown_fields(self, failed: Iterable[str]) -> set[str]:
        """The outputs whose behaviour published failures of ``failed`` show: those
        fields and every field of their ``same_rule`` groups."""
        out = set(failed)
        for n in list(out):
            out |= self.same_rule.get(n, frozenset())
        return out

    # -- what the decorated function still does -------------------------------------
    def __call__(self, params: dict[str, Any], evidence: Path | str, inputs: dict[str, Path] | None = None) -> dict[str, Any]:
        """Run the oracle on ``params``; evidence files go into ``evidence``.

        When the oracle declares input files and ``inputs`` is not given, they are
        generated into a temporary directory for the duration of the call.
        """
        evidence = Path(evidence)
        evidence.mkdir(parents=True, exist_ok=True)
        self.check_params(params)
        if self.inputs is None:
            return self._finish(params, self.fn(params, evidence))
        if inputs is not None:
            return self._finish(params, self.fn(params, evidence, inputs))
        with tempfile.TemporaryDirectory(prefix="recon-inputs-") as tmp:
            generated = self.make_inputs(params, Path(tmp))
            return self._finish(params, self.fn(params, evidence, generated))

    def make_inputs(self, params: dict[str, Any], directory: Path) -> dict[str, Path]:
        """Generate the scenario's input files into ``directory``.

        Returns name -> path, where an input's name is its file stem
        (``source.las`` is the input ``source``). Every input must be described in
        ``input_docs``, so the instruction can say what each file holds."""
        if self.inputs is None:
            return {}
        directory.mkdir(parents=True, exist_ok=True)
        self.inputs(params, directory)
        files: dict[str, Path] = {}
        for p in sorted(directory.iterdir()):
            if not p.is_file():
                raise OracleRunError(f"oracle {self.name!r}: input {p.name!r} is not a regular file",
                                     hint="write plain files into the inputs directory")
            if p.stem in files:
                raise OracleRunError(f"oracle {self.name!r}: inputs {files[p.stem].name!r} and {p.name!r} share the name {p.stem!r}",
                                     hint="give every input file its own stem; the stem is the input's name")
            if p.stem not in self.input_docs:
                raise OracleRunError(f"oracle {self.name!r} ({self.location}): input {p.name!r} (input name {p.stem!r}) "
                                     f"is not described in input_docs (described: {sorted(self.input_docs)})",
                                     hint=f'add input_docs={{"{p.stem}": "what the file holds, its format and units"}} '
                                          "to @oracle(...): the agent reads it")
            files[p.stem] = p
        return files

    def _finish(self, params: dict[str, Any], out: Any) -> dict[str, Any]:
        where = f"oracle {self.name!r} ({self.location})"
        if not isinstance(out, dict):
            raise OracleRunError(f"{where} returned a {type(out).__name__}, not a dict of outputs",
                                 hint=f"return a dict with the fields {sorted(self.outputs)}")
        missing = sorted(set(self.outputs) - set(out))
        extra = sorted(set(out) - set(self.outputs))
        if missing or extra:
            raise OracleRunError(f"{where} returned fields that do not match its declaration "
                                 f"(missing {missing}, undeclared {extra}) for parameters {canonjson.dumps_compact(params)}",
                                 hint="return exactly the declared output fields")
        for name in sorted(self.outputs):
            try:
                canonjson.check_jsonable(out[name], name)
            except CanonicalJSONError as exc:
                raise OracleRunError(f"{where}: output {exc.message}", hint=exc.hint) from None
            err = compare.kind_error(self.outputs[name].spec(), out[name])
            if err is not None:
                raise OracleRunError(f"{where}: output {name!r} does not match its declared kind: {err}",
                                     hint=f"return a value of kind {self.outputs[name].kind}")
        return {k: out[k] for k in sorted(out)}

    # -- helpers used by sweeps, builds and graders ------------------------------------
    @property
    def location(self) -> str:
        return f"{self.source_file}:{self.source_line}"

    @property
    def independent(self) -> tuple[Baseline, ...]:
        """Other implementations kept for the fairness audit (``recon validate``'s fairness
        row): every ``independent/NAME/reconstruct.py`` beside the module -- a colleague's
        program, an earlier trial's workspace."""
        return discover(Path(self.source_file).resolve().parent / INDEPENDENT_DIR)

    @property
    def kept_dir(self) -> Path:
        """``kept/`` beside the module: the work of its builds that no secret decides, shipped
        with it (its revealed programs' runs, its mutants' verdicts; ``tests/catalog/keep_runs.py``)."""
        return Path(self.source_file).resolve().parent / "kept"

    @property
    def baselines(self) -> tuple[Baseline, ...]:
        """The shipped baselines: every ``baselines/NAME/reconstruct.py`` beside the module
        (or under the folder named by ``baselines=``), in name order."""
        return discover(self.baselines_dir)

    @property
    def dependencies(self) -> tuple[str, ...]:
        """Every pip distribution the oracle needs here: the agent's toolkit, then ``requires``."""
        return tuple(dict.fromkeys([*self.toolkit, *self.requires]))

    def published_evidence(self, level: str | None = None) -> dict[str, str]:
        """name -> description of the evidence files a build at ``level`` publishes (the
        oracle's ``evidence_level`` when None): those that reveal no more than the level."""
        lvl = self.evidence_level if level is None else level
        why = check_level(lvl)
        if why is not None:
            raise OracleRunError(f"oracle {self.name!r}: evidence level {why}",
                                 hint=f"use one of {', '.join(EVIDENCE_LEVELS)}")
        top = level_rank(lvl)
        return {n: d for n, d in sorted(self.evidence.items())
                if level_rank(self.evidence_reveals.get(n, DEFAULT_REVEALS)) <= top}

    def source_digest(self) -> str:
        """sha256 over the code that decides the oracle's behaviour: its module (the whole
        package folder when the module is a package's ``__init__``, baselines excluded)
        and its reference. Caches keyed by it follow any change of the oracle, its input
        generator or its reference, and survive changes of baselines and texts elsewhere."""
        import hashlib  # noqa: PLC0415 - only caches need it

        module = Path(self.source_file)
        files = [module]
        if module.name == "__init__.py":
            files = sorted(p for p in module.parent.rglob("*.py")
                           if "__pycache__" not in p.parts and (self.baselines_dir is None
                                                                 or self.baselines_dir not in p.parents))
        if self.reference is not None and self.reference not in files:
            files.append(self.reference)
        h = hashlib.sha256()
        for f in files:
            try:
                data = f.read_bytes()
            except OSError:
                data = b"<unreadable>"
            h.update(f.name.encode() + b"\0" + hashlib.sha256(data).digest())
        return h.hexdigest()

    def check_params(self, params: dict[str, Any]) -> None:
        """Raise :class:`OracleRunError` naming the first invalid parameter."""
        if not isinstance(params, dict):
            raise OracleRunError(f"oracle {self.name!r}: parameters must be an object, got {type(params).__name__}")
        unknown = sorted(set(params) - set(self.axes))
        missing = sorted(set(self.axes) - set(params))
        if unknown or missing:
            raise OracleRunError(f"oracle {self.name!r}: parameters do not match the axes (missing {missing}, unknown {unknown})",
                                 hint=f"give exactly the axes {sorted(self.axes)}")
        for name in sorted(self.axes):
            why = self.axes[name].validate(params[name])
            if why:
                raise OracleRunError(f"oracle {self.name!r}: parameter {name}={params[name]!r}: {why}")

    def output_specs(self) -> dict[str, dict[str, Any]]:
        return {name: out.spec() for name, out in sorted(self.outputs.items())}

    def params_schema(self) -> dict[str, Any]:
        """JSON Schema of a scenario's ``parameters`` object."""
        return {
            "type": "object",
            "additionalProperties": False,
            "required": sorted(self.axes),
            "properties": {name: ax.json_schema() for name, ax in sorted(self.axes.items())},
        }

    def public(self, evidence_level: str | None = None) -> dict[str, Any]:
        """Everything the agent may read about the oracle (JSON-able): the declaration's
        public half, with the evidence a build at ``evidence_level`` publishes. The built
        task's manifest carries it and the instruction is rendered from it; nothing of the
        recipe is in it."""
        published = self.published_evidence(evidence_level)
        return {
            "title": self.title,
            "domain": self.domain,
            "toolkit": list(self.toolkit),
            "description": self.description,
            "axes": {n: {**a.describe(), "doc": a.doc} for n, a in sorted(self.axes.items())},
            "outputs": {n: {**o.spec(), "tolerance": o.describe(), "doc": o.doc} for n, o in sorted(self.outputs.items())},
            "inputs": self.inputs is not None,
            "input_docs": dict(sorted(self.input_docs.items())),
            "evidence": published,
            "evidence_level": self.evidence_level if evidence_level is None else evidence_level,
            "evidence_reveals": {n: self.evidence_reveals.get(n, DEFAULT_REVEALS) for n in published},
        }

    def describe(self) -> dict[str, Any]:
        """Everything ``recon show --json`` prints: the public declaration, then the
        private half under ``private``."""
        return {
            "name": self.name,
            "version": self.version,
            **self.public(),
            "evidence": dict(sorted(self.evidence.items())),
            "evidence_reveals": dict(sorted(self.evidence_reveals.items())),
            "requires": list(self.requires),
            "reference": self.reference is not None,
            "timeout": self.timeout,
            "source": self.location,
            "private": {
                "recipe": self.recipe,
                "stages": list(self.stages),
                "baselines": [b.name for b in self.baselines],
            },
        }


def _fail(name: Any, file: str, line: int, what: str, fix: str) -> PluginError:
    return PluginError(f"oracle {name!r} ({file}:{line}): {what}", hint=fix)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _same_rule(decl: Any, outputs: dict[str, Output],
               fail: Callable[[str, str], PluginError]) -> dict[str, frozenset[str]]:
    """``same_rule=`` checked: groups of two or more outputs, each output in one group."""
    if decl is None:
        return {}
    example = 'e.g. same_rule=[["source_noise", "target_noise"]]'
    if not isinstance(decl, (list, tuple)):
        raise fail(f"same_rule={decl!r} must be a list of groups of output names", example)
    out: dict[str, frozenset[str]] = {}
    for group in decl:
        if isinstance(group, str) or not isinstance(group, (list, tuple, set, frozenset)) or len(set(group)) < 2:
            raise fail(f"same_rule group {group!r} must list two or more output names", example)
        unknown = sorted(str(g) for g in group if g not in outputs)
        if unknown:
            raise fail(f"same_rule group {sorted(group)} names {unknown}, which are not outputs", example)
        twice = sorted(g for g in group if g in out)
        if twice:
            raise fail(f"same_rule puts {twice} in more than one group", "each output belongs to one group at most")
        members = frozenset(group)
        out.update({g: members for g in members})
    return out


def _upstream(decl: Any, outputs: dict[str, Output],
              fail: Callable[[str, str], PluginError]) -> dict[str, frozenset[str]]:
    """``upstream=`` checked and transitively closed: every name an output, no cycles."""
    if decl is None:
        return {}
    example = 'e.g. upstream={"n_sources": ["masked_pixels"]}'
    if not isinstance(decl, dict):
        raise fail(f"upstream={decl!r} must be a dict of output -> the outputs it is computed from", example)
    direct: dict[str, set[str]] = {}
    for name, ups in decl.items():
        if name not in outputs:
            raise fail(f"upstream names {name!r}, which is not an output (outputs: {sorted(outputs)})", example)
        if isinstance(ups, str) or not isinstance(ups, (list, tuple, set, frozenset)):
            raise fail(f"upstream[{name!r}] = {ups!r} must be a list of output names", example)
        unknown = sorted(u for u in ups if u not in outputs)
        if unknown:
            raise fail(f"upstream[{name!r}] names {unknown}, which are not outputs", example)
        direct[name] = set(ups)
    closed: dict[str, frozenset[str]] = {}
    for name in direct:
        seen: set[str] = set()
        stack = list(direct[name])
        while stack:
            u = stack.pop()
            if u not in seen:
                seen.add(u)
                stack.extend(direct.get(u, ()))
        if name in seen:
            raise fail(f"upstream has a cycle through {name!r}",
                       "an output is computed from earlier stages' outputs, never from itself")
        closed[name] = frozenset(seen)
    return closed


def oracle(
    *,
    name: str,
    version: str,
    title: str,
    domain: str,
    toolkit: list[str] | tuple[str, ...],
    axes: dict[str, Axis],
    outputs: dict[str, Output],
    description: str | None = None,
    inputs: Callable[[dict[str, Any], Path], None] | None = None,
    input_docs: dict[str, str] | None = None,
    reference: str | Path | None = None,
    evidence: dict[str, str | Evidence] | None = None,
    evidence_level: str | None = None,
    requires: list[str] | tuple[str, ...] = (),
    stages: list[str] | tuple[str, ...] = (),
    baselines: str | Path | None = None,
    timeout: float = 30.0,
    upstream: dict[str, list[str] | tuple[str, ...]] | None = None,
    same_rule: list[list[str] | tuple[str, ...]] | None = None,
) -> Callable[[Callable[..., dict[str, Any]]], Oracle]:
    """Declare a reference oracle (see DESIGN §2).

    Public, read by the agent: ``description`` (required: what the artifact computes
    and the question it answers, never how), ``doc=`` on every axis and output
    (required), ``input_docs`` (input name -> what the file holds; required with
    ``inputs``), ``evidence`` (file name -> what the file holds).

    Private: the decorated function's docstring is the **recipe** (algorithm, stages,
    rules, constants, tie-breaks, why each tolerance is what it is); it reaches the
    agent only in a ``--disclose recipe`` build. ``stages``: names of the recipe's
    stages. ``baselines``: folder (relative to the module) of ``NAME/reconstruct.py``
    baselines, default ``baselines``.

    ``evidence``: file name -> description, or :class:`recon.Evidence` (description and
    what the file reveals: ``outputs``, ``summary`` or ``trace``; a plain string reveals
    ``summary``). ``evidence_level``: the level a build publishes by default (default:
    the highest level declared, so every file). ``requires``: pip distributions the
    oracle needs beyond the agent's ``toolkit`` (the tool whose behaviour is
    reconstructed, when the agent must not have it); installed on the verifier side only.

    ``inputs``: optional ``fn(params, directory)`` writing per-scenario input files that
    the submission receives for every scenario. ``reference``: path (relative to the
    module) of a standalone ``reconstruct.py`` reproducing the oracle. ``timeout``:
    seconds one submission run may take.

    ``upstream``: output -> the outputs it is computed from (private; transitively
    closed). The fairness audit and stress selection read it: a program's failure of a
    field on a graded scenario where an upstream field fails too, and is shown failing
    publicly, is a consequence of a published behaviour, not a hidden one.

    ``same_rule``: groups of outputs one rule computes, each for its own input (the
    same function applied to the source and to the target scan, say; private). The
    fairness audit and stress selection take them as one behaviour: a program's failure
    of one field is shown by a published failure of any field of its group, since
    fixing the rule fixes every field it computes.
    """

    def decorate(fn: Callable[..., dict[str, Any]]) -> Oracle:
        code = getattr(fn, "__code__", None)
        file = code.co_filename if code is not None else "<unknown>"
        line = code.co_firstlineno if code is not None else 0

        def fail(what: str, fix: str) -> PluginError:
            return _fail(name, file, line, what, fix)

        if not callable(fn) or code is None:
            raise fail(f"@oracle must decorate a function, got {fn!r}", "put @oracle(...) above a def")
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise fail(f"name={name!r} is not a valid task id", "use lowercase letters, digits and _ (e.g. 'lidar_icp')")
        if not isinstance(version, str) or not VERSION_RE.match(version):
            raise fail(f"version={version!r} is not a version like '1.0.0'", "use MAJOR.MINOR.PATCH")
        for label, value in (("title", title), ("domain", domain)):
            if not _text(value):
                raise fail(f"{label}={value!r} must be a non-empty string", f"give a short {label}")
        if not isinstance(toolkit, (list, tuple)) or not all(isinstance(t, str) and PIP_RE.match(t) for t in toolkit):
            raise fail(f"toolkit={toolkit!r} must be a list of pip distribution names", 'e.g. toolkit=["numpy", "laspy"]')
        if not isinstance(axes, dict) or not axes:
            raise fail(f"axes={axes!r} must be a non-empty dict of name -> axis", 'e.g. axes={"seed": Seed(doc="...")}')
        for aname, axis in axes.items():
            if not isinstance(aname, str) or not FIELD_RE.match(aname):
                raise fail(f"axis name {aname!r} is not an identifier", "use lowercase letters, digits and _")
            if not isinstance(axis, Axis):
                raise fail(f"axis {aname!r} = {axis!r} is not an axis kind",
                           "use Float(lo, hi), Int(lo, hi), Choice([...]), Bool() or Seed()")
            for what, fix in axis.problems():
                raise fail(f"axis {aname!r} = {type(axis).__name__}: {what}", fix)
        if not isinstance(outputs, dict) or not outputs:
            raise fail(f"outputs={outputs!r} must be a non-empty dict of name -> output kind",
                       'e.g. outputs={"count": Integer(doc="...")}')
        for oname, out in outputs.items():
            if not isinstance(oname, str) or not FIELD_RE.match(oname):
                raise fail(f"output name {oname!r} is not an identifier", "use lowercase letters, digits and _")
            if not isinstance(out, Output):
                raise fail(f"output {oname!r} = {out!r} is not an output kind",
                           "use Number(abs=, rel=), Integer(tol=), Exact(), Text(), Angle(tol=), SetOf() or SequenceOf()")
            for what, fix in out.problems():
                raise fail(f"output {oname!r} = {type(out).__name__}: {what}", fix)
        # The public texts. Checked after the kinds, so a broken bound is reported first.
        if not _text(description):
            raise fail(f"description={description!r}: the declaration has no public description",
                       'add description="what the artifact computes and the question it answers" to @oracle(...): '
                       "the agent reads it. Say what, never how: the recipe goes in the function's docstring, "
                       "which stays private")
        for aname, axis in axes.items():
            if not _text(axis.doc):
                raise fail(f"axis {aname!r} = {type(axis).__name__} has no doc=",
                           f"write what the parameter means and its unit, e.g. {type(axis).__name__}(..., "
                           f'doc="edge of the cubic voxels, metres"): the agent reads it')
        for oname, out in outputs.items():
            if not _text(out.doc):
                raise fail(f"output {oname!r} = {type(out).__name__} has no doc=",
                           f"write what the value means and its unit, e.g. {type(out).__name__}(..., "
                           'doc="points left after down-sampling"): the agent reads it beside the tolerance. '
                           "Why the tolerance is what it is belongs in the docstring (private)")
        if inputs is not None and not callable(inputs):
            raise fail(f"inputs={inputs!r} is not callable", "pass a function inputs(params, directory)")
        if input_docs is not None and not isinstance(input_docs, dict):
            raise fail(f"input_docs={input_docs!r} must be a dict of input name -> description",
                       'e.g. input_docs={"source": "LAS 1.2 scan, coordinates in metres"}')
        idocs = dict(input_docs or {})
        if inputs is None and idocs:
            raise fail(f"input_docs={idocs!r} describes inputs, but the oracle declares no inputs=",
                       "pass inputs=make_inputs, or drop input_docs")
        if inputs is not None:
            if not idocs:
                raise fail("inputs= is given without input_docs=",
                           'describe every input file by its name (the file stem), e.g. input_docs={"source": '
                           '"LAS 1.2 scan, coordinates in metres"}: the agent reads it')
            for iname, desc in idocs.items():
                if not isinstance(iname, str) or not INPUT_RE.match(iname) or "." in iname:
                    raise fail(f"input_docs key {iname!r} is not an input name",
                               "key each description by the input's name, the file stem ('source' for source.las)")
                if not _text(desc):
                    raise fail(f"input {iname!r} has no description in input_docs", "say what the file holds and its units")
        expected = 3 if inputs is not None else 2
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            raise fail("the function's signature cannot be read", "define it with def") from None
        positional = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        required_kw = [p for p in sig.parameters.values() if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
        if len(positional) != expected or required_kw:
            want = "(params, evidence, inputs)" if inputs is not None else "(params, evidence)"
            raise fail(f"{fn.__name__}{sig} has the wrong signature", f"define it as def {fn.__name__}{want}")
        ref_path: Path | None = None
        if reference is not None:
            ref_path = (Path(file).parent / reference).resolve()
            if not ref_path.is_file():
                raise fail(f"reference={str(reference)!r} does not exist (looked for {ref_path})",
                           "point reference= at the standalone reconstruct.py, relative to the module")
        if evidence is not None and not isinstance(evidence, dict):
            raise fail(f"evidence={evidence!r} must be a dict of file name -> description",
                       'e.g. evidence={"stages.json": Evidence("per-stage counts", reveals="summary")}')
        ev: dict[str, str] = {}
        reveals: dict[str, str] = {}
        for fname, decl in (evidence or {}).items():
            if not isinstance(fname, str) or "/" in fname or fname in ("scenario.json", "oracle_output.json", "signature.json") or not fname:
                raise fail(f"evidence file name {fname!r} is not allowed", "use a plain file name such as 'cloud.las'")
            item = decl if isinstance(decl, Evidence) else Evidence(decl) if isinstance(decl, str) else None
            if item is None:
                raise fail(f"evidence {fname!r} = {decl!r} is neither a description nor an Evidence(...)",
                           'write Evidence("what the file holds", reveals="summary") or a plain description')
            if not _text(item.doc):
                raise fail(f"evidence {fname!r} has no description", "describe what the file holds (the agent reads it)")
            why = check_level(item.reveals)
            if why is not None:
                raise fail(f"evidence {fname!r}: reveals={why}",
                           "outputs: the final result in another form; summary: per-stage aggregates; "
                           "trace: step-by-step internals")
            ev[fname], reveals[fname] = item.doc, item.reveals
        if evidence_level is None:
            level = max(reveals.values(), key=level_rank) if reveals else EVIDENCE_LEVELS[-1]
        else:
            why = check_level(evidence_level)
            if why is not None:
                raise fail(f"evidence_level={why}", "publish outputs-only, summary or trace evidence by default")
            level = evidence_level
        if isinstance(requires, str) or not isinstance(requires, (list, tuple)) or not all(
                isinstance(r, str) and PIP_RE.match(r) for r in requires):
            raise fail(f"requires={requires!r} must be a list of pip distribution names",
                       'e.g. requires=["obspy"] (installed for the oracle, never in the agent\'s image)')
        if isinstance(stages, str) or not isinstance(stages, (list, tuple)) or not all(_text(s) for s in stages):
            raise fail(f"stages={stages!r} must be a list of stage names", 'e.g. stages=["voxel down-sampling", "ICP"]')
        if baselines is not None:
            base_dir = (Path(file).parent / baselines).resolve()
            if not base_dir.is_dir():
                raise fail(f"baselines={str(baselines)!r} is not a folder (looked for {base_dir})",
                           "point baselines= at a folder of NAME/reconstruct.py (relative to the module), or leave it "
                           f"out to use ./{BASELINES_DIR} when it exists")
        else:
            base_dir = (Path(file).parent / BASELINES_DIR).resolve()
        if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and 0 < timeout <= 3600):
            raise fail(f"timeout={timeout!r} must be seconds in (0, 3600]", "e.g. timeout=30")
        closed = _upstream(upstream, outputs, fail)
        groups = _same_rule(same_rule, outputs, fail)
        recipe = inspect.getdoc(fn) or ""
        if not recipe.strip():
            raise fail(f"{fn.__name__} has no docstring",
                       "write the recipe in the docstring (algorithm, rules, constants, tie-breaks, why each tolerance "
                       "is what it is): it stays private unless a build discloses it")
        return Oracle(
            name=name, version=version, title=title.strip(), domain=domain.strip(), toolkit=tuple(toolkit),
            axes=dict(axes), outputs=dict(outputs), fn=fn, description=str(description).strip(), recipe=recipe,
            source_file=file, source_line=line, inputs=inputs, input_docs=idocs, reference=ref_path, evidence=ev,
            stages=tuple(s.strip() for s in stages), baselines_dir=base_dir, timeout=float(timeout),
            requires=tuple(requires), evidence_reveals=reveals, evidence_level=level, upstream=closed,
            same_rule=groups,
        )

    return decorate
