"""The pipeline in one place: text in, findings out (capture -> parse -> graph -> ranges -> checks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscan import checks, dataflow, twins
from irscan.capture import META_FILE, find_captures, load
from irscan.findings import Finding
from irscan.ir import IRKind, Module
from irscan.ranges import Facts, Ranges
from irscan.resources import read_text


@dataclass
class ScanResult:
    findings: list[Finding] = field(default_factory=list)
    kernels: list[dict[str, Any]] = field(default_factory=list)  # what was scanned
    unseen: dict[str, int] = field(default_factory=dict)  # op names the analysis could not see into
    errors: list[str] = field(default_factory=list)

    def extend(self, other: ScanResult) -> None:
        self.findings += other.findings
        self.kernels += other.kernels
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


def parse(text: str, path: str, ir: IRKind) -> Module:
    if ir == "mlir":
        from irscan import mlir

        return mlir.parse_module(text, path)
    from irscan import ptx

    return ptx.parse_module(text, path)


def scan_module(module: Module, meta: dict[str, Any] | None = None) -> ScanResult:
    """Run every check on every device function of a parsed module."""
    res = ScanResult()
    kernels_meta = {k["name"]: k for k in (meta or {}).get("kernels", [])}
    reaching = None
    if module.ir == "ptx":
        from irscan.reaching import reaching_definitions

        reaching = reaching_definitions
    for fn in module.functions:
        if module.ir == "mlir" and not (fn.kernel or fn.attrs.get("gpu_module")):
            continue  # host code: launch plumbing, not device addresses
        if not fn.blocks:
            continue
        km = kernels_meta.get(fn.name, {})
        gr = dataflow.build(module, fn, reaching)
        rg = Ranges(gr, Facts.of(fn.attrs, km.get("launch")), km.get("args", []))
        ctx = checks.Context(fn.name, module.path, km.get("file"), km.get("line"))
        found = checks.run(gr, rg, ctx)
        res.findings += found
        opaque_atoms = sorted({a.name for a in rg.atoms.values() if a.opaque})
        res.kernels.append(
            {"kernel": fn.name, "ir": module.ir, "file": module.path, "ops": sum(len(b.ops) for b in fn.blocks),
             "findings": len(found), "opaque_inputs": opaque_atoms[:20]}
        )  # fmt: skip
    for name, count in module.opaque.items():
        res.unseen[f"{module.ir}:{name}"] = res.unseen.get(f"{module.ir}:{name}", 0) + count
    return res


def scan_file(path: Path, meta: dict[str, Any] | None = None) -> ScanResult:
    text = read_text(path)
    ir = detect_ir(path, text)
    module = parse(text, str(path), ir)
    res = scan_module(module, meta)
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
    res = ScanResult()
    for f in ir_files(folder):
        if detect_ir(f, "") in irs:
            res.extend(scan_file(f, meta))
    twins.pair(res.findings, {(k["ir"], k["kernel"]) for k in res.kernels})
    # twins side by side: the same access's MLIR finding, then its PTX one
    res.findings.sort(key=lambda f: (f.kernel, f.file or "", f.line or 0, f.expression, f.ir))
    return res


def scan_paths(paths: list[Path], irs: tuple[str, ...] = ("mlir", "ptx")) -> ScanResult:
    """Files or capture folders (searched recursively for meta.json)."""
    res = ScanResult()
    for p in paths:
        if p.is_dir():
            caps = find_captures(p)
            if not caps:
                raise FileNotFoundError(f"{p}: no capture folder (meta.json) and no IR file in it")
            for c in caps:
                res.extend(scan_capture(c, irs))
        elif p.exists():
            meta = _meta(p.parent)
            res.extend(scan_file(p, meta))
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    return res
