"""``irscan patch CAPTURE_DIR|FILE.mlir|FILE.ptx -o OUT``: patch captured IR after the fact.

MLIR (a capture folder or a ``.mlir`` file): parsed into the DSL's bindings, rewritten and re-scanned
as in patch mode, then lowered by the DSL's own tail (``cuda-to-binary`` ...), which writes the PTX and
cubin; ptxas assembles both the original and the patched PTX for the register counts.  PTX (a
``.ptx`` file, or a capture folder with no MLIR): rewritten as text (:mod:`irscan.patching.ptx`),
re-scanned, assembled by ptxas into a cubin.  Either way OUT gets the patched IR, its PTX and cubin,
a unified diff of the IR, ``patch.json`` and a copy of ``meta.json``, so OUT is a capture folder
``irscan scan`` reads with the same launch facts.  Nothing is ever written into the input's folder.
"""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path
from typing import Any

from irscan.ir import IRSyntaxError
from irscan.patching import rules
from irscan.patching.core import Report, patch_module, scan_text
from irscan.patching.inhook import take_dumps
from irscan.patching.ptxas import PtxasError, arch_of, assemble
from irscan.resources import UsageError, read_text

#: the DSL's tail after ``cute-to-nvvm{llvm-only=true}`` (4.8.1, as the capture hook splits it)
TAIL = (
    "builtin.module(cuda-to-binary{{cubin-triple=nvptx64-nvidia-cuda dump-ptx-path='{p}' dump-cubin-path='{p}' "
    "features=+ptx88 opt-level=3}},cuda-to-llvm{{cuda-abi=lp64}},reconcile-unrealized-casts,cuda-error-handling)"
)


def _inputs(src: Path) -> tuple[Path, dict[str, Any] | None, Path]:
    """(the IR file, the capture's meta, the folder meta.json came from)."""
    from irscan.capturing.store import META_FILE, load

    if src.is_dir():
        for name in ("module.mlir", "module.mlir.xz", "module.ptx", "module.ptx.xz"):
            if (src / name).exists():
                meta = load(src).meta if (src / META_FILE).exists() else None
                return src / name, meta, src
        raise IRSyntaxError(str(src), 1, 1, "no module.mlir or module.ptx in this folder", ["a capture folder"])
    if not src.exists():
        raise IRSyntaxError(str(src), 1, 1, "no such file or folder", ["a capture folder", "an IR file"])
    meta = load(src.parent).meta if (src.parent / META_FILE).exists() else None
    return src, meta, src.parent


def _resolved(path: Path, what: str) -> Path:
    """``path.resolve()``; a symlink loop (RuntimeError on Python 3.11, OSError later) is bad usage."""
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:
        raise UsageError(f"{what}{path}: cannot be resolved ({exc})") from None


def _out_folder(out: Path) -> Path:
    """OUT resolved, when it is a folder or nothing yet (a file, /dev/null, a symlink loop: exit 2)."""
    o = _resolved(out, "-o ")
    if o.exists() and not o.is_dir():
        raise UsageError(f"-o {out} is not a folder; give a folder")
    return o


def _check_out(src: Path, ir_file: Path, out: Path) -> None:
    o = _out_folder(out)
    if o == ir_file.resolve() or o == ir_file.parent.resolve() or (src.is_dir() and o == _resolved(src, "")):
        raise UsageError(f"-o {out} would write over the input; give another folder")


