"""Write what a built-in ships of its builds' work: ``artifacts/NAME/kept/runs.json.gz``
and ``kept/verdicts.json.gz``.

A build whose sweep spec reveals programs runs each of them on the scenarios its stress
selection draws; most of those (the public candidates, the revealing probe draws) are
drawn alike whatever the secret, and a first build on a new machine would run them all
again. This script builds each named built-in several times (``--secrets``, default
:data:`SECRETS`) in one throwaway ``$RECON_HOME``, each build with a throwaway secret, and
ships what its revealed programs printed there (:class:`recon.grader.ShippedRuns`) and its
mutants' verdicts (:class:`recon.mutation.store.VerdictStore`): a later build looks a run
up by the program's and the scenario's content, a verdict by the mutant's edit and the
scenario's parameters, and runs only what it does not find. Which public candidates a
build runs its programs on (those nearest to where a program failed on the keyed hidden
scenarios, the extra public pool when some mutant's kill is not shown yet, the extra rounds
of draws) depends on its secret; builds with more secrets ship more of what a first build
elsewhere would otherwise run, each costing only the runs the earlier ones did not make.

    python tests/catalog/keep_runs.py [--secrets N] [NAME ...]    # default: the three core built-ins
    python tests/catalog/keep_runs.py --draws [NAME ...]          # only describe the scenarios and do the candidates' work again

Beside the runs, the file describes each scenario they ran on as the oracle makes it (its
document's key and its truth, made again by the oracle when the runs are shipped): a build
judges a shipped run without generating its scenario (``recon.mutation.selection.ship_draws``).
It describes the public candidates of the build's stress selection too (its extra pool
included), with the reference's trace on each (the lines it ran, the weak-mutation keys that
differed): a build makes its mutants and prunes them there without generating them. Every
revealed program's run on each candidate is shipped too: which of them a build tries
depends on its secret.

``tests/test_kept_runs.py`` (in the default suite, so in CI) fails when a shipped file no
longer matches its oracle (its code, its revealed programs, recon's version or the limits
they run under): run this script again then, and commit the files.
"""
from __future__ import annotations

import argparse
import os
import secrets
import tempfile
import time
from pathlib import Path


#: builds (each with its own throwaway secret) whose secret-independent work is shipped
SECRETS = 3


def keep(name: str, secrets_: int = SECRETS) -> None:
    from recon.build import build_task
    from recon.grader import ShippedRuns
    from recon.mutation.selection import ship_kept
    from recon.mutation.store import VerdictStore
    from recon.registry import Registry
    from recon.sweep import load_spec

    reg = Registry.default()
    oracle = reg.get(name)
    spec = load_spec(oracle, None)
    if spec.select != "stress" or not spec.reveal:
        raise SystemExit(f"{name}: its sweep spec reveals no program (nothing to ship)")
    files = (ShippedRuns.path_of(oracle), VerdictStore.shipped_path(oracle))
    for f in files:
        f.unlink(missing_ok=True)   # built without the old files, so that every run is made afresh
    with tempfile.TemporaryDirectory(prefix="recon-keep-") as tmp:
        os.environ["RECON_HOME"] = str(Path(tmp) / "home")
        t0 = time.perf_counter()
        for i in range(secrets_):
            print(f"{name}: build {i + 1} of {secrets_} (a throwaway secret)", flush=True)
            build_task(reg, name, Path(tmp) / "tasks", secret=secrets.token_hex(16), workers=os.cpu_count() or 1,
                       log=lambda msg: print(f"  {msg}", flush=True))
        runs, verdicts = ship_kept(oracle, spec)
    print(f"{name}: {runs} runs ({files[0].stat().st_size // 1024} KiB) and {verdicts} mutant verdicts "
          f"({files[1].stat().st_size // 1024} KiB) in {files[0].parent}; {secrets_} builds in "
          f"{time.perf_counter() - t0:.0f} s",
          flush=True)


def describe(name: str) -> None:
    """Describe the scenarios of the runs ``name`` ships again, and do what a build asks of
    its public candidates (the mutants' verdicts, the revealed programs' runs), without
    building it."""
    from recon.mutation.engine import DEFAULT_MEMORY
    from recon.mutation.selection import ship_draws
    from recon.mutation.store import VerdictStore
    from recon.registry import Registry
    from recon.sweep import load_spec

    t0 = time.perf_counter()
    oracle = Registry.default().get(name)
    with tempfile.TemporaryDirectory(prefix="recon-keep-") as tmp:
        # a home of its own: the mutants' verdicts on the public candidates are added to the
        # ones shipped, never to (or from) a user's, which holds hidden scenarios' verdicts
        os.environ["RECON_HOME"] = str(Path(tmp) / "home")
        n = ship_draws(oracle, spec=load_spec(oracle, None), workers=os.cpu_count() or 1)
        verdicts = VerdictStore.for_oracle(oracle, memory=DEFAULT_MEMORY).write_shipped(
            VerdictStore.shipped_path(oracle), oracle, keep_shipped=True)
    print(f"{name}: {n} scenarios described, {verdicts} mutant verdicts shipped, in {time.perf_counter() - t0:.0f} s",
          flush=True)


#: the built-ins whose first build the README times: the README's first command builds lidar_icp
CORE = ("lidar_icp", "chem_smarts", "acoustic_beamforming")


def _count(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return n


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Write what the named built-ins ship of their builds' work.")
    parser.add_argument("--secrets", type=_count, default=SECRETS, help=f"builds, each with a throwaway secret "
                        f"(default {SECRETS})")
    parser.add_argument("--draws", action="store_true", help="only describe the scenarios of the runs shipped "
                        "and the public candidates (their documents' keys and truths, the candidates' traces), made "
                        "again by the oracle and reference of this code, and run the mutants and the revealed programs "
                        "on the candidates")
    parser.add_argument("names", nargs="*", metavar="NAME", help="built-ins (default: the three core ones)")
    args = parser.parse_args()
    for n in args.names or CORE:
        if args.draws:
            describe(n)
        else:
            keep(n, args.secrets)
