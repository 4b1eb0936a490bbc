"""Datasets: many tasks built at once, their variants, and the manifest that lists them.

``build_all`` builds every named oracle (in parallel processes) into one folder and
``write_manifest`` records each task with the digest of its tree (``dataset.json``), so
a dataset can be checked byte for byte later: ``tree_digest(DIR/<path>)`` must equal the
manifest's ``digest``.

Variants. Variant N of an oracle is the same task over another sweep, named
``NAME__NN`` like the task ids of long-horizon benchmarks (``lidar_icp__06``). Its sweep
seed is ``variant_seed(s, N) = 2**48 + s * 2**16 + N`` where ``s`` is the spec's seed:

- injective: distinct (s, N) give distinct seeds (s < 2**32, 1 <= N <= 99), so no two
  variants of any base seeds share a sweep (with ``s + 1000 * N``, variant 2 of seed 0
  and variant 1 of seed 1000 would be the same task);
- disjoint from hand-picked seeds (< 2**48), so a variant never coincides with a plain
  ``--seed`` build;
- below 2**53, so the seed survives any JSON reader.

The seed is hashed into the sweep identity, so different seeds give unrelated public
scenarios; hidden scenarios are keyed by the build secret and the same identity anyway.

Harbor registry. ``write_manifest`` also writes ``registry.json`` beside ``dataset.json``:
a Harbor registry file (a JSON list of datasets, each ``name``, ``version``,
``description``, ``tasks: [{name, path}]``, ``metrics``; Harbor's ``DatasetSpec``) that
lists every task of the folder as one dataset, so

    harbor run -d recon@VERSION --registry-path DIR/registry.json -a AGENT -m MODEL

runs the whole set. Harbor resolves a local task's ``path`` against the working
directory of ``harbor run``, not against the registry file, so the paths are absolute
by default (the file then names this machine's folder; ``dataset.json`` stays free of
absolute paths). ``relative_paths=True`` writes them relative to ``DIR`` instead, for a
folder that is moved or published; run Harbor from ``DIR`` then.
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
from concurrent.futures import Future, ProcessPoolExecutor, wait, FIRST_COMPLETED
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable

from . import canonjson
from ._version import __version__
from .build import build_task
from .errors import BuildError, ReconError, UsageError
from .fsutil import tree_digest
from .registry import Registry
from .sweep import load_spec
from .build import PackageOptions

__all__ = ["variant_seed", "variant_name", "build_all", "write_manifest", "write_registry", "registry_document",
           "check_dataset_id", "read_manifest", "DatasetEntry", "MANIFEST", "REGISTRY", "DATASET_NAME",
           "VARIANT_SEED_BASE", "MAX_VARIANT"]

MANIFEST = "dataset.json"
REGISTRY = "registry.json"
# The default Harbor dataset name. No "/" in it: Harbor reads `-d org/name` as a package
# of its hub, not as a dataset of a registry file.
DATASET_NAME = "recon"
_DATASET_NAME_RE = r"[A-Za-z0-9][A-Za-z0-9._-]*"
VARIANT_SEED_BASE = 1 << 48
MAX_VARIANT = 99
MAX_BASE_SEED = (1 << 32) - 1


def variant_seed(base_seed: int, n: int) -> int:
    """The sweep seed of variant ``n`` of a spec whose seed is ``base_seed`` (see module doc)."""
    if not (isinstance(n, int) and 1 <= n <= MAX_VARIANT):
        raise UsageError(f"--variant {n!r} must be an integer in [1, {MAX_VARIANT}]", hint="variants are numbered 01 to 99")
    if not (0 <= base_seed <= MAX_BASE_SEED):
        raise UsageError(f"a variant needs a base seed in [0, 2**32); got seed={base_seed}",
                         hint="use a smaller --seed (variants are derived from it)")
    return VARIANT_SEED_BASE + (base_seed << 16) + n


def variant_name(name: str, n: int) -> str:
    """``NAME__NN``."""
    return f"{name}__{n:02d}"


def _abspath(path: Path | str) -> Path:
    # Absolute and without "..", but symlinks kept: the path as the user named it.
    return Path(os.path.abspath(path))


@dataclass
class DatasetEntry:
    name: str            # task folder name (NAME or NAME__NN)
    oracle: str
    oracle_version: str
    path: Path
    digest: str
    seed: int
    variant: int | None
    n_public: int
    n_hidden: int
    oracle_seconds: float
    secret_source: str = ""

    def relpath(self, root: Path) -> str:
        """The task folder relative to ``root`` (either may be relative to the working directory)."""
        try:
            return _abspath(self.path).relative_to(_abspath(root)).as_posix()
        except ValueError:
            raise UsageError(f"task {self.name} ({self.path}) is not inside the dataset folder {root}",
                             hint="a manifest lists the tasks built into its own folder") from None

    def to_json(self, root: Path) -> dict[str, Any]:
        return {"name": self.name, "task": f"recon/{self.name}", "oracle": self.oracle,
                "oracle_version": self.oracle_version, "path": self.relpath(root),
                "digest": self.digest, "seed": self.seed, "variant": self.variant,
                "n_public": self.n_public, "n_hidden": self.n_hidden}


def _build_one(registry: Registry, name: str, out: Path, opts: dict[str, Any], workers: int,
               progress: Callable[[int], None] | None, more: Callable[[int], None] | None = None) -> DatasetEntry:
    oracle = registry.get(name)
    seed = opts.get("seed")
    variant = opts.get("variant")
    task_name = None
    if variant is not None:
        base = load_spec(oracle, opts.get("spec_path"), seed=seed).seed
        seed = variant_seed(base, variant)
        task_name = variant_name(name, variant)
    res = build_task(registry, name, out, n_public=opts.get("n_public"), n_hidden=opts.get("n_hidden"), seed=seed,
                     spec_path=opts.get("spec_path"), secret=opts.get("secret"), task_name=task_name,
                     workers=workers, progress=progress, more=more, select=opts.get("select"), log=opts.get("log"),
                     reveal=opts.get("reveal") or (), runtime=opts.get("runtime") or "auto",
                     **({"select_budget": opts["select_budget"]} if opts.get("select_budget") is not None else {}),
                     **_package_opts(opts))
    return DatasetEntry(res.path.name, oracle.name, oracle.version, res.path, tree_digest(res.path), res.spec.seed,
                        variant, res.n_public, res.spec.n_hidden, res.oracle_seconds, res.secret_source)


def _package_opts(opts: dict[str, Any]) -> dict[str, Any]:
    """The packaging options (see :class:`recon.build.PackageOptions`) present in ``opts``."""
    from dataclasses import fields  # noqa: PLC0415

    return {f.name: opts[f.name] for f in fields(PackageOptions) if opts.get(f.name) is not None}


def build_one(registry: Registry, name: str, out: Path, *, variant: int | None = None,
              workers: int = 1, progress: Callable[[int], None] | None = None,
              more: Callable[[int], None] | None = None, **opts: Any) -> DatasetEntry:
    """Build one task (variant ``variant`` when given) and return its manifest entry;
    ``progress`` and ``more`` as for :func:`recon.build.build_task`."""
    return _build_one(registry, name, Path(out), {**opts, "variant": variant}, workers, progress, more)


# Worker-process state, inherited through fork (the registry may hold plugin-file
# oracles, which cannot be pickled).
_W: dict[str, Any] = {}


def _init(registry: Registry, q: Any, workers: int) -> None:
    _W["registry"], _W["queue"], _W["workers"] = registry, q, workers


def _work(name: str, out: str, opts: dict[str, Any]) -> DatasetEntry | str:
    q = _W["queue"]
    try:
        return _build_one(_W["registry"], name, Path(out), opts, _W["workers"], lambda n: q.put(n),
                          lambda n: q.put(("more", n)))
    except ReconError as exc:  # reported per task by the parent; bugs propagate with their traceback
        return f"{name}: {exc.message}"


def _report(step: int | tuple[str, int], progress: Callable[[int], None] | None,
            more: Callable[[int], None] | None) -> None:
    """A worker's progress message: scenarios done, or ("more", n) scenarios added."""
    if isinstance(step, tuple):
        if more:
            more(step[1])
    elif progress:
        progress(step)


