"""Reading Harbor's job folders: one :class:`Trial` per trial folder, whatever state it is in.

``harbor run ... -o JOBS`` writes ``JOBS/<job>/`` with the job's ``config.json``,
``lock.json``, ``result.json`` and ``job.log``, and one folder per trial holding
``config.json`` (a TrialConfig), ``result.json`` (a TrialResult, written when the trial
ends), ``agent/``, ``verifier/`` (``reward.json``, ``reward.txt`` and, for recon tasks,
``grading.json``) and ``artifacts/``. These are Harbor 0.26's pydantic models
(``harbor.models.trial.result.TrialResult``, ``harbor.models.trial.config.TrialConfig``,
``harbor.models.job.config.JobConfig``); this module reads their JSON with the standard
library only, one trial at a time, keeping a few fields of each (a study of a thousand
trials never sits in memory as documents).

Every trial folder becomes a trial record, never silently dropped:

- ``scored``: the verifier wrote a valid reward and Harbor's error policy keeps it valid
  (an ``AgentTimeoutError`` does; an ``ApiError`` does not);
- ``failed``: the trial ended without a valid reward. When its verifier never ran (the
  environment, the agent setup or the agent failed first) the trial counts as R = 0 in
  dense means, like an unscored task in the seed study; when the verifier ran but left no
  valid reward (a verifier timeout, unreadable output, a reward Harbor marks invalid) the
  trial is left out of means, with its reason;
- ``missing``: no readable ``result.json`` (the trial never finished, or the file is
  damaged); left out of means, with its reason.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from .errors import UsageError

__all__ = ["Checkpoint", "Trial", "Loaded", "load_trials", "read_trial", "model_label"]

# Files and folders that only a Harbor trial folder holds.
TRIAL_MARKERS = ("result.json", "config.json", "lock.json", "trial.log", "agent", "verifier", "exception.txt")
MAX_JSON_BYTES = 64 << 20
# A folder of job folders is searched this deep for jobs (JOBS/<study>/<job>/<trial> is depth 2).
MAX_DEPTH = 4
STATUS_RANK = {"scored": 0, "failed": 1, "missing": 2}


@dataclass(frozen=True)
class Checkpoint:
    """One grading of the workspace: ``t`` seconds after the agent phase started."""

    t: float
    reward: float
    rung: int | None
    binary: int


@dataclass
class Trial:
    key: str                       # the trial's id (result.json "id"), which names it across copies
    job: str                       # the job folder's name
    name: str                      # the trial folder's name
    path: Path                     # where it was read (shown on the page, never in CSV/JSON)
    agent: str
    model: str | None
    task: str
    status: str                    # scored | failed | missing
    reason: str = ""               # why it is not scored
    zero: bool = False             # failed before its verifier ran: R = 0 in dense means
    reward: float | None = None    # the final reward (also kept, but unused, for a failed trial)
    binary: int | None = None
    rung: int | None = None
    rung_name: str | None = None
    reward_source: str = ""        # grading.json | reward.json | reward.txt | result.json
    checkpoints: list[Checkpoint] = field(default_factory=list)
    agent_seconds: float | None = None
    exception: str | None = None   # the first recorded exception's type
    notes: list[str] = field(default_factory=list)
    task_dir: str | None = None    # the task folder's name Harbor ran (names a trial that has no result)

    @property
    def label(self) -> str:
        return model_label(self.agent, self.model)

    @property
    def counted(self) -> bool:
        """Whether the trial enters dense means (scored, or failed before its verifier ran)."""
        return self.status == "scored" or self.zero

    @property
    def value(self) -> float:
        """The reward used in means: the final reward, or 0 for a trial that counts as zero."""
        if self.status == "scored" and self.reward is not None:
            return self.reward
        return 0.0

    @property
    def value_binary(self) -> int:
        return int(self.binary or 0) if self.status == "scored" else 0


@dataclass
class Loaded:
    trials: list[Trial]
    jobs: list[Path]                                   # job folders read (as found)
    duplicates: list[dict[str, str]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)   # JOB/FOLDER: folders in a job folder that hold no trial


def model_label(agent: str, model: str | None) -> str:
    """``agent (model)``, or the agent alone when no model was named (oracle, nop)."""
    return f"{agent} ({model})" if model else agent


# -- small readers ------------------------------------------------------------------------
class _Unreadable(Exception):
    pass


def _read_json(path: Path) -> Any:
    """The JSON in ``path``; :class:`_Unreadable` with a short reason otherwise."""
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise _Unreadable(f"{path.name} is larger than {MAX_JSON_BYTES >> 20} MiB")
        data = path.read_bytes()
    except FileNotFoundError:
        raise _Unreadable(f"no {path.name}") from None
    except OSError as exc:
        raise _Unreadable(f"{path.name} cannot be read ({exc.strerror or exc})") from None
    if not data.strip():
        raise _Unreadable(f"{path.name} is empty")
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
        raise _Unreadable(f"{path.name} is not valid JSON ({msg})") from None


def _get(doc: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(k)
    return doc


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _time(value: Any) -> _dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        t = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)


def _reward(value: Any) -> float | None:
    """A reward: a finite number in [0, 1] (bools are not rewards)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    return v if math.isfinite(v) and 0.0 <= v <= 1.0 else None


