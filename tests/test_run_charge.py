"""What a run costs its grading's budget on a busy machine (``recon.grader.charge``).

Every sandbox that supervises a run reports the time its main thread was runnable but
waiting for a CPU (the run queue delay of ``/proc/PID/schedstat``) and the CPU time of
everything it started. The budget charges wall time less that wait, never less than that
CPU time: an honest program on a machine busy with other work is charged what it would
take alone, a sleeper its whole wall time, and a program that makes its own main thread
wait by keeping the CPUs busy pays for it in CPU time.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator

import pytest

from recon.grader import CHARGE_FLOOR, STRIKES, RunBudget, charge
from recon.runtimes import Limits, Runtime
from recon.runtimes.base import RunResult
from recon.runtimes.local import LocalRuntime
from test_sandbox_attacks import _make as make_attacked

LIMITS = Limits(wall=30, cpu=30, memory=1 << 30, nproc=32, stdout=1 << 20)
SCENARIO = {"task": "x", "id": "a", "parameters": {}}

BUSY = """
import json, time
t = time.process_time()
while time.process_time() - t < 0.6:
    pass
print(json.dumps({"ok": 1}))
"""
SLEEPER = """
import json, time
time.sleep(1.0)
print(json.dumps({"ok": 1}))
"""
# keeps every CPU busy with children it never waits for, so that its main thread waits
SELF_CROWDING = """
import json, os, time
for _ in range(2 * os.cpu_count() + 2):
    if os.fork() == 0:
        os.setsid()
        while True:
            pass
t = time.time()
while time.time() - t < 2.0:
    pass
