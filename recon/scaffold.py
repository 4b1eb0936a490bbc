"""``recon new``: scaffold an oracle plugin package.

The package registers its oracle through the ``recon.oracles`` entry point, ships a
commented, working ``@oracle`` example with its standalone reference program, one
baseline, pytest tests that call the oracle directly, and a README. The example shows
the split every declaration keeps: what the agent reads (``description=``, ``doc=``,
the evidence descriptions) apart from the private recipe (the docstring). It builds and validates unchanged
once installed (``pip install -e DIR``), so an author starts from something green.

Templates are the ``new_*.tmpl`` files in ``recon/templates`` (``string.Template``
placeholders: ``$name``, ``$package``, ``$dist``, ``$recon_version``).
"""
from __future__ import annotations

import importlib.util
import keyword
import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ._version import __version__
from .errors import UsageError
from .fsutil import atomic_directory
from .oracle import NAME_RE
from .registry import Registry

__all__ = ["Scaffold", "scaffold", "check_name", "default_dir", "package_name", "dist_name"]

# template file in recon/templates -> path in the new package ({name}/{package} filled in)
FILES: tuple[tuple[str, str], ...] = (
    ("new_pyproject.toml.tmpl", "pyproject.toml"),
    ("new_README.md.tmpl", "README.md"),
    ("new_oracle.py.tmpl", "src/{package}/__init__.py"),
    ("new_reference.py.tmpl", "src/{package}/reference.py"),
    ("new_baseline.py.tmpl", "src/{package}/baselines/linspace_one_second/reconstruct.py"),
    ("new_scenarios.toml.tmpl", "src/{package}/scenarios/{name}.toml"),
    ("new_test.py.tmpl", "tests/test_{name}.py"),
)


@dataclass(frozen=True)
class Scaffold:
    """What :func:`scaffold` wrote."""

    name: str
    package: str
    dist: str
    path: Path
    files: tuple[str, ...]  # relative to ``path``


def package_name(name: str) -> str:
    """The import package of the plugin for oracle ``name``."""
    return f"recon_{name}"


def dist_name(name: str) -> str:
    """The pip distribution name of the plugin for oracle ``name``."""
    return "recon-" + name.replace("_", "-")


def default_dir(name: str) -> Path:
    return Path(dist_name(name))


def check_name(name: str, registry: Registry | None = None) -> None:
    """Raise :class:`UsageError` unless ``name`` can be a new oracle's name.

    It must be a task id (``[a-z][a-z0-9_]*``), usable as a Python function name, not
    registered already (``registry``: the oracles recon knows), and its package
    ``recon_NAME`` must not be importable already (an installed package would shadow
    the new one).
    """
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise UsageError(f"name={name!r} is not a valid oracle name",
                         hint="use lowercase letters, digits and _, starting with a letter (e.g. 'beam_deflection')")
    if keyword.iskeyword(name):
        raise UsageError(f"name={name!r} is a Python keyword, so the oracle function cannot be called that",
                         hint=f"choose another name (e.g. '{name}_task')")
    if registry is not None and name in registry:
        raise UsageError(f"name={name!r} is already registered by {registry.source(name)}",
                         hint="choose another name: oracle names are task ids and must be unique")
    package = package_name(name)
    try:
        found = importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # pragma: no cover - a broken module of that name
        found = True
    if found:
        raise UsageError(f"a Python package named {package!r} is already importable here",
                         hint=f"choose another name, or `pip uninstall {dist_name(name)}` first")


def render(template: str, name: str) -> str:
    """One template filled in for oracle ``name``."""
    text = resources.files("recon").joinpath(f"templates/{template}").read_text(encoding="utf-8")
    return string.Template(text).substitute(
        name=name, package=package_name(name), dist=dist_name(name), recon_version=__version__,
    )


def scaffold(name: str, directory: Path | str | None = None, *, registry: Registry | None = None) -> Scaffold:
    """Write a plugin package for a new oracle ``name`` into ``directory``
    (default ``./recon-NAME``), atomically. ``directory`` must not exist or be empty."""
    check_name(name, registry)
    target = Path(directory) if directory is not None else default_dir(name)
    if target.exists():
        if not target.is_dir():
            raise UsageError(f"{target} exists and is not a directory", hint="choose another --dir")
        if any(target.iterdir()):
            raise UsageError(f"{target} exists and is not empty; recon new never overwrites",
                             hint="choose another --dir, or remove that folder yourself")
    written: list[str] = []
    # The marker can never be present: the check above refused any non-empty folder.
    with atomic_directory(target, marker=".recon-new-never") as tmp:
        for template, dest in FILES:
            rel = dest.format(name=name, package=package_name(name))
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(template, name), encoding="utf-8")
            written.append(rel)
    return Scaffold(name, package_name(name), dist_name(name), target.absolute(), tuple(written))
