"""Stage two of starting a submission: run as ``python -I -S _launcher.py CONFIG_JSON``.

This file is executed as a fresh, single-threaded process by the runtimes (never
imported by the grader), so it can do what is unsafe in the grader's threads after fork:
set rlimits, enter namespaces, drop to the sandbox user, and stay behind as the run's
supervisor. Stdlib only, no site packages.

Modes (``cfg["mode"]``):

``exec``
    set limits, drop privileges, ``execve`` the target. The caller supervises (bwrap,
    which builds its own namespaces, is started this way).
``reap``
    stay behind as the target's child-subreaper: orphans re-parent to us, and every
    leftover descendant is killed when the target exits (not root: no other uid exists).
``supervise``
    (root, no namespaces possible, e.g. an unprivileged container) like ``reap``, but the
    target runs as the sandbox uid and "leftover" means every process of that uid in our
    PID namespace, frozen with SIGSTOP before being killed so a fork storm cannot outrun
    the sweep; world-writable temp directories are then purged of the uid's files, and
    the System V IPC objects (shared memory, semaphores, message queues) of the uid removed.
``isolate``
    (root with CAP_SYS_ADMIN) new mount, PID, network, IPC and UTS namespaces, and a
    new root file system that holds only what the run needs (``view``): the system
    directories, the interpreter's prefix and the public app read-only, the run's own
    directory writable, fresh tmpfs on /tmp, /var/tmp and /dev/shm, a minimal /dev, a
    fresh /proc (the grader's processes and command lines are invisible), loopback only.
    Everything else on the machine -- the checkout recon runs from, its ``.git``,
    RECON_HOME, the original workspace, other checkpoints -- does not exist for the run.
    The target runs under a tiny init (PID 1 of the namespace, root) that reaps
    everything; when the target exits, init exits and the kernel kills whatever is left
    in the namespace. Nothing outside the namespace is ever signalled, so two graders (on
    the host and in a container) that happen to use the same uid cannot touch each
    other's runs.

``landlock`` (with ``supervise`` or ``reap``, where namespaces are refused): the same
allow-list enforced by the kernel's Landlock LSM on the target itself: it may read only
the listed paths, write only its run directory and the temp directories, open no TCP
socket and signal no process outside its own domain.

Config keys: argv, env, cwd, rlimits {name: [soft, hard]}, nproc_relative, uid, gid,
expose [[top, [path, ...]], ...] (mount a tmpfs on ``top`` and bind ``path``s back so an
unprivileged user can reach them), view {root, ro, rw, tmp, hide} (isolate), landlock
{ro, rw} (supervise, reap), net (isolate: unshare the network), no_new_privs (with it, a
seccomp filter refusing the keyring syscalls), deny_inet (that filter refuses IPv4 and IPv6
sockets too), pdeathsig, mode, status_fd.

Setup errors are written to ``status_fd`` (close-on-exec) as ``error: ...``, so the grader
can tell "the sandbox could not start" from anything the submission prints or returns.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time

TYPE_CHECKING = False  # no `typing` import: this script starts on every run
if TYPE_CHECKING:
    from typing import Any, NoReturn

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
#: pivot_root(2) by machine; the Landlock calls share one number on every architecture
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

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


def _unshare(flags: int, what: str) -> None:
    _check(_c().unshare(flags), f"unshare({what})")


def _bind_back(fds: list[tuple[str, int]]) -> None:
    """Recreate each path on the fresh mount and bind the original (held by fd) onto it."""
    for p, fd in fds:
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.makedirs(p, 0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(p), 0o755, exist_ok=True)
            open(p, "ab").close()
        _mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC, None)
        os.close(fd)


def _cover(top: str, keep: list[str], size: int, mode: str) -> None:
    """Mount an empty tmpfs on ``top`` and bind the ``keep`` paths under it back."""
    fds = [(p, os.open(p, os.O_PATH | os.O_CLOEXEC)) for p in keep if os.path.lexists(p)]
    _mount("tmpfs", top, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size={max(int(size), 4096)}")
    _bind_back(fds)


def expose(plan: list[list[Any]]) -> None:
    """For each inaccessible ``top`` a 0755 tmpfs with only the listed paths bound back
    (the interpreter under a 0700 /root, for instance). Needs a private mount namespace."""
    for top, paths in plan:
        _cover(top, list(paths), 1 << 20, "0755")


# --------------------------------------------------------------------------- the run's view


def _bind(src: str, dst: str, *, readonly: bool) -> None:
    """Bind ``src`` at ``dst`` (created as an empty directory or file first)."""
    if os.path.isdir(src):
        os.makedirs(dst, 0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), 0o755, exist_ok=True)
        open(dst, "ab").close()
    _mount(src, dst, None, MS_BIND | MS_REC, None)
    if readonly:
        _mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None)


def _pivot_root(new: str, old: str) -> None:
    nr = SYS_PIVOT_ROOT.get(os.uname().machine)
    if nr is None:
        raise OSError(0, f"pivot_root: unknown system call number on {os.uname().machine}")
    _check(_c().syscall(nr, new.encode(), old.encode()), "pivot_root")


def build_view(view: dict[str, Any]) -> None:
    """Make a new root holding only the run's view and switch to it (needs a private
    mount namespace). ``root``: an empty directory to build it in; ``tmp``: [[dir, size]]
    fresh tmpfs; ``ro`` / ``rw``: paths bound at their own place, read-only / writable
    (binds are applied after the tmpfs, parents before children, so a run directory
    under /tmp lands on the fresh /tmp); ``map``: [[path, place, read_only]] bound at
    another place (a warm session's /src, /inputs and /app entries); ``mqueue``: the
    message queues at /dev/mqueue (a warm session removes what a run left); ``hide``: paths
    inside the view covered by an empty tmpfs (recon's own package inside an interpreter
    prefix, oracle-only tools)."""
    root = view["root"]
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m")
    dev = root + "/dev"
    os.makedirs(dev, 0o755)
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID, "mode=0755,size=64k")
    for name in ("null", "zero", "full", "random", "urandom", "tty"):
        if os.path.exists("/dev/" + name):
            _bind("/dev/" + name, f"{dev}/{name}", readonly=False)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")
    os.makedirs(root + "/proc", 0o555)
    for d, size in view.get("tmp", []):
        os.makedirs(root + d, 0o755, exist_ok=True)
        _mount("tmpfs", root + d, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={max(int(size), 4096)}")
    binds = [(p, True) for p in view.get("ro", [])] + [(p, False) for p in view.get("rw", [])]
    for p, readonly in sorted(binds, key=lambda b: (b[0].count("/"), b[0])):
        if not os.path.lexists(p):
            continue
        if os.path.islink(p) and p.count("/") == 1:   # /bin -> usr/bin on a merged-/usr system
            if not os.path.lexists(root + p):
                os.symlink(os.readlink(p), root + p)
            continue
        _bind(os.path.realpath(p), root + p, readonly=readonly)
    for p, place, readonly in view.get("map", []):
        _bind(os.path.realpath(p), root + place, readonly=bool(readonly))
    if view.get("mqueue"):   # this IPC namespace's message queues, listed (and removable) there
        os.makedirs(dev + "/mqueue", 0o755, exist_ok=True)
        _mount("mqueue", dev + "/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    for h in view.get("hide", []):
        if os.path.isdir(root + h) and not os.path.islink(root + h):
            _mount("tmpfs", root + h, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "mode=0000,size=4096")
        elif os.path.isfile(root + h):
            _mount("/dev/null", root + h, None, MS_BIND, None)
    old = root + "/.old-root"
    os.mkdir(old, 0o700)
    _pivot_root(root, old)
    os.chdir("/")
    _check(_c().umount2(b"/.old-root", MNT_DETACH), "umount old root")
    os.rmdir("/.old-root")
    _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None)


# --------------------------------------------------------------------------- Landlock

LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1, 2, 4, 8
LL_FILE_RIGHTS_ABI1 = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE
LL_TRUNCATE, LL_IOCTL_DEV = 1 << 14, 1 << 15
LL_NET_ALL = 1 | 2                    # bind and connect TCP
LL_SCOPE_ALL = 1 | 2                  # abstract unix sockets, signals


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: not available)."""
    try:
        v = int(_c().syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, 1))
    except (OSError, AttributeError):  # pragma: no cover - no syscall() in this libc
        return 0
    return max(v, 0)


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1                 # ABI 1: execute .. make_sym
    if abi >= 2:
        rights |= 1 << 13                  # refer
    if abi >= 3:
        rights |= LL_TRUNCATE
    if abi >= 5:
        rights |= LL_IOCTL_DEV
    return rights


