"""The pipeline in one place: text in, findings out (capture -> parse -> graph -> ranges -> checks)."""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscan import checks
from irscan.analysis import dataflow
from irscan.analysis.hostfields import (
    FieldKey,
    kernel_caps,
    module_aliases,
    module_caps,
    module_computed,
    module_constants,
    module_peers,
)
from irscan.analysis.hostgrid import GridDim, capped, module_grids
from irscan.analysis.ranges import Facts, Ranges
from irscan.capturing.store import META_FILE, find_captures, load
from irscan.capturing.store import ir_files as capture_ir_files
from irscan.checks.memory import DEFAULT_MAX_MEMORY
from irscan.checks.other_accesses import grid_caps
from irscan.checks.reporting import finish
from irscan.checks.twins import pair_twins
from irscan.diff.accesses import records as access_records
from irscan.findings import Finding, assign_ids
from irscan.ir import IRKind, IRSyntaxError, Module
from irscan.resources import read_text


@dataclass
class ScanResult:
    findings: list[Finding] = field(default_factory=list)
    kernels: list[dict[str, Any]] = field(default_factory=list)  # what was scanned
    unseen: dict[str, int] = field(default_factory=dict)  # op names the analysis could not see into
    errors: list[str] = field(default_factory=list)
    #: every global-memory access with its index width (irscan/diff/accesses.py), for ``irscan diff``
    accesses: list[dict[str, Any]] = field(default_factory=list)
    #: findings the reporting rule leaves out, each with its reason (README "What is reported")
    rule_suppressed: list[Finding] = field(default_factory=list)

    def extend(self, other: ScanResult) -> None:
        self.findings += other.findings
        self.rule_suppressed += other.rule_suppressed
        self.kernels += other.kernels
        self.accesses += other.accesses
        for k, v in other.unseen.items():
            self.unseen[k] = self.unseen.get(k, 0) + v
        self.errors += other.errors


def detect_ir(path: Path, text: str) -> IRKind:
    name = path.name.removesuffix(".xz")
    if name.endswith(".ptx"):
        return "ptx"
    if name.endswith(".mlir"):
        return "mlir"
    head = text[:4000]
    return "ptx" if ".version" in head and ".target" in head else "mlir"


IR_SUFFIXES = (".mlir", ".ptx", ".mlir.xz", ".ptx.xz")
#: what the first token of LLVM-dialect MLIR can be: ``module``, an op (``dialect.op`` or generic
#: ``"op"``), a result (``%0 = ...``), an attribute or type alias, the ``{-#`` metadata block
_MLIR_START = re.compile(r'module\b|[A-Za-z_][\w$]*\.[\w$.]+|["%#!^]|\{-#')
_MLIR_EXPECTED = ["module {", "llvm.func @name(...)", "gpu.module @name", "#alias = ...", "!alias = ..."]
_SKIP = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)  # blanks and comments before the first token


def require_ir(text: str, path: str, ir: IRKind, named: bool) -> None:
    """Reject an empty file, or one whose first token cannot begin the IR it is taken for, at that
    token: the front ends would read such text as a module with nothing in it ("0 kernel scan(s)").
    ``named``: the file name said which IR (otherwise PTX is also a possibility worth naming)."""
    at = _SKIP.match(text).end()  # type: ignore[union-attr]
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    expected = _MLIR_EXPECTED if ir == "mlir" else [".version", ".target"]
    if not named:
        expected = [*_MLIR_EXPECTED, ".version (PTX)"]
    if at >= len(text):  # nothing but blanks and comments: the file as a whole is at fault
        raise IRSyntaxError(path, 1, 1, "empty file: no IR in it", expected)
    if ir == "mlir" and not _MLIR_START.match(text, at):
        what = "MLIR" if named else "MLIR or PTX"
        raise IRSyntaxError(path, line, col, f"not {what} text: unexpected {text[at : at + 20].split()[0]!r}", expected)


def parse(text: str, path: str, ir: IRKind) -> Module:
    if ir == "mlir":
        from irscan.frontend import mlir

        return mlir.parse_module(text, path)
    from irscan.frontend import ptx

    return ptx.parse_module(text, path)


def _ranges(
    gr: dataflow.Graph,
    km: dict[str, Any],
    grid: tuple[GridDim, ...],
    host: tuple[Any, Any, Any],
    caps: dict[FieldKey, int] | None,
    computed: dict[FieldKey, int] | None,
) -> Ranges:
    """The kernel's ranges under the launch facts: its grid, the host's (aliases, constants, peers),
    the caps of its fields and the extents the host computes."""
    facts = Facts.of(gr.fn.attrs, km.get("launch"), grid, host[0], host[1], host[2], caps, computed)
    return Ranges(gr, facts, km.get("args", []))