def _binary(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    return None


def _first_line(text: Any, limit: int = 200) -> str:
    s = str(text or "").strip().splitlines()
    line = s[0] if s else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


# -- identity: agent, model, task -----------------------------------------------------------
def _agent_model(config: Any, result: Any) -> tuple[str, str | None]:
    agent = _text(_get(config, "agent", "name")) or _text(_get(config, "agent", "import_path")) \
        or _text(_get(result, "agent_info", "name")) or "unknown agent"
    model = _text(_get(config, "agent", "model_name"))
    if model is None:
        name, provider = _text(_get(result, "agent_info", "model_info", "name")), \
            _text(_get(result, "agent_info", "model_info", "provider"))
        model = f"{provider}/{name}" if name and provider else name
    return agent, model


def _task_of_config(config: Any) -> str | None:
    task = _get(config, "task")
    name = _text(_get(task, "name"))
    if name:
        return name
    path = _text(_get(task, "path"))
    return Path(path).name if path else None


def _task_dir(result: Any, config: Any) -> str | None:
    path = _text(_get(result, "task_id", "path")) or _text(_get(config, "task", "path"))
    return Path(path).name if path else None


# -- the verifier's output ----------------------------------------------------------------
@dataclass
class _Final:
    reward: float
    binary: int | None
    rung: int | None
    rung_name: str | None
    source: str
    checkpoints: list[Checkpoint] | None   # None: the grading holds no series
    task: str | None = None


def _from_grading(doc: Any, notes: list[str]) -> _Final:
    if not isinstance(doc, dict):
        raise _Unreadable("grading.json is not a JSON object")
    reward = _reward(doc.get("reward"))
    if reward is None:
        raise _Unreadable(f"grading.json has no reward in [0, 1] (reward={doc.get('reward')!r})")
    binary = _binary(doc.get("binary"))
    rung_doc = doc.get("rung")
    rung = rung_doc.get("index") if isinstance(rung_doc, dict) else None
    if not (isinstance(rung, int) and not isinstance(rung, bool) and rung >= 0):
        rung = None
        notes.append("grading.json names no rung")
    name = _text(rung_doc.get("name")) if isinstance(rung_doc, dict) else None
    series: list[Checkpoint] | None = None
    if "checkpoints" in doc:
        try:
            series = _checkpoints(doc["checkpoints"])
        except _Unreadable as exc:
            notes.append(f"checkpoints ignored: {exc}")
    return _Final(reward, binary, rung, name, "grading.json", series, _text(doc.get("task")))


_FINAL_T = float("inf")   # placeholder for "the end of the agent phase", sorted last


def _checkpoints(raw: Any) -> list[Checkpoint]:
    if not isinstance(raw, list) or not raw:
        raise _Unreadable("'checkpoints' is not a non-empty list")
    out = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict):
            raise _Unreadable(f"checkpoint {i} is not an object")
        t = c.get("t")
        if t is None and i == len(raw) - 1:
            # recon's verifier closes the series with the final workspace, whose time is the
            # end of the agent phase: known here only from result.json (filled in later)
            t = _FINAL_T
        elif isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
            raise _Unreadable(f"checkpoint {i} has t={t!r}, not seconds >= 0")
        reward = _reward(c.get("reward"))
        if reward is None:
            raise _Unreadable(f"checkpoint {i} has reward={c.get('reward')!r}, not a number in [0, 1]")
        rung = c.get("rung")
        if rung is not None and (isinstance(rung, bool) or not isinstance(rung, int) or rung < 0):
            raise _Unreadable(f"checkpoint {i} has rung={rung!r}")
        binary = _binary(c.get("binary"))
        if binary is None:
            binary = int(reward == 1.0)
        out.append(Checkpoint(float(t), reward, rung, binary))
    # Sorted by t as written; a stable sort keeps equal times in their written order.
    return sorted(out, key=lambda c: c.t)


