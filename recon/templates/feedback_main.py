"""Feedback on the public scenarios: runs /app/workspace/reconstruct.py on each published
scenario and compares its output with the oracle's, field by field, with the task's
tolerances. Public feedback is a hint: hidden scenarios and fresh probes decide the score.

usage: feedback [SCENARIO_ID ...] [--json] [--timeout SECONDS]
lines: "public_3  xmax  PASS  (0.62 tol)": within tolerance, at 0.62 of it (0.00: exact);
       "public_2  ymean  MISMATCH  got ...  want ...  (abs tol 0.001)  230 tol off"
exit:  0 every field of every scenario passes, 1 some field mismatches,
       2 the program failed to run on some scenario, 3 bad usage or broken observations
"""
# BEGIN-STRIP: the build inlines recon/compare.py in place of this import
from recon.compare import MISMATCH, PASS, compare_output, fmt, format_margin, parse_stdout, smiles_available
# END-STRIP

import argparse
import hashlib
import json as _json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

STDOUT_CAP = 16 << 20
STDERR_KEEP = 4000


class Usage(Exception):
    """Bad usage or unusable observations: exit 3."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 3, never argparse's exit 2
        raise Usage(message)


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _paths():
    app = Path(os.path.realpath(__file__)).parent.parent
    return app, app / "observations", app / "workspace"


def _extract(archive, dest, ids):
    """Unpack the folders of the scenarios ``ids`` (None: everything)."""
    prefixes = None if ids is None else tuple(f"{i}/" for i in ids)
    with tarfile.open(archive, "r:gz") as tar:
        members = [m for m in tar.getmembers() if prefixes is None or m.name.startswith(prefixes) or m.name in (ids or ())]
        for m in members:
            if m.name.startswith("/") or ".." in Path(m.name).parts or not (m.isfile() or m.isdir()):
                raise Usage(f"unsafe member {m.name!r} in reference_outputs.tar.gz")
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, members=members, filter="data")
        else:  # pragma: no cover - very old Python
            tar.extractall(dest, members=members)


def _altered(observations, extracted, manifest):
    """Published files whose sha256 differs from manifest.json (or that are missing).
    Called only when the archive's own hash differs: everything was unpacked then."""
    bad = [("reference_outputs.tar.gz", "sha256 differs from manifest.json")]
    for rel, digest in sorted(manifest.get("files", {}).items()):
        if rel == "reference_outputs.tar.gz":
            continue
        p = extracted / rel
        if not p.is_file():
            bad.append((rel, "missing"))
        elif _sha256(p) != digest:
            bad.append((rel, "sha256 differs from manifest.json"))
    return bad


