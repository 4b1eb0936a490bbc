"""The scenario generator of `org_hierarchy`: CSV exports of an HR information system
(employees, departments, salary history, exchange rates) with the defects such exports carry.
Standard library only; deterministic in the parameters."""
from __future__ import annotations

import csv
import random
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

FIRST = ["Anna", "Ben", "Chloe", "David", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Karin", "Liam", "Mira",
         "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wim", "Xenia", "Yusuf", "Zoe",
         "Amir", "Britt", "Carlos", "Dana", "Emil", "Fatma", "Gus", "Hana", "Igor", "Jana", "Kofi", "Lena", "Marco",
         "Nora", "Otto", "Petra", "Ravi", "Sara", "Tom", "Ursula", "Victor", "Wanda", "Yara", "Zeno", "adam",
         "Ewa", "Lars", "Mei", "Noah", "Aoife", "Bjorn", "Cem", "Dara", "Eino"]
SYL = ["van", "ber", "kos", "lin", "dor", "mar", "ta", "ren", "sel", "gri", "hol", "ves", "nor", "pak", "ul", "zen",
       "bra", "dim", "ek", "fal", "gun", "har", "jor", "kel", "lo", "mis", "ost", "per", "rav", "sto"]
DEPTS = [("ENG", "Engineering", "CC-100"), ("OPS", "Operations", "CC-110"), ("FIN", "Finance", "CC-200"),
         ("HR", "People", "CC-210"), ("SAL", "Sales", "CC-300"), ("MKT", "Marketing", "CC-310"),
         ("LEG", "Legal", "CC-220"), ("RND", "Research", "CC-120"), ("SUP", "Support", "CC-320"),
         ("IT", "Information Technology", "CC-130")]
CURRENCY = {"SAL": "USD", "LEG": "GBP", "RND": "CHF", "MKT": "USD"}
BASE = date(2022, 1, 1)
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def report_date(params: dict[str, Any]) -> date:
    return BASE + timedelta(days=int(params["as_of_day"]))


def _name(rng: random.Random) -> str:
    last = "".join(rng.choice(SYL) for _ in range(rng.choice([2, 3, 3]))).capitalize()
    return f"{rng.choice(FIRST)} {chr(65 + rng.randrange(26))}. {last}"


def _date_text(rng: random.Random, d: date | None, dirty: float) -> str:
    if d is None:
        return ""
    if rng.random() >= dirty:
        return d.isoformat()
    style = rng.choice(["dmy", "dmy_short", "mdy", "dotted", "mon", "mon_upper", "iso_short", "padded", "invalid"])
    if style == "dmy":
        return f"{d.day:02d}/{d.month:02d}/{d.year}"
    if style == "dmy_short":
        return f"{d.day}/{d.month}/{d.year}"
    if style == "mdy":                      # a US-formatted export
        return f"{d.month:02d}/{d.day:02d}/{d.year}"
    if style == "dotted":
        return f"{d.day:02d}.{d.month:02d}.{d.year}"
    if style == "mon":
        return f"{MONTHS[d.month - 1]} {d.day:02d} {d.year}"
    if style == "mon_upper":
        return f"{MONTHS[d.month - 1].upper()} {d.day} {d.year}"
    if style == "iso_short":
        return f"{d.year}-{d.month}-{d.day}"
    if style == "padded":
        return f" {d.isoformat()} "
    return rng.choice(["TBD", f"{d.year}-02-30", f"{d.year}-13-01", "n/a", "?"])


