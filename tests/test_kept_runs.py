"""Runs an oracle ships (``kept/runs.json.gz``): used as kept runs where they apply, never
where the limits, recon or the libraries differ, never copied into the user's cache; and
the core built-ins' files current (their code, their revealed programs) and reproducible
(a shipped run is what the program prints on the scenario the oracle makes again)."""
from __future__ import annotations

import base64
import dataclasses
import gzip
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from recon import Registry, canonjson, compare
from recon._version import __version__
from recon.grader import RunMemo, ShippedRuns, decode_run, encode_run, library_versions
import recon.mutation.store as store_module
from recon.fsutil import read_json_gz
from recon.mutation import Engine
from recon.mutation.engine import DEFAULT_MEMORY
from recon.mutation.pool import prepare_workspace
from recon.mutation.store import VerdictStore, scenario_digest
from recon.build import build_task
from recon.mutation.selection import (MORE_DRAWS, REVEAL_GRADINGS, fresh_draws, public_candidates, public_extra,
                                     reveal_limits, reveal_programs, ship_kept)
from recon.runtimes import get_runtime
from recon.runtimes.base import Limits, RunResult, SessionPool
from recon.runtimes.snapshot import tree_digest
from recon.sweep import Scenario, load_spec, run_scenario
from recon.task import load_task

sys.path.insert(0, str(Path(__file__).parent / "catalog"))
from keep_runs import CORE  # noqa: E402



def _same_up_to_rounding(a: Any, b: Any, rel: float = 1e-9) -> bool:
    """The same JSON value, floats equal to ``rel`` (the last bits a CPU's SIMD path decides)."""
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
                and not isinstance(b, bool) and abs(a - b) <= rel * max(abs(a), abs(b), 1e-300))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_up_to_rounding(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_up_to_rounding(a[k], b[k], rel) for k in a)
    return bool(a == b)


def test_same_up_to_rounding_is_strict_beyond_the_last_bits() -> None:
    assert _same_up_to_rounding({"x": [50.70096847768173, 2]}, {"x": [50.70096847768022, 2]})
    assert not _same_up_to_rounding({"x": [50.7009684776, 2]}, {"x": [50.7009685776, 2]})
    assert not _same_up_to_rounding({"x": 1.0}, {"x": True}) and not _same_up_to_rounding([1.0], [1.0, 2.0])
    assert not _same_up_to_rounding({"x": "a"}, {"x": "b"}) and not _same_up_to_rounding({"x": 1.0}, {"y": 1.0})


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.default()


def _oracle_copy(registry: Registry, tmp: Path):  # type: ignore[no-untyped-def]
    """An oracle whose module sits in ``tmp`` (so that its shipped file is the test's own)."""
    o = registry.get("lidar_icp")
    mod = tmp / "pkg" / "oracle.py"
    mod.parent.mkdir(parents=True)
    mod.write_text("# stand-in\n")
    return dataclasses.replace(o, source_file=str(mod))


def test_a_kept_run_keeps_its_output_as_text_when_it_is_utf8_and_reads_the_older_form(tmp_path: Path) -> None:
    text = RunResult(exit_code=0, stdout='{"name": "Ångström"}'.encode(), stderr_tail="", seconds=0.5, cpu_seconds=0.4)
    raw = RunResult(exit_code=0, stdout=b"\xff\xfe{", stderr_tail="x", seconds=0.1, cpu_seconds=None)
    assert encode_run(text)["stdout_text"] == '{"name": "Ångström"}' and "stdout" not in encode_run(text)
    assert encode_run(raw)["stdout"] == base64.b64encode(raw.stdout).decode() and "stdout_text" not in encode_run(raw)
    for r in (text, raw):
        assert decode_run(encode_run(r, {"id": "s"})) == r
    older = {**{k: v for k, v in encode_run(text).items() if k != "stdout_text"},
             "stdout": base64.b64encode(text.stdout).decode(), "scenario": {"id": "s", "parameters": {}}}
    assert decode_run(older) == text
    assert decode_run({**older, "stdout": "not base64!"}) is None
    # what a hostile program may print comes back byte for byte from a kept file: bytes
    # that only look like UTF-8 (an encoded surrogate), NULs, and text that looks like the
    # file's own keys
    memo = RunMemo(tmp_path / "runs", {"limits": "test"})
    printed = [b"\xed\xa0\x80{}", b'{"stdout_text": "x"}\x00\n\r', '"\\u0000 é"'.encode()]
    for i, out in enumerate(printed):
        memo.put(("prog", f"s{i}"), dataclasses.replace(text, stdout=out))
    memo.save()
    back = RunMemo(tmp_path / "runs", {"limits": "test"})
    assert [back.get(("prog", f"s{i}")).stdout for i in range(len(printed))] == printed  # type: ignore[union-attr]
    # a shipped file is written in the present form, whatever form its runs came in
    path = tmp_path / "runs.json.gz"
    ShippedRuns.write(path, {"x": 1}, {"prog": {"s1": older, "s2": {"unreadable": True}}})
    written = read_json_gz(path)["runs"]["prog"]
    assert written["s1"] == encode_run(text, {"id": "s", "parameters": {}}) and written["s2"] == {"unreadable": True}


