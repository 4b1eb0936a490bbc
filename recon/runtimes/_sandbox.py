"""Private helpers shared by the local and bwrap runtimes.

- :class:`SlotPool`: one unprivileged numeric uid per concurrent run (root only), locked
  with ``flock`` so that two graders on one machine never share a uid; after a run every
  process of that uid is killed, whatever it did to escape (setsid, double fork...).
- :func:`prepare_run`: the private run directory (workspace copy, inputs, home, tmp).
- :func:`launch` + :func:`supervise`: start the launcher, feed stdin from a file, read
  stdout up to the cap and the stderr tail, enforce the wall clock, kill, reap.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import grp
import importlib.metadata
import importlib.util
import json
import os
import pwd
import secrets
import selectors
import shutil
import signal
import site
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeAlias

from ..canonjson import dumps_compact
from ..errors import RuntimeUnavailable
from ..oracle import ENTRY_POINT_GROUP
from . import _launcher
from .base import Limits, RunResult
from .snapshot import snapshot_workspace

LAUNCHER = str(Path(__file__).with_name("_launcher.py"))
#: the system directories every run may read (a run's view adds the interpreter and the app)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
UID_BASE = 61000
MAX_SLOTS = 4000            # uids 61000..64999: inside the 65536 uids a user-namespaced container maps
IS_ROOT = os.geteuid() == 0


# --------------------------------------------------------------------------- uids / kill


def uid_processes(uid: int) -> list[int]:
    """Processes (live or zombie, any PID namespace visible from here) whose real uid is ``uid``."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/status", "rb") as f:
                s = f.read()
        except OSError:
            continue
        i = s.find(b"\nUid:")
        if i >= 0 and int(s[i + 5:].split(None, 1)[0]) == uid:
            found.append(int(d))
    return found


def kill_uid(uid: int, *, deadline: float = 10.0) -> bool:
    """Stop, then kill, every process of ``uid`` in the grader's own PID namespace.

    Processes of the same uid in other PID namespaces (another grader's container, or a
    run of ours isolated in its own namespace) are never touched: a uid is only ours
    inside our namespace. True when none of ours is left.
    """
    return _launcher.sweep_uid(uid, deadline)