print(json.dumps({"ok": 1}))
"""


def _result(seconds: float, stall: float | None, cpu: float | None = None, timed_out: bool = False) -> RunResult:
    return RunResult(exit_code=None if timed_out else 0, stdout=b"{}", stderr_tail="", seconds=seconds,
                     timed_out=timed_out, cpu_seconds=cpu, stall_seconds=stall)


# -- the rule ---------------------------------------------------------------------------------

def test_the_charge_leaves_out_waiting_for_a_cpu_and_nothing_else() -> None:
    assert charge(_result(9.0, stall=5.0, cpu=2.0)) == pytest.approx(4.0)     # wall less the wait
    assert charge(_result(9.0, stall=8.5, cpu=2.0)) == pytest.approx(9.0 * CHARGE_FLOOR)   # the floor
    assert charge(_result(4.0, stall=3.0, cpu=3.5)) == pytest.approx(3.5)     # never under the CPU time
    assert charge(_result(4.0, stall=0.0, cpu=0.0)) == pytest.approx(4.0)     # a sleeper pays its wall time
    assert charge(_result(4.0, stall=None)) == pytest.approx(4.0)             # not measured: the wall time
    assert charge(_result(30.0, stall=25.0, cpu=5.0, timed_out=True)) == 30.0  # a timeout: the wall time


def test_an_honest_program_on_a_busy_machine_keeps_its_budget_and_a_sleeper_does_not() -> None:
    limits = Limits(wall=6.0)
    runs = 30
    # 1.5 s of work a run, stretched to 5 s by a busy machine: 150 s of wall time against a
    # budget of 60 s, all of it charged before
    honest = RunBudget(limits, runs)
    for _ in range(runs):
        assert not isinstance(honest.next_limits(), str)
        honest.record(_result(5.0, stall=3.5, cpu=1.5))
    assert honest.spent == pytest.approx(runs * 5.0 / 3)   # the floor: a third of each run's wall
    assert honest.spent < honest.total
    sleeper = RunBudget(limits, runs)
    started = 0
    while not isinstance(sleeper.next_limits(), str):
        sleeper.record(_result(5.0, stall=0.0, cpu=0.01))
        started += 1
    assert started == 12 and sleeper.timeouts < STRIKES   # 60 s / 5 s a run, then no more runs


# -- the measurements, in every sandbox that supervises a run -----------------------------------

KINDS = ["local", "local-nons", "local-reap", "bwrap"]


def _make(kind: str) -> Runtime:
    if kind == "local-reap":   # the supervisor without privilege drop or namespaces
        return LocalRuntime(drop_privileges=False, namespaces=False)
    return make_attacked(kind)


@pytest.fixture(scope="module", params=KINDS)
def rt(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    runtime = _make(request.param)
    yield runtime
    runtime.close()


@pytest.fixture
def busy_machine() -> Iterator[int]:
    """Other work keeping every CPU busy: twice as many spinning processes as CPUs, plus one,
    each in a session of its own (with autogroup scheduling, processes of one session share
    one CPU share; other trials, other gradings are sessions of their own too)."""
    n = 2 * (os.cpu_count() or 1) + 1
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(n)]
    try:
        yield n
    finally:
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait()


def _ws(tmp_path: Path, code: str) -> Path:
    os.chmod(tmp_path, 0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    os.chmod(ws, 0o755)
    (ws / "reconstruct.py").write_text(textwrap.dedent(code))
    os.chmod(ws / "reconstruct.py", 0o644)
    return ws


def _runs(rt: Runtime, ws: Path) -> list[tuple[str, RunResult]]:
    """One cold run and one run of a warm session (where the runtime has one)."""
    out = [("cold", rt.run(ws, SCENARIO, {}, LIMITS))]
    with rt.session(ws, LIMITS) as s:
        out.append(("session", s.run(SCENARIO, {})))
    return out


def _measured(kind: str, how: str) -> bool:
    # bwrap's cold runs are supervised by bwrap itself: nothing measures them (charged their wall time)
    return not (kind == "bwrap" and how == "cold")


def test_an_honest_run_on_a_busy_machine_is_charged_its_own_time(rt: Runtime, request: pytest.FixtureRequest,
                                                                 tmp_path: Path, busy_machine: int) -> None:
    kind = request.node.callspec.params["rt"]
    for how, res in _runs(rt, _ws(tmp_path, BUSY)):
        assert res.exit_code == 0, (how, res.failure())
        if not _measured(kind, how):
            assert res.stall_seconds is None and charge(res) == res.seconds
            continue
        assert res.stall_seconds is not None and res.cpu_seconds is not None, how
        assert res.cpu_seconds >= 0.55, (how, res)
        # the machine made it wait: at least half the time it was not running, it was waiting
        assert res.stall_seconds > 0.5 * (res.seconds - res.cpu_seconds), (how, res)
        assert charge(res) <= max(res.cpu_seconds + 0.5 * (res.seconds - res.cpu_seconds),
                                  CHARGE_FLOOR * res.seconds) + 1e-9, (how, res)
        assert charge(res) < 0.8 * res.seconds, (how, res)


def test_a_sleeping_run_is_charged_its_wall_time(rt: Runtime, request: pytest.FixtureRequest,
                                                 tmp_path: Path) -> None:
    kind = request.node.callspec.params["rt"]
    for how, res in _runs(rt, _ws(tmp_path, SLEEPER)):
        assert res.exit_code == 0, (how, res.failure())
        if _measured(kind, how):
            assert res.stall_seconds is not None and res.stall_seconds < 0.3, (how, res)
        assert charge(res) >= 0.7 * res.seconds and res.seconds >= 1.0, (how, res)


def test_a_run_crowding_its_own_main_thread_pays_in_cpu_time(rt: Runtime, request: pytest.FixtureRequest,
                                                            tmp_path: Path) -> None:
    """Its main thread waits most of the time, behind children it never waits for and that
    the sandbox kills when it exits: their CPU time is counted, so the wait buys nothing."""
    kind = request.node.callspec.params["rt"]
    for how, res in _runs(rt, _ws(tmp_path, SELF_CROWDING)):
        assert res.exit_code == 0, (how, res.failure())
        if not _measured(kind, how):
            continue
        assert res.stall_seconds is not None and res.stall_seconds > 0.3 * res.seconds, (how, res)
        # the children's CPU time is the run's: several times what its main thread got
        # (counted or not, the main thread ran whenever it was not waiting)
        assert res.cpu_seconds is not None and res.cpu_seconds > 3 * (res.seconds - res.stall_seconds), (how, res)
        # at least half its wall time on a machine with nothing else to do; only other
        # work on the machine lowers it (about the whole wall time here, where the run's
        # processes outnumber everything else)
        assert charge(res) >= 0.5 * res.seconds, (how, res)
