"""The ``docker`` runtime: a built task run end to end the way Harbor runs it.

Harbor builds ``environment/`` into the agent image and ``tests/`` into a separate
verifier image, runs the agent as the task's non-root user, downloads the declared
artifacts (``/app/workspace``) from the agent container, uploads them at the same path
into a fresh verifier container, runs ``/tests/test.sh`` there and reads
``/logs/verifier/reward.json`` (else ``reward.txt``). :class:`DockerTaskRunner` does the
same through the Docker SDK for Python, so a task that grades right here grades right
under Harbor.

Images are tagged by a hash of their build context, so an unchanged task is never
rebuilt. Every container this module creates is removed before :meth:`DockerTaskRunner.run`
returns, whether it succeeded, failed or was interrupted.

The SDK is imported only when an engine is actually used: :func:`engine_available`
answers from a cached probe, and without a socket it never imports ``docker`` at all.
"""
from __future__ import annotations

import gc
import hashlib
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
import io
import os
import re
import secrets
import shlex
import stat
import tarfile
import tempfile
import time
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable

from ..errors import ReconError, RuntimeUnavailable, TaskError, UsageError

__all__ = [
    "engine_available", "engine_url", "connect", "DockerTaskRunner", "DockerRunResult", "DockerEngineError",
    "TaskDockerConfig", "ContainerSettings", "context_digest", "AGENTS",
]

DEFAULT_URL = "unix:///var/run/docker.sock"
PROBE_TIMEOUT = 3.0        # seconds the engine has to answer a ping
SLOW = "no answer in time"  # the one failure worth waiting out: the engine is there, but busy
ENGINE_PATIENCE = 45.0     # seconds a wanted engine that is slow to answer (busy, not absent) is waited for
API_TIMEOUT = 600          # seconds for ordinary API calls once connected (archives can be large)
AGENTS = ("oracle", "nop")
LOG_TAIL_LINES = 6
LOG_TAIL_CHARS = 500
REWARD_FILES = ("reward.txt", "reward.json", "grading.json")
LABEL = "org.recon.run"

_engine_cache: dict[str, bool] = {}


class DockerEngineError(ReconError):
    """The Docker engine refused or failed an operation (build, pull, disk, API)."""

    exit_code = 5


# --------------------------------------------------------------------------- engine

def engine_url(environ: dict[str, str] | None = None) -> str:
    """Where the SDK will look for the engine: ``$DOCKER_HOST`` or the default socket."""
    env = os.environ if environ is None else environ
    return env.get("DOCKER_HOST") or DEFAULT_URL


def engine_available(*, refresh: bool = False, timeout: float = PROBE_TIMEOUT) -> bool:
    """True when a Docker engine answers a ping. Cached per engine URL; never raises.

    Without ``$DOCKER_HOST`` and without the default socket file it answers False at
    once, without importing the SDK, so ``--runtime auto`` costs nothing here.
    """
    url = engine_url()
    if not refresh and url in _engine_cache:
        return _engine_cache[url]
    try:
        if url.startswith("unix://") and not os.path.exists(url[len("unix://"):]):
            ok = False
        else:
            connect(timeout=timeout, patience=0.0).close()
            ok = True
    except Exception:  # noqa: BLE001 - a probe answers yes or no, whatever went wrong
        ok = False
    _engine_cache[url] = ok
    return ok


def _bwrap_installed() -> bool:
    try:
        from .bwrap import bwrap_available  # noqa: PLC0415 - start-up: bwrap is probed only when docker is not there
    except ImportError:
        return False
    try:
        return bool(bwrap_available())
    except Exception:  # noqa: BLE001
        return False


def no_engine_hint() -> str:
    alt = "--runtime bwrap (bubblewrap is installed) or --runtime local" if _bwrap_installed() else "--runtime local"
    return f"start one (dockerd, `systemctl start docker` or Docker Desktop) or point DOCKER_HOST at one; or use {alt}"


def _why_unreachable(exc: BaseException) -> str:
    """A few words for why the engine did not answer, from the SDK's nested exception."""
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack:
        e = stack.pop()
        if not isinstance(e, BaseException) or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, FileNotFoundError):
            return "no such socket"
        if isinstance(e, PermissionError):
            return "permission denied on the socket"
        if isinstance(e, ConnectionRefusedError):
            return "connection refused"
        if isinstance(e, TimeoutError) or type(e).__name__ in ("ReadTimeout", "ConnectTimeout", "ReadTimeoutError"):
            return SLOW
        stack.extend(a for a in e.args if isinstance(a, BaseException))
        stack.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    text = " ".join(str(exc).split())
    return text[:160] or type(exc).__name__