class SlotPool:
    """Numeric uids UID_BASE + slot, one per concurrent run, exclusive across processes."""

    def __init__(self) -> None:
        self._dir = Path(tempfile.gettempdir()) / f"recon-slots-{os.geteuid()}"
        self._lock = threading.Lock()

    def _lockdir(self) -> Path:
        d = self._dir
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            pass
        st = d.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise RuntimeUnavailable(f"{d} is not a private directory of this user",
                                     hint=f"remove {d} and retry")
        return d

    def acquire(self) -> tuple[int, int]:
        """(uid, lock fd). The uid has no passwd/group entry and owns no process we can see.

        Slots are locked with ``flock`` in a directory private to this machine's root, but a
        grader in a container (or on its host) has its own lock directory and shares the
        kernel's uids: the scan starts at a random slot, and a uid that still owns a
        process — a leftover of ours (killed first) or anybody else's — is skipped, so a
        fork storm that outlived its run, or a stranger's run, never shares a uid with us.
        """
        with self._lock:
            d = self._lockdir()
            start = secrets.randbelow(MAX_SLOTS)
            for k in range(MAX_SLOTS):
                uid = UID_BASE + (start + k) % MAX_SLOTS
                if _name_exists(uid):
                    continue
                fd = os.open(d / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                if uid_processes(uid):
                    kill_uid(uid, deadline=2.0)  # leftovers of a grader of ours that crashed mid-run
                    if uid_processes(uid):  # someone else's, or zombies nobody reaped yet
                        os.close(fd)
                        continue
                return uid, fd
        raise RuntimeUnavailable(f"all {MAX_SLOTS} sandbox uids are in use", hint="run fewer graders at once")

    @staticmethod
    def release(fd: int) -> None:
        os.close(fd)  # closing drops the flock

    @contextlib.contextmanager
    def _held_if_idle(self, uid: int) -> Any:
        """Hold ``uid``'s slot while the block runs when no run holds it (yields True), else
        yield False. Our own runs hold their slots, so they count as busy here too; so does a
        uid with a process left (a grader with another lock folder, another TMPDIR, may run
        on it now)."""
        try:
            fd = os.open(self._lockdir() / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                         0o600)
        except OSError:
            yield False
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False
                return
            yield not uid_processes(uid)
        finally:
            os.close(fd)

    def idle(self, uid: int) -> bool:
        """Whether ``uid`` is a sandbox uid no run holds now (no lock held, no process)."""
        if not is_slot_uid(uid):
            return False
        with self._held_if_idle(uid) as idle:
            return bool(idle)

    def purge_idle(self, dirs: list[str]) -> None:
        """Remove, from the top of ``dirs`` (the shared temp directories), every entry whose
        owner is a sandbox uid no run holds. A run's own files went with it (the launcher
        purges its uid), so what is left there was put back by another run: a file of a
        finished run hard-linked or moved back to the top after that run's purge carries
        state to later runs unless it goes too. Each uid is held while its entries go, so a
        run that starts on it meanwhile waits for nothing of its own to be removed."""
        found: dict[int, list[str]] = {}
        for top in dirs:
            try:
                with os.scandir(top) as it:
                    for e in it:
                        try:
                            uid = e.stat(follow_symlinks=False).st_uid
                        except OSError:
                            continue
                        if is_slot_uid(uid):
                            found.setdefault(uid, []).append(e.path)
            except OSError:
                continue
        for uid, paths in found.items():
            with self._held_if_idle(uid) as idle:
                if idle:
                    for path in paths:
                        remove_tree(path)


def is_slot_uid(uid: int) -> bool:
    return UID_BASE <= uid < UID_BASE + MAX_SLOTS


def _name_exists(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        pass
    try:
        grp.getgrgid(uid)
        return True
    except KeyError:
        return False


# --------------------------------------------------------------------------- interpreter paths


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def interpreter_paths() -> list[str]:
    """The directories the interpreter and its installed packages live in (minimal set)."""
    cands = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable)), os.path.dirname(os.path.abspath(sys.executable))}
    try:
        cands.update(site.getsitepackages())
    except AttributeError:  # pragma: no cover - old virtualenv
        pass
    real = sorted({os.path.realpath(p) for p in cands if p and os.path.isdir(p)} |
                  {os.path.abspath(p) for p in cands if p and os.path.isdir(p)})
    out: list[str] = []
    for p in real:  # drop paths inside another one
        if not any(_under(p, q) for q in out):
            out.append(p)
    return out


_concealed_lock = threading.Lock()
_concealed_cache: list[str] | None = None


def concealed_sources() -> list[str]:
    """recon's own package, the built-in oracles and every oracle plugin package: never
    visible to a run, even where they lie inside the interpreter's prefix (cached)."""
    global _concealed_cache
    with _concealed_lock:
        if _concealed_cache is None:
            paths = {os.path.realpath(Path(__file__).resolve().parents[1])}
            for name in ("recon.artifacts",):
                try:  # editable installs map recon.artifacts (the built-in oracles) elsewhere
                    spec = importlib.util.find_spec(name)
                except (ImportError, ValueError):  # pragma: no cover - always shipped
                    spec = None
                if spec is not None and spec.submodule_search_locations:
                    paths.update(os.path.realpath(p) for p in spec.submodule_search_locations)
            try:
                for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
                    top = ep.value.split(":")[0].split(".")[0]
                    try:
                        spec = importlib.util.find_spec(top)
                    except (ImportError, ValueError):
                        spec = None
                    if spec is None:
                        continue
                    if spec.submodule_search_locations:
                        paths.update(os.path.realpath(p) for p in spec.submodule_search_locations)
                    elif spec.origin and os.path.isfile(spec.origin):
                        paths.add(os.path.realpath(spec.origin))
            except Exception:  # noqa: BLE001 - best effort: recon itself is always concealed
                pass
            _concealed_cache = sorted(paths)
        return _concealed_cache


def allow_list(roots: list[str], concealed: list[str]) -> list[str]:
    """``roots`` with every path in ``concealed`` cut out: a root holding a concealed path
    is replaced by its entries (recursively toward the concealed path), so an allow-list
    that cannot subtract (Landlock) still leaves the concealed paths out."""
    out: list[str] = []

    def add(path: str) -> None:
        if any(_under(path, c) for c in concealed):
            return
        if not any(_under(c, path) for c in concealed) or not os.path.isdir(path) or os.path.islink(path):
            out.append(path)
            return
        try:
            entries = sorted(os.listdir(path))
        except OSError:
            return
        for e in entries:
            add(os.path.join(path, e))

    for r in roots:
        add(os.path.realpath(r) if not os.path.islink(r) else r)
    return out


