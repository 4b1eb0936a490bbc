"""Built tasks under the real harness: Harbor's own oracle and nop agents on a real Docker
engine, and recon's docker runtime replaying the same flow.

These need a running engine, a ``python:3.11-slim`` image the engine can use (``.ci/run``
makes a local stand-in, since no registry is reachable there) and Harbor 0.26 in its own
Python 3.12 venv (``$RECON_HARBOR``). They are skipped elsewhere, and never in CI
(``RECON_NO_SKIP=1`` turns a skip into a failure).

Offline, Harbor's local docker environment refuses ``network_mode = "no-network"`` (its
egress-control sidecar images live on Docker Hub), so Harbor runs a copy of each task with
``network_mode = "public"``; the cloud environments Harbor drives enforce no-network
themselves, and recon's own docker runtime runs the unmodified task with no network.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import pytest

from recon import Registry
from recon.build import build_task

BUILTINS = ["lidar_icp", "chem_smarts", "acoustic_beamforming"]
pytestmark = pytest.mark.docker


def _harbor() -> str | None:
    for cand in (os.environ.get("RECON_HARBOR"), "/opt/harbor-venv/bin/harbor", shutil.which("harbor")):
        if cand and Path(cand).is_file():
            return cand
    return None


def _docker(*args: str) -> list[str]:
    out = subprocess.run(["docker", *args], capture_output=True, text=True, check=True).stdout
    return sorted(ln for ln in out.splitlines() if ln.strip())


@pytest.fixture(scope="module")
def engine() -> Iterator[dict[str, list[str]]]:
    """A Docker engine with the base image; afterwards nothing of ours is left running."""
    from recon.runtimes.docker import engine_available

    if not engine_available(refresh=True):
        pytest.skip("no Docker engine answered")
    if subprocess.run(["docker", "image", "inspect", "python:3.11-slim"], capture_output=True).returncode != 0:
        pytest.skip("the engine has no python:3.11-slim image (see .ci/run for the local stand-in)")
    before = {"containers": _docker("ps", "-aq"), "networks": _docker("network", "ls", "-q"),
              "volumes": _docker("volume", "ls", "-q"), "dangling": _docker("images", "-q", "-f", "dangling=true")}
    yield before
    after = {"containers": _docker("ps", "-aq"), "networks": _docker("network", "ls", "-q"),
             "volumes": _docker("volume", "ls", "-q"), "dangling": _docker("images", "-q", "-f", "dangling=true")}
    for kind in ("containers", "networks", "volumes"):
        assert set(after[kind]) - set(before[kind]) == set(), f"{kind} left behind"


@pytest.fixture(scope="module")
def harbor() -> str:
    exe = _harbor()
    if exe is None:
        pytest.skip("Harbor is not installed (see .ci/run: a Python 3.12 venv)")
    return exe


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory, session_registry: Registry,
            small_build: dict[str, Any]) -> Path:
    """Every built-in, built as `recon build --all` builds a dataset (registry.json
    included) at the small counts: what Harbor's run of it tests is the registry, the images,
    the agents and the verifier's cold path, not the scenario counts. Harbor's oracle 1.0 and
    nop 0 on the default builds are the catalog suite's (tests/catalog, recorded in
    docs/catalog.json, whose currency tests/test_catalog_record.py checks)."""
    from recon.dataset import build_all, write_manifest

    out = tmp_path_factory.mktemp("harbor-ds") / "ds"
    write_manifest(out, build_all(session_registry, out, names=BUILTINS, workers=2, **small_build))
    return out


@pytest.fixture(scope="module")
def owner_only_job(lidar_task: Path, harbor: str, engine: dict[str, list[str]],
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Future[list[dict[str, Any]]]]]:
    """Harbor's oracle agent on a copy of the lidar task whose solution/ is owner-only
    (0700), started in the background by the first test that asks for it: the job mostly
    waits on the engine, so it runs beside the dataset's jobs instead of after them."""
    task = _public_copy(lidar_task, tmp_path_factory.mktemp("owner-only"))
    (task / "solution").chmod(0o700)
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield task, pool.submit(_harbor_run, harbor, ["-p", str(task)], "oracle", task.parent / "jobs")


