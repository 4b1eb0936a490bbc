"""The oracle's core: the HR report written in DuckDB SQL (verifier side only)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

DATE_FORMATS = "['%Y-%m-%d', '%d/%m/%Y', '%m/%d/%Y', '%d.%m.%Y', '%b %d %Y']"

PIPELINE = """
CREATE TABLE raw_emp AS SELECT * FROM read_csv($employees, header = true, all_varchar = true);
CREATE TABLE emp_rows AS SELECT DISTINCT * FROM raw_emp;
CREATE TABLE emp_parsed AS
SELECT TRY_CAST(trim(emp_id) AS INTEGER) AS emp_id,
       trim(name) AS name,
       TRY_CAST(trim(manager_id) AS INTEGER) AS manager_id,
       upper(trim(dept)) AS dept,
       CAST(try_strptime(trim(hire_date), {formats}) AS DATE) AS hire_date,
       lower(trim(coalesce(status, 'active'))) AS status,
       TRY_CAST(updated_at AS TIMESTAMP) AS updated_at
FROM emp_rows;
CREATE TABLE emp AS
SELECT * FROM emp_parsed WHERE emp_id IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY emp_id ORDER BY updated_at DESC) = 1;

CREATE TABLE tree AS
WITH RECURSIVE t(emp_id, depth, path) AS (
    SELECT e.emp_id, 0, e.name
    FROM emp e LEFT JOIN emp m ON e.manager_id = m.emp_id
    WHERE m.emp_id IS NULL
    UNION ALL
    SELECT e.emp_id, t.depth + 1, t.path || ' > ' || e.name
    FROM emp e JOIN t ON e.manager_id = t.emp_id
)
SELECT * FROM t;

CREATE TABLE raw_sal AS SELECT * FROM read_csv($salaries, header = true, all_varchar = true);
CREATE TABLE sal AS
SELECT DISTINCT TRY_CAST(trim(emp_id) AS INTEGER) AS emp_id,
       TRY_CAST(trim(effective_date) AS DATE) AS eff,
       TRY_CAST(trim(amount) AS DOUBLE) AS amount,
       upper(trim(coalesce(currency, 'EUR'))) AS currency
FROM raw_sal;
CREATE TABLE sal_ok AS SELECT * FROM sal WHERE emp_id IS NOT NULL AND eff IS NOT NULL AND amount IS NOT NULL;
CREATE TABLE fx AS
SELECT upper(trim(currency)) AS currency, CAST(rate_date AS DATE) AS rate_date, CAST(eur_per_unit AS DOUBLE) AS rate
FROM read_csv($fx, header = true, all_varchar = true);
CREATE TABLE sal_eur AS
SELECT s.emp_id, s.eff, s.amount, s.currency,
       round(s.amount * CASE WHEN s.currency = 'EUR' THEN 1.0 ELSE f.rate END, 2) AS eur
FROM sal_ok s ASOF LEFT JOIN fx f ON s.currency = f.currency AND s.eff >= f.rate_date;

CREATE TABLE active AS
SELECT e.*, CAST($as_of AS DATE) AS as_of FROM emp e
WHERE e.status <> 'terminated' AND e.hire_date <= CAST($as_of AS DATE);
CREATE TABLE cur AS
SELECT a.emp_id, a.name, a.dept, a.hire_date, s.eur,
       CAST(date_diff('day', a.hire_date, a.as_of) / 365.25 AS INTEGER) AS tenure
