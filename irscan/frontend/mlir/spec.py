"""An op's template: :class:`Spec` (what an op is, less its own SSA names) and :func:`make_op`.

:func:`irscan.frontend.mlir.semantics.build_spec` fills a Spec from a parsed op; the fast path keeps
one per distinct op template (templates.py, and across processes spec_store.py, which pickles it) and
stamps :class:`irscan.ir.Op` objects out of it with :func:`make_op`, as the full path does per op.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from irscan import ir
from irscan.frontend.mlir.soup import launched_kernel
from irscan.ir import AddressSpace, Kind


class Spec:
    """Everything about an op except its own SSA names, line and location.

    ``operands`` / ``succs`` hold operand references as the parser saw them: real names on the full
    path, ``%k`` / ``^k`` placeholders (k = position among the line's references) for a template.
    ``post`` marks ops that :func:`~irscan.frontend.mlir.semantics.finish_function` must revisit once
    value types are known.
    """

    __slots__ = (
        "kind",
        "name",
        "width",
        "src_width",
        "signed",
        "flags",
        "attrs",
        "addr",
        "space",
        "operands",
        "succs",
        "post",
        "op_idx",
        "succ_idx",
        "getops",
    )

    def __init__(self, kind: Kind, name: str, operands: tuple[str, ...], rtypes: tuple[str, ...] | None) -> None:
        self.kind = kind
        self.name = name
        self.width = 0
        self.src_width: int | None = None
        self.signed: bool | None = None
        self.flags: frozenset[str] = frozenset()
        self.attrs: dict[str, Any] = {"result_types": rtypes}
        self.addr: int | None = None
        self.space: AddressSpace | None = None
        self.operands = operands
        self.succs: tuple[tuple[str, tuple[str, ...]], ...] = ()
        self.post = False
        self.op_idx: tuple[int, ...] = ()
        self.succ_idx: tuple[tuple[int, tuple[int, ...]], ...] = ()
        self.getops: Any = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without ``getops`` (a closure): :meth:`templatize` makes it again."""
        return {k: getattr(self, k) for k in self.__slots__ if k != "getops"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self.getops = None

    def templatize(self) -> Spec:
        """Turn ``%k`` / ``^k`` placeholder references into positions (for the fast path)."""
        self.op_idx = idx = tuple(int(r[1:]) for r in self.operands)
        self.succ_idx = tuple((int(lab[1:]), tuple(int(r[1:]) for r in ops)) for lab, ops in self.succs)
        if not idx:
            self.getops = lambda names: ()
        elif len(idx) == 1:
            i0 = idx[0]
            self.getops = lambda names: (names[i0],)
        else:
            self.getops = itemgetter(*idx)
        return self


def make_op(
    spec: Spec,
    op_id: int,
    results: tuple[str, ...],
    operands: tuple[str, ...],
    loc: ir.Loc | None,
    line: int,
    text: str,
    block: int,
) -> ir.Op:
    attrs = dict(spec.attrs)
    """The op ``spec`` describes, with its own results, operands, location, line, text and block."""
    if spec.kind is Kind.LAUNCH:
        attrs["kernel"] = launched_kernel(text)
    return ir.Op(
        id=op_id,
        kind=spec.kind,
        name=spec.name,
        results=results,
        operands=operands,
        width=spec.width,
        src_width=spec.src_width,
        signed=spec.signed,
        flags=spec.flags,
        attrs=attrs,
        addr=spec.addr,
        space=spec.space,
        loc=loc,
        line=line,
        text=text,
        block=block,
    )
