"""`recon results` at the scale of the seed study: wall time and peak memory.

LHTB 2.0 scored 1,145 runs of 15 models on 77 tasks, with a verifier checkpoint every
30 minutes over three hours. ``write_jobs`` writes Harbor job folders of that shape in
Harbor 0.26's file formats (a job folder per model: JobConfig, JobResult, and per trial
a TrialConfig, a TrialResult, reward.json, reward.txt and a recon grading.json made from
a real grading with a checkpoint series), plus the failures a real study has: trials
whose environment never started, verifier timeouts, rewards Harbor marks invalid, trials
that never finished, a damaged result.json and a trial copied into a second job folder.

The benchmark runs ``recon results`` on it in a child process and reports the wall time
and the child's peak resident memory (goal: under 10 s and 500 MB on 2 cores).
tests/test_results.py uses the same writer at a small scale, where it checks every
number against the generator's own record of what it wrote.
"""
from __future__ import annotations

import copy
import datetime as _dt
import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

pytestmark = pytest.mark.perf

HERE = Path(__file__).parent
CHEAP = HERE / "cheap_oracle.py"
T0 = _dt.datetime(2026, 10, 1, tzinfo=_dt.timezone.utc)
RETRY_EXCLUDE = ["AgentTimeoutError", "VerifierTimeoutError", "RewardFileNotFoundError"]

# exception type -> Harbor's error policy for it (harbor/models/trial/error_policy.py)
POLICIES = {
    "AgentSetupTimeoutError": {"should_retry": True, "should_grade": False, "has_valid_reward": False},
    "VerifierTimeoutError": {"should_retry": False, "should_grade": True, "has_valid_reward": False},
    "ApiError": {"should_retry": True, "should_grade": True, "has_valid_reward": False},
    "AgentTimeoutError": {"should_retry": False, "should_grade": True, "has_valid_reward": True},
}


def _iso(t: _dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _dump(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=4) + "\n")


def real_grading(root: Path) -> dict[str, Any]:
    """A real grading document: the cheap test oracle's task, graded with its reference."""
    from recon import Registry
    from recon.build import build_task
    from recon.grader import grade

    reg = Registry()
    reg.load_plugin_file(CHEAP)
    task = build_task(reg, "cheap_poly", root / "tasks", workers=1).path
    ws = root / "ws"
    shutil.copytree(task / "environment" / "app" / "workspace", ws)
    shutil.copy(task / "solution" / "reconstruct.py", ws / "reconstruct.py")
    g = grade(task, ws, runtime="local", registry=reg, nonce="bench")
    assert g["reward"] == 1.0
    return g


def _agent_config(agent: str, model: str | None) -> dict[str, Any]:
    return {"name": agent, "import_path": None, "model_name": model, "base_url": None, "model_api_key_name": None,
            "model_api_format": None, "skip_model_parsing": False, "n_concurrent": None, "concurrency_group": None,
            "skills": [], "override_timeout_sec": None, "override_setup_timeout_sec": None, "max_timeout_sec": None,
            "resume_trajectory": False, "load_trajectory": None, "extra_allowed_hosts": [], "kwargs": {},
            "mcp_servers": []}


ENVIRONMENT = {"type": "docker", "import_path": None, "force_build": False, "delete": True, "stream": False,
               "cpu_enforcement_policy": "auto", "memory_enforcement_policy": "auto", "override_cpus": None,
               "override_memory_mb": None, "override_storage_mb": None, "override_gpus": None, "override_tpu": None,
               "mounts": None, "extra_docker_compose": [], "kwargs": {}, "extra_allowed_hosts": []}


def trial_config(task_path: str, trial: str, trials_dir: str, agent: str, model: str | None,
                 job_id: str) -> dict[str, Any]:
    """A TrialConfig document (harbor/models/trial/config.py)."""
    return {"schema_version": 1,
            "task": {"path": task_path, "git_url": None, "git_commit_id": None, "name": None, "ref": None,
                     "overwrite": False, "download_dir": None, "source": "recon"},
            "trial_name": trial, "trials_dir": trials_dir, "install_only": False, "timeout_multiplier": 1.0,
            "agent_timeout_multiplier": None, "verifier_timeout_multiplier": None,
            "agent_setup_timeout_multiplier": None, "environment_build_timeout_multiplier": None,
            "agent": _agent_config(agent, model), "user_agent": None, "environment": dict(ENVIRONMENT),
            "verifier": {"override_timeout_sec": None, "max_timeout_sec": None, "disable": False},
            "override_error_policy": {}, "artifacts": [], "extra_instruction_paths": [], "extra_instructions": [],
            "job_id": job_id, "source_trial": None}


