"""The fairness audit, --reveal, and the power of a graded set, on a tiny fast oracle."""
from __future__ import annotations

import dataclasses
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recon import Registry, canonjson
from recon.audit import audit_baselines, audit_programs, baseline_workspace
from recon.build import build_task
from recon.audit import DEFAULT_NONCES
from recon.mutation.selection import REVEAL_GRADINGS, REVEAL_NONCE, reveal_draw_key, reveal_programs, reveal_variants
from recon.sweep import SweepSpec, probe_scenarios
from recon.grader import RunMemo, grade, run_outcomes
from recon.runtimes import get_runtime
from recon.runtimes.bwrap import BwrapRuntime, bwrap_available
from recon.runtimes.local import LocalRuntime
from recon.runtimes.base import RunResult
from recon.validate import detectable_rate, power_row
from recon.task import load_task

TINY = Path(__file__).parent / "fixtures" / "tiny" / "tiny.py"
REFERENCE = (TINY.parent / "reference.py").read_text()
COUNT = '"count": sum(t > 1.0 for t in terms)'


def _wrong(tmp: Path, name: str, condition: str) -> Path:
    """The reference with ``count`` off by one where ``condition`` holds (a rare behaviour
    when the condition covers a sliver of the axes)."""
    ws = tmp / name
    ws.mkdir()
    (ws / "reconstruct.py").write_text(REFERENCE.replace(COUNT, COUNT + f" + (1 if {condition} else 0)"))
    return ws


@pytest.fixture(scope="module")
def registry() -> Registry:
    reg = Registry.default(entry_points=False)
    reg.load_plugin_file(TINY)
    return reg


def test_the_audit_finds_hidden_only_failures_and_the_scenarios_that_would_show_them(
        registry: Registry, tmp_path: Path) -> None:
    task = build_task(registry, "tiny_series", tmp_path / "t", n_public=4, n_hidden=6, probes=2,
                      select="random").path
    params = [sd.parameters for sd in load_task(task).public()]
    # wrong where "a" is above every published value: no public scenario can show it
    top = max(p["a"] for p in params)
    rare = _wrong(tmp_path, "rare", f'p["a"] > {top + (4.0 - top) / 3:.4f}')
    # wrong on half the axis, published scenarios included
    common = _wrong(tmp_path, "common", 'p["a"] > 1.0')
    report = audit_programs(task, [("rare", rare), ("common", common), ("reference", task / "solution")],
                            runtime="local", registry=registry, nonces=["n1", "n2", "n3", "n4", "n5", "n6"],
                            pool_size=30)
    by = {p.label: p for p in report.programs}
    assert [f.field for f in by["rare"].hidden_only] == ["count"]
    found = by["rare"].fields["count"]
    assert found.graded_failed and not found.public_failed
    assert found.revealing and all(r["parameters"]["a"] > top for r in found.revealing)
    assert found.knife_edge is None   # a behaviour of the program: published scenarios could show it
    assert not by["common"].hidden_only and by["common"].fields["count"].public_failed
    assert not by["reference"].hidden_only and not any(f.graded_failed for f in by["reference"].fields.values())
    assert not report.fair and report.hidden_only == 1
    assert "count: fails" in report.render() and "shown by" in report.render()


def test_the_audit_runs_public_scenarios_only_as_far_as_its_verdicts_need(registry: Registry,
                                                                          tmp_path: Path) -> None:
    """A program runs on the graded set first, then on the public scenarios in chunks until
    every field it fails on a graded cell has failed publicly too: one that passes the
    graded set runs on no public scenario, one whose failures show in the first chunk stops
    there, and only a hidden-only field needs every public scenario. The verdicts are those
    of running them all."""
    task = build_task(registry, "tiny_series", tmp_path / "t", n_public=24, n_hidden=6, probes=2,
                      select="random").path
    top = max(sd.parameters["a"] for sd in load_task(task).public())
    common = _wrong(tmp_path, "common", "True")
    rare = _wrong(tmp_path, "rare", f'p["a"] > {top + (4.0 - top) / 3:.4f}')
    programs = [("reference", task / "solution"), ("common", common), ("rare", rare)]
    report = audit_programs(task, programs, runtime="local", registry=registry, nonces=["n1", "n2", "n3", "n4"],
                            pool_size=0, workers=1)
    by = {p.label: p for p in report.programs}
    assert [(by[k].public_run, by[k].public_total) for k in ("reference", "common", "rare")] == \
        [(0, 24), (8, 24), (24, 24)]
    assert by["common"].fields["count"].public_failed == [f"public_{i}" for i in range(1, 9)]
    assert not by["common"].hidden_only and [f.field for f in by["rare"].hidden_only] == ["count"]
    assert not by["reference"].hidden_only
    assert report.to_json()["programs"][1]["public_run"] == 8
    # the graded set runs whole for all three: none fails every field publicly
    assert all((by[k].graded_run, by[k].graded_total) == (14, 14) for k in by)