@pytest.fixture(scope="module")
def tasks(small_tasks: dict[str, Path]) -> dict[str, Path]:
    """Small builds of every built-in: comparing runtimes needs each task's inputs and
    image, not the default counts."""
    return small_tasks


def _public_copy(task: Path, dest: Path) -> Path:
    """The task with network_mode = "public": what Harbor's docker environment accepts offline."""
    copy = dest / task.name
    shutil.copytree(task, copy, symlinks=True)
    toml = copy / "task.toml"
    text = toml.read_text()
    assert text.count('network_mode = "no-network"') == 2
    toml.write_text(text.replace('network_mode = "no-network"', 'network_mode = "public"'))
    return copy


def _public_dataset(ds: Path, dest: Path) -> Path:
    """A copy of the dataset whose tasks have network_mode = "public" (see _public_copy),
    its registry.json pointing at the copies; nothing else changed."""
    copy = dest / "ds-public"
    copy.mkdir()
    for entry in ds.iterdir():
        if entry.is_dir():
            _public_copy(entry, copy)
        else:
            shutil.copyfile(entry, copy / entry.name)
    registry = json.loads((copy / "registry.json").read_text())
    for task in registry[0]["tasks"]:
        task["path"] = str(copy / Path(task["path"]).relative_to(ds))
    (copy / "registry.json").write_text(json.dumps(registry))
    return copy