def _exception(kind: str, at: _dt.datetime) -> dict[str, Any]:
    return {"exception_type": kind, "exception_message": f"{kind} raised by the synthetic study",
            "exception_traceback": f"Traceback (most recent call last):\n  ...\n{kind}\n", "occurred_at": _iso(at),
            "policy": POLICIES[kind]}


def trial_result(*, trial_id: str, task: str, trial: str, config: dict[str, Any], agent: str, model: str | None,
                 start: _dt.datetime, agent_seconds: float | None, rewards: dict[str, Any] | None,
                 exception: str | None, verifier_ran: bool, checksum: str) -> dict[str, Any]:
    """A TrialResult document (harbor/models/trial/result.py), as Harbor 0.26 writes it."""
    env_end = start + _dt.timedelta(seconds=20)
    a0 = env_end + _dt.timedelta(seconds=1)
    a1 = a0 + _dt.timedelta(seconds=agent_seconds) if agent_seconds is not None else None
    v0 = (a1 or env_end) + _dt.timedelta(seconds=15)
    v1 = v0 + _dt.timedelta(seconds=40)
    provider, _, name = (model or "").rpartition("/")
    exc = _exception(exception, (a1 or env_end)) if exception else None
    keep = exc is None or exc["policy"]["has_valid_reward"]
    return {
        "schema_version": 1, "id": trial_id, "task_name": task, "trial_name": trial,
        "trial_uri": f"file://{config['trials_dir']}/{trial}", "task_id": {"path": config["task"]["path"]},
        "source": "recon", "task_checksum": checksum, "config": config,
        "agent_info": {"name": agent, "version": "1.0.0",
                       "model_info": {"name": name, "provider": provider or None} if model else None},
        "agent_result": {"n_input_tokens": 120000, "n_cache_tokens": 80000, "n_output_tokens": 9000,
                         "cost_usd": 1.25, "model_usage": None, "rollout_details": None, "metadata": None},
        "verifier_result": {"rewards": rewards} if rewards is not None else None,
        "verifier_environment_mode": "separate",
        "exception_info": exc,
        "started_at": _iso(start), "finished_at": _iso(v1 if verifier_ran else (a1 or env_end)),
        "environment_setup": {"started_at": _iso(start), "finished_at": _iso(env_end)},
        "agent_setup": {"started_at": _iso(env_end), "finished_at": _iso(a0)} if agent_seconds is not None else None,
        "agent_execution": {"started_at": _iso(a0), "finished_at": _iso(a1)} if a1 is not None else None,
        "verifier": {"started_at": _iso(v0), "finished_at": _iso(v1)} if verifier_ran else None,
        "step_results": None,
        "reward_valid": rewards is not None and bool(keep),
    }


def _grading(template: dict[str, Any], task: str, reward: float, rung: int, series: list[dict[str, Any]],
             nonce: str) -> dict[str, Any]:
    g = copy.deepcopy(template)
    g["task"], g["oracle"] = task, task.split("/", 1)[-1]
    g["reward"], g["binary"], g["nonce"] = reward, int(reward == 1.0), nonce
    g["rung"] = {"index": rung, "name": g["rungs"][rung - 1]["name"] if rung else "nothing usable"}
    g["next_rung_fraction"] = round(reward * 6 - rung, 6) if rung < 6 else 0.0
    for r in g["rungs"]:
        r["passed"] = r["index"] <= rung
        r["examined"] = r["index"] <= rung + 1
    g["checkpoints"] = series
    return g