def _other_can_traverse(st: os.stat_result) -> bool:
    return bool(st.st_mode & 0o001)


def shared_writable_dirs(roots: list[str], *, budget: int = 500_000) -> list[str]:
    """``roots`` and every directory below them that any user may write to: the only
    places, besides directories it creates itself, where a sandbox uid can leave a file.
    Directories others cannot traverse are not entered (nothing below them is reachable).
    Scanned once per runtime, so each run's clean-up lists a handful of directories instead
    of walking trees such as a virtual environment kept in /tmp."""
    out: list[str] = []
    seen = 0
    for top in roots:
        if not os.path.isdir(top) or os.path.islink(top):
            continue
        out.append(top)
        for root, dnames, _ in os.walk(top, topdown=True, followlinks=False):
            keep = []
            for n in dnames:
                seen += 1
                p = os.path.join(root, n)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if not _other_can_traverse(st):
                    continue
                if st.st_mode & 0o002:
                    out.append(p)
                keep.append(n)
            dnames[:] = keep if seen < budget else []
    return out


def exposed_under(path: str, roots: tuple[str, ...]) -> bool:
    """Is ``path`` below one of ``roots`` and readable by any user through them (every
    directory on the way traversable by others)?"""
    for root in roots:
        if not _under(path, root) or path == root:
            continue
        cur = root
        for part in Path(os.path.relpath(path, root)).parts:
            cur = os.path.join(cur, part)
            try:
                st = os.lstat(cur)
            except OSError:
                return False
            if stat.S_ISDIR(st.st_mode) and not _other_can_traverse(st):
                return False
        return True
    return False


def expose_plan(paths: list[str]) -> list[list[Any]]:
    """For paths an unprivileged user cannot reach: [[top, [paths under top]], ...] where
    ``top`` is the outermost directory on the way that others may not traverse."""
    plan: dict[str, list[str]] = {}
    for p in paths:
        parts = Path(p).parts
        cur = "/"
        for part in parts[1:-1] if not os.path.isdir(p) else parts[1:]:
            cur = os.path.join(cur, part)
            try:
                st = os.stat(cur)
            except OSError:
                break
            if not _other_can_traverse(st) and cur != p:
                plan.setdefault(cur, []).append(p)
                break
    return [[top, sorted(set(ps))] for top, ps in sorted(plan.items())]


# --------------------------------------------------------------------------- run directory


@dataclass
class RunDir:
    root: Path
    app: Path            # <root>/app: public app entries (symlinks, local) + workspace copy
    workspace: Path      # <root>/app/workspace: cwd of the submission
    inputs: Path         # <root>/inputs
    home: Path
    tmp: Path
    stdin: Path          # canonical scenario JSON, opened by the grader as stdin
    input_names: dict[str, str] = field(default_factory=dict)  # name -> file name in inputs/
    rejected: str | None = None  # why the workspace could not be copied (over a cap)


def _copy_tree(src: Path, dst: Path) -> None:
    """Copy a scenario's input directory (written by the oracle) without following symlinks."""
    dst.mkdir(mode=0o755)
    with os.scandir(src) as it:
        for e in it:
            s, d = Path(e.path), dst / e.name
            try:
                if e.is_symlink():
                    os.symlink(os.readlink(s), d)
                elif e.is_dir(follow_symlinks=False):
                    _copy_tree(s, d)
                elif e.is_file(follow_symlinks=False):
                    shutil.copyfile(s, d, follow_symlinks=False)
                    os.chmod(d, stat.S_IMODE(e.stat(follow_symlinks=False).st_mode) & 0o755 | 0o600)
            except OSError:
                continue  # unreadable entries are simply not part of the copy


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            os.chown(os.path.join(dirpath, n), uid, gid, follow_symlinks=False)