def test_the_audit_stops_a_program_that_fails_every_field_publicly(registry: Registry, tmp_path: Path) -> None:
    """A program that has failed every field on a public scenario can have no hidden-only
    failure: after a first chunk of the graded set and the public scenarios that show
    every field failing, the rest of its graded set is not run, and the report says so."""
    task = build_task(registry, "tiny_series", tmp_path / "t", n_public=24, n_hidden=6, probes=2,
                      select="random").path
    everything = _program(tmp_path, "everything", 'out = {"terms": [t + 1 for t in out["terms"]], '
                          '"summary": out["summary"] + 1, "count": out["count"] + 1, "rising": not out["rising"]}')
    common = _wrong(tmp_path, "common", "True")
    report = audit_programs(task, [("everything", everything), ("common", common)], runtime="local",
                            registry=registry, nonces=["n1", "n2", "n3", "n4", "n5"], pool_size=0, workers=1)
    by = {p.label: p for p in report.programs}
    assert report.graded == 16 and report.fair
    assert (by["everything"].graded_run, by["everything"].public_run) == (8, 8)
    assert all(len(f.graded_failed) == 8 and f.public_failed for f in by["everything"].fields.values())
    assert (by["common"].graded_run, by["common"].public_run) == (16, 8)   # passes "terms": runs them all
    assert "stopped after 8 of 16 graded scenarios" in report.render()
    assert report.to_json()["programs"][0]["graded_run"] == 8


def test_the_audit_names_a_knife_edge_where_the_oracle_itself_steps(registry: Registry, tmp_path: Path) -> None:
    """Near a hidden-only failure the audit samples the oracle along each real axis: a
    step of its own value beyond the tolerance, far above its typical step, is a knife edge
    (``count`` where a term crosses one); a field that moves evenly (``summary``) or a
    count far from any crossing is none."""
    from recon.audit import KNIFE_SPAN, knife_edge, neighbours
    from recon.checks import Graded
    oracle = registry.get("tiny_series")

    def cell(a: float) -> Graded:
        return Graded("probe_1", {"parameters": {"a": a, "k": 2, "mode": "sum", "seed": 0}}, {}, {}, "probe")

    factors = [1.0 + math.sin(i) for i in range(2)]          # term i = a * factors[i] at seed 0
    crossing = 1.0 / factors[1]                              # where term 1 crosses one
    width = KNIFE_SPAN * (4.0 - 0.5)
    near = cell(crossing + width / 3)
    sampled = neighbours(oracle, oracle.axes, near, tmp_path / "near")   # once for every field there
    edge = knife_edge(oracle, near, "count", sampled)
    assert edge is not None and edge["axis"] == "a" and edge["step"] is None and edge["cell"] == "probe_1"
    assert edge["between"][0] < crossing < edge["between"][1]
    assert knife_edge(oracle, near, "summary", sampled) is None
    far = next(a / 100 for a in range(60, 400) if all(abs(a / 100 * f - 1.0) > 2 * width * f for f in factors))
    assert knife_edge(oracle, cell(far), "count", neighbours(oracle, oracle.axes, cell(far), tmp_path / "far")) is None


RETURN = '''    return {"terms": terms, "summary": summary, "count": sum(t > 1.0 for t in terms),
            "rising": terms[-1] > terms[0]}'''


def _program(tmp: Path, name: str, edits: str) -> Path:
    """The reference with ``edits`` (lines run on its result ``out``, parameters ``p``)."""
    ws = tmp / name
    ws.mkdir()
    lines = "".join(f"    {line}\n" for line in edits.splitlines())
    assert RETURN in REFERENCE
    (ws / "reconstruct.py").write_text(REFERENCE.replace(RETURN, "    out = " + RETURN.strip()[len("return "):]
                                                         + "\n" + lines + "    return out"))
    return ws


def test_a_failure_beside_a_published_upstream_failure_is_its_consequence(registry: Registry, tmp_path: Path) -> None:
    """``upstream=`` declares what each output is computed from: a program's graded
    failure of ``count`` where ``summary`` (declared upstream of it) fails too, and fails
    publicly, is not hidden-only; the same failure without that companion, or in a run
    that gave no usable output, is."""
    task = build_task(registry, "tiny_series", tmp_path / "t", n_public=4, n_hidden=6, probes=2,
                      select="random").path
    top = max(sd.parameters["a"] for sd in load_task(task).public())
    rare = f'p["a"] > {top + (4.0 - top) / 3:.4f}'
    declared = Registry()
    declared.register(dataclasses.replace(registry.get("tiny_series"), upstream={"count": frozenset({"summary"})}),
                      "tiny_series with count computed from summary")
    beside = _program(tmp_path, "beside", f'if p["a"] > 1.0:\n    out["summary"] *= 1.001\nif {rare}:\n'
                                          '    out["count"] += 1')
    alone = _program(tmp_path, "alone", f'if p["a"] < 1.0:\n    out["summary"] *= 1.001\nif {rare}:\n'
                                        '    out["count"] += 1')
    crash = _program(tmp_path, "crash", f'if p["a"] > 1.0:\n    out["summary"] *= 1.001\nif {rare}:\n'
                                        '    raise SystemExit(3)')
    programs = [("beside", beside), ("alone", alone), ("crash", crash)]
    nonces = ["n1", "n2", "n3", "n4", "n5", "n6"]
    report = audit_programs(task, programs, runtime="local", registry=declared, nonces=nonces, pool_size=0)
    by = {p.label: p for p in report.programs}
    count = by["beside"].fields["count"]
    assert count.graded_failed and not count.public_failed and by["beside"].fields["summary"].public_failed
    assert count.explained == count.graded_failed and not by["beside"].hidden_only
    assert "count: fails" in report.render() and "a consequence, not a hidden behaviour" in report.render()
    assert [f.field for f in by["alone"].hidden_only] == ["count"] and not by["alone"].fields["count"].explained
    assert "count" in [f.field for f in by["crash"].hidden_only] and not by["crash"].fields["count"].explained
    # without the declaration the same failure is hidden-only
    plain = audit_programs(task, programs[:1], runtime="local", registry=registry, nonces=nonces, pool_size=0)
    assert [f.field for f in plain.programs[0].hidden_only] == ["count"]


