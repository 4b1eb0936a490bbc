"""Dataset builds: `recon build --all` with its manifest, and `--variant N`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from recon import Registry
from recon.cli import cli
from recon.dataset import MAX_BASE_SEED, VARIANT_SEED_BASE, build_all, read_manifest, variant_name, variant_seed
from recon.errors import BuildError, UsageError
from recon.fsutil import tree_digest
from recon.task import load_task

CHEAP = Path(__file__).parent / "perf" / "cheap_oracle.py"

FLAKY = '''
from recon import oracle, Float, Number

@oracle(name="flaky", version="1.0.0", title="t", domain="d", toolkit=[], reference="flaky_ref.py",
        axes={"x": Float(0.0, 1.0)}, outputs={"y": Number(abs=1)})
def flaky(params, evidence):
    """Fails on large x."""
    if params["x"] > 0.5:
        raise ValueError("x too large for this oracle")
    return {"y": params["x"]}
'''


def test_all_builds_every_builtin_and_the_manifest_digests_match(tmp_path: Path) -> None:
    out = tmp_path / "dataset"
    res = CliRunner().invoke(cli, ["build", "--all", "--out", str(out), "--public", "1", "--hidden", "1", "-q"])
    assert res.exit_code == 0, res.output
    manifest = read_manifest(out)
    names = [t["name"] for t in manifest["tasks"]]
    builtins = Registry.default(entry_points=False).names()
    assert set(builtins) <= set(names) and names == sorted(names)
    assert res.stdout.splitlines() == [str(out / n) for n in names]
    for t in manifest["tasks"]:
        task_dir = out / t["path"]
        assert t["digest"] == tree_digest(task_dir), t["name"]
        assert t["task"] == f"recon/{t['name']}" and t["variant"] is None
        assert (t["n_public"], t["n_hidden"]) == (1, 1)
        assert load_task(task_dir).meta["oracle_version"] == t["oracle_version"]
    # the manifest is itself reproducible: no clock, no absolute paths
    text = (out / "dataset.json").read_text()
    assert str(tmp_path) not in text


def test_variant_changes_the_sweep_and_the_name(tmp_path: Path) -> None:
    runner = CliRunner()
    paths = {}
    for variant in (None, 6, 7):
        args = ["build", "cheap_poly", "--plugin", str(CHEAP), "--out", str(tmp_path), "-q", "--workers", "1"]
        if variant is not None:
            args += ["--variant", str(variant)]
        res = runner.invoke(cli, args)
        assert res.exit_code == 0, res.output
        paths[variant] = Path(res.stdout.strip())  # `recon build NAME` prints the task path, variants too
    assert paths[None] == tmp_path / "cheap_poly" and paths[6] == tmp_path / "cheap_poly__06"
    assert paths[7].name == "cheap_poly__07" == variant_name("cheap_poly", 7)
    assert 'name = "recon/cheap_poly__06"' in (paths[6] / "task.toml").read_text()
    tasks = {v: load_task(p) for v, p in paths.items()}
    assert tasks[None].meta["spec"]["seed"] == 0 and tasks[6].meta["spec"]["seed"] == variant_seed(0, 6)
    assert tasks[6].meta["oracle"] == "cheap_poly" and tasks[6].meta["task"] == "recon/cheap_poly__06"

    def params(t: object) -> set[str]:
        return {json.dumps(s.parameters, sort_keys=True) for s in t.public() + t.hidden()}  # type: ignore[attr-defined]

    assert params(tasks[None]).isdisjoint(params(tasks[6]))
    assert params(tasks[6]).isdisjoint(params(tasks[7]))
    # a variant is as reproducible as any build
    digest = tree_digest(paths[6])
    res = runner.invoke(cli, ["build", "cheap_poly", "--plugin", str(CHEAP), "--out", str(tmp_path), "-q",
                              "--variant", "6"])
    assert res.exit_code == 0 and tree_digest(paths[6]) == digest


@given(st.integers(0, MAX_BASE_SEED), st.integers(1, 99), st.integers(0, MAX_BASE_SEED), st.integers(1, 99))
def test_variant_seeds_never_collide(s1: int, n1: int, s2: int, n2: int) -> None:
    a, b = variant_seed(s1, n1), variant_seed(s2, n2)
    assert (a == b) == ((s1, n1) == (s2, n2))
    assert VARIANT_SEED_BASE <= a < 2**53  # never a hand-picked seed; exact in any JSON reader


def test_variant_and_all_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        variant_seed(0, 0)
    with pytest.raises(UsageError):
        variant_seed(2**40, 1)
    runner = CliRunner()
    for args in (["build"], ["build", "lidar_icp", "--all"], ["build", "--all", "--spec", str(tmp_path / "s.toml")],
                 ["build", "lidar_icp", "--variant", "0"], ["build", "lidar_icp", "--variant", "100"]):
        res = runner.invoke(cli, [*args, "--out", str(tmp_path)])
        assert res.exit_code == 2, (args, res.output)
        assert "Traceback" not in res.output
    assert list(tmp_path.iterdir()) == []


def test_all_reports_every_failure_and_writes_no_manifest(tmp_path: Path) -> None:
    (tmp_path / "flaky_ref.py").write_text("print('{}')\n")
    (tmp_path / "flaky.py").write_text(FLAKY)
    reg = Registry()
    reg.load_plugin_file(tmp_path / "flaky.py")
    reg.load_plugin_file(CHEAP)
    steps: list[int] = []
    with pytest.raises(BuildError, match=r"1 of 2 task\(s\) failed to build: flaky: .*x too large"):
        build_all(reg, tmp_path / "out", workers=2, progress=steps.append)
    assert (tmp_path / "out" / "cheap_poly" / "task.toml").is_file()  # the others are built
    assert not (tmp_path / "out" / "flaky").exists() and not (tmp_path / "out" / "dataset.json").exists()
    assert sum(steps) >= 9  # every scenario of cheap_poly reported progress from its worker process
    steps.clear()
    entries = build_all(reg, tmp_path / "out2", names=["cheap_poly"], workers=2, progress=steps.append)
    assert [e.name for e in entries] == ["cheap_poly"] and sum(steps) == 9