def _harbor_run(harbor: str, source: list[str], agent: str, jobs: Path, trials: int = 1) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    proc = subprocess.run([harbor, "run", *source, "-a", agent, "-e", "docker", "-o", str(jobs), "-n", str(trials),
                           "-y"], capture_output=True, text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = [{"result": json.loads(p.read_text()), "trial": p.parent} for p in sorted(jobs.glob("*/*/result.json"))]
    assert len(found) == trials, [f["trial"] for f in found]
    return found


OwnerOnlyJob = tuple[Path, "Future[list[dict[str, Any]]]"]


def test_harbor_runs_the_built_dataset_from_its_registry(dataset: Path, harbor: str, engine: dict[str, list[str]],
                                                         tmp_path: Path, owner_only_job: OwnerOnlyJob) -> None:
    """One `harbor run -d recon@VERSION --registry-path ds/registry.json` runs every
    built-in task: Harbor's oracle agent scores exactly 1.0 on each, its nop agent 0; then
    `recon results` accounts for all six trials. (The owner-only job runs beside these.)"""
    from recon.results import write_results

    ds = _public_dataset(dataset, tmp_path)
    [entry] = json.loads((ds / "registry.json").read_text())
    assert sorted(t["name"] for t in entry["tasks"]) == sorted(BUILTINS)
    source = ["-d", f"{entry['name']}@{entry['version']}", "--registry-path", str(ds / "registry.json")]
    # the two jobs side by side: the nop job's trials are mostly waiting on the engine
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {agent: pool.submit(_harbor_run, harbor, source, agent, tmp_path / f"jobs-{agent}", len(BUILTINS))
                for agent in ("oracle", "nop")}
    for agent, reward in (("oracle", 1.0), ("nop", 0.0)):
        trials = jobs[agent].result()
        by_task = {Path(t["result"]["task_id"]["path"]).name: t for t in trials}
        assert sorted(by_task) == sorted(BUILTINS)
        for name, t in by_task.items():
            res, trial = t["result"], t["trial"]
            assert res["exception_info"] is None, (name, res["exception_info"])
            if agent == "oracle":
                assert not (trial / "agent" / "exit-code.txt").exists(), (trial / "agent" / "oracle.txt").read_text()
                grading = json.loads((trial / "verifier" / "grading.json").read_text())
                assert grading["rung"]["index"] == 6 and grading["task"] == f"recon/{name}"
            assert res["verifier_result"]["rewards"] == {"reward": reward, "binary": int(reward)}, (
                name, (trial / "verifier" / "test-stdout.txt").read_text()[-2000:])
    doc = json.loads(write_results([tmp_path / "jobs-oracle", tmp_path / "jobs-nop"], tmp_path / "results",
                                   figures=False).json.read_text())
    assert sorted((t["agent"], t["task"], t["reward"]) for t in doc["trials"]) == sorted(
        [("nop", f"recon/{n}", 0.0) for n in BUILTINS] + [("oracle", f"recon/{n}", 1.0) for n in BUILTINS])


@pytest.mark.parametrize("name", BUILTINS)
def test_recon_docker_runtime_matches_harbor_and_local(name: str, tasks: dict[str, Path],
                                                       engine: dict[str, list[str]]) -> None:
    from recon.run import run_task

    nonce = f"ci-{name}"
    # a small build's hidden set and two probes: what is compared is the runtimes, not the draws
    oracle = run_task(tasks[name], "oracle", runtime="docker", nonce=nonce, probes=2)
    assert oracle.runtime == "docker" and oracle.reward == 1.0 and oracle.binary == 1, oracle.notes
    assert oracle.grading is not None and oracle.grading["nonce"] == nonce
    nop = run_task(tasks[name], "nop", runtime="docker", probes=0)
    assert nop.reward == 0.0 and nop.binary == 0
    local = run_task(tasks[name], "oracle", runtime="local", nonce=nonce, probes=2)
    assert local.grading is not None and oracle.grading is not None
    # the same grade, check by check, with the same probes
    assert local.reward == oracle.reward
    assert local.grading["probes"] == oracle.grading["probes"]
    checks = [[(c["id"], c["passed"]) for c in r["checks"]] for r in local.grading["rungs"]]
    assert checks == [[(c["id"], c["passed"]) for c in r["checks"]] for r in oracle.grading["rungs"]]


def test_an_owner_only_solution_fails_under_harbor_and_recon_alike(owner_only_job: OwnerOnlyJob,
                                                                    engine: dict[str, list[str]]) -> None:
    """What once broke Harbor's oracle agent (solution/ built 0700) fails the same way in
    recon's docker runtime, instead of being papered over."""
    from recon.run import run_task

    task, job = owner_only_job
    [under_harbor] = job.result()
    assert "Permission denied" in (under_harbor["trial"] / "agent" / "oracle.txt").read_text()
    assert under_harbor["result"]["verifier_result"]["rewards"]["reward"] == 0.0
    under_recon = run_task(task, "oracle", runtime="docker")
    assert under_recon.reward == 0.0
    assert any("Permission denied" in n and "126" in n for n in under_recon.notes)


def test_verifier_grades_the_reference_every_time_beside_a_host_grading(
        lidar_task: Path, engine: dict[str, list[str]], tmp_path: Path) -> None:
    """The verifier image graded the reference 0.33-0.44 ("killed by signal 9") while a
    grader on the host used the same sandbox uids: the host's sweep killed the container's
    runs (most gradings failed, so a few in a row show it; RECON_VERIFIER_REPEATS for more).
    Now a uid is ours only inside our own PID namespace."""
    from recon.runtimes.docker import DockerTaskRunner

    task = lidar_task
    runner = DockerTaskRunner(task)
    tag, _ = runner.ensure_image("verifier")
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copyfile(task / "solution" / "reconstruct.py", ws / "reconstruct.py")
    shutil.copyfile(task / "environment" / "app" / "workspace" / "README.md", ws / "README.md")
    for p in [ws, *ws.iterdir()]:
        p.chmod(0o777 if p.is_dir() else 0o666)   # as Harbor leaves /app/workspace
    host = subprocess.Popen(["bash", "-c", f"for i in $(seq 40); do python3 -m recon grade {task} --workspace {ws} "
                                           f"--runtime local --quiet >/dev/null 2>&1; done"])
    rewards = []
    try:
        for _ in range(int(os.environ.get("RECON_VERIFIER_REPEATS", "3"))):
            out = subprocess.run(["docker", "run", "--rm", "-v", f"{ws}:/app/workspace", tag, "bash", "-c",
                                  "bash /tests/test.sh >/dev/null 2>&1; cat /logs/verifier/reward.txt"],
                                 capture_output=True, text=True, timeout=600)
            rewards.append(out.stdout.strip())
    finally:
        host.kill()
        host.wait()
    assert rewards == ["1.0"] * len(rewards)


ATTACKER = """import glob, runpy, sys
me = open(__file__).read()
for path in ["/app/workspace/reconstruct.py", *sorted(glob.glob("/checkpoints/*/reconstruct.py")),
             *sorted(glob.glob("/checkpoints/*/*/reconstruct.py"))]:
    try:
        text = open(path).read()
    except OSError:
        continue
    if text != me:
        sys.argv = [path]
        runpy.run_path(path, run_name="__main__")
        raise SystemExit(0)
sys.stdin.read()
print("{}")
"""


def test_checkpoints_are_taken_out_of_the_agents_reach_and_graded(tmp_path: Path, session_registry: Registry,
                                                                   harbor: str, engine: dict[str, list[str]],
                                                                   small_build: dict[str, Any]) -> None:
    """A scripted agent improves its workspace in three steps during a short trial; the
    task's sidecar snapshots it every 4 s, the verifier grades every snapshot, and the
    agent can see none of them. Its first step only runs whatever solver it finds at
    grading time (the final workspace, later snapshots): graded in the unprivileged
    verifier container, that snapshot must see nothing newer than itself."""
    task = build_task(session_registry, "lidar_icp", tmp_path / "built", workers=2, checkpoint_every=4.0,
                      **small_build).path
    task = _public_copy(task, tmp_path)
    stages = tmp_path / "stages"
    stages.mkdir()
    reference = (task / "solution" / "reconstruct.py").read_text()
    (stages / "1.py").write_text(ATTACKER)                               # finds no solver: no contract
    wrong = reference.replace('"coarse_shift_m": float(np.linalg.norm(coarse["t"])),',
                              '"coarse_shift_m": float(np.linalg.norm(coarse["t"])) * 1.5,')
    assert wrong != reference
    (stages / "2.py").write_text(wrong)                                   # one field wrong
    (stages / "3.py").write_text(reference)                               # solved
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PYTHONPATH=str(Path(__file__).parent / "harbor_agents"), RECON_IMPROVING_STAGES=str(stages),
               RECON_IMPROVING_PAUSE="9")
    jobs = tmp_path / "jobs"
    proc = subprocess.run([harbor, "run", "-p", str(task), "-a", "improving_agent:ImprovingAgent", "-e", "docker",
                           "-o", str(jobs), "-n", "1", "-y"], capture_output=True, text=True, env=env, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [trial] = [p.parent for p in jobs.glob("*/*/result.json")]
    probe = (trial / "agent" / "probe.txt").read_text()
    for hidden in ("/checkpoints", "/workspace"):   # ls quotes names or not, by coreutils version
        assert re.search(f"{hidden}'?: No such file or directory", probe), probe
    grading = json.loads((trial / "verifier" / "grading.json").read_text())
    series = grading["checkpoints"]
    assert series[-1]["final"] and series[-1]["reward"] == 1.0 == grading["reward"]
    rewards = [c["reward"] for c in series[:-1]]
    assert len(rewards) >= 5
    assert rewards[0] < 0.5 and max(rewards) == 1.0          # from nothing usable to solved
    assert any(0.8 < r < 1.0 for r in rewards)                # the one-field-wrong stage in between
    assert rewards == sorted(rewards)                         # it only ever improved
    ts = [c["t"] for c in series[:-1]]
    assert ts == sorted(ts) and all(abs(b - a - 4.0) < 1.0 for a, b in zip(ts, ts[1:]))
    # and recon reads the series back from the job folder
    from recon._harborjobs import load_trials  # noqa: PLC0415

    [row] = load_trials([jobs]).trials
    assert row.status == "scored" and len(row.checkpoints) == len(series)
    assert row.checkpoints[-1].reward == 1.0 and row.checkpoints[-1].t >= ts[-1]