def connect(*, environ: dict[str, str] | None = None, timeout: float = PROBE_TIMEOUT,
            patience: float = ENGINE_PATIENCE) -> Any:
    """A ``docker.DockerClient`` for the engine ``$DOCKER_HOST`` names, after a ping.

    An engine that is there but slow to answer (a busy daemon on a loaded machine) is
    pinged again, each time allowed twice as long, for up to ``patience`` seconds; an
    absent one (no socket, connection refused) fails at once. Raises
    :class:`RuntimeUnavailable` (one line and a fix) when no engine answers.
    """
    env = dict(os.environ if environ is None else environ)
    url = engine_url(env)
    try:
        import docker  # noqa: PLC0415 - the SDK is imported only when an engine is wanted
    except ImportError:  # pragma: no cover - docker is a dependency
        raise RuntimeUnavailable("the Docker SDK for Python is not installed",
                                 hint="pip install 'docker>=7,<8', or use --runtime bwrap or --runtime local") from None
    deadline = time.monotonic() + patience
    wait = timeout
    while True:
        client, failure = _ping(docker, env, wait)
        if client is not None:
            client.api.timeout = API_TIMEOUT
            return client
        left = deadline - time.monotonic()
        if failure != SLOW or left <= 0:
            raise RuntimeUnavailable(f"no Docker engine answered at {url} ({failure})", hint=no_engine_hint())
        wait = min(2 * wait, max(left, timeout))


def _ping(docker: Any, env: dict[str, str], timeout: float) -> tuple[Any, str | None]:
    """One connect-and-ping: (client, None), or (None, why it failed)."""
    client = None
    failure: str | None = None
    with warnings.catch_warnings():
        # docker-py never closes the socket of a failed unix connect
        # (UnixHTTPConnection.connect); its ResourceWarning would only be noise here.
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            client = docker.from_env(environment=env, timeout=timeout)
            client.ping()
        except Exception as exc:  # noqa: BLE001 - every failure here means "no engine"
            failure = _why_unreachable(exc)
            if client is not None:
                client.close()
                client = None
        if failure is not None:
            gc.collect()  # finalise the leaked socket while its warning is ignored
    return client, failure


# --------------------------------------------------------------------------- task config

@dataclass(frozen=True)
class ContainerSettings:
    """How one phase's container runs: user, network and resource limits."""

    user: str | None
    network_mode: str            # docker's: "none" or "bridge"
    nano_cpus: int | None
    mem_limit: str | None
    timeout: float | None
    env: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def create_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"network_mode": self.network_mode}
        if self.user is not None:
            kw["user"] = self.user
        if self.nano_cpus:
            kw["nano_cpus"] = self.nano_cpus
        if self.mem_limit:
            # memswap == mem: the limit is real memory, not memory plus swap
            kw["mem_limit"] = self.mem_limit
            kw["memswap_limit"] = self.mem_limit
        if self.env:
            kw["environment"] = dict(self.env)
        return kw


