"""The registry: one object that knows every loaded oracle and where it came from.

Sources are the built-in ``artifacts`` package, the ``recon.oracles`` entry-point
group and plugin files given with ``--plugin``. Registering a name twice is an error
that names both sources. Tests make a fresh :class:`Registry` each; nothing here is a
module-level mutable global.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import pkgutil
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Iterable

from .errors import DuplicateOracleError, PluginError, UnknownOracleError
from .oracle import Oracle

__all__ = ["Registry", "ENTRY_POINT_GROUP", "BUILTIN_PACKAGE"]

ENTRY_POINT_GROUP = "recon.oracles"
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


class Registry:
    """Oracles by name, each with the source it was loaded from."""

    def __init__(self) -> None:
        self._oracles: dict[str, Oracle] = {}
        self._sources: dict[str, str] = {}
        self._plugin_files: dict[str, Path] = {}

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
            try:
                module = importlib.import_module(modname)
            except Exception as exc:  # noqa: BLE001 - reported as a PluginError
                raise _import_failure(f"built-in oracle module {modname}", exc) from None
            self.load_module(module, f"built-in {modname}")

    def load_entry_points(self) -> None:
        """Load every ``recon.oracles`` entry point (a module or an ``@oracle`` object)."""
        for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
            source = f"entry point {ep.name!r} ({ep.value}) of {ep.dist.name if ep.dist else 'an unknown distribution'}"
            try:
                obj = ep.load()
            except Exception as exc:  # noqa: BLE001
                raise _import_failure(source, exc) from None
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
        """Built-ins, then entry points, then plugin files."""
        reg = cls()
        reg.load_builtins()
        if entry_points:
            reg.load_entry_points()
        for p in plugins:
            reg.load_plugin_file(p)
        return reg

    # -- lookup -------------------------------------------------------------------------
    def get(self, name: str) -> Oracle:
        try:
            return self._oracles[name]
        except KeyError:
            known = ", ".join(sorted(self._oracles)) or "none"
            raise UnknownOracleError(f"no oracle named {name!r} (known: {known})",
                                     hint="check `recon list`, or load it with --plugin FILE.py") from None

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
