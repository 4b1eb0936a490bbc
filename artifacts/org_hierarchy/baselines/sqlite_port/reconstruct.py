#!/usr/bin/env python3
"""Baseline `sqlite_port` of org_hierarchy: the report ported to the standard library's
sqlite3, as a data engineer without DuckDB would write it from the instruction: the CSVs
loaded as text (empty fields as NULL), casts guarded with GLOB, hire dates parsed by a
Python function over the usual formats (ISO first, then day/month/year), a recursive CTE
for the hierarchy, correlated subqueries for the rates and salaries in force, window
functions for ranking and raises, SQLite's ROUND, CAST and NULL ordering."""
from __future__ import annotations

import csv
import json
import sqlite3
import statistics
import sys
from datetime import date, datetime, timedelta
from typing import Any

FORMATS = ["%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%b %d %Y"]


def parse_date(v: str | None) -> str | None:
    for f in FORMATS:
        try:
            return datetime.strptime((v or "").strip(), f).date().isoformat()
        except ValueError:
            continue
    return None


class Median:
    def __init__(self) -> None:
        self.v: list[float] = []

    def step(self, x: float | None) -> None:
        if x is not None:
            self.v.append(x)

    def finalize(self) -> float | None:
        return statistics.median(self.v) if self.v else None


def load(con: sqlite3.Connection, table: str, path: str) -> None:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    cols = ", ".join(f'"{c}"' for c in rows[0])
    con.execute(f"CREATE TABLE {table} ({cols})")
    con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})",
                    [[v if v != "" else None for v in r] for r in rows[1:]])


INT = "(CASE WHEN trim({0}) GLOB '[0-9]*' OR trim({0}) GLOB '[+-][0-9]*' THEN CAST(trim({0}) AS INTEGER) END)"
NUM = "(CASE WHEN trim({0}) GLOB '*[0-9]*' AND trim({0}) NOT GLOB '*[^0-9eE.+-]*' THEN CAST(trim({0}) AS REAL) END)"

SCRIPT = f"""
CREATE TABLE emp_rows AS SELECT DISTINCT * FROM raw_emp;
CREATE TABLE emp_parsed AS SELECT {INT.format('emp_id')} AS emp_id, trim(name) AS name,
    {INT.format('manager_id')} AS manager_id, upper(trim(dept)) AS dept, pdate(hire_date) AS hire_date,
    lower(trim(coalesce(status, 'active'))) AS status, updated_at FROM emp_rows;
CREATE TABLE emp AS SELECT emp_id, name, manager_id, dept, hire_date, status FROM (
    SELECT *, row_number() OVER (PARTITION BY emp_id ORDER BY updated_at DESC) AS rn
    FROM emp_parsed WHERE emp_id IS NOT NULL) WHERE rn = 1;
CREATE TABLE tree AS WITH RECURSIVE t(emp_id, depth, path) AS (
    SELECT e.emp_id, 0, e.name FROM emp e LEFT JOIN emp m ON e.manager_id = m.emp_id WHERE m.emp_id IS NULL
    UNION ALL
    SELECT e.emp_id, t.depth + 1, t.path || ' > ' || e.name FROM emp e JOIN t ON e.manager_id = t.emp_id)
    SELECT * FROM t;
CREATE TABLE sal AS SELECT DISTINCT {INT.format('emp_id')} AS emp_id, trim(effective_date) AS eff,
    {NUM.format('amount')} AS amount, upper(trim(coalesce(currency, 'EUR'))) AS currency FROM raw_sal;
CREATE TABLE sal_ok AS SELECT * FROM sal WHERE emp_id IS NOT NULL AND eff IS NOT NULL AND amount IS NOT NULL;
CREATE TABLE sal_eur AS SELECT s.*, round(s.amount * CASE WHEN s.currency = 'EUR' THEN 1.0 ELSE
    (SELECT CAST(f.eur_per_unit AS REAL) FROM raw_fx f WHERE upper(trim(f.currency)) = s.currency
     AND f.rate_date <= s.eff ORDER BY f.rate_date DESC LIMIT 1) END, 2) AS eur FROM sal_ok s;
CREATE TABLE cur AS SELECT e.emp_id, e.name, e.dept,
    (SELECT s.eur FROM sal_eur s WHERE s.emp_id = e.emp_id AND s.eff <= :d ORDER BY s.eff DESC LIMIT 1) AS eur,
    CAST((julianday(:d) - julianday(e.hire_date)) / 365.25 AS INTEGER) AS tenure
    FROM emp e WHERE e.status <> 'terminated' AND e.hire_date <= :d;
CREATE TABLE ranked AS SELECT *, row_number() OVER (PARTITION BY dept ORDER BY eur DESC, name, emp_id) AS rn FROM cur
"""


