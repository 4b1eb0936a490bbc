"""The texts an agent reads: ``instruction.md`` and the workspace README.

Both are rendered from the task's public manifest only (``manifest.json``, which holds
the oracle's public declaration: description, axes and outputs with their docs and
tolerances, input and evidence descriptions). So nothing hidden -- no hidden scenario,
no output, no line of source and no sentence of the recipe -- can reach them by
accident. The recipe enters only as the explicit ``recipe`` argument, which the
packager passes for a ``--disclose recipe`` build and for no other.
"""
from __future__ import annotations

import textwrap
from fractions import Fraction
from typing import Any, Sequence

from .checks import CHECKS
from .grader import BUDGET_SHARE, STRIKE_FACTOR, STRIKE_FLOOR, STRIKES
from .ladder import Ladder

__all__ = ["render_instruction", "render_workspace_readme", "KIND_WORDS"]

KIND_WORDS = {
    "number": "number", "integer": "integer", "exact": "exact JSON value", "text": "string",
    "angle": "angle in degrees", "set": "list of strings (compared as a set)", "sequence": "list",
}


def _prose(text: str) -> str:
    """An author's paragraph, filled to 88 columns; lines of lists and indented blocks
    are kept as written."""
    out = []
    for para in text.strip().split("\n\n"):
        lines = para.splitlines()
        if any(ln.lstrip().startswith(("-", "*", "|", "#", "```")) or ln.startswith(" ") for ln in lines):
            out.append(para)
        else:
            out.append(textwrap.fill(" ".join(para.split()), width=88, break_long_words=False, break_on_hyphens=False))
    return "\n\n".join(out)


def _cell(text: Any) -> str:
    """One Markdown table cell: a single line, pipes escaped."""
    return " ".join(str(text if text is not None else "").split()).replace("|", "\\|")


def _values(d: dict[str, Any]) -> str:
    kind = d["kind"]
    if kind == "float":
        return f"real number in [{d['lo']}, {d['hi']}]" + (" (spread logarithmically)" if d.get("log") else "")
    if kind in ("int", "seed"):
        return f"integer in [{d['lo']}, {d['hi']}]" + (" (a random seed)" if kind == "seed" else "")
    if kind == "bool":
        return "`true` or `false`"
    return "one of " + ", ".join(f"`{c}`" for c in d["choices"])


def _share(x: float) -> str:
    f = Fraction(x).limit_denominator(12)
    return f"{f.numerator}/{f.denominator}"


def _contract(manifest: dict[str, Any]) -> str:
    example_inputs = ', "inputs": {"<name>": "/absolute/path/of/the/file", ...}' if manifest["inputs"] else ', "inputs": {}'
    return (
        "Your program is run as `python3 reconstruct.py` with the workspace as its current\n"
        "directory. It reads one scenario as JSON on standard input:\n\n"
        f'```json\n{{"task": "{manifest["oracle"]}", "id": "...", "parameters": {{...}}{example_inputs}}}\n```\n\n'
        "and must print one JSON object on standard output with every field listed below.\n"
        "Anything on standard error is ignored.\n\n"
        + _prose(f"Each run has a time limit of {manifest['timeout']:g} seconds (wall clock), limited memory and "
                 f"no network. A grading runs your program once per scenario (a run that times out is run "
                 f"once more, and only a second timeout counts); after {STRIKES} of its runs "
                 f"time out, each later run gets {STRIKE_FACTOR:g} times your slowest finished run (at least "
                 f"{STRIKE_FLOOR:g} s), and once its runs have used {_share(BUDGET_SHARE)} of (runs x "
                 f"{manifest['timeout']:g} s) in all, no more are started (they count as failed). Time your "
                 "program spends waiting for a CPU on a busy machine is not counted, the CPU time of every "
                 f"process it starts is. A program that never times out and takes under {_share(BUDGET_SHARE)} "
                 "of the limit on average on a machine of its own never meets these rules.")
    )


def _inputs_section(manifest: dict[str, Any]) -> str:
    if not manifest["inputs"]:
        return ""
    rows = "\n".join(f"| `{n}` | {_cell(d)} |" for n, d in sorted(manifest.get("input_docs", {}).items()))
    return f"""
## Input files

Every scenario, published or hidden, comes with input files; `inputs` maps each input's
name to its file. In a published `scenario.json` the paths are relative to that file's
folder (`inputs/...`); the scenario your program receives on stdin names them by
absolute paths.

| input | what the file holds |
|---|---|
{rows}
"""


LEVEL_WORDS = {
    "outputs": "about the outputs only: the results in other forms, nothing of the stages that lead to them",
    "summary": "per-stage summaries: what each stage produced, in aggregate, not its step-by-step internals",
    "trace": "step-by-step traces of the stages",
}


def _level_sentence(level: str | None) -> str:
    if level not in LEVEL_WORDS:
        return ""
    return f"This task was built at evidence level `{level}`: the evidence files reveal {LEVEL_WORDS[level]}.\n\n"


def _recipe_section(recipe: str, stages: Sequence[str]) -> str:
    stage_list = ""
    if stages:
        stage_list = "Its stages, in order: " + "; ".join(stages) + ".\n\n"
    return f"""
## Recipe (disclosed)

This variant of the task discloses how the oracle computes its outputs, in its
author's words. The hidden scenarios and the grading are the same as without it.

{stage_list}{recipe.strip()}
"""