def prepare_run(workspace: Path, scenario: dict[str, Any], inputs: dict[str, Path], *,
                inputs_visible_at: str | None, app_dir: Path | None, link_app: bool,
                owner: tuple[int, int] | None) -> RunDir:
    """Fresh private directory for one run; scenario inputs rewritten to visible paths."""
    root = Path(tempfile.mkdtemp(prefix="recon-run-"))
    try:
        rd = RunDir(root=root, app=root / "app", workspace=root / "app" / "workspace", inputs=root / "inputs",
                    home=root / "home", tmp=root / "tmp", stdin=root / "scenario.json")
        rd.app.mkdir()
        # The race-free, capped copier: never follows a link the submission planted, even
        # when a directory is swapped for a link while the copy runs.
        snap = snapshot_workspace(Path(workspace), rd.workspace)
        os.chmod(rd.workspace, 0o755)
        if snap.exists and not snap.ok:
            rd.rejected = snap.reason
        if link_app and app_dir is not None and Path(app_dir).is_dir():
            for e in sorted(os.listdir(app_dir)):
                if e != "workspace":
                    os.symlink(os.path.join(os.path.abspath(app_dir), e), rd.app / e)
        rd.inputs.mkdir()
        rd.input_names, rewritten = place_inputs(inputs, rd.inputs, inputs_visible_at or str(rd.inputs))
        doc = dict(scenario)
        if inputs or "inputs" in doc:
            doc["inputs"] = rewritten
        rd.stdin.write_bytes(dumps_compact(doc).encode("utf-8"))
        os.chmod(rd.stdin, 0o600)
        rd.home.mkdir(mode=0o700)
        rd.tmp.mkdir(mode=0o700)
        if owner is not None:
            os.chmod(root, 0o700)
            _chown_tree(root, *owner)
            os.chown(rd.stdin, 0, 0)  # read through the inherited fd only
        return rd
    except BaseException:
        remove_tree(root)
        raise


def place_inputs(inputs: dict[str, Path], dest: Path, visible_root: str) -> tuple[dict[str, str], dict[str, str]]:
    """Copy a scenario's input files (name -> real path) into ``dest`` (files read-only);
    returns (name -> file name in ``dest``, name -> path a run sees under ``visible_root``)."""
    used: set[str] = set()
    names: dict[str, str] = {}
    rewritten: dict[str, str] = {}
    for name, real in sorted(inputs.items()):
        base = os.path.basename(str(real)) or str(name)
        fname = base if base not in used and base not in (".", "..") else f"{len(used)}_{base}"
        used.add(fname)
        if os.path.isdir(real):
            _copy_tree(Path(real), dest / fname)
        else:
            shutil.copyfile(real, dest / fname)
            os.chmod(dest / fname, 0o444)
        names[str(name)] = fname
        rewritten[str(name)] = f"{visible_root}/{fname}"
    return names, rewritten


remove_tree = _launcher.remove_tree


# --------------------------------------------------------------------------- launch + supervise


def rlimits(limits: Limits, *, nproc_extra: int = 0) -> dict[str, list[int]]:
    return {
        "cpu": [int(limits.cpu), int(limits.cpu) + 1],   # SIGXCPU, then SIGKILL a second later
        "as": [int(limits.memory), int(limits.memory)],
        "fsize": [int(limits.fsize), int(limits.fsize)],
        "nproc": [int(limits.nproc) + nproc_extra, int(limits.nproc) + nproc_extra],
        "core": [0, 0],
        # no POSIX message queue can be created: outside an IPC namespace one would outlive
        # the run where nothing can list it (/dev/mqueue is not always mounted)
        "msgqueue": [0, 0],
    }


@dataclass
class Started:
    proc: subprocess.Popen[bytes]
    status_r: int
    started: float


def launch(cfg: dict[str, Any], stdin: Path | int, *, extra_fds: tuple[int, ...] = ()) -> Started:
    """Start ``python -I -S _launcher.py CONFIG`` in a new session, its stdin a file's
    path or an open descriptor (a pipe the caller writes to)."""
    status_r, status_w = os.pipe2(os.O_CLOEXEC)
    cfg = dict(cfg, status_fd=status_w)
    t0 = time.monotonic()
    try:
        with (open(stdin, "rb") if not isinstance(stdin, int) else contextlib.nullcontext(stdin)) as fd:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", LAUNCHER, json.dumps(cfg)],
                stdin=fd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(status_w, *extra_fds), start_new_session=True, env={}, cwd="/")
    except BaseException:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)
    return Started(proc, status_r, t0)


_spawner_lock = threading.Lock()
_spawner: Any = None


