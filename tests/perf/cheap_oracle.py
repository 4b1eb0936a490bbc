"""`cheap_poly`: an oracle that costs microseconds, for tests and the sweep benchmark.

Load it with ``Registry().load_plugin_file(path)`` or ``recon ... --plugin``.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from recon import Choice, Float, Int, Integer, Number, Seed, Text, oracle

_spec = importlib.util.spec_from_file_location("cheap_reference", Path(__file__).with_name("cheap_reference.py"))
assert _spec is not None and _spec.loader is not None
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


@oracle(
    name="cheap_poly", version="1.0.0", title="Cheap polynomial", domain="testing", toolkit=[],
    reference="cheap_reference.py",
    description="Combines n simple terms built from a and b, counts, and reports a sign and an angle.",
    axes={"a": Float(-2.0, 2.0, doc="first coefficient"), "b": Float(0.5, 5.0, log=True, doc="second coefficient"),
          "n": Int(1, 8, doc="number of terms"), "mode": Choice(["sum", "max"], doc="how the terms combine"),
          "seed": Seed(doc="an offset for the count")},
    outputs={"value": Number(rel=1e-6, abs=1e-9, doc="the combined terms"),
             "count": Integer(tol=0, doc="a count"), "sign": Text(doc="the sign of the value"),
             "angle": Number(abs=1e-6, doc="an angle, degrees")},
)
def cheap_poly(params, evidence):
    """Adds or takes the largest of n terms a*k + b/k; counts n plus the seed modulo 7;
    tells the sign; and gives the angle atan2(a, b) in degrees. Tolerances are tight
    because the arithmetic is exact up to float rounding."""
    return reference.solve({"parameters": params})