def _ladder_section(ladder: Ladder, probes: int) -> str:
    """"How you are graded", rendered from the ladder's own data (its rungs, their
    descriptions and quorums), so the instruction and the grader cannot disagree."""
    n = len(ladder.rungs)
    lines = []
    for r in ladder.rungs:
        text = " ".join(r.description.split())
        for family in r.checks:
            explain = CHECKS[family].explain_for(r.options_for(family))
            if explain:
                text += " " + explain
        q = r.quorum
        if q.share or q.at_least:
            per = " and ".join(CHECKS[f].expands for f in r.checks)
            bounds = [str(q.at_least)] if q.at_least else []
            if q.share:
                bounds.append(f"{q.share.numerator}/{q.share.denominator} of its checks (rounded down)")
            allowed = bounds[0] if len(bounds) == 1 else f"the larger of {bounds[0]} and {bounds[1]}"
            text += f" It counts one check {per} and passes when at most {allowed} fail, always fewer than half."
        lines.append(f"{r.index}. **{r.name}** ({r.index}/{n}): {text}")
    rungs = "\n".join(lines)
    return f"""## How you are graded

A {n}-rung ladder (`{ladder.name}`), examined from the bottom: a rung counts only when every
rung below it passed. The graded scenarios are the hidden ones and {probes} fresh
probes drawn when grading.

{rungs}

The reward is `(k + f) / {n}`, where k is the highest rung passed and f the fraction of the
next rung's checks that passed, so partial progress counts; 1.0 needs all {n}."""


def render_instruction(manifest: dict[str, Any], *, n_public: int, probes: int, ladder: Ladder,
                       recipe: str | None = None, stages: Sequence[str] = ()) -> str:
    """``instruction.md`` from the public ``manifest`` (see :meth:`recon.Oracle.public`).

    ``recipe`` (and its ``stages``) are added as a "Recipe" section only when given:
    the packager passes them for ``--disclose recipe`` builds.
    """
    axes = "\n".join(f"| `{n}` | {_values(d)} | {_cell(d.get('doc'))} |" for n, d in sorted(manifest["axes"].items()))
    fields = "\n".join(
        f"| `{n}` | {KIND_WORDS.get(o['kind'], o['kind'])} | {_cell(o.get('doc'))} | {o['tolerance']} |"
        for n, o in sorted(manifest["outputs"].items())
    )
    evidence = "\n".join(f"  - `{f}`: {_cell(d)}" for f, d in sorted(manifest["evidence"].items()))
    level = manifest.get("evidence_level")
    toolkit = ", ".join(f"`{t}`" for t in manifest.get("toolkit", [])) or "none beyond the standard library"
    return f"""# {manifest['title']}

A reference implementation (the *oracle*) computes the outputs below from a set of
parameters. You do not get its code. You get its behaviour: {n_public} published
scenarios with their inputs, the oracle's outputs and evidence files. Write a program
that reproduces the oracle on scenarios you have never seen.

## What the oracle computes

{_prose(manifest['description'])}

## Toolkit

Domain: {manifest['domain']}. The environment has these Python packages installed:
{toolkit}. There is no network.

## Parameters

| parameter | values | meaning |
|---|---|---|
{axes}
{_inputs_section(manifest)}
## The contract

{_contract(manifest)}

| field | kind | meaning | tolerance |
|---|---|---|---|
{fields}

Numbers pass when `|got - want| <= max(abs, rel * max(|got|, |want|))`; an integer,
boolean or string must have the right JSON type (`true` is not `1`); NaN and Infinity
never match.

## Evidence

`/app/observations/reference_outputs.tar.gz` holds one folder per published scenario
(`public_1/` ... `public_{n_public}/`), each with:
  - `scenario.json`: exactly what your program receives (input paths relative)
  - `oracle_output.json`: what the oracle printed for it
  - `signature.json`: hashes tying the two together
{evidence}

{_level_sentence(level)}`/app/observations/manifest.json` lists the parameters, the output fields with their
meanings and tolerances, and the sha256 of every published file.

## Feedback

Run `/app/tools/feedback` (all published scenarios) or `/app/tools/feedback public_2`
(one) at any time. It runs your program and prints one line per field, `PASS` or
`MISMATCH  got ...  want ...  (tolerance)`, then a summary. `--json` gives the same
as JSON. Exit codes: 0 all pass, 1 some mismatch, 2 your program failed to run, 3
bad usage. Public feedback is a hint only: the score is decided on hidden scenarios
you never see and on fresh scenarios drawn when grading.

## Deliverable

`/app/workspace/reconstruct.py` (the workspace is the only thing graded; keep any
helper modules next to it).

{_ladder_section(ladder, probes)}
{_recipe_section(recipe, stages) if recipe is not None else ""}"""


def render_workspace_readme(manifest: dict[str, Any]) -> str:
    """The starter ``workspace/README.md``: the contract again, from the public manifest."""
    fields = ", ".join(f"`{n}`" for n in sorted(manifest["outputs"]))
    return f"""# Workspace: {manifest['title']}

Write `reconstruct.py` here. It is run as `python3 reconstruct.py` from this folder,
reads one scenario JSON on stdin (`{{"task", "id", "parameters", "inputs"}}`) and must
print one JSON object with the fields {fields}.

- Evidence: `/app/observations/` (see `manifest.json`).
- Check your work: `/app/tools/feedback` (published scenarios only; hidden
  scenarios decide the score).
- Everything in this folder is handed to the grader; nothing else is.
"""