def world(params: dict[str, Any]) -> dict[str, Any]:
    rng = random.Random(int(params["seed"]) * 104729 + 3)
    dirty = float(params["defect_rate"])
    n = int(params["employees"])
    multi = params["currency_mix"] == "multi"
    depts = sorted(rng.sample(DEPTS, rng.randint(4, 7)))
    codes = [d[0] for d in depts]
    ids = rng.sample(range(1000, 9999), n)
    emps: list[dict[str, Any]] = []
    reports = [0] * n
    depth = [0] * n
    for i in range(n):
        if i == 0:
            mgr = None
            dept = rng.choice(codes)
        else:
            cand = [j for j in range(i) if depth[j] < 7]
            weights = [(1 + min(reports[j], 4)) * 0.5 ** max(0, reports[j] - 5) * 1.4 ** depth[j] for j in cand]
            mgr = rng.choices(cand, weights=weights)[0]
            reports[mgr] += 1
            depth[i] = depth[mgr] + 1
            if depth[i] == 1:
                dept = codes[reports[mgr] % len(codes)]
            else:
                dept = emps[mgr]["dept"] if rng.random() < 0.8 else rng.choice(codes)
        hire = date(2008, 1, 1) + timedelta(days=rng.randrange(0, 6500 if i else 1500))
        status = rng.choices(["active", "terminated", "on leave"], weights=[88, 10, 2])[0]
        emps.append({"id": ids[i], "name": _name(rng), "mgr": None if mgr is None else ids[mgr], "dept": dept,
                     "hire": hire, "status": status})
    by_id = {e["id"]: e for e in emps}
    if params["cycles"] and n > 8:
        pool = [e["id"] for e in emps[1:]]
        rng.shuffle(pool)
        k = rng.randint(2, 4)
        loop = pool[:k]
        for a, b in zip(loop, loop[1:] + loop[:1]):
            by_id[a]["mgr"] = b
        if rng.random() < 0.5:
            by_id[pool[k]]["mgr"] = pool[k]          # a self-managed record
    # orphans: the manager's record is missing from the export
    for e in emps[1:]:
        if rng.random() < dirty * 0.15:
            e["mgr"] = next(x for x in iter(lambda: rng.randrange(1000, 9999), None) if x not in by_id)

    # ------------------------------------------------------------ employee rows
    rows: list[list[str]] = []
    stamp = datetime(2025, 11, 3, 8, 0, 0)
    used_stamps: set[datetime] = set()

    def ts() -> str:
        while True:
            t = stamp + timedelta(seconds=rng.randrange(0, 20 * 86400))
            if t not in used_stamps:
                used_stamps.add(t)
                return t.strftime("%Y-%m-%d %H:%M:%S")

    def id_text(v: int) -> str:
        r = rng.random()
        if r < dirty * 0.3:
            return f"0{v}"
        if r < dirty * 0.6:
            return f" {v}"
        return str(v)

    def mgr_text(v: int | None) -> str:
        if v is None:
            return ""
        r = rng.random()
        if r < dirty * 0.25:
            return f"{v}.0"
        if r < dirty * 0.4:
            return f" {v} "
        if r < dirty * 0.5:
            return rng.choice(["TBD", "n/a", "#N/A"])
        return str(v)

    def dept_text(code: str) -> str:
        r = rng.random()
        if r < dirty * 0.3:
            return code.lower()
        if r < dirty * 0.5:
            return f" {code}"
        if r < dirty * 0.6:
            return code.capitalize() + " "
        if r < dirty * 0.68:
            return ""
        if r < dirty * 0.72:
            return " "
        if r < dirty * 0.8:
            return "TMP"
        return code

    def status_text(s: str) -> str:
        r = rng.random()
        if r < dirty * 0.3:
            return s.capitalize()
        if r < dirty * 0.45:
            return f" {s.upper()}"
        if r < dirty * 0.6:
            return ""
        return s

    def name_text(s: str) -> str:
        return f"  {s} " if rng.random() < dirty * 0.3 else s

    for e in emps:
        row = [id_text(e["id"]), name_text(e["name"]), mgr_text(e["mgr"]), dept_text(e["dept"]),
               _date_text(rng, e["hire"], dirty * 1.5), status_text(e["status"]), ts()]
        rows.append(row)
        if rng.random() < dirty * 0.5:       # an older version of the record, superseded
            old = list(row)
            old[3] = rng.choice(codes)
            old[5] = rng.choice(["active", "terminated"])
            old[6] = (datetime.strptime(row[6], "%Y-%m-%d %H:%M:%S") - timedelta(days=rng.randrange(30, 400),
                      seconds=rng.randrange(86400))).strftime("%Y-%m-%d %H:%M:%S")
            rows.append(old)
        if rng.random() < dirty * 0.5:       # exported twice
            rows.append(list(row))
    for _ in range(int(round(dirty * n * 0.08))):   # records whose id does not parse
        rows.append([rng.choice(["E" + str(rng.randrange(1000, 9999)), "", "temp-" + str(rng.randrange(99))]),
                     _name(rng), str(rng.choice(ids)), rng.choice(codes), _date_text(rng, date(2024, 5, 1), 0.0),
                     "active", ts()])
    rng.shuffle(rows)

    # ------------------------------------------------------------ salaries and rates
    sal_rows: list[list[str]] = []
    for e in emps:
        if rng.random() < 0.05:
            continue
        cur = CURRENCY.get(e["dept"], "EUR") if multi else "EUR"
        lvl = 0
        mgr = e["mgr"]
        seen = set()
        while mgr is not None and mgr in by_id and mgr not in seen and lvl < 8:
            seen.add(mgr)
            mgr = by_id[mgr]["mgr"]
            lvl += 1
        # whole 500s, as pay scales are: an amount never spells a distinctive figure of another scenario
        amount = max(28000, int((42000 + 110000 / (1 + lvl) + rng.gauss(0, 9000)) / 500) * 500)
        eff = e["hire"] + timedelta(days=rng.randrange(0, 40))
        for _ in range(rng.choice([1, 2, 2, 3, 3, 4])):
            txt = str(amount)
            r = rng.random()
            if r < dirty * 0.2:
                txt = f"{amount}.00"
            elif r < dirty * 0.35:
                txt = f" {amount}"
            elif r < dirty * 0.45:
                txt = f"{amount // 1000},{amount % 1000:03d}"
            elif r < dirty * 0.52:
                txt = f"{amount / 1000:g}e3"
            elif r < dirty * 0.58:
                txt = rng.choice(["n/a", "", "tbd"])
            ctxt = cur
            r = rng.random()
            if r < dirty * 0.3:
                ctxt = cur.lower()
            elif r < dirty * 0.45:
                ctxt = f" {cur}"
            elif r < dirty * 0.55:
                ctxt = ""
            row = [id_text(e["id"]), eff.isoformat(), txt, ctxt]
            sal_rows.append(row)
            if rng.random() < dirty * 0.3:
                sal_rows.append(list(row))
            eff = eff + timedelta(days=rng.randrange(180, 720))
            amount = max(28000, int(amount * (1 + rng.choice([0.02, 0.03, 0.04, 0.05, 0.08, -0.03, 0.0])) / 500) * 500)
    rng.shuffle(sal_rows)
    fx_rows: list[list[str]] = []
    for cur, lvl, start in (("USD", 0.90, 2012), ("GBP", 1.16, 2012), ("CHF", 0.95, 2020)):
        rate = lvl
        for y in range(start, 2027):
            for m in range(1, 13):
                rate = min(lvl * 1.12, max(lvl * 0.88, rate * (1 + rng.gauss(0, 0.012))))
                if rng.random() < 0.1:
                    continue
                fx_rows.append([cur, date(y, m, 1).isoformat(), f"{rate:.5f}"])
    return {"depts": depts, "rows": rows, "salaries": sal_rows, "fx": fx_rows}


def write_inputs(params: dict[str, Any], directory: Path) -> None:
    w = world(params)
    directory = Path(directory)

    def write(name: str, header: list[str], rows: list[list[str]]) -> None:
        with open(directory / name, "w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh, lineterminator="\n")
            out.writerow(header)
            out.writerows(rows)

    write("employees.csv", ["emp_id", "name", "manager_id", "dept", "hire_date", "status", "updated_at"], w["rows"])
    write("departments.csv", ["dept_code", "dept_name", "cost_center"], [list(d) for d in w["depts"]])
    write("salaries.csv", ["emp_id", "effective_date", "amount", "currency"], w["salaries"])
    write("fx_rates.csv", ["currency", "rate_date", "eur_per_unit"], w["fx"])