def landlock(rules: dict[str, Any]) -> None:
    """Restrict this process (and all it starts) to ``rules``: ``ro`` paths readable and
    executable, ``rw`` paths fully usable, nothing else of the file system; no TCP; no
    signals or abstract sockets outside the domain (where the kernel's ABI has them)."""
    import ctypes  # noqa: PLC0415
    import stat as _stat  # noqa: PLC0415
    import struct  # noqa: PLC0415

    abi = landlock_abi()
    if abi < 1:
        raise OSError(0, "landlock is not available in this kernel")
    fs = _handled_fs(abi)
    attr = struct.pack("=Q", fs)
    if abi >= 4:
        attr += struct.pack("=Q", LL_NET_ALL)
    if abi >= 6:
        attr += struct.pack("=Q", LL_SCOPE_ALL)
    buf = ctypes.create_string_buffer(attr, len(attr))
    rfd = int(_c().syscall(SYS_LANDLOCK_CREATE_RULESET, buf, len(attr), 0))
    if rfd < 0:
        _check(-1, "landlock_create_ruleset")
    file_rights = LL_FILE_RIGHTS_ABI1 | (fs & (LL_TRUNCATE | LL_IOCTL_DEV))
    read = LL_EXECUTE | LL_READ_FILE | LL_READ_DIR
    try:
        for paths, access in ((rules.get("ro", []), read), (rules.get("rw", []), fs)):
            for p in paths:
                try:
                    pfd = os.open(p, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # a path that does not exist grants nothing
                try:
                    allowed = access & fs
                    if not _stat.S_ISDIR(os.fstat(pfd).st_mode):
                        allowed &= file_rights
                    rule = ctypes.create_string_buffer(struct.pack("=Qi", allowed, pfd), 12)
                    _check(int(_c().syscall(SYS_LANDLOCK_ADD_RULE, rfd, 1, rule, 0)), f"landlock_add_rule {p}")
                finally:
                    os.close(pfd)
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        _check(int(_c().syscall(SYS_LANDLOCK_RESTRICT_SELF, rfd, 0)), "landlock_restrict_self")
    finally:
        os.close(rfd)


def loopback_up() -> None:
    import fcntl  # noqa: PLC0415
    import socket  # noqa: PLC0415
    import struct  # noqa: PLC0415

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        req = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s, SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP))
    finally:
        s.close()


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


