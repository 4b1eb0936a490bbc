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
import io
import os
import re
import secrets
import shlex
import stat
import tarfile
import tempfile
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
API_TIMEOUT = 600          # seconds for ordinary API calls once connected (archives can be large)
AGENTS = ("oracle", "nop")
LOG_TAIL_LINES = 6
LOG_TAIL_CHARS = 500
ARTIFACT_STAGING = "/.recon-artifacts"
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
            connect(timeout=timeout).close()
            ok = True
    except Exception:  # noqa: BLE001 - a probe answers yes or no, whatever went wrong
        ok = False
    _engine_cache[url] = ok
    return ok


def _bwrap_installed() -> bool:
    try:
        from .bwrap import bwrap_available  # noqa: PLC0415
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
            return "no answer in time"
        stack.extend(a for a in e.args if isinstance(a, BaseException))
        stack.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    text = " ".join(str(exc).split())
    return text[:160] or type(exc).__name__


def connect(*, environ: dict[str, str] | None = None, timeout: float = PROBE_TIMEOUT) -> Any:
    """A ``docker.DockerClient`` for the engine ``$DOCKER_HOST`` names, after a ping.

    Raises :class:`RuntimeUnavailable` (one line and a fix) when no engine answers.
    """
    env = dict(os.environ if environ is None else environ)
    url = engine_url(env)
    try:
        import docker  # noqa: PLC0415 - the SDK is imported only when an engine is wanted
    except ImportError:  # pragma: no cover - docker is a dependency
        raise RuntimeUnavailable("the Docker SDK for Python is not installed",
                                 hint="pip install 'docker>=7,<8', or use --runtime bwrap or --runtime local") from None
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
        if failure is not None:
            gc.collect()  # finalise the leaked socket while its warning is ignored
    if failure is not None or client is None:
        raise RuntimeUnavailable(f"no Docker engine answered at {url} ({failure})", hint=no_engine_hint())
    client.api.timeout = API_TIMEOUT
    return client


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
    artifacts: tuple[str, ...]
    solution_env: dict[str, str]

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
        for a in doc.get("artifacts", []):
            src = a if isinstance(a, str) else (a.get("source") if isinstance(a, dict) else None)
            if not isinstance(src, str) or not src.startswith("/") or ".." in PurePosixPath(src).parts:
                raise TaskError(f"{path}: artifact {a!r} is not an absolute path", hint="list paths like /app/workspace")
            artifacts.append(src.rstrip("/") or "/")
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
            rel = p.relative_to(context).as_posix().encode("utf-8")
            st = p.lstat()
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                h.update(b"L\0" + rel + b"\0" + os.readlink(p).encode("utf-8") + b"\0")
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

