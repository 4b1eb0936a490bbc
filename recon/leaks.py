"""The leak audit: nothing secret on the agent's side of a built task.

The agent's side is ``instruction.md`` and every file under ``environment/`` (the
agent's image), with the members of every archive opened. A finding is one of:

- ``recipe``: a sentence of the private recipe -- the oracle's docstring, and the
  docstrings and comments of its ``reference.py`` -- appears there. Sentences are
  compared normalised (case, whitespace, Markdown backticks and asterisks), and short
  ones (fewer than six words or 30 characters) are ignored. A sentence the declaration
  publishes on purpose (in ``description=``, a ``doc=``, ``input_docs=``, ``evidence=``
  or the title) is public. A ``--disclose recipe`` build is exempt from this check only.
- ``hidden-value``: a value of a hidden scenario (parameter or output) appears there.
  Numbers are compared by value, not by spelling (``1e-06`` is ``0.000001``), and a
  printed number with 8 or more significant digits also matches a hidden value rounded
  to as many digits. Only distinctive values count (5 or more significant digits; an
  integer also needs ``|v| >= 100000``; a string 12 or more characters), and a value
  that recon publishes anyway is not secret: everything in ``manifest.json`` (axis
  bounds and so edges, choices, tolerances, numbers in the public texts) and every
  parameter and output of a public scenario.
- ``source``: three or more code lines of the oracle's module or of its reference.
- ``solution``: a copy of a file of ``solution/`` or of a shipped baseline.
- ``verifier-file``: a file named like a verifier or solution file.

Each :class:`Finding` names the file, the value, why it is secret and what to do.
"""
from __future__ import annotations

import ast
import hashlib
import io
import json
import math
import re
import tarfile
import tokenize
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from . import canonjson
from .errors import TaskError
from .oracle import Oracle
from .task import Task

__all__ = ["Finding", "RecipeSentence", "audit", "leak_audit", "agent_side_texts", "recipe_sentences",
           "sentences", "normalise", "significant_digits"]

MIN_WORDS = 6            # a recipe sentence shorter than this is too generic to call a leak
MIN_CHARS = 30
MIN_SIG_DIGITS = 5       # a hidden number with fewer significant digits is not distinctive
MIN_INT = 100000         # ... nor an integer smaller than this (counts and indices are everywhere)
MIN_ROUNDED_DIGITS = 8   # a printed number this precise also matches a hidden value rounded to it
MIN_STRING = 12
SOURCE_LINE_CHARS = 40   # a copied source line must be this long ...
SOURCE_CODE_CHARS = 20   # ... and hold this much code (not strings or comments)
SOURCE_HITS = 3          # ... and a file must hold this many of them
VERIFIER_NAMES = ("test.sh", "grader.json", "solve.sh")
ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")

_WORD = re.compile(r"[^\W\d_]{2,}")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]|[A-Za-z]")
_BLOCK = re.compile(r"\n[ \t]*\n|\n[ \t]*(?:[-*+]|\d+[.)])[ \t]+")   # paragraphs and list items
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_NUMBER = re.compile(rb"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?!\w|\.\d)")
_EDGE = rb"\s\"'`,"


@dataclass(frozen=True)
class Finding:
    """One leak: where, what, why it is secret, and what to do about it."""

    kind: str    # recipe | hidden-value | source | solution | verifier-file
    file: str    # agent-visible path relative to the task root; ARCHIVE!MEMBER inside archives
    value: str   # what leaked
    why: str
    fix: str

    def __str__(self) -> str:
        return f"{self.file}: {self.value} -- {self.why}; fix: {self.fix}"

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "file": self.file, "value": self.value, "why": self.why, "fix": self.fix}


@dataclass(frozen=True)
class RecipeSentence:
    text: str        # as written
    key: str         # normalised, what is searched for
    source: str      # where the recipe says it


