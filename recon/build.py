"""``recon build``: package an oracle as a Harbor task (DESIGN §4).

The build is atomic (written in a temporary sibling, renamed at the end) and
reproducible (same oracle, spec, seed and build secret give identical bytes).
"""
from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Sequence

from . import canonjson
from ._version import __version__
from .errors import BuildError, OracleRunError, ReconError
from .evidence import EVIDENCE_LEVELS, check_level
from .fsutil import atomic_directory, reproducible_targz, sha256_file
from .instruction import render_instruction, render_workspace_readme
from .grader import BUDGET_SHARE, BUDGET_WALL
from .ladder import load_ladder
from .oracle import Oracle
from .registry import BUILTIN_PACKAGE, Registry
from .runtimes import get_runtime
from .runtimes.base import Limits
from .mutation.selection import SELECTION_BUDGET, select_scenarios
from .sweep import DEFAULT_PROBES, ScenarioRun, SweepSpec, build_secret, derive_task_key, load_spec, run_scenarios
from .checkpoints import SERVICE, SNAPSHOT_ROOT
from .checkpoints import checkpointer_files, compose_file

__all__ = ["build_task", "BuildResult", "PackageOptions", "generate_feedback_tool", "pinned", "DEFAULT_PROBES",
           "BASE_IMAGE", "DISCLOSE_CHOICES", "disclosed_name"]

BASE_IMAGE = "python:3.11-slim"
BASE_IMAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$")
MARKER = "task.toml"
VERIFIER_PACKAGES = ("click", "jsonschema", "numpy")
AGENT_TIMEOUT = 10800.0   # the seed's three hours
DEFAULT_CHECKPOINT_EVERY = 1800.0   # the seed's verifier cadence (recon.checkpoints.DEFAULT_INTERVAL)
# What a build may disclose beyond the behaviour-only instruction. "recipe": the oracle's
# docstring (algorithm, rules, constants, tie-breaks) as a "Recipe" section.
DISCLOSE_CHOICES = ("recipe",)


@dataclass(frozen=True)
class PackageOptions:
    """How the task is packaged, beyond the sweep: recorded in the built task."""

    probes: int = DEFAULT_PROBES
    base_image: str = BASE_IMAGE          # FROM line of both images (agent and verifier)
    disclose: str | None = None           # None: behaviour only; "recipe": adds the recipe (NAME__recipe)
    checkpoint_every: float | None = None  # seconds between workspace checkpoints (None: none)
    evidence: str | None = None           # evidence level published (None: the oracle's default)

    def check(self) -> None:
        if not (isinstance(self.probes, int) and 0 <= self.probes <= 100):
            raise BuildError(f"probes={self.probes!r} must be an integer in [0, 100]")
        if not BASE_IMAGE_RE.match(self.base_image or ""):
            raise BuildError(f"--base-image {self.base_image!r} is not an image reference",
                             hint="e.g. python:3.11-slim, registry.example.com/python:3.11-slim or "
                                  "python@sha256:<digest>")
        if self.checkpoint_every is not None and not (1.0 <= float(self.checkpoint_every) <= 86400.0):
            raise BuildError(f"checkpoint_every={self.checkpoint_every!r} must be seconds in [1, 86400]",
                             hint="e.g. --checkpoint-every 30m, or --checkpoint-every off")
        if self.evidence is not None and check_level(self.evidence) is not None:
            raise BuildError(f"--evidence {check_level(self.evidence)}",
                             hint=f"use --evidence {' | '.join(EVIDENCE_LEVELS)}, or leave it out for the oracle's default")
        if self.disclose is not None and self.disclose not in DISCLOSE_CHOICES:
            raise BuildError(f"--disclose {self.disclose!r} is not something a build can disclose",
                             hint=f"use --disclose {' or '.join(DISCLOSE_CHOICES)}, or leave it out for the "
                                  "behaviour-only task")


def disclosed_name(task_id: str, disclose: str | None) -> str:
    """The task id of a build disclosing ``disclose``: ``NAME__recipe`` (unchanged when None)."""
    return task_id if disclose is None else f"{task_id}__{disclose}"


