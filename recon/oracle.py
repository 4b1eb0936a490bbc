"""The ``@oracle`` decorator and the :class:`Oracle` object it produces.

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
from typing import Any, Callable

from . import canonjson, compare
from .axes import Axis
from .errors import CanonicalJSONError, OracleRunError, PluginError
from .outputs import Output

__all__ = ["oracle", "Oracle"]

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
FIELD_RE = re.compile(r"^[a-z_][a-z0-9_]*$")
VERSION_RE = re.compile(r"^\d+\.\d+\.\d+([.-]?[0-9A-Za-z.]+)?$")
PIP_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Oracle:
    """A validated reference oracle. Call it like the function it decorates."""

    name: str
    version: str
    title: str
    domain: str
    toolkit: tuple[str, ...]
    axes: dict[str, Axis]
    outputs: dict[str, Output]
    fn: Callable[..., dict[str, Any]]
    doc: str
    source_file: str
    source_line: int
    inputs: Callable[[dict[str, Any], Path], None] | None = None
    reference: Path | None = None
    evidence: dict[str, str] = field(default_factory=dict)
    timeout: float = 30.0

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
        (``source.las`` is the input ``source``)."""
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

    def describe(self) -> dict[str, Any]:
        """Everything ``recon show --json`` prints."""
        return {
            "name": self.name,
            "version": self.version,
            "title": self.title,
            "domain": self.domain,
            "toolkit": list(self.toolkit),
            "axes": {n: a.describe() for n, a in sorted(self.axes.items())},
            "outputs": {n: {**o.spec(), "tolerance": o.describe()} for n, o in sorted(self.outputs.items())},
            "inputs": self.inputs is not None,
            "evidence": dict(sorted(self.evidence.items())),
            "reference": self.reference is not None,
            "timeout": self.timeout,
            "doc": self.doc,
            "source": self.location,
        }


def _fail(name: Any, file: str, line: int, what: str, fix: str) -> PluginError:
    return PluginError(f"oracle {name!r} ({file}:{line}): {what}", hint=fix)


def oracle(
    *,
    name: str,
    version: str,
    title: str,
    domain: str,
    toolkit: list[str] | tuple[str, ...],
    axes: dict[str, Axis],
    outputs: dict[str, Output],
    inputs: Callable[[dict[str, Any], Path], None] | None = None,
    reference: str | Path | None = None,
    evidence: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> Callable[[Callable[..., dict[str, Any]]], Oracle]:
    """Declare a reference oracle (see DESIGN §2).

    ``inputs``: optional ``fn(params, directory)`` writing per-scenario input files that
    the submission receives for every scenario. ``reference``: path (relative to the
    module) of a standalone ``reconstruct.py`` reproducing the oracle. ``evidence``:
    file name -> description of the evidence files the oracle writes. ``timeout``:
    seconds one submission run may take.
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
            if not isinstance(value, str) or not value.strip():
                raise fail(f"{label}={value!r} must be a non-empty string", f"give a short {label}")
        if not isinstance(toolkit, (list, tuple)) or not all(isinstance(t, str) and PIP_RE.match(t) for t in toolkit):
            raise fail(f"toolkit={toolkit!r} must be a list of pip distribution names", 'e.g. toolkit=["numpy", "laspy"]')
        if not isinstance(axes, dict) or not axes:
            raise fail(f"axes={axes!r} must be a non-empty dict of name -> axis", 'e.g. axes={"seed": Seed()}')
        for aname, axis in axes.items():
            if not isinstance(aname, str) or not FIELD_RE.match(aname):
                raise fail(f"axis name {aname!r} is not an identifier", "use lowercase letters, digits and _")
            if not isinstance(axis, Axis):
                raise fail(f"axis {aname!r} = {axis!r} is not an axis kind",
                           "use Float(lo, hi), Int(lo, hi), Choice([...]), Bool() or Seed()")
            for what, fix in axis.problems():
                raise fail(f"axis {aname!r} = {type(axis).__name__}: {what}", fix)
        if not isinstance(outputs, dict) or not outputs:
            raise fail(f"outputs={outputs!r} must be a non-empty dict of name -> output kind", 'e.g. outputs={"count": Integer()}')
        for oname, out in outputs.items():
            if not isinstance(oname, str) or not FIELD_RE.match(oname):
                raise fail(f"output name {oname!r} is not an identifier", "use lowercase letters, digits and _")
            if not isinstance(out, Output):
                raise fail(f"output {oname!r} = {out!r} is not an output kind",
                           "use Number(abs=, rel=), Integer(tol=), Exact(), Text(), Angle(tol=), SetOf() or SequenceOf()")
            for what, fix in out.problems():
                raise fail(f"output {oname!r} = {type(out).__name__}: {what}", fix)
        if inputs is not None and not callable(inputs):
            raise fail(f"inputs={inputs!r} is not callable", "pass a function inputs(params, directory)")
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
        ev = dict(evidence or {})
        for fname, desc in ev.items():
            if not isinstance(fname, str) or "/" in fname or fname in ("scenario.json", "oracle_output.json", "signature.json") or not fname:
                raise fail(f"evidence file name {fname!r} is not allowed", "use a plain file name such as 'cloud.las'")
            if not isinstance(desc, str) or not desc.strip():
                raise fail(f"evidence {fname!r} has no description", "describe what the file holds")
        if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and 0 < timeout <= 3600):
            raise fail(f"timeout={timeout!r} must be seconds in (0, 3600]", "e.g. timeout=30")
        doc = inspect.getdoc(fn) or ""
        if not doc.strip():
            raise fail(f"{fn.__name__} has no docstring", "write a docstring: it becomes part of the task description")
        return Oracle(
            name=name, version=version, title=title.strip(), domain=domain.strip(), toolkit=tuple(toolkit),
            axes=dict(axes), outputs=dict(outputs), fn=fn, doc=doc, source_file=file, source_line=line,
            inputs=inputs, reference=ref_path, evidence=ev, timeout=float(timeout),
        )

    return decorate