def _series(rng: random.Random, final: float, horizon: float, interval: float,
            early_stop: float) -> tuple[list[dict[str, Any]], float]:
    """A checkpoint series ending at ``final``: every ``interval`` seconds until the agent
    stops, then the final workspace; mostly rising, sometimes dropping. An agent runs
    into its time limit (and a little past it, while it is stopped) unless it stops
    early, with probability ``early_stop``."""
    stop = rng.uniform(0.25, 1.0) * horizon if rng.random() < early_stop else horizon + rng.uniform(25.0, 60.0)
    # A checkpoint fires a few seconds after its slot (the verifier needs a moment), so no two
    # trials share a checkpoint time.
    times = [k * interval + rng.uniform(0.0, 20.0) for k in range(1, int(min(stop, horizon) // interval) + 1)]
    times = [t for t in times if t < stop]
    if not times or times[-1] < stop:
        times.append(stop)
    reach = rng.randrange(len(times))  # the checkpoint at which the run first gets to its final level
    out = []
    for i, t in enumerate(times):
        if i == len(times) - 1:
            r = final
        elif i >= reach:
            # at its final level, except for an occasional drop (a regression the next checkpoint repairs)
            r = max(0.0, final - rng.uniform(0.1, 0.4)) if rng.random() < 0.15 else final
        else:
            r = min(1.0, max(0.0, final * (i + 1) / (reach + 1) + rng.uniform(-0.1, 0.05)))
        r = round(r, 6)
        rung = min(6, int(r * 6 + 1e-9))
        out.append({"t": round(t, 3), "reward": r, "rung": rung, "binary": int(r == 1.0)})
    return out, stop


def write_jobs(root: Path, template: dict[str, Any], *, models: int = 15, tasks: int = 77, trials: int | None = None,
               interval: float = 1800.0, horizon: float = 10800.0, early_stop: float = 0.2, failures: bool = True,
               kinds: dict[tuple[int, int], str] | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """Write one Harbor job folder per model under ``root`` (``trials`` of the
    models x tasks cells, default all); return what was written, one record per trial
    folder: job, trial, id, agent, model, task, kind (scored, zero, verifier_timeout,
    invalid, agent_timeout, missing, corrupt, duplicate), reward and checkpoints.

    ``failures``: about 4 % of the trials fail in one of those ways, and one trial is
    copied into a second job folder. ``kinds`` instead names the kind of given
    (model, task) cells (the others are scored)."""
    rng = random.Random(seed)
    cells = [(m, k) for m in range(models) for k in range(tasks)]
    if trials is not None:
        cells = sorted(rng.sample(cells, trials))
    skill = [0.25 + 0.6 * rng.random() for _ in range(models)]
    ease = [rng.random() for _ in range(tasks)]
    task_names = [f"recon/task_{k:02d}" for k in range(tasks)]
    written: list[dict[str, Any]] = []
    failure_kinds = ["zero", "verifier_timeout", "invalid", "missing", "corrupt", "agent_timeout"]
    for m in range(models):
        agent, model = ("terminus-2", f"provider{m % 3}/model-{m:02d}") if m else ("oracle", None)
        job = f"2026-10-01__00-{m:02d}-00"
        job_dir = root / job
        job_id = f"00000000-0000-4000-8000-{m:012d}"
        mine = [k for (mm, k) in cells if mm == m]
        _dump(job_dir / "config.json", {
            "schema_version": 1, "job_name": job, "jobs_dir": str(root), "n_attempts": 1, "install_only": False,
            "skip_credential_checks": False, "timeout_multiplier": 1.0, "debug": False, "n_concurrent_trials": 8,
            "quiet": False, "retry": {"max_retries": 0, "include_exceptions": None,
                                      "exclude_exceptions": RETRY_EXCLUDE, "wait_multiplier": 1.0,
                                      "min_wait_sec": 1.0, "max_wait_sec": 60.0},
            "override_error_policy": {}, "environment": dict(ENVIRONMENT),
            "verifier": {"override_timeout_sec": None, "max_timeout_sec": None, "disable": False}, "metrics": [],
            "agents": [_agent_config(agent, model)], "user_agent": None,
            "datasets": [{"name": "recon", "version": "0.1.0", "registry_path": "ds/registry.json"}], "tasks": [],
            "artifacts": [], "extra_instruction_paths": [], "extra_instructions": [], "source_jobs": []})
        (job_dir / "job.log").write_text("synthetic study\n")
        for k in mine:
            task = task_names[k]
            trial = f"task_{k:02d}__{rng.getrandbits(40):010x}"[:17]
            tdir = job_dir / trial
            trial_id = f"{m:08d}-{k:04d}-4000-8000-{rng.getrandbits(48):012x}"
            start = T0 + _dt.timedelta(minutes=5 * k)
            config = trial_config(f"ds/task_{k:02d}", trial, str(job_dir), agent, model, job_id)
            kind = "scored"
            if kinds is not None:
                kind = kinds.get((m, k), "scored")
            elif failures and rng.random() < 0.04:
                kind = failure_kinds[rng.randrange(len(failure_kinds))]
            p = min(1.0, max(0.0, skill[m] * 0.7 + ease[k] * 0.6 - 0.25 + rng.uniform(-0.2, 0.2)))
            final = 1.0 if p > 0.75 else round(p, 6)
            rung = min(6, int(final * 6 + 1e-9))
            series, stop = _series(rng, final, horizon, interval, early_stop)
            rec = {"job": job, "trial": trial, "id": trial_id, "agent": agent, "model": model, "task": task,
                   "kind": kind, "reward": final, "checkpoints": series, "dir": tdir}
            written.append(rec)
            _dump(tdir / "config.json", config)
            (tdir / "trial.log").write_text("synthetic trial\n")
            (tdir / "agent").mkdir()
            (tdir / "verifier").mkdir()
            (tdir / "agent" / "trajectory.json").write_text(json.dumps({"steps": len(series) * 20}))
            if kind == "missing":  # the trial never finished: config.json only
                continue
            rewards: dict[str, Any] | None = {"reward": final, "binary": int(final == 1.0)}
            exception = {"zero": "AgentSetupTimeoutError", "verifier_timeout": "VerifierTimeoutError",
                         "invalid": "ApiError", "agent_timeout": "AgentTimeoutError"}.get(kind)
            verifier_ran = kind != "zero"
            if kind in ("zero", "verifier_timeout"):
                rewards = None
            if kind == "verifier_timeout":
                (tdir / "verifier" / "test-stdout.txt").write_text("grading...\n")
            if rewards is not None:
                g = _grading(template, task, final, rung, series, f"{m:02d}{k:02d}")
                _dump(tdir / "verifier" / "grading.json", g)
                _dump(tdir / "verifier" / "reward.json", rewards)
                (tdir / "verifier" / "reward.txt").write_text(f"{final}\n")
                (tdir / "verifier" / "test-stdout.txt").write_text("reward written\n")
            doc = trial_result(trial_id=trial_id, task=task, trial=trial, config=config, agent=agent, model=model,
                               start=start, agent_seconds=None if kind == "zero" else stop, rewards=rewards,
                               exception=exception, verifier_ran=verifier_ran, checksum=f"{k:064x}")
            text = json.dumps(doc, indent=4) + "\n"
            if kind == "corrupt":
                text = text[: len(text) // 2]  # the file was cut short
            (tdir / "result.json").write_text(text)
        _dump(job_dir / "result.json", {
            "schema_version": 1, "id": job_id, "started_at": "2026-10-01T00:00:00.000000",
            "updated_at": "2026-10-01T12:00:00.000000", "finished_at": "2026-10-01T12:00:00.000000",
            "n_total_trials": len(mine),
            "stats": {"n_completed_trials": len(mine), "n_errored_trials": 0, "n_running_trials": 0,
                      "n_pending_trials": 0, "n_cancelled_trials": 0, "n_retries": 0, "evals": {},
                      "n_input_tokens": None, "n_cache_tokens": None, "n_output_tokens": None, "cost_usd": None}})
    if failures and written:
        # One trial copied into a second job folder (a re-collected job): the same trial id twice.
        first = next(r for r in written if r["kind"] == "scored")
        copy_dir = root / "2026-10-02__copy" / first["trial"]
        shutil.copytree(first["dir"], copy_dir)
        shutil.copy(first["dir"].parent / "config.json", copy_dir.parent / "config.json")
        written.append({**first, "job": "2026-10-02__copy", "kind": "duplicate", "dir": copy_dir})
    return written


def _measure(args: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one run of
    ``args`` in a child process (measured by a probe process whose only child it is)."""
    probe = ("import resource, subprocess, sys, time\n"
             "t = time.perf_counter()\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "wall = time.perf_counter() - t\n"
             "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "print(wall, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024.0)\n"
             "sys.stderr.write(p.stderr)\n"
             "sys.exit(p.returncode)\n")
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    wall, cpu, rss = map(float, proc.stdout.split())
    return wall, cpu, rss, proc.stderr


def _recon() -> list[str]:
    exe = Path(sys.executable).with_name("recon")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "recon"]


def test_results_at_study_scale(tmp_path: Path, record: Callable[..., None]) -> None:
    template = real_grading(tmp_path / "template")
    jobs = tmp_path / "jobs"
    t0 = time.perf_counter()
    written = write_jobs(jobs, template, models=15, tasks=77, trials=1145, early_stop=0.0)
    gen = time.perf_counter() - t0
    n_cp = sum(len(r["checkpoints"]) for r in written if r["kind"] != "duplicate")
    files = sum(1 for _ in jobs.rglob("*") if _.is_file())
    size = sum(p.stat().st_size for p in jobs.rglob("*") if p.is_file()) / 1e6
    detail = f"{len(written) - 1} trial folders, {n_cp} checkpoints, {files} files, {size:.0f} MB (written in {gen:.1f} s)"
    for label, extra in (("with figures", []), ("--no-figures", ["--no-figures"])):
        out = tmp_path / f"out{len(extra)}"
        wall, cpu, rss, err = _measure([*_recon(), "results", str(jobs), "--out", str(out), *extra])
        assert "1145 trial(s)" in err, err
        record(f"recon results, 1,145 trials, {label}: wall", wall, "< 10", unit="s", detail=detail)
        record(f"recon results, 1,145 trials, {label}: CPU", cpu, unit="s", detail="user + system (one process)")
        record(f"recon results, 1,145 trials, {label}: peak RSS", rss, "< 500", unit="MB")
    # the tables are a function of the folders alone
    a, b = tmp_path / "out0", tmp_path / "out1"
    for name in ("results.json", "models.csv", "trials.csv", "checkpoints.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