def launch_lasting(cfg: dict[str, Any], stdin: Path | int, *, extra_fds: tuple[int, ...] = ()) -> Started:
    """:func:`launch` from a thread that lives as long as this process. The launcher asks
    the kernel to kill it when its parent dies (``pdeathsig``), and for the kernel the
    parent is the *thread* that started it: a warm session started by a worker thread
    would die when that worker's pool shuts down, while the session is meant to serve
    later runs of other threads."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - start-up: only sessions need it

            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recon-spawner")
    return _spawner.submit(launch, cfg, stdin, extra_fds=extra_fds).result()


def _forget_spawner() -> None:
    """In a forked child the spawner's thread does not exist: start a new one when needed
    (``recon build --all`` forks a process per task, each revealing in warm sessions)."""
    global _spawner, _spawner_lock
    _spawner, _spawner_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_spawner)


def _exited(pid: int) -> bool:
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


#: how often a run's folder is measured, and how many entries and levels it may hold
WATCH_EVERY = 0.25
WATCH_MAX_ENTRIES = 100_000
WATCH_MAX_DEPTH = 128       # levels of folders below a watched one (a workspace may hold 64)
#: free space a run may never take a file system below (bytes, and a share of its size):
#: a file unlinked while still open is on no folder's list, yet fills the disk
DISK_RESERVE = (1 << 30, 0.02)


def shmem_bytes() -> int:
    """Shared memory in use on the machine (/proc/meminfo's Shmem: tmpfs files, memfd,
    System V segments, every tenant's); 0 where it cannot be read."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"Shmem:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def disk_free(path: str) -> tuple[int, int]:
    """(bytes free to an unprivileged user, bytes in all) of the file system holding ``path``."""
    try:
        v = os.statvfs(path)
    except OSError:
        return 0, 0
    return v.f_bavail * v.f_frsize, v.f_blocks * v.f_frsize


#: whose entries at the top of a watched folder count: everyone's (None), one uid's, or the
#: uids a predicate accepts
Owner: TypeAlias = "int | Callable[[int], bool] | None"


def tree_usage(places: list[tuple[str, Owner]], max_entries: int = WATCH_MAX_ENTRIES) -> tuple[int, int, int]:
    """(bytes allocated, entries, deepest level) under each ``(folder, owner)`` of
    ``places``, links not followed: all of the folder when ``owner`` is None, else only the
    entries at its top that ``owner`` owns (a uid, or a predicate on the entry's uid: a
    shared temp directory). The walk stops past ``max_entries``
    entries or ``WATCH_MAX_DEPTH`` levels; a path too long to open counts as too deep. A
    folder the run made unreadable (to hide what is in it) is opened up first."""
    total = entries = deepest = 0
    stack: list[tuple[str, Owner, int]] = [(str(d), owner, 0) for d, owner in places]
    while stack and entries <= max_entries:
        top, owner, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > WATCH_MAX_DEPTH:
            break
        if owner is None and not os.access(top, os.R_OK | os.X_OK):
            try:
                os.chmod(top, 0o700)
            except OSError:
                pass
        try:
            it = os.scandir(top)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:   # a path past the system's limit hides what is below
                return total, entries, WATCH_MAX_DEPTH + 1
            continue
        with it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError as exc:
                    if exc.errno == errno.ENAMETOOLONG:
                        return total, entries, WATCH_MAX_DEPTH + 1
                    continue
                if owner is not None and not (owner(st.st_uid) if callable(owner) else st.st_uid == owner):
                    continue
                entries += 1
                total += st.st_blocks * 512
                if stat.S_ISDIR(st.st_mode):
                    stack.append((e.path, None, depth + 1))
    return total, entries, deepest


def held_bytes(root_pid: int) -> tuple[int, int]:
    """Bytes that ``root_pid`` and its descendants hold open in files no folder lists:
    (memory files (memfd), unlinked files on disk). No rlimit counts the first (RLIMIT_AS
    only while mapped), and no walk of the run's folders sees either."""
    seen: set[tuple[int, int]] = set()
    memfd = unlinked = 0
    for pid in {root_pid} | _launcher.children_of(root_pid):
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"{fd_dir}/{fd}")
                is_memfd = target.startswith("/memfd:")
                if not (is_memfd or target.endswith(" (deleted)")):
                    continue
                st = os.stat(f"{fd_dir}/{fd}")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen or not stat.S_ISREG(st.st_mode):
                continue
            seen.add((st.st_dev, st.st_ino))
            if is_memfd:
                memfd += st.st_blocks * 512
            else:
                unlinked += st.st_blocks * 512
    return memfd, unlinked