# --------------------------------------------------------------------------- killing


def _pid_ns() -> int:
    return os.stat("/proc/self/ns/pid").st_ino


def _group_state(pid: int | str, state: bytes) -> bytes:
    """The state of a thread group whose leader is in ``state``: a leader that exited on
    its own (a raw exit of the main thread) is a zombie while its other threads run on,
    so a zombie leader speaks for its live threads: b"T" when all of them are stopped,
    b"R" while any is not, b"Z" when none is left."""
    if state not in (b"Z", b"X"):
        return state
    try:
        tids = [t for t in os.listdir(f"/proc/{pid}/task") if t != str(pid)]
    except OSError:
        return state
    states = []
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/stat", "rb") as f:
                states.append(f.read().rsplit(b")", 1)[1].split()[0])
        except (OSError, IndexError):
            continue
    live = [st for st in states if st not in (b"Z", b"X")]
    if not live:
        return state
    return b"T" if all(st in (b"T", b"t") for st in live) else b"R"


def uid_pids(uid: int, ns: int | None) -> dict[int, bytes]:
    """pid -> state of the live processes of real uid ``uid`` (only in PID namespace ``ns``);
    a zombie leader whose other threads still run is live (:func:`_group_state`)."""
    found = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/status", "rb") as f:
                s = f.read()
            if ns is not None and os.stat(f"/proc/{d}/ns/pid").st_ino != ns:
                continue
        except OSError:
            continue
        i = s.find(b"\nUid:")
        j = s.find(b"\nState:")
        if i < 0 or int(s[i + 5:].split(None, 1)[0]) != uid:
            continue
        state = _group_state(d, s[j + 7:].split(None, 1)[0] if j >= 0 else b"?")
        if state not in (b"Z", b"X"):
            found[int(d)] = state
    return found


