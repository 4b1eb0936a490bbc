#!/usr/bin/env python3
"""Reference solution of `org_hierarchy`: the HR report reproduced in plain Python with the
semantics of the DuckDB SQL script (CSV reading, casts, date parsing, DISTINCT, QUALIFY,
recursive walk, ASOF joins, rounding, median, NULL ordering, ordered string_agg, lag).

Reads one scenario JSON on stdin, prints the output JSON. Standard library only."""
from __future__ import annotations

import csv
import json
import re
import sys
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

BASE = date(2022, 1, 1)
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
# the script's hire-date formats, tried in this order (the first that parses wins)
FORMATS = [("ymd", "-"), ("dmy", "/"), ("mdy", "/"), ("dmy", "."), ("bdy", " ")]
_NUM = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def read_csv(path: str) -> list[tuple[str | None, ...]]:
    """DuckDB's reader with every column as text: empty (quoted or not) is NULL."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return [tuple(v if v != "" else None for v in r) for r in rows[1:]]


def trim(v: str | None) -> str | None:
    return None if v is None else v.strip(" ")


def to_int(v: str | None) -> int | None:
    """TRY_CAST(text AS INTEGER): a decimal part is rounded half away from zero."""
    if v is None:
        return None
    s = v.strip()
    if not _NUM.match(s):
        return None
    d = Decimal(s).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return int(d) if -2**31 <= d < 2**31 else None


def to_double(v: str | None) -> float | None:
    if v is None:
        return None
    s = v.strip()
    return float(s) if _NUM.match(s) else None


def to_date(v: str | None) -> date | None:
    if v is None:
        return None
    m = re.match(r"^(\d{1,4})-(\d{1,2})-(\d{1,2})$", v.strip())
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def strptime_list(v: str | None) -> date | None:
    if v is None:
        return None
    s = v.strip()
    for order, sep in FORMATS:
        if order == "bdy":
            m = re.match(r"^([A-Za-z]{3}) +(\d{1,2}) +(\d{1,4})$", s)
            if not m or m.group(1).lower() not in MONTHS:
                continue
            parts = (int(m.group(3)), MONTHS.index(m.group(1).lower()) + 1, int(m.group(2)))
        else:
            pat = re.escape(sep).join([r"(\d{1,4})" if c == "y" else r"(\d{1,2})" for c in order])
            m = re.match("^" + pat + "$", s)
            if not m:
                continue
            got = dict(zip(order, (int(g) for g in m.groups())))
            parts = (got["y"], got["m"], got["d"])
        try:
            return date(*parts)
        except ValueError:
            continue
    return None


def to_timestamp(v: str | None) -> datetime | None:
    try:
        return datetime.strptime(v, "%Y-%m-%d %H:%M:%S") if v is not None else None
    except ValueError:
        return None


def round_away(x: float | None, digits: int) -> float | None:
    """DuckDB's round() of a DOUBLE: the exact binary value, half away from zero."""
    if x is None:
        return None
    return float(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def median(values: list[float]) -> float | None:
    if not values:
        return None
    s = sorted(values)
    k = len(s) // 2
    return s[k] if len(s) % 2 else (s[k - 1] + s[k]) / 2


def solve(scenario: dict[str, Any]) -> dict[str, Any]:
    params, inputs = scenario["parameters"], scenario["inputs"]
    as_of = BASE + timedelta(days=int(params["as_of_day"]))
    top_n = int(params["top_n"])

    # -------------------------------------------------------------- employees
    raw = read_csv(inputs["employees"])
    rows = list(dict.fromkeys(raw))
    parsed = []
    for r in rows:
        emp_id, name, mgr, dept, hire, status, updated = r
        parsed.append({"emp_id": to_int(trim(emp_id)), "name": trim(name), "manager_id": to_int(trim(mgr)),
                       "dept": None if dept is None else dept.strip(" ").upper(),
                       "hire_date": strptime_list(trim(hire)),
                       "status": (trim(status) if status is not None else "active").lower(),
                       "updated_at": to_timestamp(updated)})
    rejected = sum(1 for p in parsed if p["emp_id"] is None)
    latest: dict[int, dict[str, Any]] = {}
    for p in parsed:
        if p["emp_id"] is None:
            continue
        cur = latest.get(p["emp_id"])
        if cur is None or (p["updated_at"] is not None and (cur["updated_at"] is None
                                                            or p["updated_at"] > cur["updated_at"])):
            latest[p["emp_id"]] = p
    emp = latest
    superseded = len(parsed) - rejected - len(emp)

    # -------------------------------------------------------------- hierarchy
    children: dict[int, list[int]] = {}
    for e in emp.values():
        if e["manager_id"] in emp:
            children.setdefault(e["manager_id"], []).append(e["emp_id"])
    depth: dict[int, int] = {}
    path: dict[int, str | None] = {}
    frontier = [e["emp_id"] for e in emp.values() if e["manager_id"] not in emp]
    for k in frontier:
        depth[k], path[k] = 0, emp[k]["name"]
    while frontier:
        nxt = []
        for k in frontier:
            for c in children.get(k, []):
                depth[c] = depth[k] + 1
                path[c] = None if path[k] is None or emp[c]["name"] is None else path[k] + " > " + emp[c]["name"]
                nxt.append(c)
        frontier = nxt
    roots = sum(1 for e in emp.values() if e["manager_id"] is None)
    orphans = sum(1 for e in emp.values() if e["manager_id"] is not None and e["manager_id"] not in emp)
    spans = {m: len(c) for m, c in children.items()}
    widest = min(spans, key=lambda m: (-spans[m], m)) if spans else 0
    deepest = min(depth, key=lambda k: (-depth[k], k)) if depth else None

    # -------------------------------------------------------------- salaries
    sal = list(dict.fromkeys(
        (to_int(trim(r[0])), to_date(trim(r[1])), to_double(trim(r[2])), (trim(r[3]) if r[3] is not None else "EUR").upper())
        for r in read_csv(inputs["salaries"])))
    sal_ok = [s for s in sal if s[0] is not None and s[1] is not None and s[2] is not None]
    fx: dict[str, list[tuple[date, float]]] = {}
    for cur_, day, rate in read_csv(inputs["fx_rates"]):
        fx.setdefault(cur_.strip(" ").upper(), []).append((to_date(day), float(rate)))
    for v in fx.values():
        v.sort()
    history: dict[int, list[tuple[date, float | None]]] = {}
    for emp_id, eff, amount, currency in sal_ok:
        if currency == "EUR":
            rate: float | None = 1.0
        else:
            earlier = [r for d, r in fx.get(currency, []) if d <= eff]
            rate = earlier[-1] if earlier else None
        eur = round_away(amount * rate, 2) if rate is not None else None
        history.setdefault(emp_id, []).append((eff, eur))

    # -------------------------------------------------------------- employed on the report date
    people = []
    for e in emp.values():
        if e["status"] == "terminated" or e["hire_date"] is None or e["hire_date"] > as_of:
            continue
        recs = sorted(r for r in history.get(e["emp_id"], []) if r[0] <= as_of)
        eur = recs[-1][1] if recs else None
        tenure = round((as_of - e["hire_date"]).days / 365.25)
        people.append({**e, "eur": eur, "tenure": tenure})

    def rank_key(p: dict[str, Any]) -> tuple[Any, ...]:
        return (p["eur"] is None, -(p["eur"] or 0.0), p["name"] is None, p["name"] or "", p["emp_id"])

    groups: dict[str | None, list[dict[str, Any]]] = {}
    for p in people:
        groups.setdefault(p["dept"], []).append(p)
    order = sorted(groups, key=lambda d: (d is None, d or ""))
    out_codes, heads, payroll, medians, tenures, tops = [], [], [], [], [], []
    for d in order:
        ps = groups[d]
        paid = [p["eur"] for p in ps if p["eur"] is not None]
        out_codes.append(d)
        heads.append(len(ps))
        payroll.append(round_away(sum(paid), 2) if paid else 0.0)
        medians.append(round_away(median(paid), 2) if paid else 0.0)
        tenures.append(round_away(sum(p["tenure"] for p in ps) / len(ps), 2))
        best = sorted(ps, key=rank_key)[:top_n]
        tops.append("; ".join(p["name"] for p in best if p["name"] is not None))
    all_paid = [p["eur"] for p in people if p["eur"] is not None]

    raises = 0
    by_emp: dict[int, list[tuple[date, float]]] = {}
    for emp_id, eff, amount, _ in sal_ok:
        if eff <= as_of:
            by_emp.setdefault(emp_id, []).append((eff, amount))
    for recs in by_emp.values():
        recs.sort()
        for (_, prev), (eff, amount) in zip(recs, recs[1:]):
            if amount > prev and eff > as_of - timedelta(days=365):
                raises += 1

    return {
        "exact_duplicates": len(raw) - len(rows),
        "superseded": superseded,
        "employees": len(emp),
        "roots": roots,
        "orphans": orphans,
        "unreachable": len(emp) - len(depth),
        "max_depth": max(depth.values(), default=0),
        "mean_depth": round_away(sum(depth.values()) / len(depth), 3) if depth else 0.0,
        "widest_manager": widest,
        "deepest_path": (path[deepest] or "") if deepest is not None else "",
        "dept_codes": out_codes,
        "dept_headcount": heads,
        "dept_payroll_eur": payroll,
        "dept_median_eur": medians,
        "dept_tenure_years": tenures,
        "dept_top_earners": tops,
        "payroll_total_eur": round_away(sum(all_paid), 2) if all_paid else 0.0,
        "unpaid": sum(1 for p in people if p["eur"] is None),
        "hires_by_month": [sum(1 for e in emp.values() if e["hire_date"] is not None and e["hire_date"].month == m)
                           for m in range(1, 13)],
        "raises_last_year": raises,
    }


def main() -> None:
    print(json.dumps(solve(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