class Watch:
    """What a run may not do on the host beyond its rlimits, measured every ``WATCH_EVERY``
    s while it runs (no file system quota or memory cgroup is at hand to do it):

    - write more than ``limits.scratch`` bytes, make more than ``WATCH_MAX_ENTRIES`` files,
      or nest folders deeper than ``WATCH_MAX_DEPTH`` (where paths grow too long to
      measure) in ``places``: its run folder, and in a shared temp directory what its uid
      made (see :func:`tree_usage`);
    - hold more than ``limits.scratch`` in files it unlinked while holding them open, once a
      watched file system is down to its reserve (``DISK_RESERVE``) after losing more than
      that during the run;
    - hold more than ``limits.memory`` in memory files (memfd), once the machine's shared
      memory grew by more than that.

    The machine-wide measures are only cheap triggers: what the run's own processes hold
    open (:func:`held_bytes`) decides, so no other tenant of the machine can get a run killed.
    """

    def __init__(self, places: list[tuple[str, Owner]], limits: Limits, root_pid: int) -> None:
        self.places, self.limits, self.root_pid = places, limits, root_pid
        self.base_bytes, self.base_entries, _ = tree_usage(places)
        self.free0 = {d: disk_free(d)[0] for d, _ in places}
        self.shmem0 = shmem_bytes()
        self.due = time.monotonic() + WATCH_EVERY

    def check(self) -> str | None:
        """Why the run must be killed now, or None (and when to look again: ``due``)."""
        lim = self.limits
        self.due = time.monotonic() + WATCH_EVERY
        used, entries, deepest = tree_usage(self.places)
        if deepest > WATCH_MAX_DEPTH:
            return f"nested folders deeper than can be measured (over {WATCH_MAX_DEPTH} levels, or paths past the system's limit)"
        if used - self.base_bytes > lim.scratch:
            return f"wrote more than {lim.scratch >> 20} MiB to disk"
        if entries - self.base_entries > WATCH_MAX_ENTRIES:
            return f"made more than {WATCH_MAX_ENTRIES} files"
        shmem_grew = bool(self.shmem0) and shmem_bytes() - self.shmem0 > lim.memory
        low = [d for d, before in self.free0.items() if _low_on_space(d, before, lim.scratch)]
        if shmem_grew or low:
            memfd, unlinked = held_bytes(self.root_pid)
            if shmem_grew and memfd > lim.memory:
                return f"held more than {lim.memory >> 20} MiB in memory files (memfd)"
            if low and unlinked > lim.scratch:
                return (f"held more than {lim.scratch >> 20} MiB in unlinked files while the disk holding {low[0]} "
                        "ran low")
        return None


def _low_on_space(path: str, before: int, lost: int) -> bool:
    """Whether the file system holding ``path`` lost more than ``lost`` bytes of the
    ``before`` it had free and is down to its reserve."""
    free, size = disk_free(path)
    return bool(size) and before - free > lost and free < max(DISK_RESERVE[0], DISK_RESERVE[1] * size)


