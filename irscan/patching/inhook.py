"""Patch mode inside ``cute.compile``: every kernel the program compiles is compiled from the rewritten
module, so the program runs the fixed kernel with no change to its source.

Two callbacks on the capture hook (irscan/capturing/hook.py): between the halves, the module is
scanned and rewritten in place (:func:`irscan.patching.core.patch_module`), and the patched text is
what the capture keeps; after the tail, the PTX-side proof: ptxas assembles the patched PTX (``-v``
gives ``registers_after``), the unpatched clone goes through the same tail into ``original/`` for
``registers_before`` and the diff, and both IRs of the capture are re-scanned.  If ptxas rejects the
patched PTX the original is put back and compiled instead (fail open; ``strict``: an error).
``patch.json`` in the capture folder is the report.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from irscan.patching.core import Report, patch_module, restore
from irscan.patching.ptxas import PtxasError, assemble

PATCH_FILE = "patch.json"
ORIGINAL_DIR = "original"
ENV_PATCH = "IRSCAN_PATCH"


class PatchError(Exception):
    """``strict``: a patch could not be verified, so the original would have been compiled."""


class _Module:
    """What ``Compiler.compile`` needs of a module: its ``operation`` (the unpatched clone's)."""

    def __init__(self, operation: Any):
        self.operation = operation


class Patcher:
    def __init__(self, strict: bool = False, registers: bool = True):
        self.strict = strict
        self.registers = registers  # compile the original too, for registers_before (one more tail)
        self.reports: dict[str, Report] = {}
        self._pending: dict[int, tuple[Report, str]] = {}

    # -- between the halves
    def after_llvm(self, module: Any, text: str, infos: dict[str, Any]) -> str | None:
        meta = {"kernels": [dataclasses.asdict(k) for k in infos.values()]}
        rep, new_text = patch_module(module, text, "module.mlir", meta)
        self._pending[id(module)] = (rep, text)
        if rep.reverted and self.strict:
            raise PatchError(f"irscan patch (strict): {rep.reverted}")
        return new_text if rep.patches else None

    # -- after the tail
    def after_tail(self, module: Any, folder: Path, result: Any, recompile: Callable[[Any, str], Any]) -> Any:
        rep, original_text = self._pending.pop(id(module), (None, ""))
        if rep is None or not (rep.patches or rep.not_patched):
            return result
        self.reports[str(folder)] = rep
        orig = folder / ORIGINAL_DIR
        orig.mkdir(exist_ok=True)
        (orig / "module.mlir").write_text(original_text)
        if rep.patches:  # nothing rewritten: the capture is the original, its findings already known
            result = self._prove(rep, module, folder, result, recompile, original_text)
            from irscan.pipeline import scan_capture

            rep.rescan = scan_capture(folder).findings
        (folder / PATCH_FILE).write_text(json.dumps(rep.to_json(), indent=2) + "\n")
        return result

    def _prove(self, rep: Report, module: Any, folder: Path, result: Any, recompile: Any, original_text: str) -> Any:
        ptx = folder / "module.ptx"
        try:
            after = assemble(ptx).registers
            rep.verified.append("ptxas assembles the patched PTX")
        except (PtxasError, OSError) as exc:
            if self.strict:  # the DSL wraps what the compile raises: the message says whose it is
                raise PatchError(f"irscan patch (strict): the patched PTX was not verified: {exc}") from exc
            why = f"patched PTX not accepted: {exc}"
            print(f"irscan: patch reverted, the original is compiled instead: {why}", file=sys.stderr)
            restore(module, rep.original)
            for p in rep.patches:
                rep.refuse(p.id, f"reverted: {why}")
            rep.patches, rep.reverted = [], why
            (folder / "module.mlir").write_text(original_text)
            result = recompile(module, str(folder / "module"))
            take_dumps(folder)
            return result
        before: dict[str, int] = {}
        if self.registers:
            recompile(_Module(rep.original.clone()), str(folder / ORIGINAL_DIR / "module"))
            take_dumps(folder / ORIGINAL_DIR)
            try:
                before = assemble(folder / ORIGINAL_DIR / "module.ptx").registers
            except (PtxasError, OSError):
                before = {}
        for p in rep.patches:
            p.registers_after = after.get(p.kernel)
            p.registers_before = before.get(p.kernel)
        return result


def take_dumps(folder: Path) -> None:
    """The tail dumps ``module.<arch>.ptx``/``.cubin``; a capture folder names them ``module.ptx``/``.cubin``."""
    for kind in ("ptx", "cubin"):
        for src in folder.glob(f"module.*.{kind}"):
            src.replace(folder / f"module.{kind}")


_patchers: list[Patcher] = []


def install(patcher: Patcher) -> None:
    from irscan.capturing import hook

    hook.LLVM_ONLY_CALLBACKS.append(patcher.after_llvm)
    hook.AFTER_TAIL_CALLBACKS.append(patcher.after_tail)
    _patchers.append(patcher)


def uninstall(patcher: Patcher) -> None:
    from irscan.capturing import hook

    if patcher.after_llvm in hook.LLVM_ONLY_CALLBACKS:
        hook.LLVM_ONLY_CALLBACKS.remove(patcher.after_llvm)
    if patcher.after_tail in hook.AFTER_TAIL_CALLBACKS:
        hook.AFTER_TAIL_CALLBACKS.remove(patcher.after_tail)
    if patcher in _patchers:
        _patchers.remove(patcher)


@contextmanager
def patch(
    out: str | None = None, strict: bool = False, arch: str | None = None, registers: bool = True
) -> Iterator[Patcher]:
    """``with irscan.patch(out=DIR) as p: cute.compile(...)``: every module compiled in the block is
    compiled from its patched form (capture on, DSL caches off); ``p.reports`` per capture folder."""
    import tempfile

    from irscan.capturing.hook import capture

    tmp = None if out else tempfile.TemporaryDirectory(prefix="irscan-patch-")
    patcher = Patcher(strict=strict, registers=registers)
    try:
        with capture(out=out or tmp.name, strict=strict, arch=arch):  # type: ignore[union-attr]
            install(patcher)
            try:
                yield patcher
            finally:
                uninstall(patcher)
    finally:
        if tmp is not None:
            tmp.cleanup()