def test_shipped_runs_are_kept_runs_where_they_apply_and_nowhere_else(registry: Registry, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "home"))
    oracle = _oracle_copy(registry, tmp_path)
    limits = Limits(wall=30.0, cpu=60)
    shipped_run = RunResult(exit_code=0, stdout=b'{"x": 1}', stderr_tail="", seconds=0.5, cpu_seconds=0.4)
    path = ShippedRuns.path_of(oracle)
    ShippedRuns.write(path, ShippedRuns.identity(oracle, limits), {"prog": {"s1": encode_run(shipped_run)}})
    # gzip without a timestamp: the same runs make the same bytes
    first = path.read_bytes()
    ShippedRuns.write(path, ShippedRuns.identity(oracle, limits), {"prog": {"s1": encode_run(shipped_run)}})
    assert path.read_bytes() == first

    memo = RunMemo.kept(limits, oracle)
    made: list[str] = []

    def start(tag: str) -> RunResult:
        made.append(tag)
        return RunResult(exit_code=0, stdout=tag.encode(), stderr_tail="", seconds=0.1)

    got = memo.run(("prog", "s1"), lambda: start("s1"))
    assert got.stdout == b'{"x": 1}' and made == [] and memo.kept_hits == memo.shipped_hits == 1
    assert memo.run(("prog", "s2"), lambda: start("s2")).stdout == b"s2" and made == ["s2"]
    memo.save()
    # the user's cache holds the new run only: the shipped one stays where it is
    kept = [json.loads(f.read_text()) for f in (tmp_path / "home" / "cache" / "runs").glob("*.json")]
    assert [sorted(k["runs"]) for k in kept] == [["s2"]]
    again = RunMemo.kept(limits, oracle)
    assert again.run(("prog", "s1"), lambda: start("again")).stdout == b'{"x": 1}'
    assert again.run(("prog", "s2"), lambda: start("again")).stdout == b"s2" and made == ["s2"]
    assert (again.kept_hits, again.shipped_hits) == (2, 1)

    # other limits: not used, and said why
    other = RunMemo.kept(dataclasses.replace(limits, wall=31.0), oracle)
    assert other.shipped is not None and "limits" in (other.shipped.mismatch() or "")
    assert other.run(("prog", "s1"), lambda: start("other")).stdout == b"other"
    # other library versions: not used, and said which
    ident = ShippedRuns.identity(oracle, limits)
    ident["libraries"] = {**ident["libraries"], "numpy": "0.0.1"}
    ShippedRuns.write(path, ident, {"prog": {"s1": encode_run(shipped_run)}})
    stale = RunMemo.kept(limits, oracle)
    why = stale.shipped.mismatch() if stale.shipped is not None else None
    assert why is not None and "numpy 0.0.1 (here " in why
    assert stale.run(("prog", "s1"), lambda: start("stale")).stdout == b"stale" and stale.shipped_hits == 0
    # an unreadable file is no file
    path.write_bytes(b"not gzip")
    broken = RunMemo.kept(limits, oracle)
    assert broken.shipped is not None and "unreadable" in (broken.shipped.mismatch() or "")
    assert broken.run(("prog", "s1"), lambda: start("broken")).stdout == b"broken"


