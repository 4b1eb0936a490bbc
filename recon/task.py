"""Reading a built task: the verifier-side view the grader and ``validate`` use."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import canonjson
from .errors import TaskError
from .runtimes.base import Limits

__all__ = ["Task", "ScenarioDir", "load_task", "GRADER_FILE"]

GRADER_FILE = "grader.json"


@dataclass(frozen=True)
class ScenarioDir:
    """One scenario folder: its document, its truth and its input files."""

    id: str
    path: Path
    document: dict[str, Any]
    truth: dict[str, Any]

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self.document["parameters"])

    def input_files(self) -> dict[str, Path]:
        return {name: self.path / rel for name, rel in sorted(self.document.get("inputs", {}).items())}


@dataclass(frozen=True)
class Task:
    """A built task, seen from the verifier side."""

    root: Path | None          # task root (None when only a tests/ dir is at hand)
    tests: Path
    meta: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.meta["oracle"])

    @property
    def outputs(self) -> dict[str, dict[str, Any]]:
        return dict(self.meta["outputs"])

    @property
    def limits(self) -> Limits:
        return Limits(**self.meta["limits"])

    @property
    def app_dir(self) -> Path | None:
        if self.root is None:
            return None
        app = self.root / "environment" / "app"
        return app if app.is_dir() else None

    def _scenarios(self, kind: str, ids: list[str]) -> list[ScenarioDir]:
        out = []
        for sid in ids:
            d = self.tests / kind / sid
            try:
                doc = canonjson.read(d / "scenario.json")
                truth = canonjson.read(d / "oracle_output.json")
            except (OSError, ValueError) as exc:
                raise TaskError(f"task {self.tests}: {kind} scenario {sid} is unreadable ({exc})",
                                hint="rebuild the task with `recon build`") from None
            out.append(ScenarioDir(sid, d, doc, truth))
        return out

    def public(self) -> list[ScenarioDir]:
        return self._scenarios("public", list(self.meta["public"]))

    def hidden(self) -> list[ScenarioDir]:
        return self._scenarios("hidden", list(self.meta["hidden"]))

    def plugin_path(self) -> Path | None:
        rel = self.meta.get("plugin")
        return (self.tests / rel) if rel else None


def load_task(path: Path | str) -> Task:
    """Load a built task from its root or from its ``tests/`` directory."""
    path = Path(path).absolute()
    if not path.is_dir():
        raise TaskError(f"{path} is not a directory", hint="give the folder `recon build` wrote (e.g. tasks/lidar_icp)")
    if (path / "tests" / GRADER_FILE).is_file():
        root: Path | None = path
        tests = path / "tests"
    elif (path / GRADER_FILE).is_file():
        tests = path
        root = path.parent if (path.parent / "task.toml").is_file() else None
    else:
        raise TaskError(f"{path} is not a built recon task (no tests/{GRADER_FILE})",
                        hint="build one with `recon build NAME`, or check permissions (tests/ is owner-only)")
    try:
        meta = canonjson.read(tests / GRADER_FILE)
    except (OSError, ValueError) as exc:
        raise TaskError(f"{tests / GRADER_FILE} is unreadable: {exc}") from None
    for key in ("oracle", "oracle_version", "task_key", "spec", "public", "hidden", "outputs", "limits", "ladder"):
        if key not in meta:
            raise TaskError(f"{tests / GRADER_FILE} lacks {key!r}", hint="rebuild the task with this recon version")
    return Task(root, tests, meta)
