#!/usr/bin/env python3
"""Baseline `textbook` of org_hierarchy: the report written from the instruction alone in
plain Python, the way a data engineer cleans such exports by hand: strip every field, parse
numbers with float(), try the usual date formats (ISO, then US, then European), keep the
latest export per employee, walk the hierarchy breadth-first, take each salary on the report
date with the rate in force, round with Python's round(), tenure as completed years, the
median from the statistics module, departments in code order."""
from __future__ import annotations

import csv
import json
import statistics
import sys
from datetime import date, datetime, timedelta
from typing import Any

FORMATS = ["%Y-%m-%d", "%m/%d/%Y", "%d/%m/%Y", "%d.%m.%Y", "%b %d %Y"]


def rows_of(path: str) -> list[tuple[str | None, ...]]:
    with open(path, newline="", encoding="utf-8") as fh:
        data = list(csv.reader(fh))[1:]
    return [tuple(v.strip() or None for v in r) for r in data]


def num(v: str | None) -> float | None:
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None


def ident(v: str | None) -> int | None:
    x = num(v)
    return int(x) if x is not None and x == int(x) else None


def parse_date(v: str | None) -> date | None:
    for f in FORMATS:
        try:
            return datetime.strptime(v or "", f).date()
        except ValueError:
            continue
    return None


def solve(scenario: dict[str, Any]) -> dict[str, Any]:
    p, inp = scenario["parameters"], scenario["inputs"]
    as_of = date(2022, 1, 1) + timedelta(days=int(p["as_of_day"]))
    raw = rows_of(inp["employees"])
    uniq = list(dict.fromkeys(raw))
    emp: dict[int, dict[str, Any]] = {}
    rejected = 0
    kept = 0
    for r in uniq:
        i = ident(r[0])
        if i is None:
            rejected += 1
            continue
        kept += 1
        rec = {"id": i, "name": r[1], "mgr": ident(r[2]), "dept": r[3].upper() if r[3] else None,
               "hire": parse_date(r[4]), "status": (r[5] or "active").lower(), "ts": r[6] or ""}
        if i not in emp or rec["ts"] > emp[i]["ts"]:
            emp[i] = rec
    kids: dict[int, list[int]] = {}
    for e in emp.values():
        if e["mgr"] in emp:
            kids.setdefault(e["mgr"], []).append(e["id"])
    depth, path = {}, {}
    todo = [e["id"] for e in emp.values() if e["mgr"] not in emp]
    for k in todo:
        depth[k], path[k] = 0, emp[k]["name"] or ""
    while todo:
        nxt = []
        for k in todo:
            for c in kids.get(k, []):
                depth[c], path[c] = depth[k] + 1, path[k] + " > " + (emp[c]["name"] or "")
                nxt.append(c)
        todo = nxt
    spans = {m: len(c) for m, c in kids.items()}

    fx: dict[str, list[tuple[str, float]]] = {}
    for c, d, r in rows_of(inp["fx_rates"]):
        fx.setdefault(c.upper(), []).append((d, float(r)))
    sal: dict[int, list[tuple[str, float, float | None]]] = {}
    for r in set(rows_of(inp["salaries"])):
        i, amount = ident(r[0]), num(r[2])
        if i is None or amount is None or not r[1]:
            continue
        cur = (r[3] or "EUR").upper()
        rate = 1.0 if cur == "EUR" else next((x for d, x in sorted(fx.get(cur, []), reverse=True) if d <= r[1]), None)
        sal.setdefault(i, []).append((r[1], amount, None if rate is None else round(amount * rate, 2)))
    people = []
    for e in emp.values():
        if e["status"] == "terminated" or (e["hire"] is not None and e["hire"] > as_of):
            continue
        hist = sorted(x for x in sal.get(e["id"], []) if x[0] <= as_of.isoformat())
        eur = hist[-1][2] if hist else None
        years = int((as_of - e["hire"]).days / 365.25) if e["hire"] else 0
        people.append({**e, "eur": eur, "years": years})
    groups: dict[Any, list[dict[str, Any]]] = {}
    for x in people:
        groups.setdefault(x["dept"], []).append(x)
    codes = sorted(groups, key=lambda d: d or "")
    paid = lambda g: [x["eur"] for x in g if x["eur"] is not None]  # noqa: E731
    raises = 0
    for hist in sal.values():
        h = sorted((d, a) for d, a, _ in hist if d <= as_of.isoformat())
        raises += sum(1 for (_, a0), (d, a1) in zip(h, h[1:]) if a1 > a0 and d > (as_of - timedelta(days=365)).isoformat())
    deep = min(depth, key=lambda k: (-depth[k], k))
    return {
        "exact_duplicates": len(raw) - len(uniq), "superseded": kept - len(emp),
        "employees": len(emp), "roots": sum(1 for e in emp.values() if e["mgr"] is None),
        "orphans": sum(1 for e in emp.values() if e["mgr"] is not None and e["mgr"] not in emp),
        "unreachable": len(emp) - len(depth), "max_depth": max(depth.values()),
        "mean_depth": round(statistics.mean(depth.values()), 3),
        "widest_manager": min(spans, key=lambda m: (-spans[m], m)) if spans else 0,
        "deepest_path": path[deep],
        "dept_codes": codes,
        "dept_headcount": [len(groups[c]) for c in codes],
        "dept_payroll_eur": [round(sum(paid(groups[c])), 2) for c in codes],
        "dept_median_eur": [round(statistics.median(paid(groups[c])), 2) if paid(groups[c]) else 0.0 for c in codes],
        "dept_tenure_years": [round(statistics.mean(x["years"] for x in groups[c]), 2) for c in codes],
        "dept_top_earners": ["; ".join(x["name"] for x in sorted((x for x in groups[c] if x["eur"] is not None),
                                                                  key=lambda x: (-x["eur"], x["name"]))[:int(p["top_n"])])
                             for c in codes],
        "payroll_total_eur": round(sum(x["eur"] for x in people if x["eur"] is not None), 2),
        "unpaid": sum(1 for x in people if x["eur"] is None),
        "hires_by_month": [sum(1 for e in emp.values() if e["hire"] and e["hire"].month == m) for m in range(1, 13)],
        "raises_last_year": raises,
    }


if __name__ == "__main__":
    print(json.dumps(solve(json.load(sys.stdin))))