def _run(python, workspace, document, timeout):
    """Run reconstruct.py once: (stdout bytes, failure line or None, stderr tail)."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen([python, "reconstruct.py"], cwd=workspace, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return b"", f"CRASH  could not start python: {exc}", ""
    out, err = bytearray(), bytearray()
    state = {"overflow": False}

    def pump_out():
        while True:
            chunk = proc.stdout.read(65536)
            if not chunk:
                break
            out.extend(chunk)
            if len(out) > STDOUT_CAP:
                state["overflow"] = True
                _kill(proc)
                break

    def pump_err():
        while True:
            chunk = proc.stderr.read(65536)
            if not chunk:
                break
            err.extend(chunk)
            del err[:-STDERR_KEEP]

    threads = [threading.Thread(target=pump_out, daemon=True), threading.Thread(target=pump_err, daemon=True)]
    for t in threads:
        t.start()
    try:
        proc.stdin.write(document)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    # A timer kills on timeout; a plain wait() returns the moment the program exits
    # (wait(timeout=...) polls with sleeps that add up to 50 ms to every run).
    fired = threading.Event()

    def expire():
        fired.set()
        _kill(proc)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    proc.wait()
    timer.cancel()
    timed_out = fired.is_set()
    _kill(proc)  # nothing the run started may outlive it
    for t in threads:
        t.join(timeout=5)
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    tail = err.decode("utf-8", "replace")
    last = [ln.strip() for ln in tail.splitlines() if ln.strip()]
    last_line = last[-1][:200] if last else ""
    if timed_out:
        return bytes(out), f"TIMEOUT  no answer within {timeout:g} s (killed)", tail
    if state["overflow"]:
        return bytes(out), f"TOO MUCH OUTPUT  more than {STDOUT_CAP >> 20} MiB on stdout (killed)", tail
    if proc.returncode != 0:
        how = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exit code {proc.returncode}"
        return bytes(out), f"CRASH  {how}" + (f": {last_line}" if last_line else ""), tail
    del start
    return bytes(out), None, tail


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _check_one(sid, extracted, workspace, fields, timeout):
    sdir = extracted / sid
    document = _json.loads((sdir / "scenario.json").read_text(encoding="utf-8"))
    truth = _json.loads((sdir / "oracle_output.json").read_text(encoding="utf-8"))
    document["inputs"] = {k: str((sdir / v).resolve()) for k, v in document.get("inputs", {}).items()}
    stdin = _json.dumps(document, sort_keys=True).encode("utf-8")
    stdout, failure, tail = _run(sys.executable, workspace, stdin, timeout)
    result = {"id": sid, "failure": None, "stderr_tail": "", "fields": []}
    if failure is None:
        value, why = parse_stdout(stdout)
        if why is not None:
            failure = ("NO OUTPUT  " if why.startswith("no output") else "INVALID JSON  ") + why
        elif not isinstance(value, dict):
            failure = f"INVALID JSON  the output is not a JSON object but {fmt(value, 40)}"
        else:
            result["fields"] = [r._asdict() for r in compare_output(fields, value, truth)]
    if failure is not None:
        result["failure"] = failure
        result["stderr_tail"] = tail[-1500:]
    return result


def _parallel_map(fn, items, workers):
    """fn over items on up to ``workers`` threads, results in order (plain threads: the
    tool starts faster without concurrent.futures)."""
    if workers <= 1:
        return [fn(i) for i in items]
    results = [None] * len(items)
    queue = list(enumerate(items))
    lock = threading.Lock()
    errors = []

    def work():
        while True:
            with lock:
                if not queue:
                    return
                k, item = queue.pop(0)
            try:
                results[k] = fn(item)
            except BaseException as exc:  # re-raised in the main thread
                errors.append(exc)
                return

    threads = [threading.Thread(target=work, daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def main(argv=None):
    parser = _Parser(prog="feedback", description="Compare reconstruct.py with the public scenarios (a hint: hidden scenarios decide the score).")
    parser.add_argument("ids", nargs="*", metavar="SCENARIO_ID", help="public scenario ids (default: all)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per scenario (default: the task's)")
    args = parser.parse_args(argv)
    app, observations, workspace = _paths()
    manifest_path = observations / "manifest.json"
    if not manifest_path.is_file():
        raise Usage(f"no manifest at {manifest_path}: run the tool from the task's tools/ folder")
    manifest = _json.loads(manifest_path.read_text(encoding="utf-8"))
    fields = manifest["outputs"]
    public = list(manifest["public"])
    unknown = [i for i in args.ids if i not in public]
    if unknown:
        raise Usage(f"unknown scenario id {', '.join(unknown)}; the public ones are {', '.join(public)}")
    if args.timeout is not None and not (0 < args.timeout <= 3600):
        raise Usage("--timeout must be seconds in (0, 3600]")
    timeout = args.timeout or float(manifest.get("timeout", 60))
    ids = args.ids or public
    with tempfile.TemporaryDirectory(prefix="feedback-") as tmp:
        extracted = Path(tmp)
        archive = observations / "reference_outputs.tar.gz"
        try:
            # The archive's hash covers every file in it: when it matches the manifest,
            # only the requested scenarios need unpacking; when not, unpack and check all.
            intact = manifest.get("files", {}).get("reference_outputs.tar.gz") == _sha256(archive)
            _extract(archive, extracted, ids if intact else None)
        except (OSError, tarfile.TarError) as exc:
            raise Usage(f"cannot open observations/reference_outputs.tar.gz: {exc}")
        altered = [] if intact else _altered(observations, extracted, manifest)
        if not (workspace / "reconstruct.py").is_file():
            results = [{"id": i, "failure": "NOT FOUND  /app/workspace/reconstruct.py does not exist yet", "stderr_tail": "", "fields": []} for i in ids]
        else:
            results = _parallel_map(lambda i: _check_one(i, extracted, workspace, fields, timeout), ids,
                                    max(1, min(len(ids), os.cpu_count() or 1)))
    return _report(results, altered, fields, args.json, manifest)


def _report(results, altered, fields, as_json, manifest):
    n_ok = sum(1 for r in results if r["failure"] is None and all(f["status"] == PASS for f in r["fields"]))
    n_fields = len(results) * len(fields)
    f_ok = sum(1 for r in results for f in r["fields"] if f["status"] == PASS)
    failed_run = any(r["failure"] for r in results)
    code = 2 if failed_run else (0 if n_ok == len(results) else 1)
    smiles = any(f.get("normalize") == "smiles" for f in fields.values())
    if as_json:
        doc = {"scenarios": results, "altered": [{"file": a, "why": w} for a, w in altered],
               "summary": {"scenarios_passed": n_ok, "scenarios": len(results), "fields_passed": f_ok, "fields": n_fields},
               "exit_code": code}
        print(_json.dumps(doc, indent=2, sort_keys=True))
        return code
    for rel, why in altered:
        print(f"ALTERED  {rel}  {why}: the published evidence was changed; compare against a fresh copy")
    for r in results:
        if r["failure"]:
            print(f"{r['id']}  {r['failure']}")
            tail = [ln for ln in r["stderr_tail"].splitlines() if ln.strip()][-6:]
            if r["failure"].startswith("CRASH") and tail:
                for ln in tail:
                    print(f"    | {ln[:160]}")
            continue
        for f in r["fields"]:
            line = f"{r['id']}  {f['field']}  {f['status']}"
            # The margin in units of the tolerance tells an exact match from one that
            # barely fits, and how far off a mismatch is.
            margin = format_margin(f.get("margin"))
            if f["detail"]:
                line += f"  {f['detail']}"
            if margin and f["status"] == PASS:
                line += f"  ({margin})"
            elif margin and f["status"] == MISMATCH:
                line += f"  {margin} off"
            print(line)
    print(f"public: {n_ok}/{len(results)} scenarios, {f_ok}/{n_fields} fields")
    if smiles and not smiles_available():
        print("note: RDKit is not importable here, so SMILES were compared as written, not canonicalised")
    print("reminder: this is a hint on published scenarios; hidden scenarios and fresh probes decide the score.")
    return code


def _entry():
    try:
        code = main()
    except Usage as exc:
        print(f"feedback: {exc}", file=sys.stderr)
        code = 3
    except KeyboardInterrupt:
        code = 3
    except Exception as exc:  # never a traceback: one line naming what went wrong
        print(f"feedback: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        code = 3
    sys.stdout.flush()
    sys.exit(code)


if __name__ == "__main__":
    _entry()