def scan_module(module: Module, meta: dict[str, Any] | None = None) -> ScanResult:
    """Run every check on every device function of a parsed module."""
    res = ScanResult()
    kernels_meta = {k["name"]: k for k in (meta or {}).get("kernels", [])}
    definitions = frozenset(
        (d["file"], d["line"])
        for d in [*kernels_meta.values(), *(meta or {}).get("jit_functions", [])]
        if isinstance(d, dict) and isinstance(d.get("file"), str) and isinstance(d.get("line"), int)
    )
    grids = module_grids(module, meta)  # the launch grid as the host code computes it (MLIR; PTX via meta)
    aliases = module_aliases(module, meta)  # kernel fields the host sets from one value (likewise)
    constants = module_constants(module, meta)  # kernel fields every launch sets to one constant
    peers = module_peers(module, meta)  # extents several parameters take from one host value
    caps = module_caps(module, meta)  # fields the host computes as quotients of 32-bit values
    computed = module_computed(module, meta)  # extents the host computes by its own arithmetic
    reaching = None
    if module.ir == "ptx":
        from irscan.analysis.reaching import reaching_definitions

        reaching = reaching_definitions
    for fn in module.functions:
        if module.ir == "mlir" and not (fn.kernel or fn.attrs.get("gpu_module")):
            continue  # host code: launch plumbing, not device addresses
        if not fn.blocks:
            continue
        km = kernels_meta.get(fn.name, {})
        gr = dataflow.build(module, fn, reaching)
        host_grid = grids.get(fn.name, ())
        host = (aliases.get(fn.name), constants.get(fn.name), peers.get(fn.name))
        rg = _ranges(gr, km, host_grid, host, caps.get(fn.name), computed.get(fn.name))
        tight = grid_caps(gr, rg)  # a grid the kernel's own accesses keep small: the ranges again, with it
        if tight and (capped_grid := capped(host_grid, tight)) != host_grid:
            tops = {axis: most for axis, (most, _) in tight.items()}
            rg = _ranges(gr, km, capped_grid, host, kernel_caps(module, meta, fn.name, tops), computed.get(fn.name))
        ctx = checks.Context(fn.name, module.path, km.get("file"), km.get("line"), definitions)
        pts = checks.points(gr)
        found = checks.run(gr, rg, ctx, pts)
        res.findings += found
        res.accesses += access_records(gr, rg, ctx, km.get("args", []), pts)
        opaque_atoms = sorted({a.name for a in rg.atoms.values() if a.opaque})
        res.kernels.append(
            {"kernel": fn.name, "ir": module.ir, "file": module.path, "ops": sum(len(b.ops) for b in fn.blocks),
             "findings": len(found), "opaque_inputs": opaque_atoms[:20], "meta_unaligned": rg.meta_unaligned}
        )  # fmt: skip
    for name, count in module.opaque.items():
        res.unseen[f"{module.ir}:{name}"] = res.unseen.get(f"{module.ir}:{name}", 0) + count
    assign_ids(res.findings)  # unique within the module before twins refer to them
    return res


def scan_file(path: Path, meta: dict[str, Any] | None = None) -> ScanResult:
    text = read_text(path)
    ir = detect_ir(path, text)
    require_ir(text, str(path), ir, path.name.endswith(IR_SUFFIXES))
    module = parse(text, str(path), ir)
    res = scan_module(module, meta)
    if not res.kernels and not res.errors:  # IR with no kernel in it: nothing scanned is no clean result
        expected = ["llvm.func ... attributes {nvvm.kernel}"] if ir == "mlir" else [".entry (a kernel)"]
        raise IRSyntaxError(str(path), 1, 1, "no kernel in it: nothing to scan", expected)
    return res


def ir_files(folder: Path) -> list[Path]:
    out = []
    for stem in ("module.mlir", "module.ptx"):
        for cand in (folder / stem, folder / f"{stem}.xz"):
            if cand.exists():
                out.append(cand)
                break
    return out


def _meta(folder: Path) -> dict[str, Any] | None:
    """The capture's meta.json (launch facts and layouts that the IR text alone does not carry)."""
    return load(folder).meta if (folder / META_FILE).exists() else None


def scan_capture(folder: Path, irs: tuple[str, ...] = ("mlir", "ptx")) -> ScanResult:
    meta = _meta(folder)
    # every IR file meta.json names (an error when one is missing), then any other in the folder
    return scan_together(capture_ir_files(folder, meta) if meta is not None else ir_files(folder), meta, irs)


def scan_together(files: list[Path], meta: dict[str, Any] | None, irs: tuple[str, ...]) -> ScanResult:
    """The IR files of one module (a capture folder's MLIR and PTX), their findings paired as twins."""
    res = ScanResult()
    for f in files:
        if detect_ir(f, "") in irs:
            res.extend(scan_file(f, meta))
    pair_twins(res.findings, {(k["ir"], k["kernel"]) for k in res.kernels})
    # twins side by side: the same access's MLIR finding, then its PTX one
    res.findings.sort(key=lambda f: (f.kernel, f.file or "", f.line or 0, f.expression, f.ir))
    return res