def build_all(registry: Registry, out: Path | str, *, names: list[str] | None = None, workers: int | None = None,
              progress: Callable[[int], None] | None = None, more: Callable[[int], None] | None = None,
              **opts: Any) -> list[DatasetEntry]:
    """Build every oracle in ``names`` (default: all registered) into ``out``, up to
    ``workers`` tasks at once, each running its scenarios on up to ``workers``
    processes; returns the entries in name order. ``progress`` and ``more`` as for
    :func:`recon.build.build_task`, summed over the tasks.

    Tasks differ a lot in cost (one oracle call may take 0.1 s, another 4 s). Building
    tasks side by side and letting each spread its scenarios keeps every core busy
    until the last scenario of the slowest task: when a cheap task is done, the
    expensive one's pool has the machine to itself.

    Every task is attempted; if any fails, :class:`BuildError` lists the failures after
    the others are done (each task is atomic, so nothing half-written remains)."""
    opts.pop("log", None)  # progress lines of one build; tasks here build side by side in workers
    out = Path(out)
    names = sorted(names if names is not None else registry.names())
    if not names:
        raise UsageError("no oracles are registered", hint="check `recon list`")
    for n in names:
        registry.get(n)
    workers = max(1, workers or os.cpu_count() or 1)
    results: dict[str, DatasetEntry | str] = {}
    if len(names) == 1 or workers == 1:
        # One task: parallelise its scenarios instead of tasks.
        for n in names:
            try:
                results[n] = _build_one(registry, n, out, opts, workers, progress, more)
            except ReconError as exc:
                if len(names) == 1:
                    raise
                results[n] = f"{n}: {exc.message}"
    else:
        ctx = get_context("fork")
        q = ctx.SimpleQueue()
        with ProcessPoolExecutor(max_workers=min(workers, len(names)), mp_context=ctx,
                                 initializer=_init, initargs=(registry, q, workers)) as pool:
            pending: dict[Future[DatasetEntry | str], str] = {pool.submit(_work, n, str(out), opts): n for n in names}
            while pending:
                done, _ = wait(list(pending), timeout=0.1, return_when=FIRST_COMPLETED)
                while not q.empty():
                    _report(q.get(), progress, more)
                for fut in done:
                    results[pending.pop(fut)] = fut.result()
        while not q.empty():  # pragma: no cover - late updates
            _report(q.get(), progress, more)
    failures = [r for r in results.values() if isinstance(r, str)]
    if failures:
        raise BuildError(f"{len(failures)} of {len(names)} task(s) failed to build: " + "; ".join(failures),
                         hint="fix those oracles or build the others by name; no dataset manifest was written")
    return [r for n in names if isinstance(r := results[n], DatasetEntry)]


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_manifest(out: Path | str, entries: list[DatasetEntry], *, dataset_name: str = DATASET_NAME,
                   dataset_version: str | None = None, registry: bool = True,
                   relative_paths: bool = False) -> Path:
    """Write ``out/dataset.json`` (atomically): every task, its path and tree digest;
    and, unless ``registry`` is false, the Harbor registry ``out/registry.json``
    (see :func:`write_registry` for the other arguments). Returns the manifest's path."""
    out = Path(out).absolute()
    if registry:
        # Checked before anything is written, so a bad name leaves neither file.
        check_dataset_id(dataset_name, dataset_version)
    doc = {
        "dataset_schema": 1,
        "recon_version": __version__,
        "digest": "recon.fsutil.tree_digest: sha256 over every file's relative path, executable bit and sha256, sorted",
        "tasks": [e.to_json(out) for e in sorted(entries, key=lambda e: e.name)],
    }
    path = out / MANIFEST
    _write_atomic(path, canonjson.dumps(doc))
    if registry:
        write_registry(out, entries, name=dataset_name, version=dataset_version, relative_paths=relative_paths)
    return path


