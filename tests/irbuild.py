"""Tiny builders for unit tests: ir.py modules for the analysis floors (graph, ranges, checks), hand-written
PTX kernels and hand-made findings.

Real captures drive the end-to-end tests; these hand-made functions pin down one rule each.
"""

from __future__ import annotations

from typing import Any

from irscan.findings import Finding
from irscan.frontend import ptx
from irscan.frontend.mlir.grammar import parse_type
from irscan.frontend.mlir.types import shape_of
from irscan.ir import Block, Function, Kind, Module, Op, Param, Successor


class FnBuilder:
    def __init__(self, name: str = "k", ir: str = "mlir", **attrs: Any):
        self.fn = Function(name=name, kernel=True, attrs=dict(attrs))
        self.module = Module(ir=ir, path="test.mlir", functions=[self.fn])  # type: ignore[arg-type]
        self.block("entry")
        self._n = 0

    def function(self, name: str, kernel: bool = False, **attrs: Any) -> Function:
        """Start another function of the same module (a host function, say); ops go there from now."""
        self.fn = Function(name=name, kernel=kernel, attrs=dict(attrs))
        self.module.functions.append(self.fn)
        self.block("entry")
        return self.fn

    def block(self, label: str, args: tuple[str, ...] = (), widths: tuple[int, ...] = ()) -> Block:
        b = Block(label=label, args=args, arg_widths=widths)
        self.fn.blocks.append(b)
        return b

    def param(self, name: str, type_text: str) -> str:
        """An MLIR parameter of this type (its shape read by the MLIR front end's type parser)."""
        shape = shape_of(parse_type(type_text))
        self.fn.params.append(Param(name=name, type=type_text, index=len(self.fn.params), shape=shape))
        return name

    def op(self, kind: Kind, *operands: Any, width: int = 32, result: bool | str = True, **kw: Any) -> str:
        """Append an op; its result is ``%<id>``, or the register named by ``result`` (PTX: not SSA)."""
        self._n += 1
        res = result if isinstance(result, str) else f"%{self._n}" if result else None
        b = self.fn.blocks[-1]
        op = Op(id=self._n, kind=kind, name=kw.pop("name", f"llvm.{kind.value}"), results=(res,) if res else (),
                operands=tuple(operands), width=width, line=self._n, text=f"{res} = {kind.value}",
                block=len(self.fn.blocks) - 1, **kw)  # fmt: skip
        b.ops.append(op)
        return res or ""

    def const(self, v: int, width: int = 32) -> str:
        return self.op(Kind.CONST, width=width, attrs={"value": v})

    def branch(self, *succs: tuple[str, tuple[str, ...]], cond: str | None = None) -> None:
        self.op(Kind.BRANCH, *(x for x in [cond] if x), result=False, width=0)
        self.fn.blocks[-1].succs = [Successor(label, ops) for label, ops in succs]


def ptx_kernel(body: str, rd: int = 10) -> Function:
    """The one kernel of a hand-written PTX snippet: ``body`` after a fixed header declaring
    ``%p<4>``, ``%r<10>`` and ``%rd<rd>``, parsed by the PTX front end."""
    head = (
        ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 k_p)\n{\n"
        f".reg .pred %p<4>;\n.reg .b32 %r<10>;\n.reg .b64 %rd<{rd}>;\n"
    )
    return ptx.parse_module(head + body + "\n}\n", "t.ptx").functions[0]


def finding(**kw: Any) -> Finding:
    """A finding made by hand: an MLIR load in a copy kernel, ``kw`` replacing any field."""
    base: dict[str, Any] = dict(
        kernel="kernel_cutlass_copy_kernel_tensorptrf32gmemalign16o1000_0", ir="mlir", check="narrow-widened-late",
        severity="may", file="/home/me/prog/k.py", line=31, col=20, source=None, source_precision="statement",
        message="", sink={"kind": "load"}, sinks=[{"kind": "load"}], chain=[], wraps_when=None, witness=None,
        undefined_behaviour=False, fix="", ir_file="cap/module.mlir", ir_line=22, expression="100000*ctaid.x",
    )  # fmt: skip
    base.update(kw)
    return Finding(**base)
