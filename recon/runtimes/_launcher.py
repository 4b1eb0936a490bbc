"""Stage two of starting a submission: run as ``python -I -S _launcher.py CONFIG_JSON``.

This file is executed as a fresh, single-threaded process by the runtimes (never
imported), so it can do what is unsafe in the grader's threads after fork: set rlimits,
enter a private mount namespace, drop to the sandbox user, and either ``execve`` the
target (``mode = "exec"``) or stay behind as its child-subreaper and kill every leftover
descendant when the target exits (``mode = "reap"``). Stdlib only, no site packages.

Config keys: argv, env, cwd, rlimits {name: [soft, hard]}, nproc_relative, uid, gid,
expose [[top, [path, ...]], ...] (mount a tmpfs on ``top`` and bind ``path``s back so an
unprivileged user can reach them), no_new_privs, pdeathsig, mode, status_fd.

Setup errors are written to ``status_fd`` (close-on-exec), so the grader can tell "the
sandbox could not start" from anything the submission prints or returns.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import sys

TYPE_CHECKING = False  # no `typing` import: this script starts on every run
if TYPE_CHECKING:
    from typing import Any, NoReturn

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18

_libc = None


def _c() -> Any:
    global _libc
    if _libc is None:
        import ctypes  # noqa: PLC0415 - only when a syscall wrapper is needed

        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(ret: int, what: str) -> None:
    if ret != 0:
        import ctypes  # noqa: PLC0415

        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _prctl(option: int, arg: int) -> None:
    _check(_c().prctl(option, arg, 0, 0, 0), f"prctl({option})")


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    def enc(s: str | None) -> bytes | None:
        return None if s is None else s.encode()

    _check(_c().mount(enc(src), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def expose(plan: list[list[Any]]) -> None:
    """Private mount namespace; for each inaccessible ``top`` a 0755 tmpfs with only the
    listed paths bound back (the interpreter under /root, for instance)."""
    _check(_c().unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    for top, paths in plan:
        fds = [(p, os.open(p, os.O_PATH | os.O_CLOEXEC)) for p in paths]
        _mount("tmpfs", top, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
        for p, fd in fds:
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(p, 0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(p), 0o755, exist_ok=True)
                open(p, "ab").close()
            _mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC, None)
            os.close(fd)


def uid_tasks(uid: int) -> int:
    """Tasks (threads) the real uid runs now: what RLIMIT_NPROC counts."""
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/status", "rb") as f:
                    s = f.read()
            except OSError:
                continue
            fields = {ln.split(b":")[0]: ln.split(b":", 1)[1].split() for ln in s.splitlines() if b":" in ln}
            if int(fields.get(b"Uid", [b"-1"])[0]) == uid:
                n += int(fields.get(b"Threads", [b"1"])[0])
    return n


def set_limits(cfg: dict[str, Any]) -> None:
    for name, (soft, hard) in cfg.get("rlimits", {}).items():
        res = getattr(resource, "RLIMIT_" + name.upper())
        if name == "nproc" and cfg.get("nproc_relative"):
            # Not root: RLIMIT_NPROC counts every task of our own uid, so the budget is on top.
            extra = uid_tasks(os.getuid())
            soft, hard = soft + extra, hard + extra
        resource.setrlimit(res, (soft, hard))


def drop(cfg: dict[str, Any]) -> None:
    uid, gid = cfg.get("uid"), cfg.get("gid")
    if uid is None or gid is None:
        return
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def children_of(me: int) -> set[int]:
    """Live (non-zombie) descendants of ``me``, from /proc."""
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    rest = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if rest[0] != b"Z":
                parent[int(d)] = int(rest[1])
    found, frontier = set(), {me}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier and p not in found}
        found |= frontier
    return found


def kill_tree() -> None:
    """SIGKILL every descendant until none is left (orphans re-parent to us: subreaper)."""
    import time  # noqa: PLC0415

    me, end = os.getpid(), time.monotonic() + 10
    while time.monotonic() < end:
        kids = children_of(me)
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass
        reaped_all = False
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                reaped_all = True
                break
            if pid == 0:
                break
        if reaped_all and not kids:
            return
        time.sleep(0.005)


class _Stop(Exception):
    pass


def _on_term(signum: int, frame: object) -> None:
    raise _Stop()


def reap(cfg: dict[str, Any], status_fd: int) -> NoReturn:
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGTERM, _on_term)
    pid = os.fork()
    if pid == 0:
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            start(cfg)
        except BaseException as exc:  # noqa: BLE001
            report(status_fd, exc)
        os._exit(127)
    os.close(status_fd)
    status = None
    try:
        while True:
            try:
                p, st = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if p == pid:
                status = st
                break
    except _Stop:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    kill_tree()
    code = os.waitstatus_to_exitcode(status) if status is not None else -signal.SIGKILL
    if code >= 0:
        os._exit(code)
    # Die of the same signal so the grader sees what a direct child would have shown.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    except (OSError, ValueError):
        pass
    os._exit(128 - code)


def start(cfg: dict[str, Any]) -> NoReturn:
    if cfg.get("pdeathsig"):
        ppid = os.getppid()
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != ppid:
            os._exit(137)
    os.chdir(cfg["cwd"])
    os.execve(cfg["argv"][0], cfg["argv"], cfg["env"])


def report(fd: int, exc: BaseException) -> None:
    try:
        os.write(fd, f"{type(exc).__name__}: {exc}".encode()[:2000])
    except OSError:
        pass


def main() -> NoReturn:
    cfg = json.loads(sys.argv[1])
    status_fd = cfg["status_fd"]
    os.set_inheritable(status_fd, False)
    try:
        os.umask(0o022)
        if cfg.get("expose"):
            expose(cfg["expose"])
        set_limits(cfg)
        drop(cfg)
        if cfg.get("no_new_privs"):
            _prctl(PR_SET_NO_NEW_PRIVS, 1)
        if cfg.get("mode") == "reap":
            reap(cfg, status_fd)
        else:
            start(cfg)
    except BaseException as exc:  # noqa: BLE001 - everything goes to the status pipe
        report(status_fd, exc)
    os._exit(127)


if __name__ == "__main__":
    main()