def test_a_shipped_draw_applies_only_to_the_code_that_made_it(registry: Registry, tmp_path: Path) -> None:
    oracle = _oracle_copy(registry, tmp_path)
    limits = Limits(wall=30.0, cpu=60)
    sc = Scenario("reveal_1", {"a": 1})
    path = ShippedRuns.path_of(oracle)
    ident = ShippedRuns.identity(oracle, limits)
    ShippedRuns.write(path, ident, {"prog": {}}, code="c1",
                      draws={sc.digest(): {"document": "k1", "truth": {"x": 1.0}}, "bad": {"document": 3}})
    assert ShippedRuns(path, ident, "c1").draw(sc) == ("k1", {"x": 1.0})
    assert ShippedRuns(path, ident, "c1").draw(Scenario("reveal_1", {"a": 2})) is None
    assert ShippedRuns(path, ident, "c2").draw(sc) is None   # the oracle's code changed since
    assert ShippedRuns(path, ident).draw(sc) is None
    assert ShippedRuns(path, {**ident, "recon": "0"}, "c1").draw(sc) is None
    # the oracle's own digest is the code a shipped file is read under
    assert ShippedRuns.of(oracle, limits).code == oracle.source_digest()  # type: ignore[union-attr]


def test_shipped_verdicts_are_taken_where_they_apply_and_never_copied(registry: Registry, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "home"))
    oracle = _oracle_copy(registry, tmp_path)
    sc, other = Scenario("public_1", {"a": 1}), Scenario("public_2", {"a": 2})
    maker = VerdictStore.for_oracle(oracle, memory=1 << 30, home=tmp_path / "maker")
    maker.put("m1", sc, "value", "x off by 1", 1.0)
    assert maker.write_shipped(VerdictStore.shipped_path(oracle), oracle) == 1
    store = VerdictStore.for_oracle(oracle, memory=1 << 30)
    assert store.get("m1", sc) == ("value", "x off by 1", 1.0) and store.shipped_hits == 1
    assert store.get("m1", other) is None and store.get("m2", sc) is None
    store.put("m1", other, "survived", "", 0.0)
    store.save()
    kept = json.loads(Path(store.path).read_text())["verdicts"]   # type: ignore[arg-type]
    assert list(kept["m1"]) == [scenario_digest(other)]   # the shipped verdict stays shipped
    # another memory limit is another identity; other library versions too
    assert VerdictStore.for_oracle(oracle, memory=1 << 31).get("m1", sc) is None
    monkeypatch.setattr(store_module, "library_versions", lambda o: {"numpy": "0.0.1"})
    assert VerdictStore.for_oracle(oracle, memory=1 << 30).get("m1", sc) is None