def _make_out(out: Path) -> None:
    """OUT, made here: under a regular file or /dev/null, in /proc, unwritable, it is bad usage (exit 2)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"-o {out}: {exc.strerror or exc}") from None


def patch_tree(src: Path, out: Path, strict: bool = False) -> dict[str, Report]:
    """A capture folder, a file, or a folder of capture folders (each to its own folder under OUT)."""
    from irscan.capturing.store import find_captures

    o = _out_folder(out)
    if src.is_dir() and not any(
        (src / n).exists() for n in ("module.mlir", "module.mlir.xz", "module.ptx", "module.ptx.xz")
    ):
        caps = find_captures(src)
        if caps:
            if o in {c.resolve() for c in caps} or o == src.resolve():
                raise UsageError(f"-o {out} would write over the input; give another folder")
            return {str(out / c.relative_to(src)): patch_path(c, out / c.relative_to(src), strict) for c in caps}
    return {str(out): patch_path(src, out, strict)}


def patch_path(src: Path, out: Path, strict: bool = False) -> Report:
    ir_file, meta, folder = _inputs(src)
    _check_out(src, ir_file, out)
    text = read_text(ir_file)
    from irscan.pipeline import IR_SUFFIXES, detect_ir, parse, require_ir

    kind = detect_ir(ir_file, text)
    require_ir(text, str(ir_file), kind, ir_file.name.endswith(IR_SUFFIXES))
    if kind == "mlir":  # irscan's front end first: bad input gets its located error, not the DSL's
        parse(text, str(ir_file), kind)
    _make_out(out)
    rep = _patch_mlir(text, ir_file, meta, out) if kind == "mlir" else _patch_ptx(text, ir_file, meta, out)
    if meta is not None:
        shutil.copy(folder / "meta.json", out / "meta.json")
    from irscan.pipeline import scan_together

    files = [p for p in (out / "module.mlir", out / "module.ptx") if p.exists()]
    rep.rescan = scan_together(files, meta, ("mlir", "ptx")).findings
    (out / "patch.json").write_text(json.dumps(rep.to_json(), indent=2) + "\n")
    if strict and (rep.reverted or rep.not_patched):
        from irscan.patching.inhook import PatchError

        raise PatchError(rep.reverted or f"{len(rep.not_patched)} finding(s) not patched")
    return rep


def _diff(before: str, after: str, name: str, out: Path) -> None:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{name}", f"b/{name}"
    )
    (out / f"{name}.diff").write_text("".join(lines))


def _patch_mlir(text: str, ir_file: Path, meta: dict[str, Any] | None, out: Path) -> Report:
    from cutlass._mlir import ir as _ir
    from cutlass._mlir import passmanager as _pm

    ir: Any = _ir  # the bindings ship no type stubs
    passmanager: Any = _pm

    from irscan.patching.parse import dsl_error, parse_module

    source = text

    def lower(op: Any, prefix: Path) -> None:
        """The DSL's tail; a failure is the input's (ptxas refusing its inline asm, say): exit 2 at it."""
        try:
            passmanager.PassManager.parse(TAIL.format(p=prefix)).run(op)
        except ir.MLIRError as exc:
            raise dsl_error(exc, source, str(ir_file), "the DSL's lowering refuses it") from None

    with ir.Context(), ir.Location.unknown():
        module = parse_module(text, str(ir_file))
        # scan the module as the bindings print it: the SSA names the rewriter looks up are the printer's
        text = module.operation.get_asm(enable_debug_info=True)
        rep, new_text = patch_module(module, text, str(ir_file), meta)
        (out / "module.mlir").write_text(new_text)
        _diff(text, new_text, "module.mlir", out)
        orig = out / "original"
        orig.mkdir(exist_ok=True)
        (orig / "module.mlir").write_text(text)
        if rep.original is not None:  # the original through the same tail: its PTX, for registers_before
            lower(rep.original, orig / "module")
        try:
            lower(module.operation, out / "module")
        except IRSyntaxError as exc:
            if rep.original is None:  # nothing was patched: the input's own module does not lower
                raise
            rep.reverted = f"the patched module does not lower: {exc.message}"  # the original did
    for d in (out, orig):
        take_dumps(d)
    if rep.patches and not rep.reverted:
        try:
            after = assemble(out / "module.ptx").registers
            rep.verified.append("ptxas assembles the patched PTX")
        except PtxasError as exc:
            rep.reverted = f"patched PTX not accepted: {exc}"
            return rep
        before = assemble(orig / "module.ptx").registers if (orig / "module.ptx").exists() else {}
        for p in rep.patches:
            p.registers_before, p.registers_after = before.get(p.kernel), after.get(p.kernel)
    return rep


def _patch_ptx(text: str, ir_file: Path, meta: dict[str, Any] | None, out: Path) -> Report:
    from irscan.patching.core import Patch
    from irscan.patching.ptx import rewrite

    rep = Report()
    path = str(ir_file.with_suffix(".ptx"))
    found = [f for f in scan_text(text, path, meta) if f.ir == "ptx"]
    new_text, patches, refused = rewrite(text, found, rules.rule_for)
    rep.not_patched += refused
    after = scan_text(new_text, path, meta)
    still = {f.id for f in after} & {p.id for p in patches}
    if still:  # rewrite again without them: a rewrite that does not fix its finding is not applied
        for fid in sorted(still):
            rep.refuse(fid, "the re-scan of the rewritten PTX still finds it")
        new_text, patches, _ = rewrite(
            text, [f for f in found if f.id not in still and f.id in {p.id for p in patches}], rules.rule_for
        )
        after = scan_text(new_text, path, meta) if patches else []
    new = [f for f in after if f.id not in {g.id for g in found}]
    if new:  # the rewrite made a finding the original did not have: none of it is applied
        why = f"reverted: the re-scan of the rewritten PTX found a new finding: {new[0].message}"
        for p in patches:
            rep.refuse(p.id, why)
        rep.reverted, new_text, patches = why, text, []
    rep.patches += [Patch(p.id, p.rule, p.ops_rewritten, kernel=p.kernel) for p in patches]
    if patches:
        rep.verified.append("PTX re-scan: patched findings gone")
    (out / "module.ptx").write_text(new_text)
    _diff(text, new_text, "module.ptx", out)
    orig = out / "original"
    orig.mkdir(exist_ok=True)
    (orig / "module.ptx").write_text(text)
    arch = arch_of(text)
    try:
        regs_after = assemble(out / "module.ptx", out / "module.cubin", arch).registers
        rep.verified.append("ptxas assembles the patched PTX")
        regs_before = assemble(orig / "module.ptx", orig / "module.cubin", arch).registers
    except PtxasError as exc:
        rep.reverted = f"patched PTX not accepted: {exc}"
        (out / "module.ptx").write_text(text)
        return rep
    for patch in rep.patches:
        patch.registers_before, patch.registers_after = regs_before.get(patch.kernel), regs_after.get(patch.kernel)
    return rep
