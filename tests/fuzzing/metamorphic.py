"""Metamorphic cases: the IR rewritten in a way that means the same thing to every compiler and
editor (CRLF or lone-CR line ends, a UTF-8 BOM, trailing blanks, blank lines, comment lines between
ops, deeper indentation, tabs for the blanks between tokens, the file packed as .xz), scanned
beside the original.  The contract holds for both, and the answers must agree: the same exit code,
the same kernels, the same findings.  A silent "0 kernel scan(s)" on a CR-only module passes every
other check of the judge; only the comparison catches it."""

from __future__ import annotations

import json
import lzma
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .case import Case
from .seeds import Seed

SameMutator = Callable[[random.Random, str, str], str]


def _comment(ir: str) -> str:
    return "// irscan fuzz: a comment line"


SAME: dict[str, SameMutator] = {
    "crlf": lambda rng, t, ir: t.replace("\n", "\r\n"),
    "lone_cr": lambda rng, t, ir: t.replace("\n", "\r"),
    "bom": lambda rng, t, ir: "\ufeff" + t,
    "trailing_blanks": lambda rng, t, ir: t.replace("\n", rng.choice(("  ", "\t", " \t ")) + "\n"),
    "blank_lines": lambda rng, t, ir: t.replace("\n", "\n\n"),
    "comment_lines": lambda rng, t, ir: re.sub(r"\n(?=[ \t])", "\n" + _comment(ir) + "\n", t),
    "indent": lambda rng, t, ir: re.sub(r"\n(?=[ \t])", "\n    ", t),
    "tabs_between_tokens": lambda rng, t, ir: re.sub(r"(?<=\S) (?=\S)", "\t", t),
    "no_final_newline": lambda rng, t, ir: t.rstrip("\n"),
}


def same_case(rng: random.Random, seed: Seed, name: str | None = None) -> Case:
    """The seed rewritten by one meaning-preserving change ``name`` (or packed as .xz), its twin the seed."""
    name = name or rng.choice(sorted(SAME) + ["xz"])
    meta = {"meta.json": seed.meta.encode()} if seed.meta is not None else {}
    original: dict[str, bytes | None] = {seed.filename: seed.text.encode(), **meta}
    if name == "xz":
        files: dict[str, bytes | None] = {seed.filename + ".xz": lzma.compress(seed.text.encode()), **meta}
    else:
        files = {seed.filename: SAME[name](rng, seed.text, seed.ir).encode(), **meta}
    whole_folder = rng.random() < 0.5
    twin = Case(original, "" if whole_folder else seed.filename, ["the original"])
    what = [f"seed {seed.name}/{seed.filename}", f"same:{name}"]
    return Case(files, "" if whole_folder else next(iter(files)), what, next(iter(files)), "ir", twin=twin)


def answer(rc: int | None, stdout: str) -> tuple[Any, ...]:
    """What must agree between twins: exit code, kernels (name, IR, op count), findings (kernel, IR,
    check, severity, source place) and how many the reporting rule held back."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        return (rc, "no JSON")
    kernels = sorted((k.get("kernel"), k.get("ir"), k.get("ops"), k.get("findings")) for k in doc.get("kernels", []))
    keys = ("kernel", "ir", "check", "severity", "file", "line", "col")
    findings = sorted(tuple(str(f.get(k)) for k in keys) for f in doc.get("findings", []))
    return (rc, kernels, findings, len(doc.get("rule_suppressed", [])))


def twin_root(case: Case, target: Path) -> tuple[Path, Path]:
    """(the case's folder, where its twin goes)."""
    root = target
    for _ in Path(case.target).parts:
        root = root.parent
    return root, root.with_name(root.name + "-twin")
