"""Install a plugin package into this interpreter for the duration of a test module.

The registry must find plugins through the real ``recon.oracles`` entry point, so the
tests pip-install them (editable, no dependencies) and uninstall them afterwards.
Everything that needs the plugin runs in a fresh interpreter (``python -m recon ...``),
where the editable install's .pth file is read as it is for any user.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def _can_build_without_isolation() -> bool:
    # setuptools builds wheels itself from 70.1 on; before that it needs `wheel`.
    try:
        major, minor = (int(x) for x in importlib.metadata.version("setuptools").split(".")[:2])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def pip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True,
                          env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    if check and proc.returncode != 0:
        raise AssertionError(f"pip {' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


def installed_from(dist: str) -> str | None:
    """Where ``dist`` is installed from (its direct URL, or "" when unknown); None when
    it is not installed."""
    try:
        d = importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return None
    text = d.read_text("direct_url.json")
    return str(json.loads(text).get("url", "")) if text else ""


@contextmanager
def editable_install(project: Path, dist: str, *, replace: bool = False) -> Iterator[None]:
    """``pip install -e project`` for the duration; uninstalled afterwards.

    An install of ``dist`` that was there before (a developer who followed the
    walkthrough) is used as it is and left alone, unless ``replace`` is set (for names
    only tests use, whose leftover from an interrupted run would point at a deleted folder).
    """
    where = installed_from(dist)
    if where is not None:
        if not replace:
            if where != project.resolve().as_uri():
                raise AssertionError(f"{dist} is installed from {where or 'somewhere else'}, not from {project}: "
                                     f"`pip uninstall {dist}` and rerun")
            yield
            return
        pip("uninstall", "-y", "-q", dist)
    cmd = ["install", "--no-deps", "-q", "-e", str(project)]
    if _can_build_without_isolation():
        cmd.insert(1, "--no-build-isolation")  # much faster: no isolated build environment
    pip(*cmd)
    try:
        yield
    finally:
        pip("uninstall", "-y", "-q", dist, check=False)


def recon(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m recon ARGS`` in a fresh interpreter, as a user's shell would run it."""
    return subprocess.run([sys.executable, "-m", "recon", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, "CI": "1"})
