"""recon: turn working scientific software into reconstruction tasks, graded densely.

Author an oracle: say WHAT in the declaration (the agent reads it), HOW in the
docstring (the private recipe)::

    from recon import oracle, Float, Int, Choice, Bool, Seed
    from recon import Number, Integer, Text, Exact

    @oracle(name="my_task", version="1.0.0", title="...", domain="...", toolkit=["numpy"],
            description="What the artifact computes and the question it answers.",
            axes={"seed": Seed(doc="seed of the random scene")},
            outputs={"x": Number(abs=1e-6, doc="what x means, in metres")})
    def my_task(params, evidence):
        \"\"\"The recipe: algorithm, constants, tie-breaks, why each tolerance. Private.\"\"\"
        return {"x": 1.0}

Importing recon is cheap: no science library is imported until an oracle runs.
"""
from __future__ import annotations

from .axes import Axis, Bool, Choice, Float, Int, Seed
from .errors import ReconError
from .evidence import Evidence
from .oracle import Oracle, oracle
from .outputs import Angle, Exact, Integer, Number, Output, SequenceOf, SetOf, Text
from ._version import __version__
from .registry import Registry

__all__ = [
    "oracle", "Oracle", "Registry", "ReconError", "Evidence",
    "Axis", "Float", "Int", "Choice", "Bool", "Seed",
    "Output", "Number", "Integer", "Exact", "Text", "Angle", "SetOf", "SequenceOf",
    "__version__",
]