def _from_rewards(rewards: Any, source: str) -> _Final:
    if not isinstance(rewards, dict) or not rewards:
        raise _Unreadable(f"{source} holds no rewards")
    key = "reward" if "reward" in rewards else (next(iter(rewards)) if len(rewards) == 1 else None)
    if key is None:
        raise _Unreadable(f"{source} has no 'reward' key ({', '.join(sorted(map(str, rewards)))})")
    reward = _reward(rewards[key])
    if reward is None:
        raise _Unreadable(f"{source} has {key}={rewards[key]!r}, not a number in [0, 1]")
    return _Final(reward, _binary(rewards.get("binary")), None, None, source, None)


def _final(trial_dir: Path, result: Any, notes: list[str]) -> tuple[_Final | None, list[str]]:
    """The verifier's final reward, from the most complete source that is valid; and the
    reasons the others were not usable (when none is)."""
    verifier = trial_dir / "verifier"
    problems: list[str] = []
    try:
        return _from_grading(_read_json(verifier / "grading.json"), notes), problems
    except _Unreadable as exc:
        problems.append(str(exc))
    try:
        return _from_rewards(_read_json(verifier / "reward.json"), "reward.json"), problems
    except _Unreadable as exc:
        problems.append(str(exc))
    try:
        text = (verifier / "reward.txt").read_text(encoding="utf-8").strip()
        try:
            value = _reward(float(text))
        except ValueError:
            value = None
        if value is None:
            problems.append(f"reward.txt holds {text[:40]!r}, not a number in [0, 1]")
        else:
            return _Final(value, None, None, None, "reward.txt", None), problems
    except (OSError, UnicodeDecodeError):
        problems.append("no reward.txt")
    rewards = _get(result, "verifier_result", "rewards")
    if rewards:
        try:
            return _from_rewards(rewards, "result.json"), problems
        except _Unreadable as exc:
            problems.append(str(exc))
    return None, problems


def _exceptions(result: Any) -> list[dict[str, Any]]:
    out = []
    if isinstance(result.get("exception_info"), dict):
        out.append(result["exception_info"])
    for step in result.get("step_results") or []:
        if isinstance(step, dict) and isinstance(step.get("exception_info"), dict):
            out.append(step["exception_info"])
    return out


def _reward_kept(exceptions: list[dict[str, Any]]) -> bool:
    """Whether Harbor's error policy keeps the reward of a trial that raised ``exceptions``
    (the ``policy`` Harbor computed into result.json; an exception without one, from an
    older Harbor, follows Harbor's default for unknown errors: the reward stays valid)."""
    for exc in exceptions:
        keep = _get(exc, "policy", "has_valid_reward")
        if keep is False:
            return False
    return True