def _same_rule(registry: Registry) -> Registry:
    """tiny_series with ``count`` and ``rising`` declared one rule's fields (``same_rule=``)."""
    group = frozenset({"count", "rising"})
    declared = Registry()
    declared.register(dataclasses.replace(registry.get("tiny_series"), same_rule={"count": group, "rising": group}),
                      "tiny_series with count and rising computed by one rule")
    return declared


def test_a_field_is_shown_by_a_published_failure_of_its_rule_on_another_input(registry: Registry,
                                                                             tmp_path: Path) -> None:
    """``same_rule=`` groups the fields one rule computes for each of several inputs: a
    program's hidden-only failure of ``count`` is shown when ``rising`` (its group) fails
    publicly; without the declaration, or without that public failure, it is hidden-only."""
    task = build_task(registry, "tiny_series", tmp_path / "t", n_public=4, n_hidden=6, probes=2,
                      select="random").path
    top = max(sd.parameters["a"] for sd in load_task(task).public())
    rare = f'p["a"] > {top + (4.0 - top) / 3:.4f}'
    sibling = _program(tmp_path, "sibling", f'if p["a"] > 1.0:\n    out["rising"] = not out["rising"]\nif {rare}:\n'
                                            '    out["count"] += 1')
    alone = _program(tmp_path, "alone", f'if p["a"] > 1.0:\n    out["summary"] *= 1.001\nif {rare}:\n'
                                        '    out["count"] += 1')
    nonces = ["n1", "n2", "n3", "n4", "n5", "n6"]
    report = audit_programs(task, [("sibling", sibling), ("alone", alone)], runtime="local",
                            registry=_same_rule(registry), nonces=nonces, pool_size=0)
    by = {p.label: p for p in report.programs}
    count = by["sibling"].fields["count"]
    assert count.graded_failed and not count.public_failed and count.shown_by == ["rising"]
    assert not by["sibling"].hidden_only
    assert "the same rule fails publicly as rising" in report.render()
    assert [f.field for f in by["alone"].hidden_only] == ["count"] and by["alone"].fields["count"].shown_by == []
    plain = audit_programs(task, [("sibling", sibling)], runtime="local", registry=registry, nonces=nonces,
                           pool_size=0)
    assert [f.field for f in plain.programs[0].hidden_only] == ["count"]


def test_selection_takes_one_rules_fields_as_one_behaviour(registry: Registry, tmp_path: Path) -> None:
    """A revealed program failing both fields of a ``same_rule`` group is one behaviour to
    show: a published failure of either field shows it, and the audit agrees."""
    declared = _same_rule(registry)
    both = _program(tmp_path, "both", 'if p["a"] > 3.6:\n    out["rising"] = not out["rising"]\n'
                                      '    out["count"] += 1')
    task = build_task(declared, "tiny_series", tmp_path / "declared", n_public=4, n_hidden=10, probes=2,
                      select="stress", reveal=[both]).path
    report = canonjson.read(task / "tests" / "selection.json")
    assert report["revealed"] == [f"{both}: count|rising"] and report["unrevealed"] == []
    [audited] = audit_programs(task, [("both", both)], runtime="local", registry=declared, nonces=["n1"],
                               pool_size=0).programs
    assert audited.fields["count"].public_failed or audited.fields["rising"].public_failed
    assert not audited.hidden_only


def test_selection_shows_a_consequence_failing_as_well_as_its_cause(registry: Registry, tmp_path: Path) -> None:
    """What a revealed program gets wrong only beside a failure of a field it is computed
    from (``upstream=``) is shown failing publicly too, not only the cause: the audit takes a
    field as shown once a published scenario shows it failing, and the field's failures
    of its own may be rarer than the build's draws can meet (``lidar_icp``'s ``converged``
    failed alone on 1 graded cell in 140, and on none of a build's draws)."""
    declared = Registry()
    declared.register(dataclasses.replace(registry.get("tiny_series"), upstream={"count": frozenset({"summary"})}),
                      "tiny_series with count computed from summary")
    both = _program(tmp_path, "both", 'if p["a"] > 3.6:\n    out["summary"] *= 1.001\n    out["count"] += 1')
    task = build_task(declared, "tiny_series", tmp_path / "declared", n_public=4, n_hidden=10, probes=2,
                      select="stress", reveal=[both]).path
    report = canonjson.read(task / "tests" / "selection.json")
    assert report["revealed"] == [f"{both}: summary"] and report["unrevealed"] == []
    assert report["consequences"] == [f"{both}: count"] and report["consequences_unshown"] == []
    [audited] = audit_programs(task, [("both", both)], runtime="local", registry=declared, nonces=["n1"],
                               pool_size=0).programs
    assert audited.fields["count"].public_failed and audited.fields["summary"].public_failed
    assert not audited.hidden_only


