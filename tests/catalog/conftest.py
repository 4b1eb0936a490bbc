"""The catalog suite: collected only on demand, never in the default `pytest` run.

Run it with ``pytest tests/catalog -m catalog`` (or ``RECON_CATALOG=1 pytest tests/catalog``);
``RECON_CATALOG_RECORD=1`` also writes each task's result into ``docs/catalog.json`` and
regenerates ``docs/catalog.md``. ``RECON_CATALOG_TASKS=a,b`` limits it to some tasks.
Suite files are named ``suite_*.py``, which the default run does not collect.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _enabled(config: pytest.Config) -> bool:
    expr = (config.getoption("markexpr", "") or "").strip()
    return os.environ.get("RECON_CATALOG") == "1" or expr == "catalog" or expr.startswith("catalog ")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    if (file_path.parent == HERE and file_path.name.startswith("suite_") and file_path.suffix == ".py"
            and _enabled(parent.config) and not parent.session.isinitpath(file_path)):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.catalog)