def test_a_first_build_takes_the_work_its_oracle_ships_and_chooses_the_same(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """One build with a throwaway secret, shipped (``ship_kept``); a first build with another
    secret in a new home then takes the revealing draws' runs and the public candidates'
    verdicts from the oracle, and chooses what a build without them chooses."""
    shutil.copytree(Path(__file__).parent / "fixtures" / "tiny", tmp_path / "tiny")
    reg = Registry.default(entry_points=False)
    reg.load_plugin_file(tmp_path / "tiny" / "tiny.py")
    oracle = reg.get("tiny_series")
    rare = tmp_path / "rare"
    rare.mkdir()
    reference = (tmp_path / "tiny" / "reference.py").read_text()
    count = '"count": sum(t > 1.0 for t in terms)'
    assert count in reference
    (rare / "reconstruct.py").write_text(reference.replace(count, count + ' + (1 if p["a"] > 3.6 else 0)'))
    common: dict[str, Any] = {"n_public": 4, "n_hidden": 10, "probes": 2, "select": "stress", "reveal": [rare]}

    def report(out: str, secret: str, home: str) -> tuple[dict[str, Any], Any]:
        monkeypatch.setenv("RECON_HOME", str(tmp_path / home))
        task = build_task(reg, "tiny_series", tmp_path / out, secret=secret, **common).path
        return canonjson.read(task / "tests" / "selection.json"), load_task(task)

    made, _ = report("a", "throwaway", "maker")
    assert made["program_runs"] > 0
    kept_ids = [r["scenario"]["id"] for f in (tmp_path / "maker" / "cache" / "runs").glob("*.json")
                for r in json.loads(f.read_text())["runs"].values()]
    # (the spec the builds use: its public candidates are described with their traces)
    runs, verdicts = ship_kept(oracle, load_spec(oracle, None, n_public=4, n_hidden=10, select="stress"),
                               reveal=[rare])
    assert [i for i in kept_ids if i.startswith("hidden_")], "the maker's build ran the program on its hidden set"
    assert runs == len([i for i in kept_ids if not i.startswith("hidden_")])   # ... which is not shipped
    assert runs > 2 * REVEAL_GRADINGS and verdicts > 0
    shipped, with_kept = report("b", "secret-b", "fresh")
    assert shipped["program_runs_shipped"] >= 2 * REVEAL_GRADINGS   # the revealing draws: the same for every secret
    assert shipped["program_runs_kept"] == shipped["program_runs_shipped"] < shipped["program_runs"] + \
        shipped["program_runs_kept"]
    assert shipped["shipped_verdicts"] > 0
    # the revealing draws whose every run is shipped are judged by their shipped truth, never
    # generated; the public candidates wait with their shipped traces until a run needs them
    assert shipped["scenarios_not_generated"] > 0
    assert shipped["public_candidates_described"] == shipped["candidates"]["public"] > 0
    shipped_keys = {k for runs_of in ShippedRuns.of(oracle, reveal_limits(oracle)).document()["runs"].values()  # type: ignore[union-attr]
                    for k in runs_of}
    own_keys = {k for f in (tmp_path / "fresh" / "cache" / "runs").glob("*.json") for k in json.loads(f.read_text())["runs"]}
    assert own_keys and not own_keys & shipped_keys   # what the oracle ships is never copied into the home
    shutil.rmtree(tmp_path / "tiny" / "kept")
    plain, without = report("c", "secret-b", "fresh2")
    assert plain["program_runs_shipped"] == plain["shipped_verdicts"] == 0
    assert plain["scenarios_not_generated"] == plain["scenarios_generated_late"] == 0
    assert plain["public_candidates_described"] == 0
    for k in ("revealed", "unrevealed", "consequences", "hidden_only", "killed_by_public"):
        assert shipped[k] == plain[k], k
    assert [s.parameters for s in with_kept.public()] == [s.parameters for s in without.public()]


def test_a_programs_digest_leaves_out_bytecode(tmp_path: Path) -> None:
    """An installed package's folder holds the bytecode pip compiled (stamped with the
    install's times): a program's kept runs must be found all the same."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reconstruct.py").write_text("print('{}')\n")
    before = tree_digest(ws, skip_caches=True)
    (ws / "__pycache__").mkdir()
    (ws / "__pycache__" / "reconstruct.cpython-311.pyc").write_bytes(b"\0stamp")
    assert tree_digest(ws, skip_caches=True) == before != tree_digest(ws)
    (ws / "reconstruct.py").write_text("print('{ }')\n")
    assert tree_digest(ws, skip_caches=True) != before


def test_planted_bytecode_never_runs_so_kept_runs_may_ignore_it(tmp_path: Path) -> None:
    """The attack the bytecode-blind digest invites: a workspace whose ``__pycache__``
    holds a forged helper module, stamped to match its source, prints otherwise when run
    in place. Every runtime runs a snapshot, which leaves ``__pycache__`` out, so the forged
    bytecode never runs and a run kept for the clean program is the planted one's too."""
    import importlib.util
    import os
    import py_compile
    import subprocess

    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "reconstruct.py").write_text("import helper\nprint(helper.VALUE)\n")
    (clean / "helper.py").write_text('VALUE = \'{"x": 1}\'\n')
    planted = tmp_path / "planted"
    shutil.copytree(clean, planted)
    helper = planted / "helper.py"
    honest = helper.read_text()
    helper.write_text(honest.replace("1", "9"))   # the forged module: same size
    py_compile.compile(str(helper), cfile=importlib.util.cache_from_source(str(helper)), doraise=True)
    stamp = helper.stat().st_mtime_ns
    helper.write_text(honest)
    os.utime(helper, ns=(stamp, stamp))   # the forged bytecode now matches the source's stamp
    bare = subprocess.run([sys.executable, "reconstruct.py"], cwd=planted, capture_output=True, text=True, check=True)
    assert bare.stdout.strip() == '{"x": 9}', "the forged bytecode runs in place (the attack is real)"
    assert tree_digest(planted, skip_caches=True) == tree_digest(clean, skip_caches=True)
    res = get_runtime("local").run(planted, {"task": "t", "id": "s", "parameters": {}}, {}, Limits(wall=30, cpu=30))
    assert res.failure() is None, res.failure()
    assert res.stdout.strip() == b'{"x": 1}'


