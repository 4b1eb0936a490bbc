"""A warm runner: one sandboxed interpreter that imports a program's libraries once and
forks a fresh child for each run (``Runtime.session``).

This file runs *inside* the sandbox as ``python -c SOURCE PRELOAD_JSON``; it uses the
standard library only and never imports recon. The workspace to run sits read-only at
``/src``; each run gets a fresh copy of it at ``/app/workspace`` (its cwd) and the
scenario's inputs at ``/inputs``.

Protocol, one JSON line each way on the interpreter's stdin and its original stdout
(stray prints of the preloaded libraries go to stderr):

* ready: ``{"ready": true, "preloaded": [...]}``
* job: ``{"stdin": TEXT, "wall": S, "cpu": S, "memory": B, "fsize": B, "nproc": N, "stdout": B, "stderr_tail": C}``
* reply: ``{"exit": CODE|null, "signal": N|null, "timed_out": B, "overflow": B, "seconds": S,
  "cpu": S, "stall": S, "stdout": BASE64, "stderr": TEXT, "retire": B}`` (``cpu``: the run's user
  plus system time, every process it started included (the interpreter is the sandbox's
  child subreaper: what a run leaves behind is re-parented to it, killed and reaped);
  ``stall``: the time its main thread was runnable but waiting for a CPU, from
  ``/proc/PID/schedstat``)

Besides its workspace copy, a run can write only the sandbox's /tmp, /dev/shm (sized tmpfs
each) and the POSIX message queues at /dev/mqueue (/dev itself is read-only under bwrap and
root's under ``local``), and create System V IPC objects in the sandbox's own IPC namespace.
After each run everything there that the session did not start with is removed, the job
folder included; a run that removed something the session started with (should /dev ever be
writable), or left an IPC object that cannot be removed, retires the session
(``retire``: the caller goes on cold), so no run can leave anything for a later one.
"""
import base64
import json
import os
import resource
import select
import shutil
import signal
import sys
import time

SRC, WORK, JOB = "/src", "/app/workspace", "/tmp/.recon-job"
# what a run may write (each its own tmpfs or mqueue mount); devpts entries come and go
SCRUB, SKIP = ("/tmp", "/var/tmp", "/dev", "/dev/shm", "/dev/mqueue"), ("/dev/pts",)
IPC = (("shm", "shmctl"), ("sem", "semctl"), ("msg", "msgctl"))   # /proc/sysvipc/KIND lists, the call removing one


def _ipc_ids() -> list:
    """(kind, id) of every System V IPC object of the sandbox's IPC namespace."""
    found = []
    for kind, _ in IPC:
        try:
            with open("/proc/sysvipc/" + kind, encoding="ascii") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        found += [(kind, int(r.split()[1])) for r in rows if len(r.split()) > 1]
    return found


def _drop_ipc() -> bool:
    """Remove the System V IPC objects a run left; False when some remain."""
    ids = _ipc_ids()
    if not ids:
        return True
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return False
    calls = dict(IPC)
    for kind, ident in ids:   # IPC_RMID is 0; semctl's semnum is ignored for it
        if kind == "sem":
            libc.semctl(ident, 0, 0)
        else:
            getattr(libc, calls[kind])(ident, 0, None)
    return not _ipc_ids()


def _listing() -> set:
    """Every path under :data:`SCRUB` (links not followed), mount points listed but not
    entered: an interpreter or virtual environment under /tmp is bound read-only there, and
    walking its tens of thousands of files after every run would cost seconds."""
    seen = set()
    for root in SCRUB:
        for d, dirs, files in os.walk(root):
            dirs[:] = [n for n in dirs if os.path.join(d, n) not in SKIP and (
                os.path.join(d, n) in SCRUB or not os.path.ismount(os.path.join(d, n)))]
            seen.add(d)
            seen.update(os.path.join(d, n) for n in dirs + files)
    return seen


def _scrub(initial: set) -> bool:
    """Remove what the run added under :data:`SCRUB`; False when something the session
    started with is gone."""
    now = sorted(_listing() - initial, key=len, reverse=True)   # deepest first
    for p in now:
        if any(p == s or p.startswith(s + "/") for s in SKIP):
            continue
        try:
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.unlink(p)
        except OSError:
            pass
    return initial <= _listing()


def _preload(names: list) -> list:
    done = []
    for name in names:
        try:
            __import__(name)
            done.append(name)
        except BaseException:  # noqa: BLE001 - a module that fails here is imported by the run itself
            pass
    return done


def _empty(folder: str) -> None:
    """Remove what ``folder`` holds (links themselves, never their targets)."""
    for e in os.listdir(folder):
        p = os.path.join(folder, e)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            try:
                os.unlink(p)
            except OSError:
                pass


def _fresh_workspace() -> None:
    _empty(WORK)
    for e in os.listdir(SRC):
        s, d = os.path.join(SRC, e), os.path.join(WORK, e)
        if os.path.islink(s):
            os.symlink(os.readlink(s), d)
        elif os.path.isdir(s):
            shutil.copytree(s, d, symlinks=True)
        else:
            shutil.copyfile(s, d)
            shutil.copymode(s, d)


def _kill_others(keep: set) -> None:
    """Every process of the sandbox but its init and this interpreter is killed (a daemon
    that left the run's process group too)."""
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in keep:
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass


def _subreaper() -> None:
    """Become the sandbox's child subreaper: what a run leaves behind (a daemon that left its
    process group) is re-parented here, killed and reaped, so its CPU time counts as the run's."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _reap_others(deadline: float = 2.0) -> None:
    """Reap every child left (killed by :func:`_kill_others`); gives up after ``deadline`` s."""
    end = time.monotonic() + deadline
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > end:
                return
            time.sleep(0.005)


def _tree_cpu() -> float:
    """CPU time of every process this interpreter has reaped (runs and what they left)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _child(job: dict) -> None:
    os.setsid()
    fd = os.open(JOB + "/stdin", os.O_RDONLY)
    os.dup2(fd, 0)
    os.dup2(os.open(JOB + "/stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
    os.dup2(os.open(JOB + "/stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
    os.closerange(3, 1 << 16)   # the protocol's pipes among them: a run cannot answer for another
    if job.get("affinity") is not None:
        try:   # the CPU the caller runs this on (one run per CPU at a time); a CPU this sandbox lacks is ignored
            os.sched_setaffinity(0, {int(job["affinity"])})
        except (AttributeError, ValueError, OSError):
            pass
    for res, value in ((resource.RLIMIT_CPU, (job["cpu"], job["cpu"] + 1)),
                       (resource.RLIMIT_AS, (job["memory"], job["memory"])),
                       (resource.RLIMIT_FSIZE, (job["fsize"], job["fsize"]))):
        try:
            resource.setrlimit(res, value)
        except (ValueError, OSError):
            pass
    os.chdir(WORK)
    sys.stdin = open(0, "r", encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
    # a fresh process draws fresh seeds: so does each fork (unseeded randomness differs per run)
    import random
    random.seed()
    if "numpy.random" in sys.modules:
        try:
            sys.modules["numpy.random"].seed()
        except BaseException:  # noqa: BLE001
            pass
    sys.argv = ["reconstruct.py"]
    sys.path[0] = WORK
    code = 0
    try:
        import runpy
        runpy.run_path("reconstruct.py", run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code & 0xFF
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - what python3 reconstruct.py would print and exit 1 for
        import traceback
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001
        code = code or 120
    os._exit(code)


def _stall(pid: int) -> float:
    """Seconds the task ``pid`` (a run's main thread) spent runnable but waiting for a CPU:
    the run queue delay of ``/proc/PID/schedstat``, readable until the task is reaped."""
    try:
        with open("/proc/%d/schedstat" % pid, encoding="ascii") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def _wait(pid: int, wall: float) -> tuple:
    """(status, timed_out, seconds, cpu, stall); kills the child's process group when it
    ends or times out. ``stall``: the child's run queue delay, read before it is reaped."""
    t0 = time.monotonic()
    deadline = t0 + wall
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    timed_out = False
    stall = 0.0
    while True:
        # exited? (not reaped yet: its schedstat is still there to read)
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            stall = _stall(pid)
            _, status, usage = os.wait4(pid, 0)
            break
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            _, status, usage = os.wait4(pid, 0)
            break
        if pidfd is not None:
            select.select([pidfd], [], [], min(left, 1.0))
        else:
            time.sleep(min(left, 0.005))
    seconds = time.monotonic() - t0
    if pidfd is not None:
        os.close(pidfd)
    try:
        os.killpg(pid, signal.SIGKILL)   # whatever the run left behind
    except OSError:
        pass
    return status, timed_out, seconds, usage.ru_utime + usage.ru_stime, stall


def main() -> None:
    names = json.loads(sys.argv[1]) if len(sys.argv) > 1 else []
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    preloaded = _preload(names)
    _subreaper()
    initial = _listing()
    proto.write(json.dumps({"ready": True, "preloaded": preloaded}) + "\n")
    proto.flush()
    for line in sys.stdin:
        job = json.loads(line)
        _fresh_workspace()
        os.makedirs(JOB, mode=0o700)
        with open(JOB + "/stdin", "w", encoding="utf-8") as f:
            f.write(job["stdin"])
        cpu0 = _tree_cpu()
        pid = os.fork()
        if pid == 0:
            try:
                _child(job)
            finally:
                os._exit(121)
        status, timed_out, seconds, cpu, stall = _wait(pid, float(job["wall"]))
        _kill_others({1, os.getpid()})
        _reap_others()
        cpu = max(cpu, _tree_cpu() - cpu0)   # the whole tree's, what it left behind included
        with open(JOB + "/stdout", "rb") as f:
            out = f.read(int(job["stdout"]) + 1)
        with open(JOB + "/stderr", "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4 * int(job["stderr_tail"])))
            err = f.read().decode("utf-8", "replace")[-int(job["stderr_tail"]):]
        overflow = len(out) > int(job["stdout"])
        intact = _scrub(initial) and _drop_ipc()
        reply = {"retire": not intact, "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) and not timed_out else None,
                 "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) and not timed_out else None,
                 "timed_out": timed_out, "overflow": overflow, "seconds": seconds, "cpu": cpu,
                 "stall": stall,
                 "stdout": base64.b64encode(out[:int(job["stdout"])]).decode("ascii"), "stderr": err}
        proto.write(json.dumps(reply) + "\n")
        proto.flush()


if __name__ == "__main__":
    main()