@dataclass(frozen=True)
class TaskDockerConfig:
    """What ``task.toml`` says about images, users, networks, limits and artifacts."""

    name: str
    repository: str
    agent: ContainerSettings
    verifier: ContainerSettings
    build_timeout: float
    verifier_build_timeout: float
    artifacts: tuple[str, ...]                 # from the agent's own container ("main")
    solution_env: dict[str, str]
    sidecar_artifacts: tuple[tuple[str, str], ...] = ()   # (service, source) from other services
    checkpoint_every: float = 0.0              # recon's checkpoint sidecar (0: none)

    @classmethod
    def load(cls, task_root: Path) -> TaskDockerConfig:
        path = task_root / "task.toml"
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise TaskError(f"{path} is unreadable: {exc}", hint="rebuild the task with `recon build`") from None
        env = _table(doc, "environment")
        agent = _table(doc, "agent")
        ver = _table(doc, "verifier")
        venv = _table(ver, "environment") or env
        name = str(_table(doc, "task").get("name") or task_root.name)
        artifacts = []
        sidecar: list[tuple[str, str]] = []
        for a in doc.get("artifacts", []):
            src = a if isinstance(a, str) else (a.get("source") if isinstance(a, dict) else None)
            if not isinstance(src, str) or not src.startswith("/") or ".." in PurePosixPath(src).parts:
                raise TaskError(f"{path}: artifact {a!r} is not an absolute path", hint="list paths like /app/workspace")
            service = a.get("service", "main") if isinstance(a, dict) else "main"
            if service == "main":
                artifacts.append(src.rstrip("/") or "/")
            else:
                sidecar.append((str(service), src.rstrip("/") or "/"))
        checkpoint_every = float(_table(doc, "metadata").get("checkpoint_every", 0.0) or 0.0)
        if sidecar and not checkpoint_every:
            raise TaskError(f"{path}: artifacts from services {sorted({s for s, _ in sidecar})} need that task's "
                            "docker-compose.yaml, which recon's docker runtime replays only for its own "
                            "checkpoint sidecar", hint="run this task with Harbor itself")
        return cls(
            name=name,
            repository=_repository(name),
            agent=_settings(env, agent.get("network_mode"), agent.get("user"), agent.get("timeout_sec"), {}),
            verifier=_settings(venv, ver.get("network_mode"), ver.get("user"), ver.get("timeout_sec", 600.0),
                               {str(k): str(v) for k, v in _table(ver, "env").items()}),
            build_timeout=float(env.get("build_timeout_sec", 600.0)),
            verifier_build_timeout=float(venv.get("build_timeout_sec", 600.0)),
            artifacts=tuple(artifacts),
            solution_env={str(k): str(v) for k, v in _table(doc, "solution").get("env", {}).items()},
            sidecar_artifacts=tuple(sidecar),
            checkpoint_every=checkpoint_every,
        )


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    v = doc.get(key)
    return v if isinstance(v, dict) else {}


_NETWORKS = {"no-network": "none", "public": "bridge"}


def _settings(env: dict[str, Any], network_override: Any, user: Any, timeout: Any,
              extra_env: dict[str, str]) -> ContainerSettings:
    notes: list[str] = []
    mode = str(network_override or env.get("network_mode") or ("none" if env.get("allow_internet") is False else "public"))
    if mode == "allowlist":
        # Docker alone cannot enforce a host allowlist; refusing all traffic is the safe side.
        notes.append("network_mode 'allowlist' runs with no network under recon's docker runtime")
        net = "none"
    else:
        net = _NETWORKS.get(mode, "none" if mode == "none" else "bridge")
    cpus = env.get("cpus")
    memory_mb = env.get("memory_mb")
    mem = f"{int(memory_mb)}m" if memory_mb else _legacy_memory(env.get("memory"))
    return ContainerSettings(
        user=None if user is None else str(user),
        network_mode=net,
        nano_cpus=int(float(cpus) * 1e9) if cpus else None,
        mem_limit=mem,
        timeout=float(timeout) if timeout else None,
        env=extra_env,
        notes=tuple(notes),
    )


