"""Finding: plain data that every output format renders.  Its JSON form is a public contract:
fields are only ever added, never renamed or given a new meaning (README, "JSON output").

A finding's ``id`` is stable across builds (README, "Finding ids"): it hashes what a reader would call
the same bug (the kernel's Python name, the IR kind, the check, the Python statement, the expression)
and nothing the compiler renumbers (IR lines, SSA names, the DSL's layout-mangled name suffix), so a
baseline or a diff between two builds can match findings by id.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any


@dataclass
class Step:
    """One op of a chain, from the inputs to the address."""

    op: str
    ir_line: int
    text: str
    role: str  # "input", "arithmetic", "narrowing", "widening", "address", "access"
    width: int = 0
    range: list[int] | None = None  # ideal (unwrapped) [lo, hi]
    wraps: bool = False
    note: str = ""


@dataclass
class Finding:
    kernel: str
    ir: str  # "mlir" | "ptx"
    check: str  # check id, e.g. "narrow-widened-late"
    severity: str  # "must" | "may"
    file: str | None
    line: int | None
    col: int | None
    source: str | None  # the Python statement, when known
    source_precision: str  # "statement" (from IR locations) | "kernel" (the kernel's def line) | "none"
    message: str
    sink: dict[str, Any]
    sinks: list[dict[str, Any]]
    chain: list[Step]
    wraps_when: dict[str, Any] | None
    witness: dict[str, Any] | None
    undefined_behaviour: bool
    fix: str
    ir_file: str
    ir_line: int
    expression: str  # the ideal value at the widening point, e.g. "100000*ctaid.x + tid.x"
    twin: str | None = None  # id of the same access's finding in the other IR
    origin: dict[str, Any] | None = None  # where the wrapping op itself came from, when another statement
    notes: list[str] = field(default_factory=list)
    id: str = ""
    #: what the verdict rests on (README "What is reported"): launch facts, free inputs, bounds weighed
    facts: list[str] = field(default_factory=list)
    #: why the reporting rule leaves it out (it then goes to the document's ``rule_suppressed`` list); None: reported
    rule_suppressed: str | None = None
    #: rule (c): the tensor the access needs at the threshold, ``{"tensor", "bytes", "at"}``, when known
    memory: dict[str, Any] | None = None
    #: how many widening points (unrolled copies, several sinks, several modules) fold into this finding
    occurrences: int = 1
    #: the IR files (one per module) this access was found in
    modules: list[str] = field(default_factory=list)
    #: the access the finding is about, as both IRs see it: the sink's statement, kind and tensor (twins)
    access: dict[str, Any] | None = None
    #: the canonical expression the id hashes when it is not ``expression``'s (a folded group's smallest;
    #: not part of the JSON document)
    id_expression: str | None = None

    def __post_init__(self) -> None:
        if not self.id:
            self.id = base_id(self)
        if not self.modules:
            self.modules = [self.ir_file]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        del d["id_expression"]
        return d


# -- stable ids --

#: Where the DSL's mangled arguments begin in a kernel name (CuTe DSL 4.8 ``mangle_name``: the
#: function's ``__name__``, then ``str()`` of each argument, punctuation dropped): a tensor's type and
#: layout, a copy/MMA atom, a fake tensor (``@cute.jit`` functions), an argument's class.
_ARG_START = re.compile(
    r"_(?=tensor|FakeTensor|ptr|Tiled|CopyAtom|MmaAtom|MMAAtom|Layout|ComposedLayout|Swizzle|cutlass)"
)
#: A plain argument: a number (a Constexpr), None, a bool, or the empty string between two ``_``.
_PLAIN_ARG = re.compile(r"\d+|None|True|False|")
#: ``str()`` of an object without its own ``__str__`` (``<module.Class object at 0x...>``, the address
#: dropped): the ``self`` of a kernel method, the first argument the DSL mangles.
_OBJECT = "_object_at_"
_SSA = re.compile(r"%[\w.$#-]+")
_BLOCK = re.compile(r"\^[\w.$-]+")
_IR_LINE = re.compile(r"IR line \d+")


def kernel_key(name: str) -> str:
    """The kernel's Python name inside the DSL's symbol name: ``kernel_cutlass_copy_kernel_tensorptrf32
    ..._0`` -> ``copy_kernel``; for a method, the function name and its owner's module and class as the
    DSL spells them (``kernel_quackrmsnormRMSNorm``).  The layout-mangled arguments change with every
    shape, stride or dtype and the trailing counter with the number of kernels compiled before it."""
    n = re.sub(r"_\d+$", "", name.removeprefix("kernel_")).removeprefix("cutlass_")
    arg = _ARG_START.search(n)
    obj = n.find(_OBJECT)
    if obj > 0 and (arg is None or obj < arg.start()):
        return n[:obj]
    if arg is not None:
        n = n[: arg.start()]
    head, *rest = n.split("_")
    for i, tok in enumerate(rest):
        if _PLAIN_ARG.fullmatch(tok):
            rest = rest[:i]
            break
    return "_".join([head, *rest])


def portable_path(file: str) -> str:
    """The source file as it reads on any machine: the part after ``site-packages/`` for an installed
    package (``flash_attn/cute/flash_fwd.py``), else the file's name (the kernel key says which program)."""
    p = file.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        i = p.rfind(marker)
        if i >= 0:
            return p[i + len(marker) :]
    return PurePath(p).name


def canonical_expression(expression: str) -> str:
    """The expression without what the compiler names: SSA values and registers (``%r462``, ``%2996``),
    block labels (``^bb89``) and IR line numbers become placeholders."""
    return _IR_LINE.sub("IR line", _BLOCK.sub("^", _SSA.sub("%", expression)))


