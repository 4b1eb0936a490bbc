"""The registry: one object that knows every loaded oracle and where it came from.

Sources are the built-in ``artifacts`` package, the ``recon.oracles`` entry-point
group and plugin files given with ``--plugin``. Registering a name twice is an error
that names both sources. Tests make a fresh :class:`Registry` each; nothing here is a
module-level mutable global.

A source that fails to load (a module that no longer imports, a declaration an older
recon accepted) blocks only itself: :meth:`Registry.default` records it as *broken*
with its error and fix, every other oracle stays usable, and asking for a broken
oracle by name raises its own error. A plugin file named explicitly (``--plugin``) is
loaded strictly: its failure is the command's failure.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import pkgutil
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterable

from .errors import DuplicateOracleError, PluginError, UnknownOracleError
from .oracle import ENTRY_POINT_GROUP, Oracle

__all__ = ["Registry", "Broken", "ENTRY_POINT_GROUP", "BUILTIN_PACKAGE", "missing_distributions", "install_command"]

BUILTIN_PACKAGE = "recon.artifacts"


def _import_failure(what: str, exc: BaseException) -> PluginError:
    if isinstance(exc, SyntaxError):
        where = f"{exc.filename}:{exc.lineno}"
        return PluginError(f"{what} has a syntax error at {where}: {exc.msg}", hint="fix the syntax and retry")
    if isinstance(exc, PluginError):
        return exc
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({tb[-1].filename}:{tb[-1].lineno})" if tb else ""
    return PluginError(f"{what} failed to import: {type(exc).__name__}: {exc}{where}",
                       hint="fix the module so that importing it succeeds")


@dataclass(frozen=True)
class Broken:
    """A source that failed to load: what it is called, where it came from, and why."""

    name: str          # the entry point's or module's name (often the oracle's)
    source: str
    error: PluginError


def missing_distributions(dists: Iterable[str]) -> list[str]:
    """The pip distributions of ``dists`` that are not installed here."""
    missing = []
    for d in dists:
        try:
            importlib.metadata.version(d)
        except importlib.metadata.PackageNotFoundError:
            missing.append(d)
    return missing


DISTRIBUTION = "recon-tasks"


def _norm(dist: str) -> str:
    return dist.lower().replace("_", "-").replace(".", "-")


def install_command(missing: Iterable[str], builtin: bool) -> str:
    """The pip command that installs ``missing``: for a built-in, the smallest extra of
    recon-tasks that holds them all (one per domain, ``catalog`` for every task)."""
    need = {_norm(m) for m in missing}
    if builtin and need:
        extras: dict[str, set[str]] = {}
        try:
            reqs = importlib.metadata.requires(DISTRIBUTION) or []
        except importlib.metadata.PackageNotFoundError:
            reqs = []
        for req in reqs:
            if "extra ==" not in req:
                continue
            name = req.split(";")[0].strip()
            for sep in ("[", "<", ">", "=", "!", "~", " "):
                name = name.split(sep)[0]
            extra = req.split("extra ==")[1].strip().strip("'\"")
            extras.setdefault(extra, set()).add(_norm(name))
        fitting = sorted((len(v), k) for k, v in extras.items() if need <= v)
        if fitting:
            return f"pip install '{DISTRIBUTION}[{fitting[0][1]}]'"
    return "pip install " + " ".join(sorted(missing))


class Registry:
    """Oracles by name, each with the source it was loaded from."""

    def __init__(self, *, tolerant: bool = False) -> None:
        """``tolerant``: a built-in or entry point that fails to load is recorded in
        :attr:`broken` instead of raising (plugin files always raise)."""
        self._oracles: dict[str, Oracle] = {}
        self._sources: dict[str, str] = {}
        self._plugin_files: dict[str, Path] = {}
        self._broken: list[Broken] = []
        self._tolerant = tolerant

    # -- registration -------------------------------------------------------------------
    def register(self, oracle: Oracle, source: str) -> None:
        if not isinstance(oracle, Oracle):
            raise PluginError(f"{source}: {oracle!r} is not an @oracle", hint="decorate the function with @oracle(...)")
        if oracle.name in self._oracles:
            existing = self._oracles[oracle.name]
            if existing is oracle:
                return
            raise DuplicateOracleError(
                f"oracle name {oracle.name!r} is registered twice: by {self._sources[oracle.name]} "
                f"({existing.location}) and by {source} ({oracle.location})",
                hint="rename one of them (names are task ids and must be unique)",
            )
        self._oracles[oracle.name] = oracle
        self._sources[oracle.name] = source

    def load_module(self, module: ModuleType, source: str) -> list[Oracle]:
        """Register every ``@oracle`` defined at the top level of ``module``."""
        found = [v for v in vars(module).values() if isinstance(v, Oracle)]
        # Keep definition order stable: sort by source line.
        found.sort(key=lambda o: (o.source_file, o.source_line))
        for o in found:
            self.register(o, source)
        return found

    def load_builtins(self) -> None:
        """Import every package under ``recon.artifacts`` and register its oracles."""
        try:
            pkg = importlib.import_module(BUILTIN_PACKAGE)
        except ImportError:  # pragma: no cover - broken installation
            raise PluginError(f"the built-in oracle package {BUILTIN_PACKAGE} is not installed",
                              hint="reinstall recon (pip install .)") from None
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            modname = f"{BUILTIN_PACKAGE}.{info.name}"
            source = f"built-in {modname}"
            try:
                module = importlib.import_module(modname)
            except Exception as exc:  # noqa: BLE001 - reported as a PluginError
                self._failed(info.name, source, _import_failure(f"built-in oracle module {modname}", exc))
                continue
            self._load_isolated(info.name, source, functools.partial(self.load_module, module, source))

    def _failed(self, name: str, source: str, error: PluginError) -> None:
        if not self._tolerant:
            raise error
        self._broken.append(Broken(name, source, error))

    def _load_isolated(self, name: str, source: str, load: Callable[[], object]) -> None:
        """Run ``load``; in a tolerant registry a plugin error is recorded against ``name``."""
        try:
            load()
        except DuplicateOracleError:
            raise  # two sources claim one name: neither is "the" broken one
        except PluginError as exc:
            self._failed(name, source, exc)

    def load_entry_points(self) -> None:
        """Load every ``recon.oracles`` entry point (a module or an ``@oracle`` object)."""
        for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
            source = f"entry point {ep.name!r} ({ep.value}) of {ep.dist.name if ep.dist else 'an unknown distribution'}"
            try:
                obj = ep.load()
            except Exception as exc:  # noqa: BLE001
                self._failed(ep.name, source, _import_failure(source, exc))
                continue
            self._load_isolated(ep.name, source, functools.partial(self._load_object, obj, source))

    def _load_object(self, obj: object, source: str) -> None:
        if isinstance(obj, Oracle):
            module = sys.modules.get(getattr(obj.fn, "__module__", ""))
            if module is not None:
                self.load_module(module, source)
            else:
                self.register(obj, source)
        elif isinstance(obj, ModuleType):
            if not self.load_module(obj, source):
                raise PluginError(f"{source} defines no @oracle", hint="point the entry point at a module that defines one")
        else:
            raise PluginError(f"{source} names {obj!r}, neither a module nor an @oracle",
                              hint="point the entry point at a module ('pkg.module') or an oracle ('pkg.module:name')")

    def load_plugin_file(self, path: Path | str) -> list[Oracle]:
        """Import one plugin file and register its oracles."""
        path = Path(path).resolve()
        if not path.is_file():
            raise PluginError(f"plugin file {path} does not exist", hint="give the path of a .py file")
        if path.suffix != ".py":
            raise PluginError(f"plugin file {path} is not a .py file", hint="give the path of a Python module")
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
        modname = f"recon_plugin_{path.stem}_{digest}"
        if modname in sys.modules:
            module = sys.modules[modname]
        else:
            spec = importlib.util.spec_from_file_location(modname, path)
            if spec is None or spec.loader is None:  # pragma: no cover
                raise PluginError(f"plugin file {path} cannot be loaded")
            module = importlib.util.module_from_spec(spec)
            sys.modules[modname] = module
            try:
                spec.loader.exec_module(module)
            except BaseException as exc:  # noqa: BLE001 - includes SystemExit from a plugin
                sys.modules.pop(modname, None)
                if isinstance(exc, KeyboardInterrupt):
                    raise
                raise _import_failure(f"plugin file {path}", exc) from None
        found = self.load_module(module, f"plugin file {path}")
        if not found:
            raise PluginError(f"plugin file {path} defines no @oracle", hint="decorate a function with @oracle(...)")
        for o in found:
            self._plugin_files[o.name] = path
        return found

    @classmethod
    def default(cls, plugins: Iterable[Path | str] = (), *, entry_points: bool = True) -> "Registry":
        """Built-ins, then entry points, then plugin files. A built-in or an entry point
        that fails to load is recorded as broken (see :attr:`broken`) and blocks only
        itself; a plugin file named here must load."""
        reg = cls(tolerant=True)
        reg.load_builtins()
        if entry_points:
            reg.load_entry_points()
        for p in plugins:
            reg.load_plugin_file(p)
        return reg

    @property
    def broken(self) -> tuple[Broken, ...]:
        """The sources that failed to load, in load order."""
        return tuple(self._broken)

    # -- lookup -------------------------------------------------------------------------
    def get(self, name: str) -> Oracle:
        try:
            return self._oracles[name]
        except KeyError:
            pass
        for b in self._broken:
            if b.name == name or b.name.split(".")[-1] == name:
                raise PluginError(f"oracle {name!r} cannot be used: {b.error.message}", hint=b.error.hint)
        known = ", ".join(sorted(self._oracles)) or "none"
        broken = ""
        if self._broken:
            broken = f"; {len(self._broken)} plugin(s) failed to load: " + ", ".join(b.name for b in self._broken)
        raise UnknownOracleError(f"no oracle named {name!r} (known: {known}{broken})",
                                 hint="check `recon list`, or load it with --plugin FILE.py")

    def source(self, name: str) -> str:
        self.get(name)
        return self._sources[name]

    def plugin_file(self, name: str) -> Path | None:
        return self._plugin_files.get(name)

    def names(self) -> list[str]:
        return sorted(self._oracles)

    def __contains__(self, name: object) -> bool:
        return name in self._oracles

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._oracles[n] for n in self.names())

    def __len__(self) -> int:
        return len(self._oracles)