def _verifier_ran(trial_dir: Path, result: Any) -> bool:
    if _get(result, "verifier", "started_at"):
        return True
    try:
        with os.scandir(trial_dir / "verifier") as it:
            return any(True for _ in it)
    except OSError:
        return False


def read_trial(trial_dir: Path, job: str, job_agent: tuple[str, str | None] | None = None) -> Trial:
    """The record of one trial folder (never raises for a damaged folder: it becomes a
    ``missing`` or ``failed`` trial with the reason). ``job_agent``: the (agent, model)
    of the job, for a trial folder that names neither."""
    trial_dir = Path(trial_dir)
    notes: list[str] = []
    try:
        result = _read_json(trial_dir / "result.json")
        if not isinstance(result, dict) or not isinstance(result.get("trial_name"), str):
            raise _Unreadable("result.json is not a Harbor trial result (no trial_name)")
    except _Unreadable as exc:
        return _missing(trial_dir, job, str(exc), job_agent)
    config = result.get("config") if isinstance(result.get("config"), dict) else None
    if config is None:
        try:
            config = _read_json(trial_dir / "config.json")
        except _Unreadable:
            config = None
    agent, model = _agent_model(config, result)
    key = _text(result.get("id")) or f"{_text(_get(config, 'job_id')) or job}/{result['trial_name']}"
    started = _time(_get(result, "agent_execution", "started_at"))
    finished = _time(_get(result, "agent_execution", "finished_at"))
    agent_seconds = (finished - started).total_seconds() if started and finished and finished >= started else None
    exceptions = _exceptions(result)
    exc_type = _text(exceptions[0].get("exception_type")) if exceptions else None
    final, problems = _final(trial_dir, result, notes)
    task = _text(result.get("task_name")) or (final.task if final else None) or _task_of_config(config) or "unknown task"
    trial = Trial(key=key, job=job, name=trial_dir.name, path=trial_dir, agent=agent, model=model, task=task,
                  status="scored", agent_seconds=agent_seconds, exception=exc_type, notes=notes,
                  task_dir=_task_dir(result, config))
    exc_text = "; ".join(f"{_text(e.get('exception_type')) or 'exception'}: {_first_line(e.get('exception_message'))}"
                         for e in exceptions)
    if final is None:
        trial.status = "failed"
        if _verifier_ran(trial_dir, result):
            trial.reason = (f"{exc_text}; " if exc_text else "") + "the verifier ran but left no valid reward (" \
                + "; ".join(problems) + ")"
        else:
            trial.zero = True
            trial.reason = (exc_text or "no exception recorded") + "; the verifier never ran (counts as R = 0)"
        return trial
    trial.reward, trial.binary, trial.rung, trial.rung_name = final.reward, final.binary, final.rung, final.rung_name
    trial.reward_source = final.source
    if trial.binary is None:
        trial.binary = int(final.reward == 1.0)
    if final.source != "grading.json" and problems:
        notes.append(f"reward from {final.source} ({problems[0]})")
    if final.task and _text(result.get("task_name")) and final.task != result["task_name"]:
        notes.append(f"grading.json is for task {final.task}, Harbor ran {result['task_name']}")
    harbor_reward = _reward(_get(result, "verifier_result", "rewards", "reward"))
    if final.source != "result.json" and harbor_reward is not None and abs(harbor_reward - final.reward) > 1e-9:
        trial.status = "failed"
        trial.reason = (f"{final.source} says R = {final.reward:g} but Harbor recorded R = {harbor_reward:g} "
                        "(stale or altered verifier files); left out of means")
        return trial
    if exceptions and not _reward_kept(exceptions):
        trial.status = "failed"
        trial.reason = f"{exc_text}; Harbor marks the reward invalid; left out of means"
        return trial
    if exc_text:
        notes.append(f"{exc_text} (the reward stands)")
    if final.checkpoints is not None:
        series = final.checkpoints
        if series and series[-1].t == _FINAL_T:
            known = [c.t for c in series[:-1]]
            end = max([agent_seconds or 0.0, *known])
            series = [*series[:-1], Checkpoint(end, series[-1].reward, series[-1].rung, series[-1].binary)]
        trial.checkpoints = series
        last = series[-1]
        if abs(last.reward - final.reward) > 1e-9:
            notes.append(f"the last checkpoint (R = {last.reward:g}) is not the final grading (R = {final.reward:g})")
    else:
        t = agent_seconds
        if t is None:
            t = 0.0
            notes.append("no agent timing in result.json: the final reward is placed at t = 0")
        trial.checkpoints = [Checkpoint(t, final.reward, final.rung, int(trial.binary))]
    return trial