def sweep_uid(uid: int, deadline: float = 10.0) -> bool:
    """Kill every process of ``uid`` in our PID namespace; True when none is left.

    Processes are first stopped (a stopped process cannot fork), until a scan finds
    only stopped ones, then killed: a fork storm bounded by RLIMIT_NPROC cannot outrun it.
    A process that never stops (one in uninterruptible sleep, such as a parent waiting in
    vfork for a child blocked before its exec, cannot fork either) would hold that back
    for ever: after ``STOP_PHASE`` seconds the stopped ones (also those stopped by a
    tracer) and the sleeping ones are killed each round while the others are stopped.
    """
    ns = _pid_ns()
    start = time.monotonic()
    end = start + deadline
    while time.monotonic() < end:
        procs = uid_pids(uid, ns)
        if not procs:
            return True
        running = any(st not in (b"T", b"t") for st in procs.values())
        late = time.monotonic() - start > STOP_PHASE
        for p, st in procs.items():
            stopped = st in (b"T", b"t")
            if not running or (late and (stopped or st == b"D")):
                sig = signal.SIGKILL
            elif not stopped:
                sig = signal.SIGSTOP
            else:
                continue
            try:
                os.kill(p, sig)
            except OSError:
                pass
        if not running or late:
            time.sleep(0.002)
    return not uid_pids(uid, ns)


STOP_PHASE = 0.5


def children_of(me: int) -> set[int]:
    """Live descendants of ``me``, from /proc (a zombie leader counts while its other
    threads run: a signal to its pid reaches them)."""
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    rest = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if _group_state(d, rest[0]) not in (b"Z", b"X"):
                parent[int(d)] = int(rest[1])
    found, frontier = set(), {me}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier and p not in found}
        found |= frontier
    return found