def supervise(st: Started, limits: Limits, *, on_exit: Callable[[], None],
              on_abort: Callable[[], None], extra_read: int | None = None,
              watch: list[tuple[str, Owner]] | None = None) -> tuple[RunResult, str, bytes]:
    """Read output under the caps until the run's main process exits or the wall clock
    runs out; ``on_exit`` / ``on_abort`` kill what is left (called while the main process
    is a zombie, so its pid and process group cannot have been reused).

    ``watch``: the places on the host's disks the run writes to, watched by :class:`Watch`.

    Returns (result, setup error text from the status pipe, bytes read from ``extra_read``).
    """
    proc = st.proc
    if proc.stdout is None or proc.stderr is None:  # pragma: no cover - launch() always pipes both
        raise RuntimeError("sandboxed process started without pipes")
    out = bytearray()
    err = bytearray()
    extra = bytearray()
    err_keep = max(4 * int(limits.stderr_tail), 4096)
    timed_out = overflow = False
    deadline = st.started + float(limits.wall)
    sel = selectors.DefaultSelector()
    pidfd: int | None
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None
    fds = {proc.stdout.fileno(): "out", proc.stderr.fileno(): "err"}
    if extra_read is not None:
        fds[extra_read] = "extra"
    for fd in fds:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    if pidfd is not None:
        sel.register(pidfd, selectors.EVENT_READ)
    exited = False
    drain_until: float | None = None
    disk_overflow: str | None = None
    watcher = Watch(watch, limits, proc.pid) if watch is not None else None
    try:
        while True:
            now = time.monotonic()
            if not exited and now >= deadline:
                timed_out = True
                break
            if watcher is not None and not exited and now >= watcher.due:
                disk_overflow = watcher.check()
                if disk_overflow:
                    break
            if exited and (drain_until is None or now >= drain_until or len(sel.get_map()) == 0):
                break
            wait = (drain_until if exited and drain_until else deadline) - now
            if pidfd is None and not exited:
                wait = min(wait, 0.02)
            if watcher is not None and not exited:
                wait = min(wait, max(0.0, watcher.due - now))
            events = sel.select(max(0.0, wait))
            if pidfd is None and not exited and _exited(proc.pid):
                events = events + [(None, 0)]  # type: ignore[list-item]
            for key, _ in events:
                fd = key.fd if key is not None else None
                if fd is None or fd == pidfd:
                    if not exited:
                        exited = True
                        if pidfd is not None:
                            sel.unregister(pidfd)
                        on_exit()  # kill leftovers so the pipes reach EOF
                        drain_until = time.monotonic() + 2.0
                    continue
                try:
                    data = os.read(fd, 1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(fd)
                    continue
                kind = fds[fd]
                if kind == "out":
                    out += data
                    if len(out) > limits.stdout:
                        overflow = True
                        del out[limits.stdout:]
                elif kind == "err":
                    err += data
                    if len(err) > 2 * err_keep:
                        del err[:-err_keep]
                else:
                    extra += data
            if overflow:
                break
    finally:
        sel.close()
    if (timed_out or overflow or disk_overflow) and not exited:
        on_abort()
    # everything of the run is dead now (or being reaped); collect the main process
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
    if pidfd is not None:
        os.close(pidfd)
    setup_error, measured = _measurements(_read_all(st.status_r))
    os.close(st.status_r)
    if extra_read is not None:
        try:
            while True:
                chunk = os.read(extra_read, 1 << 16)
                if not chunk:
                    break
                extra += chunk
        except (BlockingIOError, OSError):
            pass
    proc.stdout.close()
    proc.stderr.close()
    seconds = time.monotonic() - st.started
    tail = err.decode("utf-8", errors="replace")[-int(limits.stderr_tail):] if limits.stderr_tail > 0 else ""
    rc = proc.returncode
    res = RunResult(exit_code=None, stdout=bytes(out), stderr_tail=tail, seconds=seconds,
                    timed_out=timed_out, stdout_overflow=overflow, disk_overflow=disk_overflow)
    if not (timed_out or overflow or disk_overflow):
        if rc is not None and rc < 0:
            res.signal = -rc
            if -rc == signal.SIGXCPU:
                res.notes.append(f"CPU time limit of {limits.cpu} s exceeded")
        else:
            res.exit_code = rc
    if measured is not None:
        res.stall_seconds, res.cpu_seconds = measured
    return res, setup_error, bytes(extra)


def _measurements(status: str) -> tuple[str, tuple[float, float] | None]:
    """Split what the launcher wrote on the status pipe into the setup error (if any) and
    its ``measured: STALL CPU`` line (the target's run queue delay and its tree's CPU time,
    see ``_launcher.measured``), when there is one."""
    found = None
    rest = []
    for line in status.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "measured:":
            try:
                found = (max(0.0, float(parts[1])), max(0.0, float(parts[2])))
                continue
            except ValueError:
                pass
        rest.append(line)
    return "\n".join(rest).strip(), found


def _read_all(fd: int) -> str:
    os.set_blocking(fd, False)
    chunks = []
    try:
        while True:
            c = os.read(fd, 4096)
            if not c:
                break
            chunks.append(c)
    except (BlockingIOError, OSError):
        pass
    return b"".join(chunks).decode("utf-8", errors="replace")


def killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError as exc:
        if exc.errno not in (errno.ESRCH, errno.EPERM):
            raise
