"""Tests of the built-in `org_hierarchy` oracle with the real DuckDB (no mocks)."""
from __future__ import annotations

import csv
import json
import random
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest

duckdb = pytest.importorskip("duckdb")

from recon import Registry  # noqa: E402
from recon.artifacts.org_hierarchy import _hris, _sql, org_hierarchy  # noqa: E402
from recon.artifacts.org_hierarchy import reference as ref  # noqa: E402
from recon.audit import grade_baselines  # noqa: E402
from recon.build import build_task  # noqa: E402
from recon.grader import grade  # noqa: E402

INPUTS = ("employees", "departments", "salaries", "fx_rates")
DEPT_FIELDS = ("dept_codes", "dept_headcount", "dept_payroll_eur", "dept_median_eur", "dept_tenure_years",
               "dept_top_earners")


def params(**kw: Any) -> dict[str, Any]:
    base = {"employees": 70, "defect_rate": 0.25, "cycles": True, "currency_mix": "multi", "as_of_day": 900,
            "top_n": 3, "seed": 5}
    base.update(kw)
    return base


def run(p: dict[str, Any], root: Path) -> tuple[dict[str, Any], Path, dict[str, Path]]:
    inputs = org_hierarchy.make_inputs(p, root / "inputs")
    return org_hierarchy(p, root / "evidence", inputs), root / "evidence", inputs


def scenario(p: dict[str, Any], inputs: dict[str, Path]) -> dict[str, Any]:
    return {"task": "org_hierarchy", "id": "public_1", "parameters": p,
            "inputs": {k: str(v) for k, v in inputs.items()}}