def reap_all(block: bool) -> None:
    """Collect every child that has exited (all of them when ``block``)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_tree() -> None:
    """SIGKILL every descendant until none is left (orphans re-parent to us: subreaper)."""
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


class _Moved(Exception):
    """A folder of the tree being removed was moved out of it meanwhile."""


def remove_tree(root: str | os.PathLike[str]) -> None:
    """Remove ``root`` and everything in it, whatever a submission made of it: folders it
    made unreadable (chmod 000) and trees nested deeper than any path may be long or the
    interpreter may recurse (it walks with one open folder at a time, down by name and
    back up by ``..``). A run still alive may move a folder out of the tree while we are in
    it, and ``..`` would then lead elsewhere (up to ``/``): every step up is checked
    against the folder we came down from, and on a mismatch the walk starts again from
    ``root`` (a bounded number of times). What cannot be removed is left, never raised."""
    import stat  # noqa: PLC0415

    root = os.fspath(root)
    try:
        if not stat.S_ISDIR(os.lstat(root).st_mode):
            os.unlink(root)
            return
    except OSError:
        return
    for _ in range(REMOVE_RESTARTS):
        try:
            _remove_below(root)
            break
        except _Moved:
            continue
        except OSError:
            break
    try:
        os.rmdir(root)
    except OSError:
        pass


REMOVE_RESTARTS = 20


def _identity(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _remove_below(root: str) -> None:
    """Everything in the folder ``root`` (see :func:`remove_tree`); raises ``_Moved``."""
    fd = _open_dir(root, None)
    path = [_identity(fd)]     # the folders we are in, from root
    names: list[str] = []      # the names we went down by
    todo = [_clear_files(fd)]
    try:
        while True:
            if todo[-1]:
                name = todo[-1].pop()
                try:
                    child = _open_dir(name, fd)
                except OSError:
                    continue
                os.close(fd)
                fd = child
                names.append(name)
                path.append(_identity(fd))
                todo.append(_clear_files(fd))
                continue
            todo.pop()
            if not names:
                return
            up = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = up
            path.pop()
            if _identity(fd) != path[-1]:
                raise _Moved()
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                pass
    finally:
        os.close(fd)


def _open_dir(name: str, dir_fd: int | None) -> int:
    """A folder opened for reading without following a link, opened up first if need be
    (through a handle on the entry itself, so a link swapped in meanwhile is never followed)."""
    import stat  # noqa: PLC0415

    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except PermissionError:
        pass
    handle = os.open(name, os.O_PATH | os.O_NOFOLLOW, dir_fd=dir_fd)
    try:
        st = os.fstat(handle)
        if not stat.S_ISDIR(st.st_mode):
            raise NotADirectoryError(name)
        os.chmod(f"/proc/self/fd/{handle}", 0o700)
        fd = os.open(name, flags, dir_fd=dir_fd)
    finally:
        os.close(handle)
    if _identity(fd) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise _Moved()
    return fd


def _clear_files(fd: int) -> list[str]:
    """Unlink everything in the open folder ``fd`` that is not a folder; return the folders."""
    try:
        os.fchmod(fd, 0o700)
    except OSError:
        pass
    dirs: list[str] = []
    try:
        with os.scandir(fd) as it:
            entries = list(it)
    except OSError:
        return dirs
    for e in entries:
        try:
            if e.is_dir(follow_symlinks=False):
                dirs.append(e.name)
            else:
                os.unlink(e.name, dir_fd=fd)
        except OSError:
            continue
    return dirs


def purge_ipc(uid: int) -> None:
    """Remove every System V shared memory segment, semaphore set and message queue that
    ``uid`` created or owns. Without an IPC namespace they outlive the run and are visible
    to the next: a later run (another program's, e.g. an earlier checkpoint's) could read
    what this one left there."""
    libc = _c()
    for kind, id_col, rm in (("shm", "shmid", lambda i: libc.shmctl(i, 0, None)),      # IPC_RMID = 0
                             ("sem", "semid", lambda i: libc.semctl(i, 0, 0)),
                             ("msg", "msqid", lambda i: libc.msgctl(i, 0, None))):
        try:
            with open("/proc/sysvipc/" + kind) as f:
                head = f.readline().split()
                rows = [line.split() for line in f]
        except OSError:
            continue
        try:
            at_id, at_uid, at_cuid = head.index(id_col), head.index("uid"), head.index("cuid")
        except ValueError:
            continue
        for row in rows:
            try:
                if int(row[at_uid]) == uid or int(row[at_cuid]) == uid:
                    rm(int(row[at_id]))
            except (IndexError, ValueError):
                continue


def purge_tmp(uid: int, dirs: list[str]) -> None:
    """Remove what ``uid`` left in ``dirs`` (the shared temp directories and the directories
    below them that anyone may write to; no namespaces to do better): its files, and its
    directories whole."""
    for top in dirs:
        try:
            names = os.listdir(top)
        except OSError:
            continue
        for n in names:
            p = os.path.join(top, n)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if st.st_uid == uid:
                remove_tree(p)


# --------------------------------------------------------------------------- modes


class _Stop(Exception):
    """The grader asked the supervisor to stop its run (SIGTERM: the run's time is up)."""


def _on_term(signum: int, frame: object) -> None:
    raise _Stop()


def _mirror(status: int | None) -> NoReturn:
    """Exit the way the target did, so the grader sees what a direct child would show."""
    code = os.waitstatus_to_exitcode(status) if status is not None else -signal.SIGKILL
    if code >= 0:
        os._exit(code)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    except (OSError, ValueError):
        pass
    os._exit(128 - code)


def _stall(pid: int) -> float:
    """Seconds the task ``pid`` (the target's main thread) spent runnable but waiting for a
    CPU: the run queue delay of ``/proc/PID/schedstat``, readable until the task is reaped."""
    try:
        with open(f"/proc/{pid}/schedstat", encoding="ascii") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def _wait_main(pid: int) -> tuple[int | None, float]:
    """Wait for ``pid`` (reaping other children on the way): its wait status (None when
    told to stop) and its run queue delay, read before it is reaped."""
    try:
        while True:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:
                return None, 0.0
            if info is None:
                continue
            stall = _stall(pid) if info.si_pid == pid else 0.0
            p, st = os.waitpid(info.si_pid, 0)
            if p == pid:
                return st, stall
    except _Stop:
        return None, 0.0


def measured(fd: int, stall: float) -> None:
    """Tell the grader, on the status pipe, how long the target waited for a CPU and the CPU
    time of the processes reaped so far (the target's tree): ``measured: STALL CPU``."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        os.write(fd, f"\nmeasured: {stall:.6f} {ru.ru_utime + ru.ru_stime:.6f}\n".encode())
    except OSError:
        pass   # nobody reads it (a warm session's starter closes its end)


def reap(cfg: dict[str, Any], status_fd: int) -> NoReturn:
    """Supervisor without privilege drop: kill the whole tree when the target exits."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGTERM, _on_term)
    pid = _spawn(cfg, status_fd, drop_privileges=False)
    status, stall = _wait_main(pid)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    kill_tree()
    if status is not None:
        measured(status_fd, stall)
    os.close(status_fd)
    _mirror(status)


def supervise(cfg: dict[str, Any], status_fd: int) -> NoReturn:
    """Root supervisor without namespaces: the target is the sandbox uid; afterwards every
    process of that uid in our PID namespace is stopped and killed, and the shared temp
    directories are purged of its files."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGTERM, _on_term)
    pid = _spawn(cfg, status_fd, drop_privileges=True)
    status, stall = _wait_main(pid)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sweep_uid(int(cfg["uid"]))
    kill_tree()
    reap_all(block=False)
    purge_tmp(int(cfg["uid"]), list(cfg.get("purge") or [d for d in ("/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(d)]))
    purge_ipc(int(cfg["uid"]))
    if status is not None:
        measured(status_fd, stall)
    os.close(status_fd)
    _mirror(status)


def isolate(cfg: dict[str, Any], status_fd: int) -> NoReturn:
    """Namespaces around the run (see the module docstring)."""
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    if cfg.get("net", True):
        flags |= CLONE_NEWNET
    _unshare(flags, "mount, pid, ipc, uts, net namespaces")
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    build_view(cfg["view"])
    if flags & CLONE_NEWNET:
        try:
            loopback_up()
        except OSError:
            pass  # loopback stays down: no network at all is still the contract
    r, w = os.pipe2(os.O_CLOEXEC)
    signal.signal(signal.SIGTERM, _on_term)
    init = os.fork()
    if init == 0:
        os.close(r)
        try:
            _init(cfg, status_fd, w)
        except BaseException as exc:  # noqa: BLE001
            report(status_fd, exc)
        os._exit(127)
    os.close(w)
    try:
        _, st = os.waitpid(init, 0)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except _Stop:
        # timeout: the grader asks us to stop; init's death takes the namespace with it
        try:
            os.kill(init, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(init, 0)
        os._exit(137)
    raw = b""
    while True:
        chunk = os.read(r, 64)
        if not chunk:
            break
        raw += chunk
    fields = raw.split()
    if len(fields) == 3:   # the target's status, its run queue delay, its tree's CPU time
        try:
            os.write(status_fd, b"\nmeasured: " + fields[1] + b" " + fields[2] + b"\n")
        except OSError:
            pass
    os.close(status_fd)
    _mirror(int(fields[0]) if fields else (st if os.WIFSIGNALED(st) else None))


def _end_namespace(deadline: float = 2.0) -> None:
    """(PID 1 of the run's namespace) Kill every other process in it and reap them, so that
    what the run left behind counts in the CPU time reported; gives up after ``deadline`` s
    (leaving init then still takes the rest with it)."""
    end = time.monotonic() + deadline
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > end:
                return
            time.sleep(0.002)


def _init(cfg: dict[str, Any], status_fd: int, result_w: int) -> NoReturn:
    """PID 1 of the run's namespace: mount its /proc, start the target, reap until it
    exits, kill and reap the rest, report the target's wait status and run queue delay and
    the CPU time of everything reaped, and leave."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    pid = _spawn(cfg, status_fd, drop_privileges=True, deathsig=False)
    os.close(status_fd)
    status, stall = _wait_main(pid)
    _end_namespace()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = f"{status if status is not None else 9} {stall:.6f} {ru.ru_utime + ru.ru_stime:.6f}"
    os.write(result_w, line.encode())
    os._exit(0)


#: seccomp: the architecture's audit number and the syscalls refused to every run
#: (add_key, request_key, keyctl: kernel keyrings are no namespace's, so a key outlives
#: its run and any uid may be let read it), and socket(2)
#: machine -> (audit arch, calls refused with ENOSYS, socket(2)): the keyring calls (add_key,
#: request_key, keyctl), then io_uring_setup, _enter and _register (the same numbers on both),
#: whose requests (a socket among them) never pass through the filter
SECCOMP_ARCH = {"x86_64": (0xC000003E, (248, 249, 250, 425, 426, 427), 41),
                "aarch64": (0xC00000B7, (217, 218, 219, 425, 426, 427), 198),
                "arm64": (0xC00000B7, (217, 218, 219, 425, 426, 427), 198)}
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
AF_INET, AF_INET6 = 2, 10


def seccomp(deny_inet: bool) -> None:
    """Refuse the keyring and io_uring syscalls (ENOSYS) and, with ``deny_inet`` (no network namespace
    of its own: Landlock stops TCP, not UDP), IPv4 and IPv6 sockets (EAFNOSUPPORT). Any
    other ABI on the machine (i386 or x32 calls on x86_64) is refused whole. Needs
    no_new_privs; on an architecture not listed, nothing is filtered."""
    import ctypes  # noqa: PLC0415
    import errno  # noqa: PLC0415
    import struct  # noqa: PLC0415

    known = SECCOMP_ARCH.get(os.uname().machine)
    if known is None:
        return
    arch, refused_calls, socket_call = known
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    # (code, jump-if-true label, jump-if-false label, k): labels resolved to offsets below
    prog: list[tuple[int, str | None, str | None, int]] = [
        (ld, None, None, 4), (jeq, None, "deny", arch),             # seccomp_data.arch
        (ld, None, None, 0), (jge, "deny", None, 0x40000000),      # .nr; x32 calls carry this bit
        *[(jeq, "nosys", None, nr) for nr in refused_calls],
    ]
    if deny_inet:
        prog += [(jeq, None, "allow", socket_call), (ld, None, None, 16),   # .args[0], its low half
                 (jeq, "noinet", None, AF_INET), (jeq, "noinet", None, AF_INET6)]
    labels = {"allow": len(prog), "nosys": len(prog) + 1, "deny": len(prog) + 2, "noinet": len(prog) + 3}
    prog += [(ret, None, None, RET_ALLOW), (ret, None, None, RET_ERRNO | errno.ENOSYS),
             (ret, None, None, RET_ERRNO | errno.EPERM), (ret, None, None, RET_ERRNO | errno.EAFNOSUPPORT)]
    raw = b"".join(struct.pack("=HBBI", code, labels[t] - i - 1 if t else 0, labels[f] - i - 1 if f else 0, k)
                   for i, (code, t, f, k) in enumerate(prog))
    buf = ctypes.create_string_buffer(raw, len(raw))
    fprog = struct.pack("@HP", len(prog), ctypes.addressof(buf))   # struct sock_fprog
    fbuf = ctypes.create_string_buffer(fprog, len(fprog))
    ul = ctypes.c_ulong
    _check(_c().prctl(PR_SET_SECCOMP, ul(SECCOMP_MODE_FILTER), ul(ctypes.addressof(fbuf)), ul(0), ul(0)),
           "seccomp filter")


def _spawn(cfg: dict[str, Any], status_fd: int, *, drop_privileges: bool, deathsig: bool = True) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            set_limits(cfg)
            if drop_privileges:
                drop(cfg)
            if cfg.get("no_new_privs"):
                _prctl(PR_SET_NO_NEW_PRIVS, 1)
                seccomp(bool(cfg.get("deny_inet")))
            if cfg.get("landlock"):
                landlock(cfg["landlock"])
            start(cfg, deathsig=deathsig)
        except BaseException as exc:  # noqa: BLE001
            report(status_fd, exc)
        os._exit(127)
    return pid


def start(cfg: dict[str, Any], *, deathsig: bool = True) -> NoReturn:
    if cfg.get("pdeathsig") and deathsig:
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
    mode = cfg.get("mode", "exec")
    try:
        os.umask(0o022)
        if mode == "isolate":
            isolate(cfg, status_fd)
        if cfg.get("expose"):
            _unshare(CLONE_NEWNS, "mount namespace")
            _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
            expose(cfg["expose"])
        if mode == "reap":
            reap(cfg, status_fd)
        if mode == "supervise":
            supervise(cfg, status_fd)
        set_limits(cfg)
        drop(cfg)
        if cfg.get("no_new_privs"):
            _prctl(PR_SET_NO_NEW_PRIVS, 1)
            seccomp(bool(cfg.get("deny_inet")))
        start(cfg)
    except BaseException as exc:  # noqa: BLE001 - everything goes to the status pipe
        report(status_fd, exc)
    os._exit(127)


if __name__ == "__main__":
    main()
