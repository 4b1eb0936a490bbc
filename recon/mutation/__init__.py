"""Mutation analysis: which wrong programs a task's scenarios catch, and scenarios chosen by it.

- :mod:`.operators`: single-edit mutants of a reference (libcst), and the instrumentation
  that records which lines and values each scenario exercised;
- :mod:`.callgraph`: which functions of the reference an edit cannot reach (a mutant's
  run takes their results from the reference's recorded calls);
- :mod:`.worker`: long-lived worker processes that import the toolkit once and run
  mutants under time limits;
- :mod:`.store`: verdicts kept across analyses of the same reference (``$RECON_HOME/cache``, and
  those an oracle ships in ``kept/``);
- :mod:`.engine`: the :class:`Engine` that ties scenarios, mutants and verdicts together;
- :mod:`.selection`: how a build picks its public and hidden scenarios (``random``, or
  ``stress``: by the mutants they kill);
- :mod:`.analysis`: the mutation score of a task (``recon mutate``, ``recon validate``);
- :mod:`.pool`: any program on a pool of generated scenarios (``recon pool``).
"""
from __future__ import annotations

from .analysis import (MutantResult, MutationReport, Target, compare_selections, mutation_analysis, mutation_score,
                       resolve_target)
from .engine import (DEFAULT_BUDGET, DEFAULT_MAX_MUTANTS, DEFAULT_MAX_PER_LINE, DEFAULT_NONCES, DEFAULT_POOL,
                     DEFAULT_SEARCH, DEFAULT_THRESHOLD, DEFAULT_VALIDATE_POOL, Engine, auto_nonces)
from .operators import OPERATORS
from .pool import PoolReport, run_program_on_pool
from .selection import select_scenarios, stress_selection
from .store import VerdictStore

__all__ = ["Engine", "MutantResult", "MutationReport", "Target", "compare_selections", "mutation_analysis",
           "mutation_score", "resolve_target", "select_scenarios", "stress_selection", "run_program_on_pool",
           "PoolReport", "OPERATORS", "DEFAULT_BUDGET", "DEFAULT_MAX_MUTANTS", "DEFAULT_MAX_PER_LINE",
           "DEFAULT_NONCES", "DEFAULT_POOL", "DEFAULT_SEARCH", "DEFAULT_THRESHOLD", "DEFAULT_VALIDATE_POOL",
           "auto_nonces", "VerdictStore"]
