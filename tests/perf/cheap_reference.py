"""Reference solution of the `cheap_poly` test oracle: a few arithmetic operations.

Standalone (stdlib only): reads one scenario JSON on stdin, prints the output JSON.
"""
import json
import math
import sys


def solve(scenario):
    p = scenario["parameters"]
    a, b, n = float(p["a"]), float(p["b"]), int(p["n"])
    terms = [a * k + b / k for k in range(1, n + 1)]
    # "sum" adds the terms, "max" keeps the largest
    value = sum(terms) if p["mode"] == "sum" else max(terms)
    return {
        "value": round(value, 9),
        "count": n + (p["seed"] % 7),
        "sign": "negative" if value < 0 else "non-negative",
        "angle": round(math.degrees(math.atan2(a, b)), 9),
    }


def main():
    scenario = json.load(sys.stdin)
    print(json.dumps(solve(scenario)))


if __name__ == "__main__":
    main()
