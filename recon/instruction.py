"""The texts an agent reads: ``instruction.md`` and the workspace README.

Generated from the oracle's declaration and the public manifest only, so nothing
hidden (scenario, output or source) can reach them.
"""
from __future__ import annotations

from typing import Any

from .oracle import Oracle
from .sweep import SweepSpec

__all__ = ["render_instruction", "render_workspace_readme"]


def _axis_line(name: str, d: dict[str, Any]) -> str:
    kind = d["kind"]
    if kind == "float":
        return f"- `{name}`: real number in [{d['lo']}, {d['hi']}]" + (" (spread logarithmically)" if d.get("log") else "")
    if kind in ("int", "seed"):
        return f"- `{name}`: integer in [{d['lo']}, {d['hi']}]" + (" (a random seed)" if kind == "seed" else "")
    if kind == "bool":
        return f"- `{name}`: `true` or `false`"
    return f"- `{name}`: one of " + ", ".join(f"`{c}`" for c in d["choices"])


KIND_WORDS = {
    "number": "number", "integer": "integer", "exact": "exact JSON value", "text": "string",
    "angle": "angle in degrees", "set": "list of strings (compared as a set)", "sequence": "list",
}


def _contract(oracle: Oracle, manifest: dict[str, Any]) -> str:
    example_inputs = ""
    if manifest["inputs"]:
        example_inputs = ', "inputs": {"<name>": "/absolute/path/of/the/file", ...}'
    else:
        example_inputs = ', "inputs": {}'
    return (
        "Your program is run as `python3 reconstruct.py` with the workspace as its current\n"
        "directory. It reads one scenario as JSON on standard input:\n\n"
        f'```json\n{{"task": "{oracle.name}", "id": "...", "parameters": {{...}}{example_inputs}}}\n```\n\n'
        "and must print one JSON object on standard output with every field listed below.\n"
        "Anything on standard error is ignored. Each run has a time limit of "
        f"{manifest['timeout']:g} seconds, limited memory and no network."
    )


def render_instruction(oracle: Oracle, task_id: str, manifest: dict[str, Any], spec: SweepSpec, probes: int,
                       ladder: str) -> str:
    axes = "\n".join(_axis_line(n, d) for n, d in sorted(manifest["axes"].items()))
    fields = "\n".join(
        f"| `{n}` | {KIND_WORDS.get(o['kind'], o['kind'])} | {o['tolerance']} |" for n, o in sorted(manifest["outputs"].items())
    )
    evidence = "\n".join(f"  - `{f}`: {d}" for f, d in sorted(manifest["evidence"].items()))
    inputs_note = ""
    if manifest["inputs"]:
        inputs_note = (
            "\nEvery scenario, published or hidden, comes with input files. In a published\n"
            "`scenario.json` their paths are relative to that file's folder (`inputs/...`); the\n"
            "scenario your program receives on stdin names them by absolute paths.\n"
        )
    return f"""# {oracle.title}

A reference implementation (the *oracle*) computes the outputs below from a set of
parameters. You do not get its code. You get its behaviour: {spec.n_public} published
scenarios with their inputs, the oracle's outputs and evidence files. Write a program
that reproduces the oracle on scenarios you have never seen.

## What the oracle does

{oracle.doc}

## Toolkit

Domain: {oracle.domain}. The environment has these Python packages installed:
{", ".join(f"`{t}`" for t in oracle.toolkit)}. There is no network.

## Parameters

{axes}

## The contract

{_contract(oracle, manifest)}

| field | kind | tolerance |
|---|---|---|
{fields}

Numbers pass when `|got - want| <= max(abs, rel * max(|got|, |want|))`; an integer,
boolean or string must have the right JSON type (`true` is not `1`); NaN and Infinity
never match.

## Evidence

`/app/observations/reference_outputs.tar.gz` holds one folder per published scenario
(`public_1/` ... `public_{spec.n_public}/`), each with:
  - `scenario.json`: exactly what your program receives (input paths relative)
  - `oracle_output.json`: what the oracle printed for it
  - `signature.json`: hashes tying the two together
{evidence}
{inputs_note}
`/app/observations/manifest.json` lists the axes, the output fields and tolerances,
and the sha256 of every published file.

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

## How you are graded

A six-rung ladder ({ladder}): (1) the workspace holds something you wrote; (2)
`reconstruct.py` exists and compiles; (3) on the published scenarios it exits 0 and
prints an object with every field of the right kind; (4) the same holds on every
hidden scenario and on {probes} fresh probes; (5) anti-memorization: your outputs are
not replays of published outputs, every field that varies in the truth varies in
your outputs, and they change when a parameter change changes the truth; (6) every
field of every hidden scenario and probe is within tolerance. The reward is
`(k + f) / 6`, where k is the highest rung passed and f the fraction of the next
rung's checks passed, so partial progress counts; 1.0 needs all six.
"""


def render_workspace_readme(oracle: Oracle, task_id: str, manifest: dict[str, Any]) -> str:
    fields = ", ".join(f"`{n}`" for n in sorted(manifest["outputs"]))
    return f"""# Workspace: {oracle.title}

Write `reconstruct.py` here. It is run as `python3 reconstruct.py` from this folder,
reads one scenario JSON on stdin (`{{"task", "id", "parameters", "inputs"}}`) and must
print one JSON object with the fields {fields}.

- Evidence: `/app/observations/` (see `manifest.json`).
- Check your work: `/app/tools/feedback` (published scenarios only; hidden
  scenarios decide the score).
- Everything in this folder is handed to the grader; nothing else is.
"""