def base_id(f: Finding) -> str:
    """The id before duplicates are told apart: a hash of the kernel key, the IR kind, the check, the
    Python statement (portable file and line; the kernel's def line when the IR has no line info) and
    the canonical expression."""
    where = [portable_path(f.file), f.line or 0] if f.file else ["", 0]
    key = [kernel_key(f.kernel), f.ir, f.check, *where, canonical_expression(f.id_expression or f.expression)]
    return hashlib.sha1(json.dumps(key).encode()).hexdigest()[:12]


def _scope(f: Finding) -> str:
    """Twins are paired within one capture folder, so an id a ``twin`` names is unique there."""
    return str(PurePath(f.ir_file).parent)


def assign_ids(findings: Iterable[Finding]) -> None:
    """Give every finding its id, unique among ``findings``; twins follow their partner's new id.

    Findings that share a base id (one access found twice, a kernel compiled for two shapes) are
    numbered ``<id>``, ``<id>-2``, ... in the order of the statement's column, then the access's kind,
    then the order they were scanned in: never by IR line, so the numbering survives a rebuild."""
    fs = list(findings)
    groups: dict[str, list[Finding]] = {}
    for f in fs:
        groups.setdefault(base_id(f), []).append(f)
    renamed: dict[tuple[str, str], str] = {}
    for base, group in groups.items():
        for i, f in enumerate(sorted(group, key=lambda f: (f.col or 0, str(f.sink.get("kind", ""))))):
            new = base if i == 0 else f"{base}-{i + 1}"
            renamed[(_scope(f), f.id)] = new
            f.id = new
    for f in fs:
        if f.twin is not None:
            f.twin = renamed.get((_scope(f), f.twin), f.twin)
    # Twins point both ways or not at all: after folding, two findings of one IR can both have named
    # the same partner (each paired in its own module); the partner's choice decides.
    by_id = {(_scope(f), f.id): f for f in fs}
    for f in fs:
        partner = by_id.get((_scope(f), f.twin)) if f.twin is not None else None
        if f.twin is not None and (partner is None or partner.twin != f.id):
            f.twin = None


# -- one finding per access statement, IR and check --


def access_key(f: Finding) -> tuple[object, ...]:
    """What makes two findings one: the kernel's Python name, the IR, the check and the access's Python
    statement (without line info: the canonical expression), never the module or the widening point."""
    where: tuple[object, ...] = (portable_path(f.file), f.line) if f.file else ("", canonical_expression(f.expression))
    return (kernel_key(f.kernel), f.ir, f.check, *where)


def _rank(f: Finding) -> tuple[int, int, int]:
    """Which finding of a group speaks for it: a reported one, a must, one with a twin."""
    return (f.rule_suppressed is not None, f.severity != "must", f.twin is None)


def fold(findings: Iterable[Finding]) -> list[Finding]:
    """Fold unrolled copies, several sinks of one statement and the same kernel in several modules into
    one finding per :func:`access_key`, in first-seen order; ``occurrences`` sums, ``modules`` and
    ``sinks`` are the union.  A PTX group is spoken for by the twin of its MLIR finding when it has
    one, so twins stay paired within one module."""
    groups: dict[tuple[object, ...], list[Finding]] = {}
    ptx: dict[tuple[str, str], Finding] = {}
    for f in findings:
        groups.setdefault(access_key(f), []).append(f)
        if f.ir == "ptx":
            ptx[(_scope(f), f.id)] = f

    def twin_held_back(f: Finding) -> bool:
        """Its PTX twin is held back by rule (a) or (b): of equals, an MLIR finding whose twin is not
        speaks for the group (in a module where the PTX has only another widening point of the access,
        the MLIR finding pairs with that one, which must not speak for the PTX line where it is reported
        elsewhere).  Rule (c) is not weighed: it moves with --max-memory, the choice of finding must not."""
        t = ptx.get((_scope(f), f.twin)) if f.twin else None
        return t is not None and t.rule_suppressed is not None and not t.rule_suppressed.startswith("(c) ")

    reps: dict[tuple[object, ...], Finding] = {}
    twins_wanted: set[tuple[str, str]] = set()
    for key, group in groups.items():
        if key[1] != "ptx":
            rep = min(group, key=lambda f: (*_rank(f), twin_held_back(f)))
            reps[key] = rep
            if rep.twin:
                twins_wanted.add((_scope(rep), rep.twin))
    for key, group in groups.items():
        if key[1] == "ptx":
            paired = [f for f in group if (_scope(f), f.id) in twins_wanted]
            best = min(group, key=_rank)  # a held-back twin never speaks for a line another finding reports
            reps[key] = paired[0] if paired and _rank(paired[0])[0] <= _rank(best)[0] else best
    out, rep_of = [], {}
    for key, group in groups.items():
        rep = reps[key]
        for f in group:
            rep_of[(_scope(f), f.id)] = rep
            if f is rep:
                continue
            rep.occurrences += f.occurrences
            rep.modules += [m for m in f.modules if m not in rep.modules]
            rep.sinks += [s for s in f.sinks if s not in rep.sinks]
        # The id hashes the group's smallest canonical expression, whichever member speaks for it:
        # which one speaks depends on the reporting rule (--max-memory, say), and an id must not.
        rep.id_expression = min(canonical_expression(f.id_expression or f.expression) for f in group)
        out.append(rep)
    for rep in out:  # a twin folded into another finding: the twin is that finding now
        if rep.twin is not None and (_scope(rep), rep.twin) in rep_of:
            rep.twin = rep_of[(_scope(rep), rep.twin)].id
    return out