def test_the_references_variants_are_revealed_like_independent_programs(tmp_path: Path) -> None:
    """A stress selection reveals the reference's variants (``VARIANT_OPERATORS``: here a
    population deviation taken over n - 1) like independent programs: whatever the hidden
    set and the probe draws catch in one, a published scenario shows. They are written
    the same on every machine, so that their kept runs apply anywhere."""
    fixture = tmp_path / "tiny"
    shutil.copytree(TINY.parent, fixture)
    ref = fixture / "reference.py"
    ref.write_text("import statistics\n" + REFERENCE.replace(COUNT, '"count": sum(t > statistics.pstdev(terms) '
                                                                      'for t in terms)'))
    reg = Registry.default(entry_points=False)
    reg.load_plugin_file(fixture / "tiny.py")
    oracle = reg.get("tiny_series")
    [(label, program)] = reveal_variants(oracle, tmp_path / "v1")
    assert label == "variant line 11: pstdev -> stdev" and "statistics.stdev(terms)" in program.read_text()
    assert [p.read_text() for _, p in reveal_variants(oracle, tmp_path / "v2")] == [program.read_text()]
    spec = SweepSpec(n_public=4, n_hidden=10, seed=0, select="stress")
    assert reveal_programs(oracle, spec) == [] and len(reveal_programs(oracle, spec, tmp_path / "v3")) == 1
    task = build_task(reg, "tiny_series", tmp_path / "t", n_public=4, n_hidden=10, probes=2, select="stress").path
    report = canonjson.read(task / "tests" / "selection.json")
    assert report["revealed"] == ["variant line 11: pstdev -> stdev: count"] and report["unrevealed"] == []
    audit = audit_programs(task, [("variant", program)], runtime="local", registry=reg, nonces=["n1", "n2"],
                           pool_size=0)
    assert audit.programs[0].fields["count"].public_failed and audit.fair
    # validate's fairness row audits what the build revealed: the variant too, on a stress
    # build only (a random one revealed nothing)
    t = load_task(task)
    both = audit_baselines(t, oracle, runtime=get_runtime("local"), registry=reg, nonces=["n1"], pool_size=0)
    labels = [p.label for p in both.programs]
    assert "variant line 11: pstdev -> stdev" in labels and both.fair, labels
    drawn = load_task(build_task(reg, "tiny_series", tmp_path / "r", n_public=4, n_hidden=10, probes=2,
                                 select="random").path)
    assert "variant line 11: pstdev -> stdev" not in [p.label for p in audit_baselines(
        drawn, oracle, runtime=get_runtime("local"), registry=reg, nonces=["n1"], pool_size=0).programs]


def test_reveal_makes_a_public_scenario_show_what_the_hidden_set_catches(registry: Registry, tmp_path: Path) -> None:
    rare = _wrong(tmp_path, "rare", 'p["a"] > 3.6')
    task = build_task(registry, "tiny_series", tmp_path / "t", n_public=4, n_hidden=10, probes=2, select="stress",
                      reveal=[rare]).path
    report = canonjson.read(task / "tests" / "selection.json")
    assert report["revealed"] == [f"{rare}: count"] and report["unrevealed"] == []
    assert report["hidden"] == {"targeted": 8, "random": 2}
    assert any(sd.parameters["a"] > 3.6 for sd in load_task(task).public())
    audit = audit_programs(task, [("rare", rare)], runtime="local", registry=registry, nonces=["n1", "n2"],
                           pool_size=0)
    assert audit.fair