def scan_paths(
    paths: list[Path], irs: tuple[str, ...] = ("mlir", "ptx"), max_memory: int = DEFAULT_MAX_MEMORY
) -> ScanResult:
    """Files or capture folders (searched recursively for meta.json).  A path that cannot be scanned
    is reported as every bad input is, ``PATH:1:1: error: ...`` (exit 2), so that one pattern covers
    whatever a user or a script hands to ``irscan scan``."""
    res = ScanResult()
    for p in paths:
        if p.is_dir():
            caps = find_captures(p)
            for c in caps:
                res.extend(scan_capture(c, irs))
            if not caps:
                res.extend(scan_loose_files(p, irs))
        elif p.exists():
            meta = _meta(p.parent)
            res.extend(scan_file(p, meta))
        else:
            raise IRSyntaxError(str(p), 1, 1, "no such file or folder", ["a capture folder", "an IR file"])
    return _finish(res, max_memory)


def _finish(res: ScanResult, max_memory: int) -> ScanResult:
    """The reporting rule over the whole document: one finding per access, the suppressed ones apart."""
    res.findings, res.rule_suppressed = finish(res.findings + res.rule_suppressed, max_memory)
    assign_ids(res.findings + res.rule_suppressed)  # unique in the whole document
    return res


def scan_loose_files(folder: Path, irs: tuple[str, ...]) -> ScanResult:
    """A folder of IR files with no meta.json (copied out of a capture, or written by hand): each
    folder's files are scanned together, without the launch facts and layouts meta.json would add."""
    files = sorted(f for f in folder.rglob("*") if f.name.endswith(IR_SUFFIXES) and not f.is_dir())
    if not files:
        what = f"no capture folder (meta.json) and no IR file ({', '.join(IR_SUFFIXES)}) in it"
        raise IRSyntaxError(str(folder), 1, 1, what, ["a capture folder", "an IR file"])
    by_folder: dict[Path, list[Path]] = {}  # once: picking each folder's files out of all is folders x files
    for f in files:
        by_folder.setdefault(f.parent, []).append(f)
    res = ScanResult()
    for parent in sorted(by_folder):
        res.extend(scan_together(by_folder[parent], None, irs))
    return res


# -- the compile-time audit: capture and scan in one go --

FAIL_LEVELS = {"must": ("must",), "may": ("must", "may"), "never": ()}


class AuditError(Exception):
    """Raised on leaving ``irscan.audit(fail_on=...)`` when findings reach the level."""

    def __init__(self, findings: list[Finding]):
        self.findings = findings
        super().__init__(f"irscan: {len(findings)} finding(s) at or above the fail-on level")


def reaches(findings: list[Finding], fail_on: str) -> list[Finding]:
    return [f for f in findings if f.severity in FAIL_LEVELS[fail_on]]


def scan_safely(
    folder: Path, strict: bool, irs: tuple[str, ...] = ("mlir", "ptx"), max_memory: int = DEFAULT_MAX_MEMORY
) -> ScanResult:
    """Scan each captured module on its own; irscan's failure on one becomes a note on the result and
    the others are still scanned, unless strict (the user's run is not ours to break)."""
    from irscan.capturing.cache import scan_cached
    from irscan.capturing.store import find_captures, recorded_errors

    res = ScanResult()
    res.errors += recorded_errors(folder)  # the hook's own failures, recorded in the audited process
    for capture in find_captures(folder) if folder.exists() else []:
        try:  # a capture a cached audit stored or restored: the findings stored with it, if any
            res.extend(scan_cached(capture, irs, scan_capture))
        except Exception as exc:  # IRSyntaxError included: a capture we cannot read is our failure
            if strict:
                raise
            res.errors.append(f"irscan could not scan {capture}: {type(exc).__name__}: {exc}")
    return _finish(res, max_memory)


@dataclass
class Audit:
    out: Path
    result: ScanResult = field(default_factory=ScanResult)

    @property
    def findings(self) -> list[Finding]:
        return self.result.findings


@contextmanager
def audit(
    out: str | None = None,
    fail_on: str = "never",
    strict: bool = False,
    report: bool = True,
    arch: str | None = None,
    max_memory: int = DEFAULT_MAX_MEMORY,
) -> Iterator[Audit]:
    """``with irscan.audit(fail_on="must") as a: cute.compile(...)``: findings in ``a.findings``, those
    the reporting rule holds back (README "What is reported") in ``a.result.rule_suppressed``."""
    from irscan.capturing.hook import capture
    from irscan.report import text

    tmp = None if out else tempfile.TemporaryDirectory(prefix="irscan-audit-")
    folder = Path(out or tmp.name)  # type: ignore[union-attr]
    a = Audit(folder)
    try:
        with capture(out=folder, strict=strict, arch=arch):
            yield a
        a.result = scan_safely(folder, strict, max_memory=max_memory)
        r = a.result
        if report and (r.findings or r.errors or r.rule_suppressed):
            print(text.render(r.findings, r.kernels, r.unseen, r.rule_suppressed), file=sys.stderr)
            for e in a.result.errors:
                print(e, file=sys.stderr)
        bad = reaches(a.result.findings, fail_on)
        if bad:
            raise AuditError(bad)
    finally:
        if tmp is not None:
            tmp.cleanup()
