"""The wrong programs of the power benchmark (tests/perf/wrong_programs.py) still apply.

Fast (nothing runs): every entry's edits apply to its reference exactly once and the
patched source compiles; each built-in task has at least 8 entries, their names are
distinct, and at most a third of them are single-constant edits (one edit whose old and
new text differ only in one numeric literal: the ideas should change rules and stages,
not nudge constants).
"""
from __future__ import annotations

import importlib.util
import io
import tokenize
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("recon_test_wrong_programs", HERE / "perf" / "wrong_programs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WP = _load()
BUILTINS = ("lidar_icp", "chem_smarts", "acoustic_beamforming")
ENTRIES = [(task, name) for task in WP.WRONG for name, _ in WP.WRONG[task]]
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def _tokens(source: str) -> list[tuple[int, str]]:
    return [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in _SKIP]


def single_constant(old_source: str, new_source: str) -> bool:
    """Whether two sources differ in exactly one token and both tokens are numbers
    (comments and layout ignored)."""
    a, b = _tokens(old_source), _tokens(new_source)
    if len(a) != len(b):
        return False
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    return len(diff) == 1 and diff[0][0][0] == tokenize.NUMBER and diff[0][1][0] == tokenize.NUMBER


def is_single_constant(task: str, name: str) -> bool:
    edits = dict(WP.WRONG[task])[name]
    return len(edits) == 1 and single_constant(WP.reference_source(task), WP.apply(task, name))


@pytest.mark.parametrize("task,name", ENTRIES, ids=[f"{t}-{n}" for t, n in ENTRIES])
def test_patch_applies_and_compiles(task: str, name: str) -> None:
    source = WP.apply(task, name)
    assert source != WP.reference_source(task)
    compile(source, f"{task}/{name}/reconstruct.py", "exec")
    assert "def solve(" in source and "def main(" in source


@pytest.mark.parametrize("task", BUILTINS)
def test_enough_ideas_and_few_constant_nudges(task: str) -> None:
    names = WP.names(task)
    assert len(names) >= 8, f"{task}: {len(names)} wrong programs, at least 8 wanted"
    assert len(set(names)) == len(names), f"{task}: duplicate names"
    constants = [n for n in names if is_single_constant(task, n)]
    assert 3 * len(constants) <= len(names), (
        f"{task}: {len(constants)} of {len(names)} wrong programs are single-constant edits ({', '.join(constants)}); "
        "at most a third may be")


def test_single_constant_detector() -> None:
    assert single_constant("X = 10.0  # ten\n", "X = 5.0  # ten\n")
    assert single_constant("X = 10.0  # ten\n", "X = 5.0  # five\n")
    assert not single_constant("y = a.std()\n", "y = a.std(ddof=1)\n")
    assert not single_constant("X = 1\nY = 2\n", "X = 3\nY = 4\n")
    assert not single_constant("x = a\n", "x = b\n")
    assert is_single_constant("acoustic_beamforming", "fit_margin_5db")
    assert not is_single_constant("lidar_icp", "sor_sample_std")


def test_a_stale_patch_is_reported() -> None:
    task, (name, edits) = "lidar_icp", WP.WRONG["lidar_icp"][0]
    saved = list(edits)
    try:
        edits[:] = [("this text is not in the reference", "x")]
        with pytest.raises(WP.PatchError, match="occurs 0 times"):
            WP.apply(task, name)
    finally:
        edits[:] = saved
    with pytest.raises(WP.PatchError, match="unknown task"):
        WP.apply("no_such_task", name)
    with pytest.raises(WP.PatchError, match="no wrong program"):
        WP.apply(task, "no_such_program")