def test_a_rebuild_with_another_secret_or_one_more_program_reruns_only_what_is_new(
        registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The revealing probe draws come from the spec's seed, not the secret, and the revealed
    programs' runs are kept by their content: another secret reruns only the hidden
    candidates' runs (keyed), one more program only its own, with the same verdicts as in a
    home that kept nothing."""
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "home"))
    rare = _wrong(tmp_path, "rare", 'p["a"] > 3.6')
    other = _wrong(tmp_path, "other", 'p["b"] > 2.5')
    common = {"n_public": 4, "n_hidden": 10, "probes": 2, "select": "stress"}

    def report(out: str, secret: str, programs: list[Path]) -> dict:
        task = build_task(registry, "tiny_series", tmp_path / out, secret=secret, reveal=programs, **common).path
        return canonjson.read(task / "tests" / "selection.json")

    first = report("a", "secret-a", [rare])
    assert first["program_runs_kept"] == 0 and first["program_runs_not_made"] == 0
    again = report("b", "secret-b", [rare])
    # the probe draws (2 gradings' worth x REVEAL_GRADINGS) are the same draws: kept
    assert again["program_runs_kept"] >= 2 * REVEAL_GRADINGS
    assert again["program_runs_kept"] < again["program_runs"]   # the hidden candidates are keyed
    more = report("c", "secret-b", [rare, other])
    # the same secret and one more program: every run of the first is kept, the new one's made
    assert more["program_runs_kept"] == again["program_runs"] < more["program_runs"]
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "fresh"))
    cold = report("d", "secret-b", [rare, other])
    assert cold["program_runs_kept"] == 0
    for k in ("revealed", "unrevealed", "consequences"):
        assert more[k] == cold[k]
    assert load_task(tmp_path / "c" / "tiny_series").public()[0].parameters == \
        load_task(tmp_path / "d" / "tiny_series").public()[0].parameters


def test_the_revealed_programs_run_in_the_runtime_the_build_names(registry: Registry, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``runtime`` names where the revealed programs run (every session they run in is that
    runtime's), and their runs are kept for a rebuild whichever runtime it names: a clean
    exit prints the same in either."""
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "home"))
    rare = _wrong(tmp_path, "rare", 'p["a"] > 3.6')
    opened: list[str] = []
    for cls in (LocalRuntime, BwrapRuntime):
        def spy(self: Any, *args: Any, _session: Any = cls.session, **kwargs: Any) -> Any:
            opened.append(self.name)
            return _session(self, *args, **kwargs)
        monkeypatch.setattr(cls, "session", spy)
    common = {"n_public": 4, "n_hidden": 10, "probes": 2, "select": "stress", "reveal": [rare]}
    first = build_task(registry, "tiny_series", tmp_path / "a", secret="s-a", runtime="local", **common).path
    assert opened and set(opened) == {"local"}
    assert list((tmp_path / "home" / "cache" / "runs").glob("*.json"))
    other = "bwrap" if bwrap_available() else "local"
    opened.clear()
    again = build_task(registry, "tiny_series", tmp_path / "b", secret="s-b", runtime=other, **common).path
    assert set(opened) <= {other}
    assert canonjson.read(again / "tests" / "selection.json")["program_runs_kept"] >= 2 * REVEAL_GRADINGS
    assert canonjson.read(first / "tests" / "selection.json")["revealed"] == [f"{rare}: count"]


def test_a_spec_gives_the_revealed_programs_a_budget_of_their_own(registry: Registry, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``reveal_budget`` bounds the revealed programs' runs, apart from the mutants'; the
    report says how long they had and what it left undone, and a larger one runs them all."""
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "home"))   # nothing kept by other tests
    rare = _wrong(tmp_path, "rare", 'p["a"] > 3.6')
    reports = {}
    for seconds in (0.001, 600):
        spec = tmp_path / f"{seconds}.toml"
        spec.write_text(f'n_public = 4\nn_hidden = 10\nprobes = 2\nselect = "stress"\nreveal = ["{rare}"]\n'
                        f"reveal_budget = {seconds}\n")
        task = build_task(registry, "tiny_series", tmp_path / str(seconds), spec_path=spec).path
        reports[seconds] = canonjson.read(task / "tests" / "selection.json")
    tight, ample = reports[0.001], reports[600]
    assert tight["reveal_budget"] == 0.001 and ample["reveal_budget"] == 600
    assert tight["budget"] == ample["budget"] == 75.0
    assert tight["program_runs_not_made"] > 0 and tight["program_runs"] < ample["program_runs"]
    assert ample["program_runs_not_made"] == 0 and ample["revealed"] == [f"{rare}: count"]
    # the probe draws (a grading's worth per REVEAL_GRADINGS, and one for each hidden
    # candidate left out of the set) are generated as the runs reach them: those of the
    # tight budget never were
    left_out = ample["candidates"]["hidden"] - ample["hidden"]["targeted"]
    assert left_out > 0 and ample["reveal_draws"] - tight["reveal_draws"] == 2 * REVEAL_GRADINGS + left_out
    # another selection budget scales the spec's in proportion; none bounds neither
    spec = tmp_path / "0.001.toml"
    half = build_task(registry, "tiny_series", tmp_path / "half", spec_path=spec, select_budget=37.5).path
    assert canonjson.read(half / "tests" / "selection.json")["reveal_budget"] == 0.0005
    free = build_task(registry, "tiny_series", tmp_path / "free", spec_path=spec, select_budget=0).path
    free_report = canonjson.read(free / "tests" / "selection.json")
    assert free_report["reveal_budget"] is None and free_report["program_runs_not_made"] == 0


def test_reveal_stops_looking_once_a_program_has_failed_every_field(registry: Registry, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A revealed program that has failed every field (with usable output) has nothing left
    for the graded-like draws to find: its finding runs stop, and the cover still shows
    every field of it failing, beside a program whose rare failure needs every draw."""
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "home"))   # nothing kept by other tests
    rare = _wrong(tmp_path, "rare", 'p["a"] > 3.6')
    everything = _program(tmp_path, "everything", 'out = {"terms": [t + 1 for t in out["terms"]], '
                          '"summary": out["summary"] + 1, "count": out["count"] + 1, "rising": not out["rising"]}')
    common = {"n_public": 4, "n_hidden": 10, "probes": 2, "select": "stress", "select_budget": 0}

    def report(out: str, programs: list[Path]) -> dict:
        task = build_task(registry, "tiny_series", tmp_path / out, reveal=programs, **common).path
        return canonjson.read(task / "tests" / "selection.json")

    alone = report("alone", [rare])
    both = report("both", [rare, everything])
    assert alone["program_runs_saturated"] == 0 and alone["revealed"] == [f"{rare}: count"]
    assert both["reveal_draws"] == alone["reveal_draws"]
    # the second program ran on a few draws (the two workers' first ones), then stopped looking
    assert both["program_runs_saturated"] >= both["reveal_draws"] - 4
    assert both["program_runs"] + both["program_runs_saturated"] >= alone["program_runs"] + both["reveal_draws"]
    assert both["program_runs"] <= alone["program_runs"] + 4 + common["n_public"]
    assert sorted(both["revealed"]) == sorted([f"{rare}: count", *(f"{everything}: {f}" for f in
                                                                     ("count", "rising", "summary", "terms"))])
    assert both["unrevealed"] == [] and both["program_runs_not_made"] == 0
    # revealed alone, it leaves the probe draws after its first ones ungenerated
    only = report("only", [everything])
    assert only["reveal_draws"] < alone["reveal_draws"] and only["program_runs_not_made"] == 0
    assert sorted(only["revealed"]) == [f"{everything}: {f}" for f in ("count", "rising", "summary", "terms")]
    assert only["unrevealed"] == []


