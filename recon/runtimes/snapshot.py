"""A race-free, capped snapshot of an untrusted workspace.

The grader copies the agent's workspace exactly once, before any run of the submission
starts, into a directory only the grader can reach; every run then gets its own copy of
that snapshot, never of the original. The copy:

- walks the tree through directory file descriptors (``openat`` relative to the parent's
  fd, ``O_NOFOLLOW``), so swapping a directory for a symlink while the copy runs can
  never send it outside the workspace: a symlink is recorded as a symlink (its target
  text), never followed, and a directory that turns into a link is refused by the kernel;
- copies regular files, directories and symlinks only (FIFOs, sockets and devices are
  skipped and reported: opening a FIFO would block, a device could be anything);
- counts logical sizes (``st_size``, so a sparse 3 GB file counts as 3 GB) and entries,
  and stops with a reason the moment a cap would be exceeded, before reading the file;
  it never reads more than the cap;
- ignores ``__pycache__``, ``*.pyc`` and notebook checkpoints (caches, not work).

:func:`copy_snapshot` makes the per-run copies from a snapshot (a tree recon wrote,
which no run can modify).
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Snapshot", "snapshot_workspace", "copy_snapshot", "tree_digest", "MAX_WORKSPACE_BYTES",
           "MAX_WORKSPACE_FILES", "IGNORED_NAMES"]

#: logical bytes a workspace may hold (every regular file's size, sparse or not)
MAX_WORKSPACE_BYTES = 256 << 20
#: entries (files, directories, links) a workspace may hold
MAX_WORKSPACE_FILES = 20_000
MAX_DEPTH = 64
#: bytes of a path inside the workspace (copies of it sit a little deeper; PATH_MAX is 4096)
MAX_PATH_BYTES = 2048
IGNORED_NAMES = frozenset({"__pycache__", ".ipynb_checkpoints"})
_CHUNK = 1 << 20
_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_O_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)


@dataclass
class Snapshot:
    """Where the snapshot is, and whether the workspace fit under the caps."""

    path: Path
    ok: bool = True
    reason: str = ""                       # why not ok
    files: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)   # special files left out (relative paths)
    exists: bool = True                    # the original workspace was a directory


class _Over(Exception):
    pass


def snapshot_workspace(src: Path | str, dest: Path | str, *, max_bytes: int = MAX_WORKSPACE_BYTES,
                       max_files: int = MAX_WORKSPACE_FILES) -> Snapshot:
    """Copy the workspace ``src`` into the new directory ``dest`` (mode 0700).

    Never raises for anything found in ``src``: an oversized or unreadable workspace is a
    :class:`Snapshot` with ``ok=False`` and a reason.
    """
    dest = Path(dest)
    os.mkdir(dest, 0o700)
    snap = Snapshot(dest)
    try:
        top = os.open(str(src), _O_DIR)
    except OSError as exc:
        snap.exists = False
        snap.ok = False
        snap.reason = (f"the workspace {src} is a symlink, not a directory" if exc.errno == errno.ELOOP
                       else f"the workspace {src} is not a readable directory ({os.strerror(exc.errno or 0)})")
        return snap
    try:
        _copy_dir(top, dest, "", snap, max_bytes, max_files, 0)
    except _Over as exc:
        snap.ok = False
        snap.reason = str(exc)
    finally:
        os.close(top)
    return snap


def _copy_dir(dfd: int, dest: Path, rel: str, snap: Snapshot, max_bytes: int, max_files: int, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _Over(f"the workspace nests directories deeper than {MAX_DEPTH} levels ({rel})")
    try:
        names = sorted(os.listdir(dfd))
    except OSError:
        return  # an unreadable directory is simply empty in the copy
    for name in names:
        if name in IGNORED_NAMES or name.endswith(".pyc"):
            continue
        r = f"{rel}/{name}" if rel else name
        if len(os.fsencode(r)) > MAX_PATH_BYTES:
            raise _Over(f"the workspace holds a path longer than {MAX_PATH_BYTES} bytes ({r[:80]}...)")
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError:
            continue  # vanished or unreadable: not part of the copy
        snap.files += 1
        if snap.files > max_files:
            raise _Over(f"the workspace holds more than {max_files} files and directories (cap)")
        target = dest / name
        if stat.S_ISLNK(st.st_mode):
            try:
                os.symlink(os.readlink(name, dir_fd=dfd), target)
            except OSError:
                continue
        elif stat.S_ISDIR(st.st_mode):
            try:
                sub = os.open(name, _O_DIR, dir_fd=dfd)
            except OSError:
                continue  # replaced by a link or removed since the stat: skipped
            try:
                os.mkdir(target, 0o700)
                _copy_dir(sub, target, r, snap, max_bytes, max_files, depth + 1)
                os.chmod(target, 0o755)
            finally:
                os.close(sub)
        elif stat.S_ISREG(st.st_mode):
            if snap.bytes + st.st_size > max_bytes:
                raise _Over(f"the workspace holds more than {max_bytes >> 20} MiB ({r} is {st.st_size} bytes; "
                            f"sizes count logically, sparse files included)")
            _copy_file(dfd, name, target, st, snap, max_bytes, r)
        else:
            snap.skipped.append(r)


def _copy_file(dfd: int, name: str, target: Path, st: os.stat_result, snap: Snapshot, max_bytes: int, rel: str) -> None:
    try:
        fd = os.open(name, _O_FILE, dir_fd=dfd)
    except OSError:
        return
    try:
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode):  # swapped between stat and open
            snap.skipped.append(rel)
            return
        budget = max_bytes - snap.bytes
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            copied = 0
            while True:
                chunk = os.read(fd, min(_CHUNK, budget - copied + 1))
                if not chunk:
                    break
                copied += len(chunk)
                if copied > budget:  # grew while being copied
                    raise _Over(f"the workspace holds more than {max_bytes >> 20} MiB ({rel} grew while copied)")
                os.write(out, chunk)
        finally:
            os.close(out)
        snap.bytes += copied
        os.chmod(target, 0o755 if fst.st_mode & stat.S_IXUSR else 0o644)
    finally:
        os.close(fd)


def tree_digest(root: Path | str, *, skip_caches: bool = False) -> str:
    """sha256 over a tree's names, kinds, link targets and file contents, in name order.
    Walks through directory fds and never follows a link, so it can be pointed at a tree
    whose content an agent chose. ``skip_caches``: leave out what a snapshot leaves out
    (``__pycache__``, ``*.pyc``: an installed package's folder holds the bytecode pip
    compiled, stamped with the install's times), so that a program's digest is its source's."""
    import hashlib  # noqa: PLC0415 - only digests need it

    h = hashlib.sha256()

    def walk(dfd: int, rel: bytes) -> None:
        for name in sorted(os.listdir(dfd), key=os.fsencode):
            if skip_caches and (name in IGNORED_NAMES or name.endswith(".pyc")):
                continue
            r = rel + b"/" + os.fsencode(name)
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                h.update(b"L" + r + b"\0" + os.fsencode(os.readlink(name, dir_fd=dfd)) + b"\0")
            elif stat.S_ISDIR(st.st_mode):
                h.update(b"D" + r + b"\0")
                sub = os.open(name, _O_DIR, dir_fd=dfd)
                try:
                    walk(sub, r)
                finally:
                    os.close(sub)
            elif stat.S_ISREG(st.st_mode):
                fh = hashlib.sha256()
                fd = os.open(name, _O_FILE, dir_fd=dfd)
                try:
                    while chunk := os.read(fd, _CHUNK):
                        fh.update(chunk)
                finally:
                    os.close(fd)
                h.update(b"F" + r + b"\0" + fh.digest())
            else:
                h.update(b"S" + r + b"\0")

    top = os.open(str(root), _O_DIR)
    try:
        walk(top, b"")
    finally:
        os.close(top)
    return h.hexdigest()


def copy_snapshot(snapshot: Path, dest: Path) -> None:
    """Copy a snapshot tree (regular files, directories, symlinks as links) into ``dest``."""
    shutil.copytree(snapshot, dest, symlinks=True)