def _missing(trial_dir: Path, job: str, reason: str, job_agent: tuple[str, str | None] | None) -> Trial:
    """A trial folder without a readable result.json; named from its config.json when it
    can be, else from its job's only agent."""
    try:
        config = _read_json(trial_dir / "config.json")
    except _Unreadable:
        config = None
    if isinstance(config, dict):
        agent, model = _agent_model(config, None)
    else:
        agent, model = job_agent or ("unknown agent", None)
    name = _text(_get(config, "trial_name")) or trial_dir.name
    job_id = _text(_get(config, "job_id"))
    key = f"{job_id}/{name}" if job_id else f"path:{trial_dir.resolve()}"
    return Trial(key=key, job=job, name=trial_dir.name, path=trial_dir, agent=agent, model=model,
                 task=_task_of_config(config) or "unknown task", status="missing", task_dir=_task_dir(None, config),
                 reason=reason + ("" if reason.startswith("result.json") else " (the trial did not finish, or its "
                                  "folder is incomplete)"))


# -- finding trials ---------------------------------------------------------------------------
def _subdirs(d: Path) -> list[Path]:
    try:
        with os.scandir(d) as it:
            return sorted((Path(e.path) for e in it if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")),
                          key=lambda p: p.name)
    except OSError as exc:
        raise UsageError(f"cannot list {d}: {exc.strerror or exc}") from None


def _kind(d: Path) -> tuple[str | None, Any]:
    """``job``, ``trial`` or None (something else: maybe a folder of job folders), and
    the folder's config.json or result.json document when it has one."""
    for fname in ("config.json", "result.json"):
        p = d / fname
        if p.is_file():
            try:
                doc = _read_json(p)
            except _Unreadable:
                continue
            if isinstance(doc, dict):
                if "job_name" in doc or "n_total_trials" in doc or "agents" in doc:
                    return "job", doc
                if "trial_name" in doc:
                    return "trial", doc
    if (d / "job.log").is_file():
        return "job", None
    if any((d / m).exists() for m in TRIAL_MARKERS):
        return "trial", None
    return None, None


def _looks_like_job(d: Path) -> bool:
    """A folder without a job's own files whose sub-folders are trials (a partial copy)."""
    return any(_kind(c)[0] == "trial" for c in _subdirs(d))


def _job_agent(doc: Any) -> tuple[str, str | None] | None:
    """The (agent, model) of a job that ran exactly one agent configuration."""
    agents = doc.get("agents") if isinstance(doc, dict) else None
    if isinstance(agents, list) and len(agents) == 1 and isinstance(agents[0], dict):
        return _agent_model({"agent": agents[0]}, None)
    return None


def _is_trial_dir(d: Path) -> bool:
    # Harbor creates agent/, verifier/ and artifacts/ when a trial starts, then config.json.
    return any((d / m).exists() for m in (*TRIAL_MARKERS, "artifacts", "steps"))


def _walk(d: Path, depth: int, jobs: list[Path], ignored: list[str],
          skip: set[Path]) -> Iterator[tuple[Path, str, tuple[str, str | None] | None]]:
    if d.resolve() in skip:
        return
    kind, doc = _kind(d)
    if kind == "trial":
        yield d, d.resolve().parent.name, None
        return
    if kind == "job" or (kind is None and _looks_like_job(d)):
        jobs.append(d)
        agent = _job_agent(doc)
        job = d.resolve().name
        for child in _subdirs(d):
            if child.resolve() in skip:
                continue
            if _is_trial_dir(child):
                yield child, job, agent
            else:
                ignored.append(f"{job}/{child.name}")
        return
    if depth < MAX_DEPTH:
        for child in _subdirs(d):
            yield from _walk(child, depth + 1, jobs, ignored, skip)


def load_trials(paths: Iterable[Path | str], *, exclude: Iterable[Path | str] = ()) -> Loaded:
    """Every trial under ``paths`` (job folders, folders of job folders, or trial
    folders), except under the folders ``exclude`` (where results are written). A
    trial seen twice (the same trial id, e.g. a job folder given twice or copied)
    counts once: the copy with the most complete result is kept and the other is listed
    in ``duplicates``. A folder inside a job folder that holds none of a trial's files
    is not a trial; it is listed in ``ignored``."""
    jobs: list[Path] = []
    ignored: list[str] = []
    skip = {Path(p).resolve() for p in exclude}
    seen_dirs: set[Path] = set()
    by_key: dict[str, Trial] = {}
    duplicates: list[dict[str, str]] = []
    roots = [Path(p) for p in paths]
    if not roots:
        raise UsageError("give at least one Harbor job folder", hint="e.g. `recon results jobs/ --out results/`")
    for p in roots:
        if not p.exists():
            raise UsageError(f"{p} does not exist", hint="give Harbor job folders (`harbor run ... -o JOBS`)")
        if not p.is_dir():
            raise UsageError(f"{p} is a file, not a Harbor job folder",
                             hint="give the job folder (JOBS/<job>/) or the folder holding job folders")
        for trial_dir, job, job_agent in _walk(p, 0, jobs, ignored, skip):
            real = trial_dir.resolve()
            if real in seen_dirs:  # the same folder reached twice (given twice, or inside another input)
                continue
            seen_dirs.add(real)
            trial = read_trial(trial_dir, job, job_agent)
            old = by_key.get(trial.key)
            if old is None:
                by_key[trial.key] = trial
                continue
            keep, drop = sorted((old, trial), key=lambda t: (STATUS_RANK[t.status], t.job, t.name, str(t.path)))
            by_key[trial.key] = keep
            duplicates.append({"trial": trial.key, "kept": f"{keep.job}/{keep.name}", "dropped": f"{drop.job}/{drop.name}",
                               "kept_path": str(keep.path), "dropped_path": str(drop.path)})
    if not by_key:
        raise UsageError("no Harbor trials found in " + ", ".join(map(str, roots)),
                         hint="give the folder `harbor run -o JOBS` wrote (JOBS, or JOBS/<job>)")
    # A trial without a result.json knows only its task's folder (`lidar_icp`), while Harbor
    # names tasks by task.toml (`recon/lidar_icp`): name it like the trials of the same folder.
    names: dict[str, set[str]] = defaultdict(set)
    for t in by_key.values():
        if t.status != "missing" and t.task_dir:
            names[t.task_dir].add(t.task)
    for t in by_key.values():
        if t.status == "missing" and t.task_dir and len(names.get(t.task_dir, ())) == 1:
            t.task = next(iter(names[t.task_dir]))
    unique_jobs = list(dict.fromkeys(j.resolve() for j in jobs))
    duplicates.sort(key=lambda d: (d["trial"], d["kept"], d["dropped"]))
    return Loaded(list(by_key.values()), unique_jobs, duplicates, sorted(set(ignored)))