def test_reveal_runs_the_programs_where_probes_may_land_not_only_on_hidden_candidates(registry: Registry,
                                                                                      tmp_path: Path) -> None:
    """A program wrong at a single point, one of the probe draws the build makes for
    revealing (drawn from the spec's seed, whatever the secret; no hidden candidate): the
    selection sees the failure, and since no
    drawn public candidate can show a single point, it publishes that draw, which no
    grading uses."""
    plain = load_task(build_task(registry, "tiny_series", tmp_path / "plain", n_public=8, n_hidden=10, probes=6,
                                 select="random").path)
    spec = SweepSpec(**{k: plain.meta["spec"][k] for k in ("n_public", "n_hidden", "seed", "axes")})
    draws = probe_scenarios(registry.get("tiny_series"), spec, reveal_draw_key(spec), REVEAL_NONCE, 6, [], [])
    draw = next(d for d in draws if 0.5 < d.parameters["a"] < 4.0)   # off the edges, which candidates cover
    point = _wrong(tmp_path, "point", f'abs(p["a"] - {draw.parameters["a"]!r}) < 1e-12')
    task = build_task(registry, "tiny_series", tmp_path / "t", n_public=8, n_hidden=10, probes=6, select="stress",
                      reveal=[point]).path
    assert load_task(task).meta["task_key"] == plain.meta["task_key"]
    report = canonjson.read(task / "tests" / "selection.json")
    # candidates, the hidden set's random draws, and as many gradings' probes as the fairness audit grades
    assert REVEAL_GRADINGS >= len(DEFAULT_NONCES)
    assert report["reveal_draws"] == 32 + 2 + 6 * REVEAL_GRADINGS
    assert report["revealed"] == [f"{point}: count"] and report["unrevealed"] == []
    assert report["public_from_draws"] == 1
    built = load_task(task)
    assert [sd.parameters for sd in built.public() if sd.parameters == draw.parameters] == [draw.parameters]
    # a failure seen only on a graded scenario is never answered by publishing it
    [graded, *_] = [sd.parameters for sd in built.hidden() if 0.5 < sd.parameters["a"] < 4.0]   # off the edges
    spot = _wrong(tmp_path, "spot", f'abs(p["a"] - {graded["a"]!r}) < 1e-12')
    lines: list[str] = []
    again = load_task(build_task(registry, "tiny_series", tmp_path / "again", n_public=8, n_hidden=10, probes=6,
                                 select="stress", reveal=[spot], log=lines.append).path)
    assert graded in [sd.parameters for sd in again.hidden()]
    report = canonjson.read(again.root / "tests" / "selection.json")
    assert report["unrevealed"] == [f"{spot}: count"] and report["public_from_draws"] == 0
    assert report["unrevealed_seen"] == {f"{spot}: count": {"graded": 1, "publishable": 0}}
    assert report["more_draws"] == 2 * 8   # two rounds of fresh draws no grading uses: a single point shows on none
    [warning] = [line for line in lines if line.startswith("warning:")]
    assert f"{spot}: count (seen only on graded scenarios)" in warning and "may publish" in warning
    assert graded not in [sd.parameters for sd in again.public()]