def solve(scenario: dict[str, Any]) -> dict[str, Any]:
    p, inp = scenario["parameters"], scenario["inputs"]
    d = (date(2022, 1, 1) + timedelta(days=int(p["as_of_day"]))).isoformat()
    con = sqlite3.connect(":memory:")
    con.create_function("pdate", 1, parse_date)
    con.create_aggregate("median", 1, Median)
    load(con, "raw_emp", inp["employees"])
    load(con, "raw_sal", inp["salaries"])
    load(con, "raw_fx", inp["fx_rates"])
    for stmt in SCRIPT.split(";"):
        con.execute(stmt, {"d": d} if ":d" in stmt else {})
    one = lambda sql, **kw: con.execute(sql, kw).fetchone()  # noqa: E731
    widest = one("SELECT manager_id FROM emp WHERE manager_id IN (SELECT emp_id FROM emp) GROUP BY manager_id "
                 "ORDER BY count(*) DESC, manager_id LIMIT 1")
    depts = con.execute(
        "SELECT dept, count(*), coalesce(round(sum(eur), 2), 0.0), coalesce(round(median(eur), 2), 0.0), "
        "round(avg(tenure), 2), (SELECT group_concat(name, '; ') FROM (SELECT name FROM ranked r2 WHERE "
        "r2.dept IS r.dept AND r2.rn <= :n ORDER BY rn)) FROM ranked r GROUP BY dept ORDER BY dept",
        {"n": int(p["top_n"])}).fetchall()
    cutoff = (date.fromisoformat(d) - timedelta(days=365)).isoformat()
    return {
        "exact_duplicates": one("SELECT (SELECT count(*) FROM raw_emp) - (SELECT count(*) FROM emp_rows)")[0],
        "superseded": one("SELECT (SELECT count(*) FROM emp_parsed WHERE emp_id IS NOT NULL) - "
                          "(SELECT count(*) FROM emp)")[0],
        "employees": one("SELECT count(*) FROM emp")[0],
        "roots": one("SELECT count(*) FROM emp WHERE manager_id IS NULL")[0],
        "orphans": one("SELECT count(*) FROM emp e WHERE manager_id IS NOT NULL AND NOT EXISTS "
                       "(SELECT 1 FROM emp m WHERE m.emp_id = e.manager_id)")[0],
        "unreachable": one("SELECT (SELECT count(*) FROM emp) - (SELECT count(*) FROM tree)")[0],
        "max_depth": one("SELECT max(depth) FROM tree")[0],
        "mean_depth": one("SELECT round(avg(depth), 3) FROM tree")[0],
        "widest_manager": widest[0] if widest else 0,
        "deepest_path": one("SELECT path FROM tree ORDER BY depth DESC, emp_id LIMIT 1")[0] or "",
        "dept_codes": [r[0] for r in depts],
        "dept_headcount": [r[1] for r in depts],
        "dept_payroll_eur": [float(r[2]) for r in depts],
        "dept_median_eur": [float(r[3]) for r in depts],
        "dept_tenure_years": [float(r[4]) for r in depts],
        "dept_top_earners": [r[5] or "" for r in depts],
        "payroll_total_eur": float(one("SELECT coalesce(round(sum(eur), 2), 0.0) FROM cur")[0]),
        "unpaid": one("SELECT count(*) FROM cur WHERE eur IS NULL")[0],
        "hires_by_month": [one("SELECT count(*) FROM emp WHERE CAST(substr(hire_date, 6, 2) AS INTEGER) = :m", m=m)[0]
                           for m in range(1, 13)],
        "raises_last_year": one(
            "SELECT count(*) FROM (SELECT eff, amount, lag(amount) OVER (PARTITION BY emp_id ORDER BY eff) AS prev "
            "FROM sal_ok WHERE eff <= :d) WHERE prev IS NOT NULL AND amount > prev AND eff > :c", d=d, c=cutoff)[0],
    }


if __name__ == "__main__":
    print(json.dumps(solve(json.load(sys.stdin))))
