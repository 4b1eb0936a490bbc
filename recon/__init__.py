"""recon: turn working scientific software into reconstruction tasks, graded densely.

Author an oracle::

    from recon import oracle, Float, Int, Choice, Bool, Seed
    from recon import Number, Integer, Text, Exact

    @oracle(name="my_task", version="1.0.0", title="...", domain="...",
            toolkit=["numpy"], axes={"seed": Seed()}, outputs={"x": Number(abs=1e-6)})
    def my_task(params, evidence):
        \"\"\"What the agent must reproduce.\"\"\"
        return {"x": 1.0}

Importing recon is cheap: no science library is imported until an oracle runs.
"""
from __future__ import annotations

from .axes import Axis, Bool, Choice, Float, Int, Seed
from .errors import ReconError
from .oracle import Oracle, oracle
from .outputs import Angle, Exact, Integer, Number, Output, SequenceOf, SetOf, Text
from .registry import Registry

__version__ = "0.1.0"

__all__ = [
    "oracle", "Oracle", "Registry", "ReconError",
    "Axis", "Float", "Int", "Choice", "Bool", "Seed",
    "Output", "Number", "Integer", "Exact", "Text", "Angle", "SetOf", "SequenceOf",
    "__version__",
]