def _tar_directory(src: Path, arcroot: str) -> bytes:
    """``src`` as a tar under ``arcroot``, owned by root and readable by everyone."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add(path: Path, arcname: str) -> None:
            info = tar.gettarinfo(str(path), arcname=arcname)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mtime = 0
            if info.isdir():
                info.mode = 0o755
                tar.addfile(info)
                for child in sorted(path.iterdir(), key=lambda c: c.name):
                    add(child, f"{arcname}/{child.name}")
            elif info.isreg():
                info.mode = 0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            elif info.issym():
                tar.addfile(info)
        add(src, arcroot)
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


def _restage(archive: Any, dst: tarfile.TarFile, arcroot: str, made: set[str], notes: list[str]) -> None:
    """Add a downloaded artifact to ``dst`` under ``arcroot`` the way Harbor re-uploads it:
    tar's ``data`` filter (no setuid bits, no special files, no links escaping the
    artifact), files owned by root."""
    parts = PurePosixPath(arcroot).parts
    for i in range(1, len(parts)):
        parent = "/".join(parts[:i])
        if parent not in made:
            made.add(parent)
            d = tarfile.TarInfo(parent)
            d.type, d.mode = tarfile.DIRTYPE, 0o755
            dst.addfile(d)
    with tempfile.TemporaryDirectory(prefix="recon-artifact-") as dest, \
            tarfile.open(fileobj=archive, mode="r|*") as src:
        for member in src:
            try:
                clean = tarfile.data_filter(member, dest)
            except tarfile.FilterError as exc:
                notes.append(f"artifact entry {member.name!r} dropped ({exc})")
                continue
            _, _, rest = clean.name.partition("/")
            new = clean.replace(name=f"{arcroot}/{rest}" if rest else arcroot,
                                uid=0, gid=0, uname="root", gname="root", deep=False)
            if new.mode is None:
                new.mode = 0o777 if new.issym() else 0o755
            if new.islnk():
                _, _, lrest = new.linkname.partition("/")
                new.linkname = f"{arcroot}/{lrest}" if lrest else arcroot
            dst.addfile(new, src.extractfile(member) if member.isreg() else None)


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
        self.run_id = secrets.token_hex(6)

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = connect()
        return self._client

    # -- images
    def image_tag(self, kind: str) -> str:
        ctx = self.root / ("environment" if kind == "agent" else "tests")
        short = "env" if kind == "agent" else "verifier"
        return f"{self.config.repository}:{short}-{context_digest(ctx)[:16]}"

    def ensure_image(self, kind: str) -> tuple[str, bool]:
        """The image tag for ``kind`` ("agent" or "verifier"), built only when missing."""
        from docker.errors import APIError, BuildError, ImageNotFound  # noqa: PLC0415

        ctx = self.root / ("environment" if kind == "agent" else "tests")
        tag = self.image_tag(kind)
        try:
            self.client.images.get(tag)
            self._log(f"{kind} image {tag} is up to date")
            return tag, False
        except ImageNotFound:
            pass
        timeout = self.config.build_timeout if kind == "agent" else self.config.verifier_build_timeout
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
    def _create(self, image: str, script: str, settings: ContainerSettings, role: str,
                extra_env: dict[str, str] | None = None) -> Any:
        kw = settings.create_kwargs()
        if extra_env:
            kw["environment"] = {**kw.get("environment", {}), **extra_env}
        container = self.client.containers.create(
            image, command=["-c", script], entrypoint=["/bin/sh"], detach=True,
            name=f"recon-{role}-{self.run_id}", labels={LABEL: self.run_id, "org.recon.role": role}, **kw)
        self._containers.append(container)
        return container

    def _wait(self, container: Any, timeout: float | None, what: str) -> int:
        try:
            status = container.wait(timeout=timeout) if timeout else container.wait()
        except Exception as exc:  # noqa: BLE001 - the SDK raises requests' timeouts or connection errors
            timed_out = type(exc).__name__ in ("ReadTimeout", "ReadTimeoutError") or (
                type(exc).__name__ == "ConnectionError" and "timed out" in str(exc).lower())
            if timed_out and timeout:
                try:
                    container.kill()
                except Exception:  # noqa: BLE001
                    pass
                raise TaskError(f"the {what} did not finish within {timeout:.0f} s (killed)",
                                hint="raise the timeout_sec in task.toml, or look at the phase's log") from None
            raise
        code = status.get("StatusCode", 1) if isinstance(status, dict) else int(status)
        return int(code if code is not None else 1)

    @staticmethod
    def _logs(container: Any) -> str:
        try:
            raw = container.logs(stdout=True, stderr=True)
        except Exception:  # noqa: BLE001 - logs are a courtesy
            return ""
        return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)

    def cleanup(self) -> list[str]:
        """Remove every container this runner created (and their anonymous volumes)."""
        problems = []
        while self._containers:
            c = self._containers.pop()
            try:
                c.remove(force=True, v=True)
            except Exception as exc:  # noqa: BLE001 - keep removing the others
                if type(exc).__name__ != "NotFound":
                    problems.append(f"could not remove container {getattr(c, 'name', c)}: {exc}")
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
            staged, agent_log = self._agent_phase(agent, agent_tag, notes)
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

    def _agent_phase(self, agent: str, tag: str, notes: list[str]) -> tuple[bytes, str]:
        settings = self.config.agent
        if agent == "oracle":
            script = "exec bash /solution/solve.sh"
            container = self._create(tag, script, settings, "agent", self.config.solution_env)
            container.put_archive("/", _tar_directory(self.root / "solution", "solution"))
        else:
            container = self._create(tag, "exit 0", settings, "agent")
        self._log(f"agent phase ({agent}) as user {settings.user or '(image default)'}, network {settings.network_mode}")
        container.start()
        code = self._wait(container, settings.timeout, f"{agent} agent phase")
        log = self._logs(container)
        if code != 0:
            raise TaskError(f"solution/solve.sh exited with {code} in the agent container: "
                            f"{_log_tail(log.splitlines(), 3) or 'no output'}",
                            hint="run the task's solve.sh by hand in the agent image to see why")
        # Harbor downloads each declared artifact and uploads it at the same path in the verifier.
        from docker.errors import NotFound  # noqa: PLC0415

        staged = io.BytesIO()
        made: set[str] = set()
        with tarfile.open(fileobj=staged, mode="w", format=tarfile.PAX_FORMAT) as out:
            for i, src in enumerate(self.config.artifacts):
                try:
                    stream, _ = container.get_archive(src)
                except NotFound:
                    notes.append(f"artifact {src} does not exist in the agent container; the verifier gets none")
                    continue
                with _collect_stream(stream) as archive:
                    _restage(archive, out, _staged_path(i, src).lstrip("/"), made, notes)
        return staged.getvalue(), log

    def _verifier_script(self) -> str:
        steps = ["set -e", "mkdir -p /logs/verifier"]
        for i, src in enumerate(self.config.artifacts):
            staged = _staged_path(i, src)
            parent = str(PurePosixPath(src).parent)
            steps.append(f"if [ -e {shlex.quote(staged)} ]; then rm -rf -- {shlex.quote(src)}; "
                         f"mkdir -p {shlex.quote(parent)}; mv {shlex.quote(staged)} {shlex.quote(src)}; fi")
        steps.append(f"rm -rf {ARTIFACT_STAGING}")
        steps.append("chmod +x /tests/test.sh")
        steps.append("exec /tests/test.sh")
        return "\n".join(steps)

    def _verifier_phase(self, tag: str, staged: bytes, grade_args: list[str]) -> tuple[dict[str, bytes], str]:
        settings = self.config.verifier
        env = {"RECON_GRADE_ARGS": " ".join(grade_args)} if grade_args else None
        container = self._create(tag, self._verifier_script(), settings, "verifier", env)
        container.put_archive("/", staged)
        self._log(f"verifier phase as user {settings.user or '(image default)'}, network {settings.network_mode}")
        container.start()
        code = self._wait(container, settings.timeout, "verifier phase")
        log = self._logs(container)
        from docker.errors import NotFound  # noqa: PLC0415

        try:
            stream, _ = container.get_archive("/logs/verifier")
            with _collect_stream(stream) as archive:
                files = _read_tar_files(archive)
        except NotFound:
            files = {}
        files.setdefault("test-stdout.txt", log.encode("utf-8"))
        if code != 0 and not any(f in files for f in ("reward.txt", "reward.json")):
            raise TaskError(f"the verifier exited with {code} and wrote no reward: {_log_tail(log.splitlines(), 3) or 'no output'}",
                            hint="tests/test.sh must always write /logs/verifier/reward.txt; rebuild the task")
        return files, log


def _read_reward(files: dict[str, bytes], log: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None, float]:
    """Harbor's order: reward.json first, else reward.txt; grading.json when present."""
    import json  # noqa: PLC0415
    import math  # noqa: PLC0415

    reward_json = grading = None
    reward: float | None = None
    try:
        if "reward.json" in files:
            reward_json = json.loads(files["reward.json"])
            if isinstance(reward_json, dict) and isinstance(reward_json.get("reward"), (int, float)):
                reward = float(reward_json["reward"])
        if reward is None and "reward.txt" in files:
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


def _staged_path(index: int, src: str) -> str:
    return f"{ARTIFACT_STAGING}/{index}/{PurePosixPath(src).name or 'root'}"