def _shipped(name: str, registry: Registry) -> tuple[Any, dict[str, Any]]:
    oracle = registry.get(name)
    path = ShippedRuns.path_of(oracle)
    assert path.is_file(), f"{name} ships no runs: run python tests/catalog/keep_runs.py {name}"
    with gzip.open(path, "rb") as fh:
        return oracle, json.loads(fh.read())


@pytest.mark.parametrize("name", CORE)
def test_the_core_built_ins_ship_current_runs(registry: Registry, name: str, tmp_path: Path) -> None:
    """Each core built-in ships runs of exactly the programs its spec reveals, made by this
    recon under the limits builds run them with, for its current code."""
    oracle, doc = _shipped(name, registry)
    again = f"run python tests/catalog/keep_runs.py {name} and commit artifacts/{name}/kept/"
    ident = doc["ident"]
    assert ident["recon"] == __version__ and ident["oracle"] == name, again
    assert ident["limits"] == reveal_limits(oracle).to_json(), again
    assert doc["code"] == oracle.source_digest(), f"{name}'s code changed since its runs were kept: {again}"
    spec = load_spec(oracle, None)
    programs = {tree_digest(prepare_workspace(p, tmp_path / str(i))[0], skip_caches=True): label
                for i, (label, p) in enumerate(reveal_programs(oracle, spec, tmp_path / "variants"))}
    assert doc["programs"] == programs, f"{name}'s revealed programs changed since their runs were kept: {again}"
    assert set(doc["runs"]) == set(programs) and all(doc["runs"].values())
    # nothing on the keep build's keyed hidden draws: no build with another secret meets them
    ids = [r["scenario"]["id"] for runs in doc["runs"].values() for r in runs.values() if "scenario" in r]
    assert ids and not [i for i in ids if i.startswith("hidden_")], again
    assert set(ident["libraries"]) == set(library_versions(oracle))
    # each scenario a run was shipped on is described (its document's key and truth) for this code
    described = {Scenario(r["scenario"]["id"], r["scenario"]["parameters"]).digest()
                 for runs in doc["runs"].values() for r in runs.values() if "scenario" in r}
    # ... and so is each public candidate of its stress selection (its public pool and its
    # extra pool), with the reference's trace
    pool = public_candidates(oracle, spec)[1]
    candidates = [*pool, *public_extra(oracle, spec, pool)]
    redo = f"run python tests/catalog/keep_runs.py --draws {name} and commit artifacts/{name}/kept/"
    assert described and set(doc.get("draws", {})) == described | {sc.digest() for sc in candidates}, redo
    shipped = ShippedRuns.of(oracle, reveal_limits(oracle))
    assert shipped is not None and all(shipped.trace(sc) for sc in candidates)
    # every program's run on every candidate is shipped: which of them a build tries depends
    # on its secret, and none is then run again
    for program, runs in doc["runs"].items():
        missing = [sc.id for sc in candidates if doc["draws"][sc.digest()]["document"] not in runs]
        assert not missing, f"{programs[program]} has no shipped run on {missing[:5]}: {redo}"
    # ... and on the rounds of fresh draws a build makes for failures seen on graded
    # scenarios only (described without a trace: they are never traced)
    fresh: list[Scenario] = []
    for round_ in range(2, 2 + MORE_DRAWS):
        fresh += fresh_draws(oracle, spec, round_, pool, [*candidates, *fresh])
    assert fresh and not [sc.id for sc in fresh if sc.digest() not in doc["draws"]], redo
    assert not [sc.id for sc in fresh if shipped.trace(sc) is not None]
    for program, runs in doc["runs"].items():
        missing = [sc.id for sc in fresh if doc["draws"][sc.digest()]["document"] not in runs]
        assert not missing, f"{programs[program]} has no shipped run on {missing[:5]}: {redo}"
    with Engine(oracle, workers=1) as eng:   # the first one's trace, made again here
        (first,) = eng.add_scenarios(candidates[:1], "check")
        eng.generate()
        assert shipped.trace(candidates[0]) == (eng.cases[first].covered, eng.cases[first].infected)
        assert shipped.draw(candidates[0]) == (RunMemo.document_key(
            eng.cases[first].case.document,
            {k: Path(v) for k, v in eng.cases[first].case.document.get("inputs", {}).items()}),
            eng.cases[first].case.truth)
    # the mutants' verdicts, shipped with them, under the identity a store of this code opens
    verdicts = read_json_gz(VerdictStore.shipped_path(oracle))
    assert isinstance(verdicts, dict) and verdicts["verdicts"], again
    store = VerdictStore.for_oracle(oracle, memory=DEFAULT_MEMORY, home=tmp_path / "home")
    assert {k: v for k, v in verdicts["ident"].items() if k != "libraries"} == store.ident, again