def _legacy_memory(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    m = re.fullmatch(r"\s*(\d+)\s*([kmgKMG])[bB]?\s*", value)
    return f"{m.group(1)}{m.group(2).lower()}" if m else None


def _repository(task_name: str) -> str:
    """A valid image repository from a task name (``recon/lidar_icp`` stays as it is)."""
    parts = [re.sub(r"[^a-z0-9._-]+", "-", p.lower()).strip("._-") for p in task_name.split("/")]
    parts = [p for p in parts if p] or ["task"]
    if len(parts) == 1:
        parts.insert(0, "recon")
    return "/".join(parts)


def context_digest(context: Path) -> str:
    """sha256 over a build context: every path, its type, mode, link target and bytes.

    The image tag carries it, so an unchanged context is recognised and not rebuilt.
    """
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(context, followlinks=False):
        dirnames.sort()
        for name in sorted([*dirnames, *filenames]):
            p = Path(dirpath) / name
            rel = os.fsencode(p.relative_to(context).as_posix())
            st = p.lstat()
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                h.update(b"L\0" + rel + b"\0" + os.fsencode(os.readlink(p)) + b"\0")
            elif stat.S_ISDIR(st.st_mode):
                h.update(b"D\0" + rel + b"\0" + f"{mode:o}".encode() + b"\0")
            elif stat.S_ISREG(st.st_mode):
                fh = hashlib.sha256()
                with open(p, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        fh.update(chunk)
                h.update(b"F\0" + rel + b"\0" + f"{mode:o}".encode() + b"\0" + fh.digest())
    return h.hexdigest()


# --------------------------------------------------------------------------- archives

def _tar_like_docker_cp(src: Path, arcroot: str | None) -> bytes:
    """``src`` as ``docker cp`` sends it: file modes and numeric uid/gid as they are on the
    host, symlinks as links. With ``arcroot`` the directory itself is the archive's top
    entry (a new target directory takes the source directory's mode and owner, which is
    how a 0700 ``solution/`` becomes unreadable to the agent user); without it only the
    contents are sent (``docker cp SRC/. TARGET``)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add(path: Path, arcname: str) -> None:
            info = tar.gettarinfo(str(path), arcname=arcname)
            info.uname = info.gname = ""
            if info.isreg():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            elif info.isdir():
                tar.addfile(info)
                for child in sorted(path.iterdir(), key=lambda c: c.name):
                    add(child, f"{arcname}/{child.name}" if arcname else child.name)
            elif info.issym():
                tar.addfile(info)
            # FIFOs, sockets and devices are not shipped

        if arcroot:
            add(src, arcroot)
        else:
            for child in sorted(src.iterdir(), key=lambda c: c.name):
                add(child, child.name)
    return buf.getvalue()


def _collect_stream(chunks: Iterable[bytes]) -> Any:
    """The chunks of an archive download in a (closable) spooled file, rewound."""
    spool = tempfile.SpooledTemporaryFile(max_size=64 << 20)
    try:
        for chunk in chunks:
            spool.write(chunk)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool


def _stage_artifact(archive: Any, dest: Path, notes: list[str], what: str) -> None:
    """Extract a downloaded artifact (``docker cp`` archive, top entry = the source's
    name) into ``dest`` the way Harbor stages it for the verifier: tar's ``data`` filter
    (no setuid bits, no group/other write, owner rw, directories at the default mode,
    files owned by this process, absolute or escaping links and special files refused)."""
    dest.mkdir(parents=True, exist_ok=True)
    dropped = 0
    with tarfile.open(fileobj=archive, mode="r|*") as src:
        for member in src:
            _, _, rest = member.name.partition("/")
            if not rest:
                continue  # the source directory itself: its mode is Harbor's to set
            member = member.replace(name=rest, deep=False)
            if member.islnk():
                _, _, lrest = member.linkname.partition("/")
                member = member.replace(linkname=lrest, deep=False)
            try:
                src.extract(member, dest, filter="data")
            except (tarfile.FilterError, OSError) as exc:
                dropped += 1
                if dropped <= 5:
                    notes.append(f"artifact {what}: entry {rest!r} dropped ({exc})")
    if dropped > 5:
        notes.append(f"artifact {what}: {dropped - 5} more unsafe entries dropped")


def _read_tar_files(archive: Any) -> dict[str, bytes]:
    """Regular files of an archive by path below its top directory."""
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=archive, mode="r|*") as tar:
        for m in tar:
            if m.isreg():
                fh = tar.extractfile(m)
                if fh is not None:
                    _, _, rest = m.name.partition("/")
                    files[rest or m.name] = fh.read()
    return files


def _log_tail(lines: Iterable[str], n: int = LOG_TAIL_LINES) -> str:
    kept = [" ".join(ln.split()) for ln in lines if ln and ln.strip()]
    tail = " | ".join(kept[-n:])
    return tail if len(tail) <= LOG_TAIL_CHARS else "…" + tail[-LOG_TAIL_CHARS:]


def _build_log_lines(build_log: Iterable[Any]) -> list[str]:
    lines: list[str] = []
    for entry in build_log or []:
        if isinstance(entry, dict):
            for key in ("stream", "error", "status"):
                if entry.get(key):
                    lines.extend(str(entry[key]).splitlines())
        elif entry:
            lines.extend(str(entry).splitlines())
    return lines


def _engine_hint(text: str, context: str | None) -> str:
    t = text.lower()
    if "no space left" in t:
        return "the engine is out of disk: free space (`docker system prune`) and retry"
    if "pull access denied" in t or "manifest unknown" in t or "unauthorized" in t or "toomanyrequests" in t:
        return "the engine may not pull the base image: `docker login`, check the FROM line, or pre-pull the image"
    if "dial tcp" in t or "no such host" in t or "temporary failure in name resolution" in t or "network is unreachable" in t:
        return "the engine has no network to pull images or install packages; connect it, or pre-load the images"
    if context:
        return f"see the full log with `docker build {context}`"
    return "check the engine with `docker info`"


# --------------------------------------------------------------------------- the runner

@dataclass
class DockerRunResult:
    """What a run through Docker produced: the verifier's files and the phases' logs."""

    reward: float
    reward_json: dict[str, Any] | None
    grading: dict[str, Any] | None
    files: dict[str, bytes]                 # everything test.sh left in /logs/verifier
    agent_log: str
    verifier_log: str
    images: dict[str, str]                  # "agent"/"verifier" -> tag
    built: list[str]                        # tags built by this run (others were up to date)
    notes: list[str] = field(default_factory=list)

    @property
    def reward_text(self) -> str:
        raw = self.files.get("reward.txt")
        return raw.decode("utf-8", "replace").strip() if raw else f"{self.reward}"


class DockerTaskRunner:
    """Runs a built task's agent phase and separate verifier in Docker, like Harbor.

    ``client`` is a ``docker.DockerClient`` (or anything with the same methods; tests
    pass a recording fake). Without one, :func:`connect` finds the engine.
    """

    def __init__(self, task_root: Path | str, *, client: Any = None, log: Callable[[str], None] | None = None) -> None:
        self.root = Path(task_root).absolute()
        for rel in ("task.toml", "environment/Dockerfile", "tests/Dockerfile"):
            if not (self.root / rel).is_file():
                raise TaskError(f"{self.root} has no {rel}", hint="give the folder `recon build` wrote (e.g. tasks/lidar_icp)")
        self.config = TaskDockerConfig.load(self.root)
        self._client = client
        self._log = log or (lambda msg: None)
        self._containers: list[Any] = []
        self._volumes: list[str] = []
        self.run_id = secrets.token_hex(6)

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = connect()
        return self._client

    # -- images
    _CONTEXTS = {"agent": ("environment", "env"), "verifier": ("tests", "verifier"),
                 "checkpointer": ("environment/checkpointer", "checkpointer")}

    def image_tag(self, kind: str) -> str:
        ctx, short = self._CONTEXTS[kind]
        return f"{self.config.repository}:{short}-{context_digest(self.root / ctx)[:16]}"

    def ensure_image(self, kind: str) -> tuple[str, bool]:
        """The image tag for ``kind`` ("agent" or "verifier"), built only when missing."""
        from docker.errors import APIError, BuildError, ImageNotFound  # noqa: PLC0415

        ctx = self.root / self._CONTEXTS[kind][0]
        tag = self.image_tag(kind)
        try:
            self.client.images.get(tag)
            self._log(f"{kind} image {tag} is up to date")
            return tag, False
        except ImageNotFound:
            pass
        timeout = self.config.verifier_build_timeout if kind == "verifier" else self.config.build_timeout
        self._log(f"building the {kind} image {tag} from {ctx} ...")
        try:
            _, logs = self.client.images.build(
                path=str(ctx), tag=tag, rm=True, forcerm=True, timeout=int(timeout),
                labels={"org.recon.task": self.config.name, "org.recon.context": ctx.name},
            )
            for _ in logs or []:  # drain: the high-level client returns the log as a generator
                pass
        except BuildError as exc:
            lines = _build_log_lines(exc.build_log)
            reason = " ".join(str(exc.msg).split())[:200]
            raise DockerEngineError(
                f"docker build of the {kind} image from {ctx} failed: {reason}; log tail: {_log_tail(lines)}",
                hint=_engine_hint(reason + " " + " ".join(lines[-LOG_TAIL_LINES:]), str(ctx))) from None
        except APIError as exc:
            text = " ".join(str(exc.explanation or exc).split())[:300]
            raise DockerEngineError(f"the Docker engine refused to build the {kind} image from {ctx}: {text}",
                                    hint=_engine_hint(text, str(ctx))) from None
        return tag, True

    # -- containers
    def _create(self, image: str, settings: ContainerSettings, role: str,
                volumes: dict[str, dict[str, str]] | None = None, *, init: bool = False) -> Any:
        """A container that idles like Harbor's compose service (``sh -c "sleep infinity"``,
        the image's own user); every step then runs in it with ``exec``. ``init``: as the
        task's compose file sets it (a signal-forwarding PID 1)."""
        kw = settings.create_kwargs()
        kw.pop("user", None)  # the image's USER, as compose starts it; each exec names its user
        kw.pop("environment", None)
        if volumes:
            kw["volumes"] = volumes
        if init:
            kw["init"] = True
        container = self.client.containers.create(
            image, command=["sh", "-c", "sleep infinity"], detach=True,
            name=f"recon-{role}-{self.run_id}", labels={LABEL: self.run_id, "org.recon.role": role}, **kw)
        self._containers.append(container)
        container.start()
        return container

    def _start_checkpointer(self, tag: str, volume: str) -> Any:
        """The task's checkpoint service as its compose file declares it: root, no
        network, an init, the workspace volume read-only, the image's own command. Its name is the
        service task.toml collects the snapshots from."""
        service = self.config.sidecar_artifacts[0][0] if self.config.sidecar_artifacts else "checkpoints"
        container = self.client.containers.create(
            tag, detach=True, user="root", network_mode="none", init=True,
            environment={"RECON_CHECKPOINT_EVERY": f"{self.config.checkpoint_every:g}"},
            volumes={volume: {"bind": "/workspace", "mode": "ro"}},
            name=f"recon-{service}-{self.run_id}", labels={LABEL: self.run_id, "org.recon.role": service})
        self._containers.append(container)
        container.start()
        return container

    def _exec(self, container: Any, command: str, *, user: str | None, env: dict[str, str] | None = None,
              timeout: float | None = None, what: str = "command") -> tuple[int, str]:
        """``docker compose exec [-u user] [-e K=V] main bash -c COMMAND``; (exit code, output).

        On timeout the container is killed (Harbor's client gives up the same way) and a
        :class:`TaskError` names the phase.
        """
        kwargs: dict[str, Any] = {"environment": dict(env or {})}
        if user is not None:
            kwargs["user"] = str(user)

        def call() -> Any:
            return container.exec_run(["bash", "-c", command], **kwargs)

        if not timeout:
            res = call()
        else:
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recon-exec")
            fut = pool.submit(call)
            try:
                res = fut.result(timeout=timeout)
            except FutureTimeout:
                try:
                    container.kill()
                except Exception:  # noqa: BLE001 - the container may be gone already
                    pass
                pool.shutdown(wait=False)
                raise TaskError(f"the {what} did not finish within {timeout:.0f} s (killed)",
                                hint="raise the timeout_sec in task.toml, or look at the phase's log") from None
            pool.shutdown(wait=False)
        code, output = (res.exit_code, res.output) if hasattr(res, "exit_code") else res
        text = output.decode("utf-8", "replace") if isinstance(output, bytes) else str(output or "")
        return int(code if code is not None else 1), text

    def _root(self, container: Any, command: str) -> None:
        """Harbor's housekeeping: as root, and a failure is the engine's, not the task's."""
        code, out = self._exec(container, command, user="root", what="housekeeping")
        if code != 0:
            raise TaskError(f"`{command}` failed in the container ({code}): {_log_tail(out.splitlines(), 3)}",
                            hint="check the image: it needs bash, coreutils and find")

    def _read_file(self, container: Any, path: str) -> str:
        from docker.errors import NotFound  # noqa: PLC0415

        try:
            stream, _ = container.get_archive(path)
        except NotFound:
            return ""
        with _collect_stream(stream) as archive:
            files = _read_tar_files(archive)
        return next(iter(files.values()), b"").decode("utf-8", "replace")

    def cleanup(self) -> list[str]:
        """Remove every container this runner created (with their anonymous volumes), then
        the named volumes it created."""
        problems = []
        while self._containers:
            c = self._containers.pop()
            try:
                c.remove(force=True, v=True)
            except Exception as exc:  # noqa: BLE001 - keep removing the others
                if type(exc).__name__ != "NotFound":
                    problems.append(f"could not remove container {getattr(c, 'name', c)}: {exc}")
        while self._volumes:
            name = self._volumes.pop()
            try:
                self.client.volumes.get(name).remove(force=True)
            except Exception as exc:  # noqa: BLE001
                if type(exc).__name__ != "NotFound":
                    problems.append(f"could not remove volume {name}: {exc}")
        return problems

    # -- the run
    def run(self, agent: str, *, nonce: str | None = None, probes: int | None = None,
            grade_args: list[str] | None = None) -> DockerRunResult:
        """Build (if needed) both images, run ``agent`` then the verifier, return what it wrote."""
        if agent not in AGENTS:
            raise UsageError(f"unknown agent {agent!r}", hint=f"use one of {', '.join(AGENTS)}")
        args = list(grade_args or [])
        if nonce is not None:
            if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", nonce):
                raise TaskError(f"nonce {nonce!r} must be 1-64 letters, digits, '.', '_' or '-'")
            args += ["--nonce", nonce]
        if probes is not None:
            args += ["--probes", str(int(probes))]
        from docker.errors import DockerException  # noqa: PLC0415
        from requests.exceptions import RequestException  # noqa: PLC0415 - docker-py's transport

        notes: list[str] = [*self.config.agent.notes, *self.config.verifier.notes]
        built: list[str] = []
        _ = self.client  # connect first: without an engine this fails at once, before any hashing
        try:
            agent_tag, b1 = self.ensure_image("agent")
            verifier_tag, b2 = self.ensure_image("verifier")
            built = [t for t, b in ((agent_tag, b1), (verifier_tag, b2)) if b]
            if self.config.checkpoint_every:
                ckpt_tag, b3 = self.ensure_image("checkpointer")
                built += [ckpt_tag] if b3 else []
            with tempfile.TemporaryDirectory(prefix="recon-artifacts-") as staging:
                staged, agent_log = self._agent_phase(agent, agent_tag, Path(staging), notes)
                files, verifier_log = self._verifier_phase(verifier_tag, staged, args)
        except DockerException as exc:
            text = " ".join(str(getattr(exc, "explanation", None) or exc).split())[:300]
            raise DockerEngineError(f"the Docker engine failed during `recon run`: {text}",
                                    hint=_engine_hint(text, None)) from None
        except RequestException as exc:
            raise DockerEngineError(f"lost the Docker engine at {engine_url()} during `recon run`: "
                                    f"{_why_unreachable(exc)}", hint="check the engine with `docker info`") from None
        finally:
            notes.extend(self.cleanup())
        reward_json, grading, reward = _read_reward(files, verifier_log)
        return DockerRunResult(reward, reward_json, grading, files, agent_log, verifier_log,
                               {"agent": agent_tag, "verifier": verifier_tag}, built, notes)

    def _agent_phase(self, agent: str, tag: str, staging: Path, notes: list[str]) -> tuple[dict[str, Path], str]:
        """Harbor's agent environment: start, make /logs, run the agent as the task's agent
        user, then download each declared artifact and stop."""
        settings = self.config.agent
        sidecar = None
        volumes = None
        if self.config.checkpoint_every:
            # compose: /app/workspace is a named volume (seeded from the image) shared
            # read-only with the checkpoint sidecar, which starts with the environment.
            volume = f"recon-workspace-{self.run_id}"
            self._volumes.append(volume)
            volumes = {volume: {"bind": "/app/workspace", "mode": "rw"}}
            container = self._create(tag, settings, "agent", volumes=volumes, init=True)
            sidecar = self._start_checkpointer(self.image_tag("checkpointer"), volume)
        else:
            container = self._create(tag, settings, "agent")
        self._root(container, "mkdir -p /logs/verifier /logs/agent /logs/artifacts && "
                              "chmod 777 /logs/verifier /logs/agent /logs/artifacts")
        log = ""
        self._log(f"agent phase ({agent}) as user {settings.user or '(image default)'}, network {settings.network_mode}")
        if agent == "oracle":
            # OracleAgent: upload solution/ with `docker cp` semantics (modes and owners
            # kept), chmod +x solve.sh as root, run it as the agent user, output to a log.
            container.put_archive("/", _tar_like_docker_cp(self.root / "solution", "solution"))
            self._root(container, "chmod +x /solution/solve.sh")
            code, _ = self._exec(container, "(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1",
                                 user=settings.user, env={"DEBIAN_FRONTEND": "noninteractive",
                                                          **self.config.solution_env},
                                 timeout=settings.timeout, what="oracle agent phase")
            log = self._read_file(container, "/logs/agent/oracle.txt")
            if code != 0:
                # Harbor records the exit code and goes on to grade what the agent left.
                notes.append(f"solution/solve.sh exited with {code} in the agent container: "
                             f"{_log_tail(log.splitlines(), 3) or 'no output'}")
        # Artifacts: the convention entry /logs/artifacts, then the task's declared ones.
        from docker.errors import NotFound  # noqa: PLC0415

        staged: dict[str, Path] = {}
        for i, src in enumerate(["/logs/artifacts", *[a for a in self.config.artifacts if a != "/logs/artifacts"]]):
            try:
                stream, _ = container.get_archive(src)
            except NotFound:
                if src != "/logs/artifacts":
                    notes.append(f"artifact {src} does not exist in the agent container; the verifier gets none")
                continue
            dest = staging / str(i)
            with _collect_stream(stream) as archive:
                _stage_artifact(archive, dest, notes, src)
            staged[src] = dest
        try:
            container.stop(timeout=1)
        except Exception:  # noqa: BLE001 - removed in cleanup anyway
            pass
        # Sidecar artifacts are collected after the agent's container is stopped, as Harbor
        # does in separate-verifier mode, so no agent process can touch them meanwhile.
        for j, (service, src) in enumerate(self.config.sidecar_artifacts):
            if sidecar is None:
                notes.append(f"artifact {src} of service {service}: no such service here")
                continue
            try:
                stream, _ = sidecar.get_archive(src)
            except NotFound:
                continue
            dest = staging / f"sidecar-{j}"
            with _collect_stream(stream) as archive:
                _stage_artifact(archive, dest, notes, f"{service}:{src}")
            staged[src] = dest
        return staged, log

    def _verifier_phase(self, tag: str, staged: dict[str, Path], grade_args: list[str]) -> tuple[dict[str, bytes], str]:
        """Harbor's separate verifier: a fresh container of the tests/ image, the artifacts
        uploaded into emptied 0777 directories, test.sh run as the verifier user."""
        settings = self.config.verifier
        container = self._create(tag, settings, "verifier")
        self._root(container, _empty_dir_command("/logs/verifier"))
        for target, copy in staged.items():
            self._root(container, _empty_dir_command(target))
            if any(copy.iterdir()):
                container.put_archive(target, _tar_like_docker_cp(copy, None))
        self._root(container, "rm -f -- /logs/verifier/reward.txt /logs/verifier/reward.json")
        self._root(container, "chmod +x /tests/test.sh")
        env = dict(settings.env)
        if grade_args:
            env["RECON_GRADE_ARGS"] = " ".join(grade_args)
        self._log(f"verifier phase as user {settings.user or '(image default)'}, network {settings.network_mode}")
        self._exec(container, "(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1", user=settings.user,
                   env=env, timeout=settings.timeout, what="verifier phase")
        from docker.errors import NotFound  # noqa: PLC0415

        try:
            stream, _ = container.get_archive("/logs/verifier")
            with _collect_stream(stream) as archive:
                files = _read_tar_files(archive)
        except NotFound:
            files = {}
        log = files.get("test-stdout.txt", b"").decode("utf-8", "replace")
        return files, log


def _empty_dir_command(target: str) -> str:
    """Harbor's ``empty_dirs(chmod=True)``: a fresh, emptied, world-writable directory."""
    t = shlex.quote(target)
    return (f"if [ -L {t} ] || {{ [ -e {t} ] && [ ! -d {t} ]; }}; then rm -rf {t}; fi && mkdir -p {t} && "
            f"find {t} -mindepth 1 -maxdepth 1 -exec rm -rf -- {{}} + && chmod 777 {t}")


def _read_reward(files: dict[str, bytes], log: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None, float]:
    """Harbor's rules: reward.json first (a flat object of finite numbers), else
    reward.txt (one finite float); grading.json when present."""
    import json  # noqa: PLC0415
    import math  # noqa: PLC0415

    reward_json = grading = None
    reward: float | None = None
    try:
        if "reward.json" in files:
            reward_json = json.loads(files["reward.json"])
            if not isinstance(reward_json, dict):
                raise ValueError("reward.json is not an object")
            for key, value in reward_json.items():
                if not isinstance(value, (int, float)) or not math.isfinite(value):
                    raise ValueError(f"reward.json value {key}={value!r} is not a finite number (Harbor rejects it)")
            if isinstance(reward_json.get("reward"), (int, float)):
                reward = float(reward_json["reward"])
        elif "reward.txt" in files:
            reward = float(files["reward.txt"].decode("utf-8").strip())
        if "grading.json" in files:
            grading = json.loads(files["grading.json"])
    except (ValueError, UnicodeDecodeError) as exc:
        raise TaskError(f"the verifier wrote an unreadable reward file: {exc}",
                        hint="tests/test.sh must write reward.txt / reward.json as recon grade does") from None
    if reward is None or not math.isfinite(reward):
        raise TaskError(f"the verifier wrote no reward.json or reward.txt: {_log_tail(log.splitlines(), 3) or 'no output'}",
                        hint="tests/test.sh must always write /logs/verifier/reward.txt; rebuild the task")
    return reward_json, grading, reward