@dataclass
class BuildResult:
    path: Path
    runs: list[ScenarioRun]
    spec: SweepSpec
    secret_source: str
    n_public: int   # published scenarios: the spec's n_public and what its cover added

    @property
    def oracle_seconds(self) -> float:
        return sum(r.seconds for r in self.runs)


def pinned(dists: list[str] | tuple[str, ...]) -> list[str]:
    """``name==version`` for each distribution, from what is installed here."""
    out = []
    for d in dists:
        try:
            out.append(f"{d}=={importlib.metadata.version(d)}")
        except importlib.metadata.PackageNotFoundError:
            raise BuildError(f"toolkit package {d!r} is not installed, so its version cannot be pinned",
                             hint=f"pip install {d} (the task pins the version installed here)") from None
    return out


def generate_feedback_tool() -> str:
    """The in-container feedback tool: recon/compare.py inlined into the template."""
    compare_src = resources.files("recon").joinpath("compare.py").read_text(encoding="utf-8")
    template = resources.files("recon").joinpath("templates/feedback_main.py").read_text(encoding="utf-8")
    start, end = "# BEGIN-STRIP", "# END-STRIP"
    if start not in template or end not in template:  # pragma: no cover - packaging error
        raise BuildError("the feedback template lost its BEGIN-STRIP/END-STRIP markers")
    head, rest = template.split(start, 1)
    _, tail = rest.split(end, 1)
    tail = tail.split("\n", 1)[1]
    body = "\n".join(ln for ln in compare_src.splitlines() if ln.strip() != "from __future__ import annotations")
    doc_end = head.rfind('"""') + 3
    return (
        # -S: the tool needs only the standard library, and skipping site-packages saves a
        # noticeable part of its start-up (RDKit, when needed for SMILES, re-enables it).
        "#!/usr/bin/env -S python3 -S\n"
        "# Generated by recon " + __version__ + " from recon/compare.py and recon/templates/feedback_main.py.\n"
        "# Standard library only. Do not edit: rebuild the task instead.\n"
        + head[:doc_end] + "\n\n"
        "# ---- comparison logic (recon/compare.py, shared with the grader) ----\n"
        + body.split('"""', 2)[2].lstrip("\n")
        + "\n\n# ---- the feedback tool ----\n"
        + tail
    )


