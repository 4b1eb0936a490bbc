"""Shared fixtures: a fresh registry per test, and one built lidar_icp task per session."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from recon import Registry

# Hidden scenarios are keyed by a build secret: tests use a fixed one so builds are
# reproducible and never touch the user's ~/.local/share/recon.
os.environ.setdefault("RECON_SECRET", "recon-test-suite-secret")


@pytest.fixture
def registry() -> Registry:
    return Registry.default(entry_points=False)


@pytest.fixture(scope="session")
def session_registry() -> Registry:
    return Registry.default(entry_points=False)


@pytest.fixture(scope="session")
def lidar_task(tmp_path_factory: pytest.TempPathFactory, session_registry: Registry) -> Path:
    from recon.build import build_task

    out = tmp_path_factory.mktemp("tasks")
    result = build_task(session_registry, "lidar_icp", out, workers=2)
    return result.path


@pytest.fixture
def app_copy(tmp_path: Path, lidar_task: Path) -> Path:
    """A private copy of the task's environment/app (what the agent's container holds)."""
    app = tmp_path / "app"
    shutil.copytree(lidar_task / "environment" / "app", app)
    return app
