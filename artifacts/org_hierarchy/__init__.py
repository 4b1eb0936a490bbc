"""Built-in oracle `org_hierarchy`: an HR report over messy CSV exports of an organisation,
computed with DuckDB SQL (hierarchy, as-of salaries, department aggregates)."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from recon import Bool, Choice, Evidence, Exact, Float, Int, Integer, Number, Seed, SequenceOf, Text, oracle


def make_inputs(params: dict[str, Any], directory: Path) -> None:
    """employees.csv, departments.csv, salaries.csv and fx_rates.csv (see _hris)."""
    from . import _hris

    _hris.write_inputs(params, Path(directory))


def _sig(x: Any) -> str:
    return "" if x is None else f"{float(x):.4g}"


@oracle(
    name="org_hierarchy",
    version="1.0.0",
    title="Organisation hierarchy and payroll report from messy HR exports, in DuckDB SQL",
    domain="data engineering",
    toolkit=[],
    requires=["duckdb"],
    description=(
        "A data engineer receives the CSV exports of an organisation's HR system: the employee records "
        "(identifier, name, manager, department code, hire date, employment status, when the record was "
        "exported), the department list, the salary history (effective date, amount, currency) and monthly "
        "exchange rates to euros. The exports carry the usual defects: rows exported twice, older versions "
        "of a record next to the current one, identifiers and codes with stray spaces, padding or the wrong "
        "case, hire dates in several regional formats (some unreadable), missing values, amounts that are "
        "not numbers, managers who are missing from the export and management loops. The report is one "
        "DuckDB SQL script (DuckDB 2.0, one thread) run over the four files as read by DuckDB's CSV reader "
        "with every column as text, and every value in it is what DuckDB's own casts, date parsing, joins, "
        "window functions, aggregates, rounding, ordering and NULL handling give. It cleans and "
        "de-duplicates the records, walks the management hierarchy down from the people without a known "
        "manager, finds each employee's salary in euros on the report date, and aggregates per department "
        "over the people employed on the report date. The question: the cleaning counts, the shape of the "
        "hierarchy, and the department and payroll figures of the report."
    ),
    axes={
        "employees": Int(25, 120, doc="people in the organisation (before export defects)"),
        "defect_rate": Float(0.0, 0.3, doc="how dirty the exports are: the rate of every kind of defect scales "
                                           "with it"),
        "cycles": Bool(doc="whether the export holds management loops (people who end up managing themselves "
                           "through a chain of managers)"),
        "currency_mix": Choice(["eur", "multi"], doc="eur: every salary is paid in euros; multi: some departments "
                                                    "pay in US dollars, pounds or Swiss francs"),
        "as_of_day": Int(0, 1460, doc="the report date, days after 2022-01-01"),
        "top_n": Int(1, 4, doc="how many top earners the report lists per department"),
        "seed": Seed(doc="seed of the organisation, its records, salaries, rates and defects"),
    },
    outputs={
        "exact_duplicates": Integer(tol=0, doc="employee rows dropped because they repeat another row exactly"),
        "superseded": Integer(tol=0, doc="employee rows dropped because a later export of the same employee "
                                         "exists"),
        "employees": Integer(tol=0, doc="employees after cleaning (one record each)"),
        "roots": Integer(tol=0, doc="employees with no manager identifier (none given, or one that is not a "
                                    "number)"),
        "orphans": Integer(tol=0, doc="employees whose manager identifier names nobody in the cleaned records"),
        "unreachable": Integer(tol=0, doc="employees the hierarchy walk never reaches"),
        "max_depth": Integer(tol=0, doc="the deepest level of the hierarchy (a starting person is level 0)"),
        "mean_depth": Number(abs=1e-6, doc="the mean level of the reached employees, rounded to 3 decimals"),
        "widest_manager": Integer(tol=0, doc="identifier of the employee with the most direct reports (the "
                                             "smallest identifier among equals)"),
        "deepest_path": Text(doc="the management chain of the deepest employee (the smallest identifier among "
                                 "equals), names from the top down joined by ' > '"),
        "dept_codes": SequenceOf(Exact(), doc=(
            "the department codes of the report's rows, cleaned, in the report's order (null for people "
            "without a department)")),
        "dept_headcount": SequenceOf(Integer(tol=0), doc="per report row: people employed on the report date"),
        "dept_payroll_eur": SequenceOf(Number(abs=1e-3), doc=(
            "per report row: the sum of their salaries on the report date in euros, rounded to cents (0.0 "
            "when nobody has one)")),
        "dept_median_eur": SequenceOf(Number(abs=1e-3), doc=(
            "per report row: the median of those salaries in euros, rounded to cents (0.0 when nobody has one)")),
        "dept_tenure_years": SequenceOf(Number(abs=1e-6), doc=(
            "per report row: the mean of each person's service in whole years (days employed on the report "
            "date divided by 365.25, made a whole number), rounded to 2 decimals")),
        "dept_top_earners": SequenceOf(Text(), doc=(
            "per report row: the names of the top_n best paid people, best first (equal salaries by name), "
            "joined by '; '")),
        "payroll_total_eur": Number(abs=1e-3, doc="the sum of all salaries on the report date in euros, rounded to "
                                                  "cents"),
        "unpaid": Integer(tol=0, doc="people employed on the report date without a salary in euros on that date"),
        "hires_by_month": SequenceOf(Integer(tol=0), doc=(
            "hires per calendar month, January to December, over the cleaned employee records whose hire date "
            "could be read (any status, any year)")),
        "raises_last_year": Integer(tol=0, doc=(
            "salary records (of anyone) taking effect within the 365 days up to the report date that raise "
            "the amount of the employee's previous record")),
    },
    inputs=make_inputs,
    input_docs={
        "employees": "employees.csv: emp_id, name, manager_id, dept, hire_date, status (active, terminated, on "
                     "leave, in any case), updated_at (export time, YYYY-MM-DD HH:MM:SS); one row per exported "
                     "record, as exported",
        "departments": "departments.csv: dept_code, dept_name, cost_center",
        "salaries": "salaries.csv: emp_id, effective_date (YYYY-MM-DD), amount (yearly, in the currency), "
                    "currency (ISO code); one row per salary change",
        "fx_rates": "fx_rates.csv: currency, rate_date (the first of a month; some months are missing), "
                    "eur_per_unit (euros for one unit of the currency)",
    },
    stages=["read the CSVs as text", "distinct rows, parse ids / dates (ordered format list) / codes, latest "
            "export per employee", "recursive walk from roots and orphans, cycles unreachable",
            "salaries: distinct, parsed, unusable rows dropped, as-of exchange rate, rounded to cents",
            "employed on the report date, as-of salary, whole-year tenure by a rounding cast",
            "per-department aggregates with DuckDB median, rounding, NULL ordering and ordered string_agg",
            "totals, unpaid, raises by lag"],
    reference="reference.py",
    evidence={
        "report.csv": Evidence(
            "the department report as the script prints it: dept_code, dept_name (from departments.csv, empty "
            "when unknown), headcount, payroll_eur, median_eur, tenure_years (4 significant digits), top_earners",
            reveals="outputs"),
        "stages.json": Evidence(
            "per-stage counts of the script: rows read, exact duplicates, superseded, rejected ids, employees, "
            "hire dates that did not parse, terminated, employed on the report date, roots, orphans, reached, "
            "unreachable; salary rows read, distinct, usable, without a rate; exchange-rate rows",
            reveals="summary"),
        "hierarchy.csv": Evidence(
            "the hierarchy walk, one row per reached employee: emp_id, depth, path", reveals="trace"),
        "employees_clean.csv": Evidence(
            "the cleaned employee table: emp_id, name, manager_id, dept, hire_date, status, and for people "
            "employed on the report date their salary in euros and whole-year tenure", reveals="trace"),
    },
    evidence_level="summary",
)
def org_hierarchy(params: dict[str, Any], evidence: Path, inputs: dict[str, Path]) -> dict[str, Any]:
    """Run the HR report (DuckDB 2.0 SQL, one thread) and summarise it.

    Every file is read with read_csv(path, header=true, all_varchar=true): an empty field
    and a quoted empty field are both NULL, every other field is the text as written
    (spaces kept, quotes removed, "" unescaped).

    1. Employees. raw = all rows; rows = SELECT DISTINCT * (exact_duplicates = raw - rows,
       NULL equal to NULL). Parse each row: emp_id = TRY_CAST(trim(emp_id) AS INTEGER) and
       manager_id likewise (DuckDB's string-to-integer cast accepts surrounding spaces, a
       sign, leading zeros and a decimal part, which it ROUNDS: '17.0' -> 17, '17.5' -> 18;
       anything else -> NULL); name = trim(name); dept = upper(trim(dept)) (so ' ' becomes
       the empty string, not NULL); hire_date = CAST(try_strptime(trim(hire_date),
       ['%Y-%m-%d', '%d/%m/%Y', '%m/%d/%Y', '%d.%m.%Y', '%b %d %Y']) AS DATE): the first
       format that parses wins, so 04/03/2019 is 4 March and 04/13/2019 is 13 April;
       strptime accepts unpadded numbers, month names in any case and invalid calendar dates
       fail; status = lower(trim(coalesce(status, 'active'))); updated_at =
       TRY_CAST(updated_at AS TIMESTAMP). Parsed rows with a NULL emp_id are rejected; the
       rest keep, per emp_id, the row with the latest updated_at (QUALIFY row_number() OVER
       (PARTITION BY emp_id ORDER BY updated_at DESC) = 1; superseded = the others).
       hires_by_month: count of cleaned records per month(hire_date), NULL dates left out.
    2. Hierarchy: recursive CTE from every employee whose manager_id matches no employee
       (NULL -> a root, otherwise an orphan) at depth 0, path = name; a child joins on
       manager_id = emp_id at depth + 1 with path || ' > ' || name. Loops and everything
       under them are never reached (unreachable = employees - reached). max_depth,
       mean_depth = round(avg(depth), 3) over reached rows. widest_manager: among
       manager_ids that are employees, the most rows, ties to the smallest id (a
       self-managed employee counts as its own report). deepest_path: max depth, ties to
       the smallest emp_id.
    3. Salaries: SELECT DISTINCT TRY_CAST(trim(emp_id) AS INTEGER), TRY_CAST(trim(
       effective_date) AS DATE), TRY_CAST(trim(amount) AS DOUBLE) (accepts '1e5', '61.25e3',
       '85000.', spaces; '61,250', 'n/a' -> NULL), upper(trim(coalesce(currency, 'EUR')))
       (a missing currency is taken as euros); rows with any NULL of the first three are
       dropped. The rate: ASOF LEFT JOIN fx ON currency AND eff >= rate_date (the latest rate
       on or before the effective date; none -> NULL); euros = round(amount * (1.0 for EUR
       else rate), 2), where DuckDB's round of a DOUBLE rounds the exact binary value half
       away from zero (2828.595 -> 2828.59 because it is 2828.59499..., 0.125 -> 0.13).
    4. Employed on the report date D: status <> 'terminated' AND hire_date <= D (a NULL hire
       date drops the person). Salary: ASOF LEFT JOIN sal_eur ON emp_id AND D >= eff (the
       latest usable record; its euros may be NULL). tenure = CAST(date_diff('day', hire, D)
       / 365.25 AS INTEGER): a DOUBLE cast to INTEGER ROUNDS to nearest (half to even),
       it does not truncate.
    5. Per dept (GROUP BY dept ORDER BY dept NULLS LAST; byte order, '' first): count(*),
       coalesce(round(sum(eur), 2), 0.0), coalesce(round(median(eur), 2), 0.0) (median of
       an even count = mean of the two middle values; NULLs ignored), round(avg(tenure), 2),
       string_agg(name, '; ' ORDER BY eur DESC, name, emp_id) FILTER (WHERE rn <= top_n)
       with rn = row_number() OVER (PARTITION BY dept ORDER BY eur DESC, name, emp_id): NULL
       salaries sort LAST even in DESC, so unpaid people fill up short departments; names
       compare bytewise ('Zoe' < 'adam').
    6. payroll_total_eur = coalesce(round(sum(eur), 2), 0.0) over everyone employed; unpaid
       = those with NULL eur. raises_last_year: over usable salary rows with eff <= D, lag(
       amount) OVER (PARTITION BY emp_id ORDER BY eff); rows with prev NOT NULL, amount >
       prev and eff > D - 365 days (amounts in the record's own currency).

    Tolerances, and why: counts, identifiers, codes and strings are exact (a wrong rule
    moves whole rows). Money fields: 1e-3 EUR on values rounded to cents, so a faithful
    implementation agrees up to float summation order while another rounding rule (half to
    even, Python's round, rounding the sum instead of each salary) is a whole cent off
    where it matters. mean_depth and dept_tenure_years: 1e-6 on values rounded to 3 and 2
    decimals: a half-even tie or an unrounded mean shows.
    """
    from . import _sql

    out, detail = _sql.run(params, inputs)
    con = detail["con"]
    evidence = Path(evidence)
    names = dict(con.execute("SELECT DISTINCT dept_code, dept_name FROM read_csv($p, header = true, "
                             "all_varchar = true)", {"p": str(inputs["departments"])}).fetchall())
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["dept_code", "dept_name", "headcount", "payroll_eur", "median_eur", "tenure_years", "top_earners"])
    for d in detail["depts"]:
        w.writerow([d[0] if d[0] is not None else "", names.get(d[0], "") if d[0] is not None else "", d[1],
                    _sig(d[2]), _sig(d[3]), _sig(d[4]), d[5] or ""])
    (evidence / "report.csv").write_text(buf.getvalue(), encoding="utf-8")
    st = detail["stages"]
    stages = {
        "employees_csv": {"rows": st[0], "exact_duplicates": out["exact_duplicates"], "superseded": out["superseded"],
                          "rejected_ids": detail["rejected"], "employees": out["employees"],
                          "hire_date_unparsed": st[1], "terminated": st[2], "employed_on_report_date": st[3]},
        "hierarchy": {"roots": out["roots"], "orphans": out["orphans"],
                      "reached": out["employees"] - out["unreachable"], "unreachable": out["unreachable"]},
        "salaries_csv": {"rows": st[4], "distinct": st[5], "usable": st[6], "without_rate": st[7]},
        "fx_rates_csv": {"rows": st[8]},
        "report_date": detail["as_of"],
    }
    (evidence / "stages.json").write_text(json.dumps(stages, indent=1) + "\n", encoding="utf-8")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["emp_id", "depth", "path"])
    w.writerows(con.execute("SELECT emp_id, depth, path FROM tree ORDER BY emp_id").fetchall())
    (evidence / "hierarchy.csv").write_text(buf.getvalue(), encoding="utf-8")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["emp_id", "name", "manager_id", "dept", "hire_date", "status", "salary_eur", "tenure_years"])
    for r in con.execute("SELECT e.emp_id, e.name, e.manager_id, e.dept, e.hire_date, e.status, c.eur, c.tenure "
                         "FROM emp e LEFT JOIN cur c USING (emp_id) ORDER BY e.emp_id").fetchall():
        w.writerow([r[0], r[1], "" if r[2] is None else r[2], "" if r[3] is None else r[3],
                    "" if r[4] is None else r[4].isoformat(), r[5], _sig(r[6]), "" if r[7] is None else r[7]])
    (evidence / "employees_clean.csv").write_text(buf.getvalue(), encoding="utf-8")
    con.close()
    return out