def test_the_cli_audits_programs_and_exits_1_on_hidden_only_failures(registry: Registry, tmp_path: Path) -> None:
    task = build_task(registry, "tiny_series", tmp_path / "t", n_public=3, n_hidden=6, probes=4,
                      select="random").path
    t = load_task(task)
    top = max(sd.parameters["a"] for sd in t.public())
    highest = max(sd.parameters["a"] for sd in t.hidden())
    assert highest > top  # the keyed draws favour the axis ends; the spec makes this so
    rare = _wrong(tmp_path, "rare", f'p["a"] > {(top + highest) / 2:.4f}')
    proc = subprocess.run([sys.executable, "-m", "recon", "audit", str(task), str(rare / "reconstruct.py"),
                           "--plugin", str(TINY), "--runtime", "local", "--nonces", "6", "--pool", "10", "--json",
                           "-q"], capture_output=True, text=True, timeout=600)
    doc = json.loads(proc.stdout)
    assert doc["task"] == "recon/tiny_series" and doc["graded_scenarios"] == 6 + 6 * 4
    assert doc["hidden_only"] == 1 and not doc["fair"]
    assert proc.returncode == 1 and "hidden-only" in proc.stderr
    # the runs are kept: the same audit again takes every one of them, with the same report
    again = subprocess.run([a for a in proc.args if a not in ("--json", "-q")], capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 1 and "count: fails" in again.stdout
    kept = subprocess.run(proc.args, capture_output=True, text=True, timeout=600)
    assert json.loads(kept.stdout) == doc
    assert f"audit: {3 + 6 + 6 * 4} runs kept from an earlier audit or validate" in again.stderr
    empty = subprocess.run([sys.executable, "-m", "recon", "audit", str(task), "--plugin", str(TINY)],
                           capture_output=True, text=True, timeout=120)
    assert empty.returncode == 2 and "nothing to audit" in empty.stderr


def test_power_is_the_rate_the_graded_set_catches_in_95_percent_of_gradings() -> None:
    assert detectable_rate(59) <= 0.05 < detectable_rate(58)
    for n in (1, 7, 20, 59, 100):
        p = detectable_rate(n)
        assert 1 - (1 - p) ** n == pytest.approx(0.95)
    assert math.isclose(detectable_rate(7), 1 - 0.05 ** (1 / 7))


def test_the_power_row_fails_a_small_graded_set(registry: Registry, tmp_path: Path) -> None:
    small = build_task(registry, "tiny_series", tmp_path / "s", n_public=3, n_hidden=4, probes=3, select="random")
    row = power_row(load_task(small.path))
    assert not row.passed and "59 graded scenarios reach 5 %" in row.detail
    big = build_task(registry, "tiny_series", tmp_path / "b", n_public=3, n_hidden=20, probes=40, select="random")
    row = power_row(load_task(big.path))
    assert row.passed and row.reward <= 0.05 and "60 graded scenarios" in row.detail


def test_validate_trusts_the_builds_proof_that_a_mutant_is_killable(registry: Registry, tmp_path: Path) -> None:
    """A mutant some candidate of the build's stress selection killed is not equivalent,
    whatever the task's few scenarios show: the analysis does not search for it again."""
    from recon.mutation import mutation_score
    from recon.mutation.analysis import resolve_target

    # One public and one hidden scenario under this key leave some mutants that a candidate
    # of the selection killed alive on the task's own scenarios (which ones depends on the key).
    task = build_task(registry, "tiny_series", tmp_path / "t", n_public=1, n_hidden=1, probes=0,
                      select="stress", secret="killable-elsewhere").path
    sel = canonjson.read(task / "tests" / "selection.json")
    assert sel["killable"] and len(sel["reference"]) == 64
    target = resolve_target(task, registry=registry)
    assert target.killable == frozenset(sel["killable"])
    rep = mutation_score(task, registry=registry, nonces=1, pool_size=0, search_examples=0, budget=None)
    proven = [r for r in rep.results if r.elsewhere]
    assert proven and all(not r.equivalent and not r.hidden and r.mutant.key in target.killable for r in proven)
    assert {r.mutant.key for r in rep.results if r.equivalent}.isdisjoint(target.killable)


def test_an_audit_runs_only_what_a_grading_of_the_same_program_did_not(registry: Registry, tmp_path: Path) -> None:
    """validate grades each baseline on the audit's first probe draw and keeps the runs: the
    audit then runs the program only on the other draws, with the same verdicts."""
    task = load_task(build_task(registry, "tiny_series", tmp_path / "t", n_public=4, n_hidden=6, probes=2,
                                select="random").path)
    ws = baseline_workspace(task, task.root / "solution", tmp_path / "ws")
    assert (ws / "reconstruct.py").is_file() and (ws / "README.md").is_file()
    memo, probes = RunMemo(), tmp_path / "probes"
    g = grade(task, ws, runtime="local", registry=registry, nonce="n1", warm=True, memo=memo, probe_cache=probes)
    assert g["reward"] == 1.0 and memo.hits == 0
    audit = {"runtime": "local", "registry": registry, "nonces": ["n1", "n2"], "pool_size": 10}
    shared = audit_programs(task, [("reference", ws)], memo=memo, probe_cache=probes, **audit)
    # the graded runs come from the grading; a program passing them all needs no public run
    assert g["runs"] == 4 + 6 + 2 and memo.hits == 6 + 2 and shared.programs[0].public_run == 0
    assert shared.to_json() == audit_programs(task, [("reference", ws)], **audit).to_json()
    # a memo is for an author's programs in warm sessions: never for a submission under test
    with pytest.raises(ValueError, match="never a submission"):
        run_outcomes(get_runtime("local"), ws, [], task.limits, task.app_dir, task.outputs, 1, memo=memo)
    with pytest.raises(ValueError, match="never a submission"):
        grade(task, ws, runtime="local", registry=registry, nonce="n1", warm=False, memo=memo)


def test_a_kept_run_memo_serves_the_next_process(registry: Registry, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A memo opened with :meth:`RunMemo.kept` writes its clean runs to $RECON_HOME (a
    private folder); the next one with the same runtime and limits takes them instead of
    running, with the same verdicts, while other limits or a changed program run again."""
    monkeypatch.setenv("RECON_HOME", str(tmp_path / "home"))
    task = load_task(build_task(registry, "tiny_series", tmp_path / "t", n_public=4, n_hidden=6, probes=2,
                                select="random").path)
    ws = baseline_workspace(task, task.root / "solution", tmp_path / "ws")
    rt = get_runtime("local")
    audit = {"runtime": rt, "registry": registry, "nonces": ["n1", "n2"], "pool_size": 0}
    first = RunMemo.kept(task.limits)
    report = audit_programs(task, [("reference", ws)], memo=first, **audit).to_json()
    assert first.hits == 0
    first.save()
    folder = tmp_path / "home" / "cache" / "runs"
    assert (folder.stat().st_mode & 0o777) == 0o700 and len(list(folder.iterdir())) == 1
    again = RunMemo.kept(task.limits)
    assert audit_programs(task, [("reference", ws)], memo=again, **audit).to_json() == report
    assert again.kept_hits == again.hits == 6 + 2 * 2   # the graded runs (it passes them: no public one)
    # other limits are another context; a changed program another workspace
    other = RunMemo.kept(dataclasses.replace(task.limits, wall=task.limits.wall + 1))
    audit_programs(task, [("reference", ws)], memo=other, **audit)
    assert other.hits == 0
    (ws / "note.txt").write_text("changed")
    changed = RunMemo.kept(task.limits)
    audit_programs(task, [("reference", ws)], memo=changed, **audit)
    assert changed.hits == 0
    # an unreadable kept file is empty, never an error
    for f in folder.iterdir():
        f.write_text("{not json")
    broken = RunMemo.kept(task.limits)
    (ws / "note.txt").unlink()
    assert audit_programs(task, [("reference", ws)], memo=broken, **audit).to_json() == report
    assert broken.hits == 0


@pytest.mark.parametrize("runtime", ["local", "bwrap"])
def test_an_audited_program_cannot_plant_or_read_kept_runs(registry: Registry, tmp_path: Path, runtime: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A trial's program that knows where runs are kept tries, on every run, to read them
    and to plant a file there (a forged run of itself that a later audit would take): the
    sandbox leaves it neither (what it writes stays in its own view), and the next audit
    takes only the runs recon itself kept."""
    if runtime == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap is not available here")
    home = tmp_path / "home"
    monkeypatch.setenv("RECON_HOME", str(home))
    folder = home / "cache" / "runs"
    task = load_task(build_task(registry, "tiny_series", tmp_path / "t", n_public=4, n_hidden=6, probes=2,
                                select="random").path)
    ws = tmp_path / "hostile"
    ws.mkdir()
    attack = (f"import os as _os\n_kept = {str(folder)!r}\n"
              "try:\n    _os.makedirs(_kept, exist_ok=True)\n"
              "    open(_os.path.join(_kept, 'planted.json'), 'w').write('{}')\nexcept OSError:\n    pass\n"
              "try:\n    _seen = [n for n in _os.listdir(_kept) if n != 'planted.json']\nexcept OSError:\n    _seen = []\n"
              "if _seen:\n    raise SystemExit('read the kept runs: ' + ','.join(_seen))\n")
    (ws / "reconstruct.py").write_text(attack + REFERENCE)
    rt = get_runtime(runtime)
    audit = {"runtime": rt, "registry": registry, "nonces": ["n1"], "pool_size": 0}
    first = RunMemo.kept(task.limits)
    report = audit_programs(task, [("hostile", ws)], memo=first, **audit)
    assert not any(f.graded_failed or f.public_failed for f in report.programs[0].fields.values())
    first.save()
    assert [p.name for p in folder.iterdir()] == [p.name for p in folder.glob("*.json")]
    assert not (folder / "planted.json").exists() and len(list(folder.iterdir())) == 1
    # the second audit reads only what the first kept (its own runs, every one of them)
    again = RunMemo.kept(task.limits)
    assert audit_programs(task, [("hostile", ws)], memo=again, **audit).to_json() == report.to_json()
    assert again.kept_hits == 6 + 2 and not (folder / "planted.json").exists()


def test_a_run_memo_keeps_clean_runs_only() -> None:
    """A failed run (a timeout on a busy machine) is run again where it is asked for again."""
    memo, made = RunMemo(), []

    def start(res: RunResult) -> RunResult:
        made.append(res)
        return res

    timed_out = RunResult(exit_code=None, stdout=b"", stderr_tail="", seconds=2.0, timed_out=True)
    clean = RunResult(exit_code=0, stdout=b"{}", stderr_tail="", seconds=0.1)
    assert memo.run(("ws", "s1"), lambda: start(timed_out)) is timed_out
    assert memo.run(("ws", "s1"), lambda: start(clean)) is clean
    assert memo.run(("ws", "s1"), lambda: start(timed_out)) is clean
    assert memo.run(("other ws", "s1"), lambda: start(timed_out)) is timed_out
    assert made == [timed_out, clean, timed_out] and memo.hits == 1
