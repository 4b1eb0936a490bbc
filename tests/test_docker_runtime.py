"""The docker runtime.

Without an engine, every SDK call the runtime makes is checked against a fake client
that records them (and that validates its arguments through the real SDK's own
argument handling, so the fake cannot drift from what docker-py accepts). The
no-engine message goes through the real SDK. Tests marked ``docker`` need a running
engine and skip cleanly when none answers.
"""
from __future__ import annotations

import inspect
import io
import json
import os
import tarfile
import threading
import time
from pathlib import Path, PurePosixPath
from typing import Any

import docker
import docker.constants
import docker.errors
import pytest
from click.testing import CliRunner
from docker.api.build import BuildApiMixin
from docker.models.containers import _create_container_args

from recon.cli import cli
from recon.errors import ReconError, RuntimeUnavailable, TaskError
from recon.runtimes import docker as rdocker
from recon.runtimes.docker import DockerEngineError, DockerTaskRunner, context_digest, engine_available

BUILD_PARAMS = set(inspect.signature(BuildApiMixin.build).parameters) - {"self"}

TASK_TOML = """schema_version = "1.4"
artifacts = ["/app/workspace"]

[task]
name = "recon/mini_task"
version = "1.0.0"

[agent]
timeout_sec = 120.0
user = "agent"

[verifier]
timeout_sec = 300.0
environment_mode = "separate"
user = "root"

[verifier.environment]
network_mode = "no-network"
cpus = 1
memory_mb = 1024

[environment]
network_mode = "no-network"
build_timeout_sec = 900.0
cpus = 2
memory_mb = 2048
"""