# -- text helpers -------------------------------------------------------------------------
def normalise(text: str) -> str:
    """Case-folded, whitespace collapsed, Markdown backticks and asterisks dropped."""
    return " ".join(text.replace("`", "").replace("*", "").split()).casefold()


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` long enough to be specific (see MIN_WORDS, MIN_CHARS).

    Paragraphs and list items are split first, then sentences at ``. ! ? ; :``; a
    sentence keeps its words but not its final punctuation."""
    out = []
    for block in _BLOCK.split("\n" + text):
        flat = " ".join(block.split())
        for part in _SENTENCE_END.split(flat):
            s = part.strip().lstrip("-*+ ").rstrip(".;:!?, ").strip()
            if len(s) >= MIN_CHARS and len(_WORD.findall(s)) >= MIN_WORDS:
                out.append(s)
    return out


def significant_digits(token: str) -> int:
    """Significant digits of a number as written: ``1e-06`` has 1, ``0.0001`` 1, ``123.450`` 5."""
    mantissa = token.strip().lstrip("+-").lower().split("e")[0].replace(".", "")
    return len(mantissa.strip("0"))


# -- the agent's side ---------------------------------------------------------------------
def agent_side_texts(root: Path) -> list[tuple[str, bytes]]:
    """``instruction.md`` and every file under ``environment/`` (relative names), plus
    the members of every archive (``ARCHIVE!MEMBER``)."""
    out: list[tuple[str, bytes]] = []
    instruction = root / "instruction.md"
    if instruction.is_file():
        out.append(("instruction.md", instruction.read_bytes()))
    env = root / "environment"
    for p in sorted(env.rglob("*")):
        if not p.is_file():
            continue
        name = p.relative_to(root).as_posix()
        data = p.read_bytes()
        out.append((name, data))
        out.extend((f"{name}!{member}", content) for member, content in _archive_members(p.name, data))
    return out


def _archive_members(filename: str, data: bytes) -> Iterator[tuple[str, bytes]]:
    try:
        if filename.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                for info in z.infolist():
                    if not info.is_dir():
                        yield info.filename, z.read(info)
        elif filename.endswith((".tar.gz", ".tgz", ".tar")):
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                for m in tar.getmembers():
                    f = tar.extractfile(m) if m.isfile() else None
                    if f is not None:
                        yield m.name, f.read()
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError):
        return  # not an archive after all: its bytes were audited as they are


# -- the recipe ---------------------------------------------------------------------------
def _python_prose(path: Path) -> list[tuple[str, str]]:
    """(text, where) for every docstring and comment block of a Python file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    out: list[tuple[str, str]] = []
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    what = "module docstring" if isinstance(node, ast.Module) else f"docstring of {node.name}"
                    out.append((doc, f"{path.name} {what}"))
    block: list[str] = []
    start = last = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type != tokenize.COMMENT:
                continue
            line = tok.start[0]
            if block and line != last + 1:
                out.append((" ".join(block), f"{path.name} comment, line {start}"))
                block = []
            if not block:
                start = line
            block.append(tok.string.lstrip("#").strip())
            last = line
    except (tokenize.TokenError, SyntaxError):
        pass
    if block:
        out.append((" ".join(block), f"{path.name} comment, line {start}"))
    return out


def _public_corpus(oracle: Oracle) -> str:
    pub = oracle.public()
    texts = [pub["title"], pub["description"], *pub["input_docs"].values(), *pub["evidence"].values()]
    texts += [d.get("doc") or "" for d in pub["axes"].values()]
    texts += [d.get("doc") or "" for d in pub["outputs"].values()]
    return " | ".join(normalise(t) for t in texts)


def recipe_sentences(oracle: Oracle) -> list[RecipeSentence]:
    """The sentences of the oracle's recipe that must stay private: its docstring, and the
    docstrings and comments of its reference, minus what the declaration publishes."""
    sources: list[tuple[str, str]] = [(oracle.recipe, f"the oracle's docstring ({oracle.location})")]
    if oracle.reference is not None:
        sources += _python_prose(oracle.reference)
    public = _public_corpus(oracle)
    # names the declaration publishes: a "sentence" made of them alone (a list of output
    # names after a colon, say) tells the agent nothing the instruction does not
    names = {n.casefold() for n in [*oracle.axes, *oracle.outputs, *oracle.input_docs, *oracle.evidence]}
    names |= {Path(n).stem.casefold() for n in oracle.evidence}
    seen: set[str] = set()
    out = []
    for text, where in sources:
        for s in sentences(text):
            key = normalise(s)
            if key in seen or key in public:
                continue
            if all(w.casefold() in names or len(w) <= 3 for w in _IDENT.findall(s)):
                continue
            seen.add(key)
            out.append(RecipeSentence(s, key, where))
    return out


# -- values -------------------------------------------------------------------------------
def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _scalars(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _scalars(v)
    else:
        yield value


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _distinctive_number(v: Any) -> bool:
    if not _is_number(v) or v == 0:
        return False
    if isinstance(v, int):
        return abs(v) >= MIN_INT and significant_digits(str(v)) >= MIN_SIG_DIGITS
    return significant_digits(repr(float(v))) >= MIN_SIG_DIGITS


def _rounded(v: float, digits: int) -> float:
    return float(f"{v:.{digits}g}")


class _Values:
    """Numbers (by value, and rounded to 8..17 digits) and strings, each with a label."""

    def __init__(self) -> None:
        self.exact: dict[float, str] = {}
        self.rounded: dict[tuple[int, float], str] = {}
        self.strings: dict[str, str] = {}

    def add(self, value: Any, label: str, *, numbers_only_distinctive: bool = False) -> None:
        for v in _scalars(value):
            if _is_number(v):
                if numbers_only_distinctive and not _distinctive_number(v):
                    continue
                self.exact.setdefault(float(v), label)
                for d in range(MIN_ROUNDED_DIGITS, 18):
                    self.rounded.setdefault((d, _rounded(float(v), d)), label)
            elif isinstance(v, str):
                self.strings.setdefault(v, label)

    def add_numbers_in(self, text: str, label: str) -> None:
        for m in _NUMBER.finditer(text.encode("utf-8")):
            self.add(float(m.group()), label)

    def match(self, token: bytes) -> str | None:
        """The label of the value ``token`` spells (exactly, or rounded when precise)."""
        value = float(token)
        if not math.isfinite(value):
            return None
        if value in self.exact:
            return self.exact[value]
        digits = significant_digits(token.decode("ascii"))
        if digits >= MIN_ROUNDED_DIGITS:
            return self.rounded.get((min(digits, 17), value))
        return None


def _public_values(task: Task, root: Path) -> _Values:
    pub = _Values()
    manifest_path = root / "environment" / "app" / "observations" / "manifest.json"
    manifest: dict[str, Any] = {}
    if manifest_path.is_file():
        try:
            manifest = dict(canonjson.read(manifest_path))
        except (OSError, ValueError):
            manifest = {}
    manifest.pop("files", None)  # hashes, not values
    pub.add(manifest, "published in manifest.json")
    for s in _scalars(manifest):
        if isinstance(s, str):
            pub.add_numbers_in(s, "written in the public declaration")
    pub.add(task.meta.get("axes", {}), "an axis bound or choice")
    pub.add(task.meta.get("outputs", {}), "a tolerance")
    for sd in task.public():
        pub.add(sd.parameters, f"a parameter of {sd.id}")
        pub.add(sd.truth, f"an output of {sd.id}")
    return pub


def _secret_values(task: Task, public: _Values) -> _Values:
    secret = _Values()
    for sd in task.hidden():
        for kind, values in (("parameter", sd.parameters), ("output", sd.truth)):
            for k, v in sorted(values.items()):
                for s in _scalars(v):
                    label = f"hidden {kind} {sd.id}.{k} = {json.dumps(s)}"
                    if _is_number(s):
                        if _distinctive_number(s) and float(s) not in public.exact:
                            secret.add(s, label, numbers_only_distinctive=True)
                    elif isinstance(s, str) and len(s) >= MIN_STRING and s not in public.strings:
                        secret.add(s, label)
    return secret


# -- the audit ----------------------------------------------------------------------------
def _code_lines(path: Path) -> set[bytes]:
    """Stripped lines of a Python file that are mostly code (long, and not a string or a
    comment): a docstring disclosed on purpose is not "the oracle's source"."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    lines = text.splitlines()
    skip = {tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER, getattr(tokenize, "FSTRING_MIDDLE", -1)}
    code: dict[int, int] = defaultdict(int)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in skip and tok.start[0] == tok.end[0]:
                code[tok.start[0]] += len(tok.string)
    except (tokenize.TokenError, SyntaxError):
        return {ln.strip().encode() for ln in lines
                if len(ln.strip()) >= SOURCE_LINE_CHARS and not ln.strip().startswith(("#", '"""', "'''"))}
    return {lines[n - 1].strip().encode() for n, chars in code.items()
            if chars >= SOURCE_CODE_CHARS and len(lines[n - 1].strip()) >= SOURCE_LINE_CHARS}


def _recipe_findings(texts: list[tuple[str, bytes]], oracle: Oracle) -> list[Finding]:
    recipe = recipe_sentences(oracle)
    if not recipe:
        return []
    findings = []
    for name, data in texts:
        if name.endswith(ARCHIVES):
            continue  # audited member by member
        hay = normalise(data.decode("utf-8", errors="replace"))
        hits = [r for r in recipe if r.key in hay]
        if hits:
            first = hits[0]
            more = f" and {len(hits) - 1} more" if len(hits) > 1 else ""
            findings.append(Finding(
                "recipe", name, f'recipe sentence "{first.text}"{more}',
                f"it comes from {first.source}, the private recipe, and this build does not disclose it",
                "keep the recipe out of evidence and generated files; say in description=, doc=, input_docs= or "
                "evidence= only what the agent may read, or build the easier variant with --disclose recipe"))
    return findings


def _value_findings(texts: list[tuple[str, bytes]], secret: _Values, public: _Values) -> list[Finding]:
    if not (secret.exact or secret.strings):
        return []
    found: dict[str, tuple[str, str]] = {}   # label -> (file, as written)
    patterns = {s: re.compile(rb"(?:^|(?<=[" + _EDGE + rb"]))" + re.escape(s.encode("utf-8")) + rb"(?=[" + _EDGE + rb"]|$)",
                              re.MULTILINE)
                for s in secret.strings}
    for name, data in texts:
        if name.endswith(ARCHIVES):
            continue
        if secret.exact:
            for m in _NUMBER.finditer(data):
                label = secret.match(m.group())
                # A precise number that also spells a public value (rounded) is that value.
                if label is not None and label not in found and public.match(m.group()) is None:
                    found[label] = (name, m.group().decode("ascii"))
        for s, pattern in patterns.items():
            label = secret.strings[s]
            if label not in found and pattern.search(data):
                found[label] = (name, s)
    return [Finding("hidden-value", name, f"{label} (written as {written})",
                    "it belongs to a hidden scenario and recon publishes it nowhere (no axis bound, edge, choice, "
                    "tolerance or public value equals it)",
                    "write evidence from the public scenario only, with at most 4 significant digits, and never "
                    "from the hidden set; then rebuild")
            for label, (name, written) in sorted(found.items(), key=lambda kv: (kv[1][0], kv[0]))]


def audit(task: Task, oracle: Oracle) -> list[Finding]:
    """Every leak of the built ``task`` (built from ``oracle``) on the agent's side."""
    if task.root is None:
        raise TaskError("the leak audit needs the whole task (instruction.md, environment/ and solution/), "
                        "not just tests/", hint="give the folder `recon build` wrote")
    root = task.root
    texts = agent_side_texts(root)
    findings: list[Finding] = []
    if task.meta.get("disclose") != "recipe":
        findings += _recipe_findings(texts, oracle)
    public = _public_values(task, root)
    findings += _value_findings(texts, _secret_values(task, public), public)

    sources = [Path(oracle.source_file)] + ([oracle.reference] if oracle.reference is not None else [])
    for src in sources:
        code = _code_lines(src)
        for name, data in texts:
            if name.endswith(ARCHIVES):
                continue
            hits = sum(1 for ln in data.splitlines() if ln.strip() in code)
            if hits >= SOURCE_HITS:
                findings.append(Finding("source", name, f"{hits} lines of the oracle's source ({src.name})",
                                        "the oracle's code never enters the agent's image",
                                        "do not copy or generate code of the oracle into evidence, inputs or tools"))

    copies: dict[str, str] = {}
    sol = root / "solution"
    for p in sorted(sol.rglob("*")) if sol.is_dir() else []:
        if p.is_file():
            copies.setdefault(hashlib.sha256(p.read_bytes()).hexdigest(), f"solution/{p.relative_to(sol).as_posix()}")
    for b in oracle.baselines:
        copies.setdefault(hashlib.sha256(b.program.read_bytes()).hexdigest(), f"baseline {b.name}")
    for name, data in texts:
        what = copies.get(hashlib.sha256(data).hexdigest())
        if what is not None:
            findings.append(Finding("solution", name, f"a copy of {what}",
                                    "solutions and baselines stay on the verifier side",
                                    "remove it from the agent's files and rebuild"))
        base = name.rsplit("!", 1)[-1].rsplit("/", 1)[-1]
        if base in VERIFIER_NAMES or base.startswith("hidden_"):
            findings.append(Finding("verifier-file", name, f"a verifier or solution file ({base})",
                                    "hidden scenarios and grading files exist only in tests/ and solution/",
                                    "remove it from the agent's files and rebuild"))
    return findings


def leak_audit(task: Task, oracle: Oracle) -> list[str]:
    """The findings of :func:`audit` as one line each (empty: nothing leaks).

    Replaces ``recon.validate.leak_audit(task, oracle_files)``: the audit now needs the
    oracle itself (its recipe, public declaration, reference and baselines), not only
    its files."""
    return [str(f) for f in audit(task, oracle)]