@pytest.mark.parametrize("name", CORE)
def test_a_shipped_run_is_what_its_program_prints(registry: Registry, name: str, tmp_path: Path) -> None:
    """For each program, one shipped run (the first by key): the oracle makes its scenario
    again byte for byte (the key matches), and the program run on it prints the shipped
    output byte for byte, unless it prints otherwise on every run (unseeded randomness:
    ``acoustic_beamforming``'s ``pra_defaults`` baseline)."""
    oracle, doc = _shipped(name, registry)
    limits = reveal_limits(oracle)
    shipped = ShippedRuns.of(oracle, limits)
    assert shipped is not None
    if shipped.mismatch():
        pytest.skip(f"the runs {name} ships do not apply here: {shipped.mismatch()}")
    spec = load_spec(oracle, None)
    rt = get_runtime("local")
    random_ones: list[str] = []
    named = reveal_programs(oracle, spec, tmp_path / "variants")
    for i, (label, p) in enumerate(named):
        ws = prepare_workspace(p, tmp_path / f"p{i}")[0]
        runs = doc["runs"][tree_digest(ws, skip_caches=True)]
        key = next(k for k in sorted(runs) if "scenario" in runs[k])
        sc = runs[key]["scenario"]
        d = tmp_path / f"s{i}"
        run_scenario(oracle, Scenario(sc["id"], sc["parameters"]), d, evidence=False)
        document = canonjson.read(d / "scenario.json")
        inputs = {k: d / v for k, v in document.get("inputs", {}).items()}
        assert RunMemo.document_key(document, inputs) == key, \
            f"{name}: the oracle no longer makes {sc['id']} byte for byte"
        want = decode_run(runs[key])
        assert want is not None and runs[key]["stdout_text"].encode("utf-8") == want.stdout   # JSON: kept as text
        # ... and describes it as the oracle makes it here (the key, the truth up to the last bits)
        drawn = shipped.draw(Scenario(sc["id"], sc["parameters"]))
        assert drawn is not None and drawn[0] == key, f"{name}: {sc['id']} is not described as the oracle makes it"
        assert _same_up_to_rounding(drawn[1], canonjson.read(d / "oracle_output.json")), \
            f"{name}: the truth shipped for {sc['id']} is not the oracle's"
        with SessionPool(rt, ws, limits) as pool:
            fed = {**document, "inputs": {k: str(v) for k, v in inputs.items()}}
            res = pool.run(fed, inputs)
            assert res.failure() is None, res.failure()
            if res.stdout != want.stdout:
                # a program that draws unseeded random numbers prints otherwise on every run:
                # its shipped run is one such run, as good as a fresh one; a program that
                # prints the same twice must print what it shipped, up to the last bits of
                # its floats (numpy's FFTs and reductions take other SIMD paths on another
                # CPU), with the same verdict on every field
                again = pool.run(fed, inputs)
                if again.stdout != res.stdout:
                    random_ones.append(label)
                    continue
                truth = canonjson.read(d / "oracle_output.json")
                got, shipped_out = json.loads(res.stdout), json.loads(want.stdout)
                assert _same_up_to_rounding(got, shipped_out), \
                    f"{name}: {label} prints otherwise on {sc['id']} than its shipped run"
                specs = oracle.output_specs()
                assert ({f for f in specs if compare.within(specs[f], got[f], truth[f])}
                        == {f for f in specs if compare.within(specs[f], shipped_out[f], truth[f])}), \
                    f"{name}: {label}'s shipped run on {sc['id']} passes other fields than a fresh run here"
    assert len(random_ones) < len(named), "no program reproduced its shipped run"