def check_dataset_id(name: str, version: str | None) -> None:
    """Raise :class:`UsageError` unless ``name`` and ``version`` (None: recon's version)
    can be written as ``harbor run -d NAME@VERSION``."""
    if not re.fullmatch(_DATASET_NAME_RE, name or ""):
        raise UsageError(f"dataset name {name!r} is not usable with `harbor run -d NAME@VERSION`",
                         hint="use letters, digits, '.', '_' and '-' (no '/': Harbor reads org/name as a hub package)")
    if version is not None and not re.fullmatch(_DATASET_NAME_RE, version):
        raise UsageError(f"dataset version {version!r} is not usable with `harbor run -d NAME@VERSION`",
                         hint="use letters, digits, '.', '_' and '-', e.g. 1.0.0")


def registry_document(out: Path | str, entries: list[DatasetEntry], *, name: str = DATASET_NAME,
                      version: str | None = None, description: str | None = None,
                      relative_paths: bool = False) -> list[dict[str, Any]]:
    """The Harbor registry (a list with one dataset) for the tasks ``entries`` built in ``out``.

    ``version`` defaults to recon's version; the default description names the tasks
    and a digest over their tree digests, so two registries of different builds differ."""
    check_dataset_id(name, version)
    out = Path(out).absolute()
    ordered = sorted(entries, key=lambda e: e.name)
    if not ordered:
        raise UsageError("a registry needs at least one task", hint="build tasks first (`recon build --all`)")
    version = version or __version__
    if description is None:
        combined = hashlib.sha256("".join(f"{e.name}\0{e.digest}\n" for e in ordered).encode()).hexdigest()
        description = (f"{len(ordered)} reconstruction task(s) built by recon {__version__}: "
                       f"{', '.join(e.name for e in ordered)} (tasks digest sha256:{combined[:16]})")
    tasks = [{"name": e.name, "path": e.relpath(out) if relative_paths else _abspath(e.path).as_posix()}
             for e in ordered]
    return [{"name": name, "version": version, "description": description, "tasks": tasks,
             "metrics": [{"type": "mean"}]}]


def write_registry(out: Path | str, entries: list[DatasetEntry], *, name: str = DATASET_NAME,
                   version: str | None = None, description: str | None = None,
                   relative_paths: bool = False) -> Path:
    """Write the Harbor registry ``out/registry.json`` (atomically) listing ``entries`` as
    dataset ``name`` at ``version`` (default: recon's version), so that
    ``harbor run -d NAME@VERSION --registry-path out/registry.json`` runs every task.

    Task paths are absolute unless ``relative_paths`` (relative to ``out``; Harbor then
    needs to run in ``out``, because it resolves them against its working directory)."""
    out = Path(out).absolute()
    doc = registry_document(out, entries, name=name, version=version, description=description,
                            relative_paths=relative_paths)
    path = out / REGISTRY
    _write_atomic(path, canonjson.dumps(doc))
    return path


def read_manifest(path: Path | str) -> dict[str, Any]:
    """A dataset manifest (the file, or the folder holding ``dataset.json``)."""
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST
    return dict(canonjson.read(p))