def _write(path: Path, text: str, *, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    os.chmod(path, 0o755 if executable else 0o644)


def _vendor_recon(dest: Path, oracle: Oracle, plugin_file: Path | None) -> dict[str, str | None]:
    """Copy recon's own source (and the oracle's code) into ``dest`` for the verifier image.

    Returns how the verifier finds a third-party oracle: ``plugin`` (a vendored plugin
    file, relative to tests/) or ``plugin_module`` (a vendored package to import).
    """
    src = Path(__file__).resolve().parent
    arts = importlib.util.find_spec(BUILTIN_PACKAGE)
    if arts is None or not arts.submodule_search_locations:  # pragma: no cover - broken installation
        raise BuildError(f"the built-in oracle package {BUILTIN_PACKAGE} is not installed",
                         hint="reinstall recon (pip install .)")
    shutil.copytree(src, dest / "recon", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "artifacts"))
    # recon.artifacts may live outside the package dir (editable installs map it).
    art_root = Path(next(iter(arts.submodule_search_locations)))
    (dest / "recon" / "artifacts").mkdir(exist_ok=True)
    shutil.copyfile(art_root / "__init__.py", dest / "recon" / "artifacts" / "__init__.py")
    mod_file = Path(oracle.source_file).resolve()
    builtin = mod_file.parent.parent.resolve() == art_root.resolve()
    if builtin:
        shutil.copytree(mod_file.parent, dest / "recon" / "artifacts" / mod_file.parent.name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for data_pkg in ("ladders", "scenarios"):
        target = dest / "recon" / data_pkg
        target.mkdir(exist_ok=True)
        for item in sorted(resources.files(f"recon.{data_pkg}").iterdir(), key=lambda p: p.name):
            if item.name.endswith((".toml", ".py")) and item.is_file():
                (target / item.name).write_bytes(item.read_bytes())
    if builtin:
        return {"plugin": None, "plugin_module": None}
    plugins = dest / "plugins"
    plugins.mkdir(exist_ok=True)
    if plugin_file is not None:
        # A plugin file: ship it, with its reference where it was relative to it.
        shutil.copyfile(plugin_file, plugins / plugin_file.name)
        ref = oracle.reference
        if ref is not None and ref.is_relative_to(plugin_file.parent.resolve()):
            rel = ref.relative_to(plugin_file.parent.resolve())
            (plugins / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ref, plugins / rel)
        return {"plugin": f"vendor/plugins/{plugin_file.name}", "plugin_module": None}
    # An installed package: ship its whole top-level package (modules, reference, data).
    module = oracle.fn.__module__
    top = importlib.import_module(module.split(".")[0])
    if top.__file__ is None:
        raise BuildError(f"oracle {oracle.name!r} comes from {module}, which has no files to ship to the verifier",
                         hint="install the plugin as a regular package")
    top_path = Path(top.__file__)
    if top_path.name == "__init__.py":
        shutil.copytree(top_path.parent, plugins / top_path.parent.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        shutil.copyfile(top_path, plugins / top_path.name)
    return {"plugin": None, "plugin_module": module}


def _normalise_modes(root: Path) -> None:
    for p in sorted(root.rglob("*")):
        if p.is_dir():
            os.chmod(p, 0o755)
        elif p.is_file():
            os.chmod(p, 0o755 if p.stat().st_mode & stat.S_IXUSR else 0o644)


def build_task(
    registry: Registry,
    name: str,
    out_dir: Path,
    *,
    n_public: int | None = None,
    n_hidden: int | None = None,
    seed: int | None = None,
    spec_path: Path | None = None,
    secret: str | None = None,
    task_name: str | None = None,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    more: Callable[[int], None] | None = None,
    probes: int | None = None,
    base_image: str = BASE_IMAGE,
    disclose: str | None = None,
    checkpoint_every: float | None = DEFAULT_CHECKPOINT_EVERY,
    select: str | None = None,
    evidence: str | None = None,
    reveal: Sequence[Path] = (),
    select_budget: float | None = SELECTION_BUDGET,
    runtime: str = "auto",
    log: Callable[[str], None] | None = None,
) -> BuildResult:
    """Build oracle ``name`` into ``out_dir/<task_name or name>``; returns what was done.

    ``disclose="recipe"`` builds the easier variant whose instruction adds the oracle's
    recipe: its task id gains the suffix ``__recipe`` (``lidar_icp__recipe``,
    ``lidar_icp__06__recipe``) and task.toml records ``[metadata] disclose = "recipe"``.

    ``evidence`` is the evidence level published (``outputs``, ``summary`` or ``trace``;
    default the oracle's ``evidence_level``): evidence files revealing more stay unpublished.

    ``select`` overrides the sweep spec's scenario selection (``"random"`` or ``"stress"``:
    hidden scenarios chosen from a keyed pool by the mutants of the reference they kill,
    see :mod:`recon.mutation.selection`); ``reveal`` names independent programs (files or
    workspace folders) whose failures the hidden set catches, which published scenarios
    must then show too; ``select_budget`` bounds a stress selection's seconds (0 or None:
    no bound); ``runtime`` names the runtime the revealed programs run in (``auto``: the
    strongest here, resolved only when there are programs to reveal); ``log`` receives its
    progress lines.

    ``progress(n)``: n more scenarios ran (``spec.n_public + spec.n_hidden`` in all,
    unless ``more(n)`` said once that n more are published: a cover's).
    """
    oracle = registry.get(name)
    if oracle.reference is None:
        raise BuildError(f"oracle {name!r} ({oracle.location}) declares no reference solution",
                         hint='add reference="reference.py" (a standalone reconstruct.py) to @oracle(...)')
    spec = load_spec(oracle, spec_path, n_public=n_public, n_hidden=n_hidden, seed=seed, select=select)
    opts = PackageOptions(probes=spec.probes if probes is None else probes, base_image=base_image,
                          disclose=disclose, checkpoint_every=checkpoint_every or None,  # 0 or None: no checkpoints
                          evidence=evidence)
    opts.check()
    secret_bytes, secret_source = build_secret(secret)
    key = derive_task_key(secret_bytes, oracle, spec)
    # the probes a grading draws (the spec's, or the command line's) are where revealed
    # programs must be shown failing too
    sel = select_scenarios(oracle, dataclasses.replace(spec, probes=opts.probes), key, workers=workers, progress=log,
                           reveal=[(str(p), Path(p)) for p in reveal], budget=select_budget or None,
                           runtime=None if runtime == "auto" else get_runtime(runtime))
    public, hidden = sel.public, sel.hidden
    if more is not None and len(public) + len(hidden) != spec.n_public + spec.n_hidden:
        more(len(public) + len(hidden) - spec.n_public - spec.n_hidden)
    rep = sel.report or {}
    if log is not None and (rep.get("unrevealed") or rep.get("consequences_unshown")
                            or rep.get("program_runs_not_made")):
        log(_unrevealed_warning(rep))
    toolkit = pinned(list(dict.fromkeys(oracle.toolkit)))
    verifier_pins = pinned(list(dict.fromkeys([*VERIFIER_PACKAGES, *oracle.dependencies])))
    limits = Limits(wall=oracle.timeout, cpu=int(max(oracle.timeout * 2, 10)))
    task_id = disclosed_name(task_name or name, opts.disclose)
    target = Path(out_dir) / task_id
    try:
        with atomic_directory(target, marker=MARKER) as tmp:
            runs = _assemble(tmp, registry, oracle, task_id, spec, key, public, hidden, toolkit, verifier_pins,
                             limits, workers, progress, opts)
            if sel.report is not None:
                # what the chosen scenarios kill: verifier side only (it names hidden scenarios)
                canonjson.write(tmp / "tests" / "selection.json", sel.report)
                os.chmod(tmp / "tests" / "selection.json", 0o644)
    except ReconError:
        raise
    except OSError as exc:
        raise BuildError(f"building {task_id} failed: {exc}; nothing was written to {target}") from None
    return BuildResult(target, runs, spec, secret_source, len(public))


def _unrevealed_warning(rep: dict[str, Any]) -> str:
    """The build's warning when the published scenarios do not show every failure of the
    revealed programs: which, and why (see the selection report's ``unrevealed_seen``)."""
    unrevealed = list(rep.get("unrevealed") or [])
    beside = list(rep.get("consequences_unshown") or [])
    if beside:
        # fields seen failing only beside a failure of a field they are computed from: the
        # audit counts such a field hidden-only wherever it fails alone
        text = (f"warning: no published scenario shows {', '.join(beside)} failing (seen only beside a failure of "
                "a field it is computed from; the fairness audit counts the field hidden-only wherever it fails "
                "alone on a graded scenario)")
        if unrevealed or rep.get("program_runs_not_made"):
            return text + "\n" + _unrevealed_warning({**rep, "consequences_unshown": []})
        return text
    seen = rep.get("unrevealed_seen") or {}
    graded_only = [b for b in unrevealed if not seen.get(b, {}).get("publishable")]
    names = ", ".join(f"{b} (seen only on graded scenarios)" if b in graded_only else b for b in unrevealed)
    undone = int(rep.get("program_runs_not_made") or 0)
    left = f"{undone} of their runs were left undone by the budget"
    more = "(a larger reveal_budget in the sweep spec, or --select-budget 0 for none, runs them all)"
    if not unrevealed:
        return (f"warning: the published scenarios show every failure found in the revealed programs, but {left}, "
                f"so not every failure there is may be found {more}")
    text = (f"warning: the published scenarios do not show {len(unrevealed)} failure(s) of the revealed programs"
            f" ({names})")
    if undone:
        return f"{text}; {left} {more}"
    reasons = []
    if graded_only:
        reasons.append("no scenario the cover may publish shows those seen only on graded scenarios")
    if len(graded_only) < len(unrevealed):
        reasons.append("the public slots ran out before the others")
    return text + "; " + " and ".join(reasons) + " (more public scenarios, --public N, give the cover more room)"


def _assemble(tmp: Path, registry: Registry, oracle: Oracle, task_id: str, spec: SweepSpec, key: bytes,
              public: list[Any], hidden: list[Any], toolkit: list[str], verifier_pins: list[str], limits: Limits,
              workers: int, progress: Callable[[int], None] | None, opts: PackageOptions) -> list[ScenarioRun]:
    probes = opts.probes
    level = opts.evidence or oracle.evidence_level
    env_app = tmp / "environment" / "app"
    tests = tmp / "tests"
    staging = Path(tempfile.mkdtemp(prefix="recon-public-", dir=tmp))
    try:
        jobs = [(sc, staging / sc.id, True) for sc in public] + [(sc, tests / "hidden" / sc.id, False) for sc in hidden]
        try:
            runs = run_scenarios(oracle, jobs, workers=workers, progress=progress, evidence_level=level)
        except OracleRunError as exc:
            raise BuildError(f"build of {task_id} stopped: {exc.message}; nothing was written", hint=exc.hint) from None
        # signatures, then the published archive
        by_id = {r.scenario.id: r for r in runs}
        for sc in public:
            d = staging / sc.id
            doc = canonjson.read(d / "scenario.json")
            canonjson.write(d / "signature.json", {
                "scenario_sha256": canonjson.sha256_of(doc),
                "output_sha256": canonjson.sha256_of(by_id[sc.id].output),
                "oracle": oracle.name, "oracle_version": oracle.version, "recon_version": __version__,
            })
            # verifier-side copy of the public scenarios (for the replay check)
            dest = tests / "public" / sc.id
            dest.mkdir(parents=True)
            for rel in ("scenario.json", "oracle_output.json"):
                shutil.copyfile(d / rel, dest / rel)
            if (d / "inputs").is_dir():
                shutil.copytree(d / "inputs", dest / "inputs")
        _normalise_modes(staging)
        obs = env_app / "observations"
        obs.mkdir(parents=True)
        reproducible_targz(staging, obs / "reference_outputs.tar.gz")
        files = {"reference_outputs.tar.gz": sha256_file(obs / "reference_outputs.tar.gz")}
        for p in sorted(staging.rglob("*")):
            if p.is_file():
                files[p.relative_to(staging).as_posix()] = sha256_file(p)
    finally:
        shutil.rmtree(staging, ignore_errors=True)

    # The manifest carries the oracle's public declaration (Oracle.public: description,
    # axes and outputs with their docs, input and evidence descriptions) and nothing of
    # its recipe; the agent's texts are rendered from it alone.
    manifest = {
        **oracle.public(level),
        "task": f"recon/{task_id}", "oracle": oracle.name, "oracle_version": oracle.version,
        "recon_version": __version__,
        "public": [sc.id for sc in public],
        "timeout": limits.wall,
        "files": files,
    }
    canonjson.write(obs / "manifest.json", manifest)
    _write(env_app / "tools" / "feedback", generate_feedback_tool(), executable=True)
    starter_readme = render_workspace_readme(manifest)
    _write(env_app / "workspace" / "README.md", starter_readme)
    ladder_name = "six_rung"
    ladder = load_ladder(ladder_name)
    disclosed = opts.disclose == "recipe"
    _write(tmp / "instruction.md", render_instruction(
        manifest, n_public=len(public), probes=probes, ladder=ladder,
        recipe=oracle.recipe if disclosed else None, stages=oracle.stages if disclosed else ()))
    _write(tmp / "environment" / "Dockerfile", _agent_dockerfile(toolkit, opts.base_image))

    # solution/
    sol = tmp / "solution"
    ref = oracle.reference
    if ref is None:  # pragma: no cover - checked by build_task
        raise BuildError(f"oracle {oracle.name!r} has no reference")
    _write(sol / "reconstruct.py", ref.read_text(encoding="utf-8"))
    _write(sol / "solve.sh", SOLVE_SH, executable=True)

    # tests/ (verifier side)
    vendored = _vendor_recon(tests / "vendor", oracle, registry.plugin_file(oracle.name))
    ladder_src = resources.files("recon.ladders").joinpath(f"{ladder_name}.toml")
    (tests / "ladders").mkdir(parents=True, exist_ok=True)
    (tests / "ladders" / f"{ladder_name}.toml").write_bytes(ladder_src.read_bytes())
    canonjson.write(tests / "grader.json", {
        "task": f"recon/{task_id}", "oracle": oracle.name, "oracle_version": oracle.version,
        "recon_version": __version__, "task_key": key.hex(), "spec": spec.to_json(),
        "public": [sc.id for sc in public], "hidden": [sc.id for sc in hidden],
        "outputs": oracle.output_specs(), "axes": {n: a.describe() for n, a in sorted(oracle.axes.items())},
        "ladder": ladder_name, "limits": limits.to_json(), "probes": probes,
        "starter": {"README.md": _sha256_text(starter_readme)},
        # Private: what the build disclosed (the leak audit exempts a disclosed recipe)
        # and the recipe's stage names (counted by `recon stats`).
        "disclose": opts.disclose, "stages": list(oracle.stages), "checkpoint_every": opts.checkpoint_every,
        "evidence_level": level,
        **vendored,
    })
    _write(tests / "test.sh", TEST_SH, executable=True)
    _write(tests / "Dockerfile", _verifier_dockerfile(verifier_pins, opts.base_image))
    if opts.checkpoint_every:
        # The checkpoint sidecar (see recon.checkpoints): a compose file over the agent's
        # service and the sidecar's image, beside the agent's own Dockerfile.

        _write(tmp / "environment" / "docker-compose.yaml", compose_file(opts.checkpoint_every))
        for fname, text in checkpointer_files(opts.base_image).items():
            _write(tmp / "environment" / "checkpointer" / fname, text)
    _write(tmp / "task.toml", _task_toml(oracle, task_id, spec, len(public), ladder.public_runs(len(public)), limits, opts))
    _normalise_modes(tmp)
    # Modes follow what Harbor does with each folder. solution/ is copied into the agent's
    # container with its modes and solve.sh runs as the agent user: readable, solve.sh
    # executable. tests/ becomes the verifier image (root) and holds the hidden data:
    # owner-only, so no other user on the build machine reads it. On the build machine the
    # local runtime hides solution/ and tests/ from submissions by other means (see
    # recon.runtimes.local).
    for p in [tests, *tests.rglob("*")]:
        if p.is_dir():
            os.chmod(p, 0o700)
    return runs


def _sha256_text(text: str) -> str:
    import hashlib  # noqa: PLC0415

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


SOLVE_SH = """#!/bin/bash
# Installs the reference reconstruct.py into the agent's workspace.
# RECON_APP lets recon's local runtimes point at a copy of environment/app.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
app="${RECON_APP:-/app}"
cp "$here/reconstruct.py" "$app/workspace/reconstruct.py"
echo "installed reconstruct.py into $app/workspace"
"""

TEST_SH = """#!/bin/bash
# Grades the agent's workspace on the task's six-rung ladder and writes
# reward.txt, reward.json and grading.json. Always exits 0: the reward says how it went.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
workspace="${RECON_WORKSPACE:-/app/workspace}"
logs="${RECON_LOGS:-/logs/verifier}"
checkpoints="${RECON_CHECKPOINTS:-/checkpoints}"
# The log directory arrives world-writable (Harbor makes it 0777): the submission's runs
# must not be able to plant files where the reward is read. Run from here, so nothing in
# the caller's working directory can shadow recon's modules.
mkdir -p "$logs" && chmod 0755 "$logs" 2>/dev/null
rm -rf -- "$logs/reward.txt" "$logs/reward.json" "$logs/grading.json"
cd "$here" || exit 0
extra=()
if [ -d "$checkpoints" ]; then extra+=(--checkpoints "$checkpoints"); fi
if ! PYTHONPATH="$here/vendor${PYTHONPATH:+:$PYTHONPATH}" python3 -m recon grade "$here" \\
      --workspace "$workspace" --out "$logs" --runtime "${RECON_RUNTIME:-local}" "${extra[@]}" ${RECON_GRADE_ARGS:-}; then
  echo "recon grade failed to run; recording reward 0" >&2
  echo 0 > "$logs/reward.txt"
  echo '{"binary": 0, "reward": 0.0}' > "$logs/reward.json"
fi
exit 0
"""


def _agent_dockerfile(toolkit: list[str], base_image: str) -> str:
    pins = " ".join(toolkit)
    install = f" \\\n    && pip install --no-cache-dir {pins}" if toolkit else ""
    return f"""FROM {base_image}

# The agent works as a non-root user; the observations and tools are read-only to it.
RUN useradd --create-home --shell /bin/bash agent{install}

COPY app/ /app/
RUN chown -R agent:agent /app/workspace \\
    && chmod -R a-w /app/observations /app/tools \\
    && chmod 0555 /app/tools/feedback

ENV PYTHONDONTWRITEBYTECODE=1
WORKDIR /app/workspace
USER agent
"""


def _verifier_dockerfile(pins: list[str], base_image: str) -> str:
    return f"""FROM {base_image}

# The verifier image carries recon, the oracle and the hidden scenarios; Harbor runs
# /tests/test.sh from it (tests are bundled in this image) with the agent's
# /app/workspace restored as an artifact.
RUN pip install --no-cache-dir {' '.join(pins)}

COPY . /tests/
RUN chmod 0700 /tests && chmod 0755 /tests/test.sh
ENV PYTHONDONTWRITEBYTECODE=1
WORKDIR /tests
"""


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _task_toml(oracle: Oracle, task_id: str, spec: SweepSpec, n_public: int, public_runs: int, limits: Limits,
               opts: PackageOptions) -> str:
    probes = opts.probes
    runs = public_runs + spec.n_hidden + probes   # what one grading runs (the ladder's public_runs)
    # Verifier: what one grading's runs may cost (RunBudget: a share of runs x limit, in wall
    # time at most BUDGET_WALL budgets, plus the runs in flight when it is spent), the
    # probes' oracle calls (each within the wall limit, as the reference solution's runs
    # are), a margin for start-up; with checkpoints, once more for every snapshot the agent
    # phase can leave. Declared quantities only, so a build is reproducible whatever the
    # machine's speed.
    gradings = 1 + (int(AGENT_TIMEOUT // opts.checkpoint_every) if opts.checkpoint_every else 0)
    one = runs * limits.wall * BUDGET_SHARE * BUDGET_WALL + 2 * limits.wall + limits.wall * probes
    verifier_timeout = float(int(one * gradings + 300))
    artifacts = '"/app/workspace"'
    if opts.checkpoint_every:

        artifacts += f', {{ source = "{SNAPSHOT_ROOT}", service = "{SERVICE}" }}'
    keywords = ", ".join(_toml_str(k) for k in ["recon", "reconstruction", oracle.domain, oracle.name])
    description = f"Reconstruct {oracle.title} from published evidence; graded on hidden scenarios."
    if opts.disclose == "recipe":
        description += " The instruction discloses the oracle's recipe (an easier variant)."
    return f"""schema_version = "1.4"
artifacts = [{artifacts}]

[task]
name = {_toml_str('recon/' + task_id)}
version = {_toml_str(oracle.version)}
description = {_toml_str(description)}
keywords = [{keywords}]

[metadata]
domain = {_toml_str(oracle.domain)}
oracle = {_toml_str(oracle.name)}
oracle_version = {_toml_str(oracle.version)}
recon_version = {_toml_str(__version__)}
n_public = {n_public}
n_hidden = {spec.n_hidden}
probes = {probes}
ladder = "six_rung"
base_image = {_toml_str(opts.base_image)}
disclose = {_toml_str(opts.disclose or "none")}
evidence_level = {_toml_str(opts.evidence or oracle.evidence_level)}
checkpoint_every = {float(opts.checkpoint_every or 0)}

[metadata.harbor.lint]
extend-select = ["root-agent"]

[agent]
timeout_sec = {AGENT_TIMEOUT}
user = "agent"

[verifier]
timeout_sec = {verifier_timeout}
environment_mode = "separate"
user = "root"

[verifier.environment]
network_mode = "no-network"
build_timeout_sec = 900.0
cpus = 2
memory_mb = 8192

[environment]
network_mode = "no-network"
build_timeout_sec = 900.0
cpus = 2
memory_mb = 8192
"""
