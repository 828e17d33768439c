"""Patch mode refuses what it cannot prove, and says why (``not_patched``), never silently."""

import re

import pytest

from irscan.findings import Finding, Step
from irscan.patching import rules
from irscan.patching.core import patch_module
from irscan.patching.mlir import ModuleRewriter, Refused

pytest.importorskip("cutlass")

#: the wrapped index also feeds a select whose result is stored: widening only the GEP would leave
#: the select on the wrapped value
SELECT = """
module {
  gpu.module @kernels {
    llvm.func @k(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %c = llvm.mlir.constant(100000 : i32) : i32
      %z = llvm.mlir.constant(0 : i32) : i32
      %0 = nvvm.read.ptx.sreg.ctaid.x : i32
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %1 = llvm.mul %0, %c overflow<nsw> : i32
      %2 = llvm.add %1, %t overflow<nsw> : i32
      %g = llvm.getelementptr %arg0[%2] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %v = llvm.load %g : !llvm.ptr<1> -> f32
      %p = llvm.icmp "eq" %t, %z : i32
      %s = llvm.select %p, %2, %z : i1, i32
      llvm.store %s, %arg1 : i32, !llvm.ptr<1>
      llvm.store %v, %g : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
"""

#: the wrapping add is loop-carried: its result is the next iteration's block argument
LOOP = """
module {
  gpu.module @kernels {
    llvm.func @k(%arg0: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %c = llvm.mlir.constant(100000 : i32) : i32
      %one = llvm.mlir.constant(1 : i32) : i32
      %eight = llvm.mlir.constant(8 : i32) : i32
      %z = llvm.mlir.constant(0 : i32) : i32
      %0 = nvvm.read.ptx.sreg.ctaid.x : i32
      %1 = llvm.mul %0, %c overflow<nsw> : i32
      llvm.br ^bb1(%1, %z : i32, i32)
    ^bb1(%i: i32, %k: i32):
      %n = llvm.add %i, %c overflow<nsw> : i32
      %g = llvm.getelementptr %arg0[%n] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %v = llvm.load %g : !llvm.ptr<1> -> f32
      llvm.store %v, %g : f32, !llvm.ptr<1>
      %k1 = llvm.add %k, %one : i32
      %p = llvm.icmp "slt" %k1, %eight : i32
      llvm.cond_br %p, ^bb1(%n, %k1 : i32, i32), ^bb2
    ^bb2:
      llvm.return
    }
  }
}
"""


def _module(text):
    from irscan.patching.parse import parse_module

    m = parse_module(text)
    return m, m.operation.get_asm(enable_debug_info=True)


def test_select_user_is_refused_with_the_reason():
    from cutlass._mlir import ir

    with ir.Context(), ir.Location.unknown():
        m, printed = _module(SELECT)
        rep, new = patch_module(m, printed, "select.mlir", None)
    assert not rep.patches
    assert len(rep.not_patched) == 1 and "select" in rep.not_patched[0]["reason"]
    assert new == printed  # nothing rewritten


def _finding(printed: str, widening: str, chain: list[str]) -> Finding:
    """A finding as the scan would report it (the loop's wrap is not one the range analysis proves)."""
    lines = printed.splitlines()

    def step(op: str, role: str) -> Step:
        n = next(i for i, ln in enumerate(lines) if re.search(rf"= {re.escape(op)}\b", ln))
        return Step(op=op, ir_line=n + 1, text=lines[n].strip(), role=role, width=32)

    steps = [step(op, "arithmetic") for op in chain] + [step(widening, "widening")]
    return Finding(
        kernel="k", ir="mlir", check="narrow-widened-late", severity="may", file=None, line=None, col=None,
        source=None, source_precision="none", message="", sink={}, sinks=[], chain=steps, wraps_when=None,
        witness=None, undefined_behaviour=True, fix="", ir_file="loop.mlir", ir_line=steps[-1].ir_line,
        expression="i + 100000",
    )  # fmt: skip


def test_loop_carried_chain_is_refused():
    from cutlass._mlir import ir

    with ir.Context(), ir.Location.unknown():
        m, printed = _module(LOOP)
        f = _finding(printed, "llvm.getelementptr", ["llvm.add"])
        rw = ModuleRewriter(m)
        with pytest.raises(Refused, match="loop-carried"):
            rw.plan(f, rules.rule_for("mlir", "narrow-widened-late"))


def test_unknown_widening_point_is_refused():
    from cutlass._mlir import ir

    with ir.Context(), ir.Location.unknown():
        m, printed = _module(LOOP)
        f = _finding(printed, "llvm.load", ["llvm.add"])
        with pytest.raises(Refused, match="widening point"):
            ModuleRewriter(m).plan(f, rules.rule_for("mlir", "narrow-widened-late"))