def _tar(files: dict[str, tuple[bytes, int]], *, links: dict[str, str] | None = None, uid: int = 1000,
         top: str | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        dirs = sorted(({str(PurePosixPath(n).parent) for n in files} | ({top} if top else set())) - {"."})
        for d in dirs:
            info = tarfile.TarInfo(d)
            info.type, info.mode, info.uid = tarfile.DIRTYPE, 0o755, uid
            tar.addfile(info)
        for name, (data, mode) in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid = len(data), mode, uid
            tar.addfile(info, io.BytesIO(data))
        for name, target in sorted((links or {}).items()):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buf.getvalue()


def _untar(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: m for m in tar.getmembers()}


def _untar_bytes(data: bytes) -> dict[str, bytes]:
    out = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for m in tar.getmembers():
            if m.isreg():
                fh = tar.extractfile(m)
                assert fh is not None
                out[m.name] = fh.read()
    return out


# --------------------------------------------------------------------------- the fake SDK

class FakeExecResult:
    def __init__(self, exit_code: int, output: bytes) -> None:
        self.exit_code, self.output = exit_code, output


class FakeContainer:
    """A container's file system (path -> (bytes, mode, uid); dirs -> (mode, uid)) and the
    commands Harbor's flow runs in it, interpreted just enough to check the runner."""

    def __init__(self, client: FakeClient, image: str, kwargs: dict[str, Any]) -> None:
        self.client = client
        self.image = image
        self.kwargs = kwargs
        self.name = kwargs.get("name", "c")
        self.role = kwargs["labels"]["org.recon.role"]
        self.fs: dict[str, tuple[bytes, int, int]] = {}
        self.dirs: dict[str, tuple[int, int]] = {"/app/workspace": (0o755, 1000)}
        self.links: dict[str, str] = {}
        self.archives_in: list[tuple[str, bytes]] = []
        self.execs: list[dict[str, Any]] = []
        self.removed: dict[str, Any] | None = None
        self.killed = threading.Event()
        if self.role == "agent":
            self.fs["/app/workspace/README.md"] = (b"starter\n", 0o644, 1000)
            self.fs.update(client.agent_extra_files)
            self.links.update(client.agent_extra_links)

    def start(self) -> None:
        self.client.calls.append(("start", self.role))
        if self.client.start_error is not None and self.role == self.client.fail_role:
            raise self.client.start_error

    def _readable_by(self, path: str, user: str | None) -> bool:
        if user in (None, "root"):
            return True
        uid = 1000 if user == "agent" else -1
        parts = PurePosixPath(path).parents
        for d in [str(p) for p in parts if str(p) != "/"]:
            mode, owner = self.dirs.get(d, (0o755, 0))
            if not (mode & (0o100 if owner == uid else 0o001)):
                return False
        return True

    def exec_run(self, cmd: list[str], user: str | None = None, environment: dict[str, str] | None = None,
                 **kw: Any) -> FakeExecResult:
        command = cmd[-1]
        self.execs.append({"command": command, "user": user, "env": dict(environment or {})})
        self.client.calls.append(("exec", self.role, user, command))
        if self.client.exec_error is not None and self.role == self.client.fail_role and command.startswith("(/"):
            raise self.client.exec_error
        if "find " in command and "-mindepth 1" in command:         # Harbor's empty_dirs
            target = command.split("mkdir -p ", 1)[1].split(" ", 1)[0].strip("'")
            for k in [k for k in self.fs if k.startswith(target + "/")]:
                del self.fs[k]
            self.dirs[target] = (0o777, self.dirs.get(target, (0, 0))[1])
        elif command == "(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1":
            if not self._readable_by("/solution/solve.sh", user):
                self.fs["/logs/agent/oracle.txt"] = (b"bash: line 1: /solution/solve.sh: Permission denied\n", 0o644, 0)
                return FakeExecResult(126, b"")
            self.fs["/logs/agent/oracle.txt"] = (b"installed reconstruct.py\n", 0o644, 1000)
            if self.client.agent_exit_code == 0:
                self.fs["/app/workspace/reconstruct.py"] = self.fs["/solution/reconstruct.py"]
            return FakeExecResult(self.client.agent_exit_code, b"")
        elif command == "(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1":
            if self.client.verifier_hangs:
                self.killed.wait(30)
                return FakeExecResult(137, b"")
            solved = "/app/workspace/reconstruct.py" in self.fs
            reward = 1.0 if solved else 0.0
            grading = {"reward": reward, "binary": int(solved), "rung": {"index": 6 if solved else 0, "name": "x"},
                       "rungs": [], "runs": 0, "nonce": "n"}
            for name, data in (("reward.txt", f"{reward}\n".encode()),
                               ("reward.json", json.dumps({"reward": reward, "binary": int(solved)}).encode()),
                               ("grading.json", json.dumps(grading).encode()),
                               ("test-stdout.txt", b"graded\n")):
                self.fs[f"/logs/verifier/{name}"] = (data, 0o644, 0)
        return FakeExecResult(0, b"")

    def put_archive(self, path: str, data: bytes) -> bool:
        self.client.calls.append(("put_archive", self.role, path))
        self.archives_in.append((path, data))
        for name, m in _untar(data).items():
            full = str(PurePosixPath(path) / name)
            if m.isdir():
                self.dirs[full] = (m.mode, m.uid)
            elif m.isreg():
                self.fs[full] = (_untar_bytes(data)[name], m.mode, m.uid)
        return True

    def get_archive(self, path: str) -> tuple[Any, dict[str, Any]]:
        self.client.calls.append(("get_archive", self.role, path))
        base = PurePosixPath(path).name
        if path in self.fs:
            data = _tar({base: self.fs[path][:2]})
            return iter([data]), {"name": base}
        files = {base + k[len(path):]: (v[0], v[1]) for k, v in self.fs.items() if k.startswith(path + "/")}
        links = {base + k[len(path):]: v for k, v in self.links.items() if k.startswith(path + "/")}
        if not files and not links and path not in self.dirs:
            raise docker.errors.NotFound(f"Could not find the file {path} in container")
        data = _tar(files, links=links, top=base)
        return iter([data[i:i + 1000] for i in range(0, len(data), 1000)]), {"name": base}

    def kill(self) -> None:
        self.killed.set()

    def stop(self, timeout: int = 10) -> None:
        self.client.calls.append(("stop", self.role))

    def remove(self, **kwargs: Any) -> None:
        self.client.calls.append(("remove", self.role, kwargs))
        self.removed = kwargs


class FakeImages:
    def __init__(self, client: FakeClient) -> None:
        self.client = client
        self.tags: set[str] = set()
        self.build_error: Exception | None = None

    def get(self, tag: str) -> object:
        self.client.calls.append(("images.get", tag))
        if tag not in self.tags:
            raise docker.errors.ImageNotFound(f"No such image: {tag}")
        return object()

    def build(self, **kwargs: Any) -> tuple[object, Any]:
        unknown = set(kwargs) - BUILD_PARAMS
        assert not unknown, f"docker-py's build() takes no {unknown}"
        self.client.calls.append(("images.build", kwargs))
        if self.build_error is not None:
            raise self.build_error
        self.tags.add(kwargs["tag"])
        return object(), iter([{"stream": "Step 1/1 : FROM python:3.11-slim\n"}])


class FakeContainers:
    def __init__(self, client: FakeClient) -> None:
        self.client = client
        self.created: list[FakeContainer] = []

    def create(self, image: str, command: Any = None, **kwargs: Any) -> FakeContainer:
        # The real SDK's own split of create() arguments: raises on anything it would refuse.
        _create_container_args({**kwargs, "image": image, "command": command,
                                "version": docker.constants.DEFAULT_DOCKER_API_VERSION})
        self.client.calls.append(("containers.create", image, kwargs))
        c = FakeContainer(self.client, image, {**kwargs, "command": command})
        self.created.append(c)
        return c


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.images = FakeImages(self)
        self.containers = FakeContainers(self)
        self.agent_extra_files: dict[str, tuple[bytes, int, int]] = {}
        self.agent_extra_links: dict[str, str] = {}
        self.agent_exit_code = 0
        self.fail_role: str | None = None
        self.exec_error: BaseException | None = None
        self.start_error: BaseException | None = None
        self.verifier_hangs = False

    def ping(self) -> bool:
        return True

    def close(self) -> None:
        pass

    def created(self, role: str) -> FakeContainer:
        return next(c for c in self.containers.created if c.role == role)

    def builds(self) -> list[dict[str, Any]]:
        return [c[1] for c in self.calls if c[0] == "images.build"]


@pytest.fixture
def mini_task(tmp_path: Path) -> Path:
    """The parts of a built task the docker runtime reads (plus what load_task needs)."""
    root = tmp_path / "mini_task"
    (root / "environment" / "app" / "workspace").mkdir(parents=True)
    (root / "environment" / "Dockerfile").write_text("FROM python:3.11-slim\nCOPY app/ /app/\n")
    (root / "environment" / "app" / "workspace" / "README.md").write_text("starter\n")
    (root / "tests").mkdir()
    (root / "tests" / "Dockerfile").write_text("FROM python:3.11-slim\nCOPY . /tests/\n")
    (root / "tests" / "test.sh").write_text("#!/bin/bash\nexit 0\n")
    (root / "tests" / "grader.json").write_text(json.dumps({
        "oracle": "mini_task", "oracle_version": "1.0.0", "task_key": "00", "spec": {}, "public": [], "hidden": [],
        "outputs": {}, "limits": {}, "ladder": "six_rung", "task": "recon/mini_task"}))
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text('#!/bin/bash\ncp "$(dirname "$0")/reconstruct.py" /app/workspace/\n')
    (root / "solution" / "reconstruct.py").write_text("print('{}')\n")
    for p in [root / "tests", *(root / "tests").iterdir()]:
        p.chmod(0o700)  # like a real build: the verifier side is owner-only ...
    (root / "solution").chmod(0o755)  # ... and the solution readable, since Harbor copies it with its modes
    (root / "solution" / "solve.sh").chmod(0o755)
    (root / "task.toml").write_text(TASK_TOML)
    return root


# --------------------------------------------------------------------------- engine detection

def test_no_engine_message_through_the_real_sdk(tmp_path: Path) -> None:
    url = f"unix://{tmp_path}/nothing-here.sock"
    t0 = time.perf_counter()
    with pytest.raises(RuntimeUnavailable) as info:
        rdocker.connect(environ={"DOCKER_HOST": url})
    assert time.perf_counter() - t0 < 10
    exc = info.value
    assert exc.exit_code == 5
    assert exc.message.startswith(f"no Docker engine answered at {url}")
    assert "\n" not in exc.message
    assert exc.hint is not None and "--runtime local" in exc.hint and "dockerd" in exc.hint


class _SlowEngine:
    """An engine on a unix socket whose first ``slow`` requests each take ``delay`` seconds.

    It answers the two calls a connect makes (``/version`` and ``/_ping``), enough for
    the real SDK, like a daemon busy removing containers on a loaded machine.
    """

    def __init__(self, path: Path, *, slow: int, delay: float) -> None:
        import http.server
        import socketserver

        engine = self
        self.requests = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def address_string(self) -> str:
                return "unix"

            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                engine.requests += 1
                if engine.requests <= slow:
                    time.sleep(delay)
                body = (b'{"ApiVersion": "1.43", "Version": "24.0.0"}' if self.path.endswith("/version")
                        else b"OK")
                try:
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up waiting

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        self.server = Server(str(path), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_busy_engine_is_waited_for_and_an_absent_one_is_not(tmp_path: Path) -> None:
    sock = tmp_path / "busy.sock"
    engine = _SlowEngine(sock, slow=2, delay=1.5)
    try:
        env = {"DOCKER_HOST": f"unix://{sock}"}
        # a wanted engine: two answers slower than the first ping's 1 s allowance, then it answers
        client = rdocker.connect(environ=env, timeout=1.0, patience=20.0)
        client.close()
        assert engine.requests >= 3
        # a probe does not wait: the same slowness is "no answer in time" after one try
        # (counted, not timed: a loaded machine stretches any wall-clock bound)
        engine.requests = 0
        with pytest.raises(RuntimeUnavailable, match="no answer in time"):
            rdocker.connect(environ=env, timeout=1.0, patience=0.0)
        assert engine.requests == 1
    finally:
        engine.close()
    # gone: refused or missing fails at once, however much patience there is (half the
    # patience is a bound no loaded machine reaches and any waiting client passes)
    t0 = time.perf_counter()
    with pytest.raises(RuntimeUnavailable):
        rdocker.connect(environ={"DOCKER_HOST": f"unix://{sock}"}, timeout=1.0, patience=60.0)
    assert time.perf_counter() - t0 < 30


def test_engine_available_is_false_cached_and_never_raises(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    monkeypatch.setattr(rdocker, "_engine_cache", {})
    t0 = time.perf_counter()
    assert engine_available() is False
    assert time.perf_counter() - t0 < 10      # no waiting for an engine that is not there
    # a socket that exists but answers garbage: the probe goes through the SDK and still says no
    (tmp_path / "none.sock").write_text("")

    def boom(**_: Any) -> Any:
        raise ValueError("anything at all")

    monkeypatch.setattr(rdocker, "connect", boom)
    assert engine_available() is False            # cached: no second probe
    assert engine_available(refresh=True) is False  # probed again: the error is swallowed


def test_cli_runtime_docker_without_engine_is_one_clean_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                             mini_task: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    res = CliRunner().invoke(cli, ["run", str(mini_task), "--agent", "oracle", "--runtime", "docker"])
    assert res.exit_code == 5, res.output
    assert "Traceback" not in res.output
    errors = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "no Docker engine answered at unix://" in errors[0]
    assert "fix:" in res.output and "--runtime" in res.output


# --------------------------------------------------------------------------- the run, on the fake

def test_oracle_run_replays_harbors_calls(mini_task: Path) -> None:
    client = FakeClient()
    result = DockerTaskRunner(mini_task, client=client).run("oracle", nonce="abc123", probes=2)
    assert result.reward == 1.0 and result.grading is not None and result.reward_text == "1.0"

    # images: built from environment/ and tests/, tagged by their content hash
    builds = client.builds()
    assert [b["path"] for b in builds] == [str(mini_task / "environment"), str(mini_task / "tests")]
    env_hash, tests_hash = context_digest(mini_task / "environment"), context_digest(mini_task / "tests")
    assert builds[0]["tag"] == f"recon/mini_task:env-{env_hash[:16]}"
    assert builds[1]["tag"] == f"recon/mini_task:verifier-{tests_hash[:16]}"
    assert all(b["rm"] and b["forcerm"] and b["timeout"] == 900 for b in builds[:1])

    # agent environment: idles like compose's service, with the task's network and limits
    agent = client.created("agent")
    assert agent.image == builds[0]["tag"]
    assert agent.kwargs["command"] == ["sh", "-c", "sleep infinity"] and "user" not in agent.kwargs
    assert agent.kwargs["network_mode"] == "none"
    assert agent.kwargs["mem_limit"] == "2048m" and agent.kwargs["memswap_limit"] == "2048m"
    assert agent.kwargs["nano_cpus"] == 2_000_000_000
    # the oracle agent: solution/ copied with its own modes and owners (docker cp), chmod +x as
    # root, solve.sh run as the agent user into /logs/agent/oracle.txt
    [(path, data)] = agent.archives_in
    members = _untar(data)
    assert path == "/" and {"solution", "solution/solve.sh", "solution/reconstruct.py"} <= set(members)
    on_disk = (mini_task / "solution").stat()
    assert members["solution"].mode == on_disk.st_mode & 0o7777 and members["solution"].uid == on_disk.st_uid
    runs = [(e["user"], e["command"]) for e in agent.execs]
    assert runs[0][0] == "root" and runs[0][1].startswith("mkdir -p /logs/verifier /logs/agent /logs/artifacts")
    assert ("root", "chmod +x /solution/solve.sh") in runs
    assert ("agent", "(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1") in runs
    assert next(e for e in agent.execs if "solve.sh)" in e["command"])["env"] == {"DEBIAN_FRONTEND": "noninteractive"}
    assert result.agent_log == "installed reconstruct.py\n"

    # hand-over: /app/workspace downloaded, uploaded into an emptied 0777 directory of the verifier
    assert ("get_archive", "agent", "/app/workspace") in client.calls
    verifier = client.created("verifier")
    assert verifier.image == builds[1]["tag"]
    assert verifier.kwargs["network_mode"] == "none"
    assert verifier.kwargs["mem_limit"] == "1024m" and verifier.kwargs["nano_cpus"] == 1_000_000_000
    assert verifier.dirs["/app/workspace"][0] == 0o777
    assert verifier.fs["/app/workspace/reconstruct.py"][0] == b"print('{}')\n"
    test_run = next(e for e in verifier.execs if "test.sh)" in e["command"])
    assert test_run["user"] == "root" and test_run["env"]["RECON_GRADE_ARGS"] == "--nonce abc123 --probes 2"
    vruns = [e["command"] for e in verifier.execs]
    assert vruns.index("rm -f -- /logs/verifier/reward.txt /logs/verifier/reward.json") < vruns.index(
        "(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1")
    assert ("get_archive", "verifier", "/logs/verifier") in client.calls
    assert set(result.files) >= {"reward.txt", "reward.json", "grading.json", "test-stdout.txt"}

    # phases in Harbor's order, and every container removed with its volumes
    order = [c[:2] for c in client.calls if c[0] in ("start", "stop")]
    assert order == [("start", "agent"), ("stop", "agent"), ("start", "verifier")]
    assert all(c.removed == {"force": True, "v": True} for c in client.containers.created)
    assert len(client.containers.created) == 2


def test_an_owner_only_solution_fails_as_under_harbor(mini_task: Path) -> None:
    """Harbor copies solution/ with its modes and runs solve.sh as the agent user: a 0700
    solution/ gives `Permission denied` (exit 126) and the untouched workspace scores 0."""
    (mini_task / "solution").chmod(0o700)
    client = FakeClient()
    result = DockerTaskRunner(mini_task, client=client).run("oracle")
    assert result.reward == 0.0
    assert "Permission denied" in result.agent_log
    assert any("solve.sh exited with 126" in n for n in result.notes)
    assert "/app/workspace/reconstruct.py" not in client.created("verifier").fs


def test_nop_run_uploads_nothing_and_grades_the_untouched_workspace(mini_task: Path) -> None:
    client = FakeClient()
    result = DockerTaskRunner(mini_task, client=client).run("nop")
    assert result.reward == 0.0
    agent = client.created("agent")
    assert agent.archives_in == [] and not any("solve.sh" in e["command"] for e in agent.execs)
    verifier = client.created("verifier")
    assert set(k for k in verifier.fs if k.startswith("/app/workspace/")) == {"/app/workspace/README.md"}
    assert "RECON_GRADE_ARGS" not in next(e for e in verifier.execs if "test.sh)" in e["command"])["env"]
    assert all(c.removed for c in client.containers.created)


def test_unchanged_task_is_not_rebuilt(mini_task: Path) -> None:
    client = FakeClient()
    DockerTaskRunner(mini_task, client=client).run("nop")
    assert len(client.builds()) == 2
    DockerTaskRunner(mini_task, client=client).run("nop")
    assert len(client.builds()) == 2          # both tags already exist
    (mini_task / "environment" / "Dockerfile").write_text("FROM python:3.11-slim\nCOPY app/ /app/\n# changed\n")
    DockerTaskRunner(mini_task, client=client).run("nop")
    assert [b["path"] for b in client.builds()[2:]] == [str(mini_task / "environment")]


def test_artifacts_cross_like_harbor_data_filter(mini_task: Path) -> None:
    client = FakeClient()
    client.agent_extra_files = {"/app/workspace/suid": (b"x", 0o4755, 1000),
                                "/app/workspace/sub/data.txt": (b"d", 0o620, 1000)}
    client.agent_extra_links = {"/app/workspace/escape": "/etc/shadow"}
    result = DockerTaskRunner(mini_task, client=client).run("nop")
    verifier = client.created("verifier")
    [(path, data)] = [a for a in verifier.archives_in if a[0] == "/app/workspace"]
    members = _untar(data)
    assert members["suid"].mode == 0o755                   # setuid bit stripped
    assert members["sub/data.txt"].mode == 0o600           # group write dropped, owner rw kept
    assert "escape" not in members                          # link out of the artifact dropped
    assert all(m.uid == os.getuid() for m in members.values())   # owned by whoever runs the harness
    assert any("escape" in n for n in result.notes)


@pytest.mark.parametrize("where", ["agent", "verifier"])
def test_containers_removed_on_ctrl_c(mini_task: Path, where: str) -> None:
    client = FakeClient()
    client.fail_role, client.exec_error = where, KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        DockerTaskRunner(mini_task, client=client).run("oracle")
    created = client.containers.created
    assert len(created) == (1 if where == "agent" else 2)
    assert all(c.removed == {"force": True, "v": True} for c in created)


def test_containers_removed_when_the_engine_fails_mid_run(mini_task: Path) -> None:
    client = FakeClient()
    client.fail_role = "verifier"
    client.start_error = docker.errors.APIError("500 Server Error", explanation="no space left on device")
    with pytest.raises(DockerEngineError) as info:
        DockerTaskRunner(mini_task, client=client).run("oracle")
    assert "\n" not in info.value.message and "no space left on device" in info.value.message
    assert info.value.hint is not None and "disk" in info.value.hint
    assert all(c.removed for c in client.containers.created) and len(client.containers.created) == 2


def test_verifier_timeout_kills_and_removes(mini_task: Path) -> None:
    (mini_task / "task.toml").write_text(TASK_TOML.replace("timeout_sec = 300.0", "timeout_sec = 0.5"))
    client = FakeClient()
    client.verifier_hangs = True
    with pytest.raises(TaskError, match="verifier phase did not finish within 0 s|verifier phase did not finish within 1 s"):
        DockerTaskRunner(mini_task, client=client).run("nop")
    assert client.created("verifier").killed.is_set()
    assert all(c.removed for c in client.containers.created)


def test_failing_solve_sh_is_graded_like_harbor_and_noted(mini_task: Path) -> None:
    client = FakeClient()
    client.agent_exit_code = 3
    result = DockerTaskRunner(mini_task, client=client).run("oracle")
    assert result.reward == 0.0 and any("solve.sh exited with 3" in n for n in result.notes)
    assert [c.role for c in client.containers.created] == ["agent", "verifier"]
    assert all(c.removed for c in client.containers.created)


def test_build_failure_is_one_line_with_the_log_tail(mini_task: Path) -> None:
    client = FakeClient()
    log = [{"stream": "Step 1/4 : FROM python:3.11-slim\n"}, {"stream": "Step 2/4 : RUN pip install nope==0\n"},
           {"stream": "ERROR: No matching distribution found for nope==0\n"},
           {"error": "The command '/bin/sh -c pip install nope==0' returned a non-zero code: 1"}]
    client.images.build_error = docker.errors.BuildError(
        "The command '/bin/sh -c pip install nope==0' returned a non-zero code: 1", iter(log))
    with pytest.raises(DockerEngineError) as info:
        DockerTaskRunner(mini_task, client=client).run("oracle")
    msg = info.value.message
    assert "\n" not in msg and msg.startswith("docker build of the agent image from ")
    assert "No matching distribution found for nope==0" in msg and "returned a non-zero code: 1" in msg
    assert info.value.exit_code == 5 and isinstance(info.value, ReconError)
    assert client.containers.created == []


@pytest.mark.parametrize("explanation, hint_word", [
    ("pull access denied for nosuchimage, repository does not exist or may require 'docker login'", "docker login"),
    ("failed to copy: write /var/lib/docker/tmp: no space left on device", "disk"),
])
def test_engine_refusals_have_a_fix(mini_task: Path, explanation: str, hint_word: str) -> None:
    client = FakeClient()
    client.images.build_error = docker.errors.APIError("500 Server Error", explanation=explanation)
    with pytest.raises(DockerEngineError) as info:
        DockerTaskRunner(mini_task, client=client).run("nop")
    assert "\n" not in info.value.message and explanation[:30] in info.value.message
    assert info.value.hint is not None and hint_word in info.value.hint


def test_network_and_limits_follow_task_toml(mini_task: Path) -> None:
    text = TASK_TOML.replace('[agent]\ntimeout_sec = 120.0\nuser = "agent"',
                             '[agent]\ntimeout_sec = 120.0\nuser = "agent"\nnetwork_mode = "public"')
    (mini_task / "task.toml").write_text(text.replace("memory_mb = 2048", "memory_mb = 512"))
    client = FakeClient()
    DockerTaskRunner(mini_task, client=client).run("nop")
    agent, verifier = client.created("agent"), client.created("verifier")
    assert agent.kwargs["network_mode"] == "bridge" and agent.kwargs["mem_limit"] == "512m"
    assert verifier.kwargs["network_mode"] == "none"


@pytest.mark.parametrize("reward_json, ok", [('{"reward": 1.0, "binary": 1}', True),
                                             ('{"reward": 1.0, "series": [1, 2]}', False),
                                             ('{"reward": 1e999}', False)])
def test_reward_files_are_read_by_harbors_rules(reward_json: str, ok: bool) -> None:
    files = {"reward.json": reward_json.encode(), "reward.txt": b"1.0\n"}
    if ok:
        assert rdocker._read_reward(files, "")[2] == 1.0
    else:
        with pytest.raises(TaskError, match="reward"):
            rdocker._read_reward(files, "")


def test_recon_run_docker_through_the_fake(monkeypatch: pytest.MonkeyPatch, mini_task: Path, tmp_path: Path) -> None:
    client = FakeClient()
    monkeypatch.setattr(rdocker, "connect", lambda **_: client)
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["run", str(mini_task), "--agent", "oracle", "--runtime", "docker", "--json",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["runtime"] == "docker" and doc["reward"] == 1.0 and doc["binary"] == 1
    assert (out / "reward.txt").read_text() == "1.0\n" and (out / "grading.json").is_file()
    res = CliRunner().invoke(cli, ["run", str(mini_task), "--agent", "nop", "--runtime", "docker", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["reward"] == 0.0


# --------------------------------------------------------------------------- a real engine

needs_engine = pytest.mark.skipif(not engine_available(), reason="no Docker engine answered")


@pytest.mark.docker
@needs_engine
def test_real_engine_leaves_no_containers(lidar_task: Path) -> None:
    from recon.run import run_task

    client = rdocker.connect()
    try:
        run_task(lidar_task, "nop", runtime="docker", client=client)
        assert client.containers.list(all=True, filters={"label": rdocker.LABEL}) == []
    finally:
        client.close()