def mismatches(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    return [f for f, o in org_hierarchy.outputs.items() if not o.compare(got[f], want[f])]


def check_outputs(out: dict[str, Any]) -> None:
    assert set(out) == set(org_hierarchy.outputs)
    n = len(out["dept_codes"])
    assert all(len(out[f]) == n for f in DEPT_FIELDS)
    assert out["unreachable"] + (out["employees"] - out["unreachable"]) == out["employees"] >= out["roots"] + out["orphans"]
    assert sum(out["dept_headcount"]) >= out["unpaid"]
    assert abs(sum(out["dept_payroll_eur"]) - out["payroll_total_eur"]) < 0.01 * n + 1e-6
    for v in out["dept_payroll_eur"] + out["dept_median_eur"] + [out["payroll_total_eur"]]:
        assert abs(round(v, 2) - v) < 1e-6                      # cents
    codes = out["dept_codes"]
    assert codes == sorted(codes, key=lambda c: (c is None, c or ""))  # NULL last, byte order


# --------------------------------------------------------------------- declaration
def test_declaration_keeps_duckdb_on_the_verifier_side() -> None:
    assert org_hierarchy.toolkit == () and org_hierarchy.requires == ("duckdb",)
    assert org_hierarchy.evidence_level == "summary"
    assert set(org_hierarchy.published_evidence()) == {"report.csv", "stages.json"}
    assert set(org_hierarchy.published_evidence("trace")) == {"report.csv", "stages.json", "hierarchy.csv",
                                                              "employees_clean.csv"}
    assert set(org_hierarchy.input_docs) == set(INPUTS) and len(org_hierarchy.stages) >= 4
    assert 10 <= len(org_hierarchy.outputs) <= 20
    recipe = " ".join(org_hierarchy.recipe.split())
    for word in ("'%d/%m/%Y', '%m/%d/%Y'", "ASOF LEFT JOIN", "half away from zero", "ROUNDS to nearest",
                 "NULLS LAST", "QUALIFY", "Tolerances, and why"):
        assert word.lower() in recipe.lower(), word
    public = org_hierarchy.public()
    what = " ".join([public["description"], *(a["doc"] for a in public["axes"].values()),
                     *(o["doc"] for o in public["outputs"].values())]).lower()
    for word in ("asof", "half away", "%m/%d", "qualify", "nulls last", "lag(", "row_number", "truncat"):
        assert word not in what, word


# -------------------------------------------------------------------------- inputs
def test_inputs_are_dirty_csv_exports(tmp_path: Path) -> None:
    p = params(defect_rate=0.3)
    files = org_hierarchy.make_inputs(p, tmp_path / "a")
    assert set(files) == set(INPUTS)
    with open(files["employees"], newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["emp_id", "name", "manager_id", "dept", "hire_date", "status", "updated_at"]
    body = [tuple(r) for r in rows[1:]]
    assert len(body) > len(set(body))                                   # rows exported twice
    hires = [r[4] for r in body]
    assert any("/" in h for h in hires) and any(h[:3].isalpha() for h in hires if h)   # regional formats
    assert any(r[0] != r[0].strip() or r[0].startswith("0") for r in body)              # padded identifiers
    again = org_hierarchy.make_inputs(dict(p), tmp_path / "b")
    assert all(files[k].read_bytes() == again[k].read_bytes() for k in INPUTS)
    clean = org_hierarchy.make_inputs(params(defect_rate=0.0), tmp_path / "c")
    with open(clean["employees"], newline="", encoding="utf-8") as fh:
        assert all(r[4] == "" or date.fromisoformat(r[4]) for r in list(csv.reader(fh))[1:])


# ------------------------------------------------------- DuckDB semantics, pinned down
def test_rounding_is_duckdbs() -> None:
    rng = random.Random(3)
    values = [rng.randrange(1000, 200000) * rng.randrange(8000, 12500) / 10000 for _ in range(3000)]
    values += [rng.randrange(0, 4000) / 8 for _ in range(500)] + [0.125, 2.675, 2828.595, -2.5, 1.005]
    con = duckdb.connect()
    for digits in (2, 3):
        got = con.execute(f"SELECT round(x, {digits}) FROM (SELECT unnest(?::DOUBLE[]) AS x)", [values]).fetchall()
        assert [ref.round_away(v, digits) for v in values] == [g[0] for g in got]
    # ... and Python's own round() is not
    assert sum(round(v, 2) != ref.round_away(v, 2) for v in values) > 100


def test_casts_and_date_parsing_are_duckdbs() -> None:
    con = duckdb.connect()
    texts = ["1234", "01234", " 1234", "1234.0", " 1234 ", "1234.5", "-7", "+12", "TBD", "n/a", "#N/A", "E1234",
             "temp-3", "61.25e3", "61,250", "61250.", ".5"]
    got = con.execute("SELECT TRY_CAST(trim(x) AS INTEGER), TRY_CAST(trim(x) AS DOUBLE) FROM "
                      "(SELECT unnest(?::VARCHAR[]) AS x)", [texts]).fetchall()
    assert [(ref.to_int(t), ref.to_double(t)) for t in texts] == [tuple(g) for g in got]
    rng = random.Random(8)
    dates = [_hris._date_text(rng, date(2000, 1, 1) + (date(2025, 1, 1) - date(2000, 1, 1)) * rng.random(), 1.0)
             for _ in range(400)]
    got = con.execute(f"SELECT CAST(try_strptime(trim(x), {_sql.DATE_FORMATS}) AS DATE) FROM "
                      "(SELECT unnest(?::VARCHAR[]) AS x)", [dates]).fetchall()
    mine = [ref.strptime_list(d) for d in dates]
    assert mine == [g[0] for g in got]
    assert ref.strptime_list("04/03/2019") == date(2019, 3, 4) and ref.strptime_list("04/13/2019") == date(2019, 4, 13)
    assert sum(m is None for m in mine) > 10                              # unreadable dates exist


# ----------------------------------------------------------------- oracle and evidence
@pytest.fixture(scope="module")
def dirty(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], Path, dict[str, Path]]:
    p = params(employees=110, defect_rate=0.3)
    out, ev, inputs = run(p, tmp_path_factory.mktemp("dirty"))
    return p, out, ev, inputs


def test_evidence_matches_outputs(dirty: Any) -> None:
    p, out, ev, _ = dirty
    check_outputs(out)
    assert {f.name for f in ev.iterdir()} == set(org_hierarchy.evidence)
    with open(ev / "report.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["dept_code"] or None for r in rows] == [c or None for c in out["dept_codes"]]
    assert [int(r["headcount"]) for r in rows] == out["dept_headcount"]
    assert [r["top_earners"] for r in rows] == out["dept_top_earners"]
    stages = json.loads((ev / "stages.json").read_text(encoding="utf-8"))
    emp = stages["employees_csv"]
    assert emp["rows"] - emp["exact_duplicates"] - emp["superseded"] - emp["rejected_ids"] == out["employees"]
    assert stages["hierarchy"]["reached"] == out["employees"] - out["unreachable"]
    assert emp["employed_on_report_date"] == sum(out["dept_headcount"])
    with open(ev / "hierarchy.csv", newline="", encoding="utf-8") as fh:
        tree = list(csv.DictReader(fh))
    assert len(tree) == stages["hierarchy"]["reached"] and max(int(t["depth"]) for t in tree) == out["max_depth"]


def test_dirty_scenario_exercises_the_defects(dirty: Any) -> None:
    _, out, _, _ = dirty
    assert out["exact_duplicates"] > 0 and out["superseded"] > 0 and out["unreachable"] > 0
    assert out["orphans"] + out["roots"] > 1 and out["max_depth"] >= 3
    assert out["unpaid"] > 0 and out["raises_last_year"] >= 0


def _corners() -> list[dict[str, Any]]:
    names = [n for n in sorted(org_hierarchy.axes) if n != "seed"]
    rng = random.Random(2)
    rows = [{n: org_hierarchy.axes[n].edges()[i % 2] for n in names} for i in range(2)]
    for _ in range(3):
        rows.append({n: org_hierarchy.axes[n].edges()[rng.randrange(2)] for n in names})
    return rows


@pytest.mark.parametrize("k", range(5))
def test_oracle_at_axis_corners_and_reference_agrees(tmp_path: Path, k: int) -> None:
    p = dict(_corners()[k], seed=[0, 2**31 - 1, 21, 22, 23][k])
    out, _, inputs = run(p, tmp_path)
    check_outputs(out)
    proc = subprocess.run([sys.executable, str(org_hierarchy.reference)], input=json.dumps(scenario(p, inputs)),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert mismatches(json.loads(proc.stdout), out) == []


def test_a_wrong_rule_fails(dirty: Any) -> None:
    from decimal import ROUND_HALF_UP, Decimal
    p, out, _, inputs = dirty
    money = {"dept_payroll_eur", "dept_median_eur", "payroll_total_eur", "mean_depth", "dept_tenure_years"}
    wrong = {"decimal of the repr": lambda x, d: float(Decimal(repr(x)).quantize(Decimal(1).scaleb(-d), ROUND_HALF_UP)),
             "scaled": lambda x, d: int(x * 10**d + 0.5) / 10**d}
    old = ref.round_away
    for name, fn in wrong.items():
        try:
            ref.round_away = lambda x, d, fn=fn: None if x is None else fn(x, d)
            got = ref.solve(scenario(p, inputs))
        finally:
            ref.round_away = old
        assert set(mismatches(got, out)) & money, name
    old_formats = ref.FORMATS
    try:
        ref.FORMATS = [old_formats[0], old_formats[2], old_formats[1], *old_formats[3:]]  # US dates first
        us_first = ref.solve(scenario(p, inputs))
    finally:
        ref.FORMATS = old_formats
    assert "hires_by_month" in mismatches(us_first, out)


# ------------------------------------------------------------------ built task
@pytest.fixture(scope="module")
def small_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry = Registry.default(entry_points=False)
    return build_task(registry, "org_hierarchy", tmp_path_factory.mktemp("oh_small"), n_public=4, n_hidden=3,
                      probes=1, workers=1, select="random").path


def test_small_build_reference_scores_one_and_baselines_do_not(small_task: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reconstruct.py").write_text(Path(org_hierarchy.reference).read_text(encoding="utf-8"), encoding="utf-8")
    assert grade(small_task, ws, runtime="local", nonce="t", workers=1)["reward"] == 1.0
    rows = {r.name: r for r in grade_baselines(small_task, org_hierarchy, runtime="local")}
    assert set(rows) == {"sqlite_port", "textbook"}
    for row in rows.values():
        assert 0.5 < row.reward < 1.0, (row.name, row.reward, row.detail)