FROM active a ASOF LEFT JOIN sal_eur s ON a.emp_id = s.emp_id AND a.as_of >= s.eff;
CREATE TABLE ranked AS
SELECT *, row_number() OVER (PARTITION BY dept ORDER BY eur DESC, name, emp_id) AS rn FROM cur;
"""

QUERIES = {
    "counts": """
        SELECT (SELECT count(*) FROM raw_emp) - (SELECT count(*) FROM emp_rows),
               (SELECT count(*) FROM emp_parsed WHERE emp_id IS NOT NULL) - (SELECT count(*) FROM emp),
               (SELECT count(*) FROM emp_parsed WHERE emp_id IS NULL),
               (SELECT count(*) FROM emp),
               (SELECT count(*) FROM emp WHERE manager_id IS NULL),
               (SELECT count(*) FROM emp e WHERE e.manager_id IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM emp m WHERE m.emp_id = e.manager_id)),
               (SELECT count(*) FROM emp) - (SELECT count(*) FROM tree),
               (SELECT max(depth) FROM tree),
               (SELECT round(avg(depth), 3) FROM tree)""",
    "months": """
        SELECT month(hire_date) AS m, count(*) FROM emp WHERE hire_date IS NOT NULL GROUP BY m ORDER BY m""",
    "widest": """
        SELECT manager_id, count(*) AS n FROM emp
        WHERE manager_id IN (SELECT emp_id FROM emp)
        GROUP BY manager_id ORDER BY n DESC, manager_id LIMIT 1""",
    "deepest": "SELECT path FROM tree ORDER BY depth DESC, emp_id LIMIT 1",
    "depts": """
        SELECT dept, count(*),
               coalesce(round(sum(eur), 2), 0.0),
               coalesce(round(median(eur), 2), 0.0),
               round(avg(tenure), 2),
               string_agg(name, '; ' ORDER BY eur DESC, name, emp_id) FILTER (WHERE rn <= $top_n)
        FROM ranked GROUP BY dept ORDER BY dept NULLS LAST""",
    "totals": """
        SELECT coalesce(round(sum(eur), 2), 0.0), count(*) FILTER (WHERE eur IS NULL) FROM cur""",
    "raises": """
        SELECT count(*) FROM (
            SELECT eff, amount, lag(amount) OVER (PARTITION BY emp_id ORDER BY eff) AS prev
            FROM sal_ok WHERE eff <= CAST($as_of AS DATE))
        WHERE prev IS NOT NULL AND amount > prev AND eff > CAST($as_of AS DATE) - INTERVAL 365 DAY""",
    "stages": """
        SELECT (SELECT count(*) FROM raw_emp),
               (SELECT count(*) FROM emp WHERE hire_date IS NULL),
               (SELECT count(*) FROM emp WHERE status = 'terminated'),
               (SELECT count(*) FROM active),
               (SELECT count(*) FROM raw_sal),
               (SELECT count(*) FROM sal),
               (SELECT count(*) FROM sal_ok),
               (SELECT count(*) FROM sal_eur WHERE eur IS NULL),
               (SELECT count(*) FROM fx)""",
}


def connect() -> Any:
    import duckdb

    con = duckdb.connect(":memory:")
    con.execute("SET threads = 1")
    return con


def run(params: dict[str, Any], inputs: dict[str, Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    from . import _hris

    con = connect()
    as_of = _hris.report_date(params).isoformat()
    args = {"employees": str(inputs["employees"]), "salaries": str(inputs["salaries"]), "fx": str(inputs["fx_rates"]),
            "as_of": as_of}
    for stmt in PIPELINE.format(formats=DATE_FORMATS).split(";"):
        if stmt.strip():
            used = {k: v for k, v in args.items() if f"${k}" in stmt}
            con.execute(stmt, used)

    def q(name: str, **extra: Any) -> list[tuple[Any, ...]]:
        sql = QUERIES[name]
        allargs = {**args, **extra}
        return con.execute(sql, {k: v for k, v in allargs.items() if f"${k}" in sql}).fetchall()

    (dups, superseded, rejected, employees, roots, orphans, unreachable, max_depth, mean_depth) = q("counts")[0]
    widest = q("widest")
    deepest = q("deepest")
    depts = q("depts", top_n=int(params["top_n"]))
    payroll, unpaid = q("totals")[0]
    raises = q("raises")[0][0]
    months = {int(m): int(c) for m, c in q("months")}
    out = {
        "exact_duplicates": int(dups),
        "superseded": int(superseded),
        "employees": int(employees),
        "roots": int(roots),
        "orphans": int(orphans),
        "unreachable": int(unreachable),
        "max_depth": int(max_depth) if max_depth is not None else 0,
        "mean_depth": float(mean_depth) if mean_depth is not None else 0.0,
        "widest_manager": int(widest[0][0]) if widest else 0,
        "deepest_path": deepest[0][0] if deepest and deepest[0][0] is not None else "",
        "dept_codes": [d[0] for d in depts],
        "dept_headcount": [int(d[1]) for d in depts],
        "dept_payroll_eur": [float(d[2]) for d in depts],
        "dept_median_eur": [float(d[3]) for d in depts],
        "dept_tenure_years": [float(d[4]) if d[4] is not None else 0.0 for d in depts],
        "dept_top_earners": [d[5] if d[5] is not None else "" for d in depts],
        "payroll_total_eur": float(payroll),
        "unpaid": int(unpaid),
        "hires_by_month": [months.get(m, 0) for m in range(1, 13)],
        "raises_last_year": int(raises),
    }
    return out, {"con": con, "depts": depts, "stages": q("stages")[0], "as_of": as_of, "rejected": int(rejected)}
