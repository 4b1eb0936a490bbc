"""File-system helpers: atomic output directories, reproducible archives and private cache files."""
from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from . import canonjson
from .errors import ReconError, UsageError

FIXED_MTIME = 946684800  # 2000-01-01T00:00:00Z: archives never depend on the clock


@contextmanager
def atomic_directory(target: Path, *, marker: str) -> Iterator[Path]:
    """Yield a temporary sibling of ``target``; on success it replaces ``target``.

    An existing ``target`` is replaced only when it holds ``marker`` (it was written by
    recon before); anything else is refused so nothing of the user's is lost. On any
    failure the temporary directory is removed and ``target`` is untouched.
    """
    target = Path(target).absolute()
    if target.exists():
        if not target.is_dir():
            raise UsageError(f"{target} exists and is not a directory", hint="choose another --out")
        if any(target.iterdir()) and not (target / marker).exists():
            raise UsageError(f"{target} exists, is not empty and was not written by recon (no {marker})",
                             hint="choose another --out or remove it yourself")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.rename(target, old / "x")
            os.rename(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def reproducible_targz(source: Path, dest: Path, *, arcroot: str = "") -> None:
    """Write ``source``'s tree as a .tar.gz whose bytes depend only on the contents:
    sorted entries, fixed mtime, uid/gid 0, no user names, gzip without timestamp."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        paths = sorted(source.rglob("*"), key=lambda p: p.relative_to(source).as_posix())
        for p in paths:
            rel = p.relative_to(source).as_posix()
            name = f"{arcroot}/{rel}" if arcroot else rel
            info = tarfile.TarInfo(name)
            info.mtime = FIXED_MTIME
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if p.is_symlink():
                raise ReconError(f"refusing to archive symlink {p}")
            if p.is_dir():
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            else:
                data = p.read_bytes()
                info.size = len(data)
                info.mode = 0o755 if os.access(p, os.X_OK) else 0o644
                tar.addfile(info, io.BytesIO(data))
    with open(dest, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
            gz.write(buf.getvalue())


def tree_digest(root: Path) -> str:
    """sha256 over every file's relative path, mode bit x and contents (sorted)."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*"), key=lambda q: q.relative_to(root).as_posix()):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode() + b"\0")
            h.update(b"x" if os.access(p, os.X_OK) else b"-")
            h.update(sha256_file(p).encode() + b"\n")
    return h.hexdigest()


def read_private(path: Path, ident: Any) -> dict[str, Any]:
    """A cache file :func:`write_private` wrote with ``{"ident": ident, ...}``, or ``{}``
    when it is missing, unreadable or kept under another identity (callers are caches:
    what they cannot read they compute again)."""
    try:
        doc = canonjson.read(path)
    except (OSError, ValueError, ReconError):
        return {}
    return doc if isinstance(doc, dict) and doc.get("ident") == ident else {}


def write_private(path: Path, doc: Any, *, compact: bool = False) -> bool:
    """Write ``doc`` as canonical JSON to ``path`` atomically, its folder private to the
    user (mode 0700). Returns False instead of raising when it cannot: callers are caches."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:8]}-")
        try:
            with os.fdopen(fd, "wb") as fh:
                text = canonjson.dumps_compact(doc) + "\n" if compact else canonjson.dumps(doc)
                fh.write(text.encode("utf-8"))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return True
    except OSError:
        return False


def write_json_gz(path: Path, doc: Any) -> None:
    """``doc`` as canonical JSON, gzipped without a timestamp (the same document makes the
    same bytes), written atomically: a file shipped in the package and kept in git."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as fh:
        fh.write(canonjson.dumps_compact(doc).encode("utf-8"))
    os.replace(tmp, path)


def read_json_gz(path: Path) -> Any:
    """What :func:`write_json_gz` wrote, or None when missing or unreadable."""
    try:
        with gzip.open(path, "rb") as fh:
            return canonjson.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError, EOFError, UnicodeDecodeError, ReconError):
        return None
