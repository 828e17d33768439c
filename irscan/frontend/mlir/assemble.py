"""LLVM-dialect MLIR (a CuTe DSL capture's ``module.mlir``) -> :class:`irscan.ir.Module`.

Two paths produce the same ops:

* ``parse_module(text, path)`` -- the default, fast path (:mod:`irscan.frontend.mlir.indexer`): a line indexer
  finds every op, its results, operand names, result types and location with string methods, and
  hands to the grammar only the lines whose details the analysis needs, once per distinct line
  template (SSA names abstracted); huge aggregate types are parsed once per distinct type.
* ``parse_module(text, path, full=True)`` -- every byte through ``grammars/mlir.lark`` (LALR,
  contextual lexer).  The oracle for the fast path, and the validator of suspicious input.

Mapping to :mod:`irscan.ir` (what the analysis relies on):

* ``llvm.mlir.constant(N : iW)`` -> CONST, width W, ``attrs["value"]`` (i1 true/false -> 1/0);
  other constants and ``llvm.mlir.undef/poison`` -> CONST without a value, ``llvm.mlir.zero`` -> 0.
* ``llvm.add/sub/mul/shl/lshr/ashr/and/or/xor/sdiv/udiv/srem/urem``, ``llvm.intr.s|umin/max`` ->
  ADD ... MAX, width of the result, ``signed`` for div/rem/min/max/shifts, flags from
  ``overflow<nsw, nuw>`` (and ``exact`` / ``disjoint``).  Vector-typed arithmetic stays OPAQUE.
* ``llvm.icmp "slt"`` -> ICMP, ``attrs["pred"]``, width = src_width = the compared operands' width
  (the trailing ``: i32``; the result itself is i1), signed from the predicate.
* ``llvm.select`` -> SELECT (cond, a, b); ``llvm.sext/zext/trunc`` -> SEXT/ZEXT/TRUNC with width and
  src_width; ``llvm.ptrtoint/inttoptr/addrspacecast/bitcast`` and
  ``builtin.unrealized_conversion_cast`` -> CAST (width of an int result, 0 for a pointer);
  ``llvm.freeze`` -> MOV.
* ``llvm.extractvalue`` -> EXTRACT, ``attrs["path"]``; ``llvm.insertvalue`` -> INSERT.
* ``llvm.getelementptr`` -> GEP: operands (base, dynamic indices...), ``attrs["indices"]`` =
  ``[("dyn", operand_index, int_width) | ("const", n)]``, ``attrs["elem_type"]``,
  ``attrs["elem_size"]`` (bytes or None), space of the base pointer, flags from ``inbounds|nuw``.
* ``llvm.load`` (addr 0) / ``llvm.store`` (addr 1) / ``llvm.atomicrmw``, ``llvm.cmpxchg`` (ATOMIC,
  addr 0): width of the loaded/stored integer, space of the pointer, ``attrs["type"]``,
  ``attrs["size"]``.  ``nvvm.*``, ``llvm.intr.*``, ``llvm.call_intrinsic`` and ``llvm.inline_asm``
  with a pointer operand -> MEMOP, addr = first pointer operand (``attrs["asm"]`` kept for asm); an
  ``llvm.inline_asm`` whose PTX is a memory statement -> its kind, address operand and space
  (``attrs["asm_op"]``: the opcode; frontend/mlir/asm.py, memroles.py).
* ``nvvm.read.ptx.sreg.*`` -> SREG, ``attrs["sreg"]``, ``attrs["range"]`` inclusive.
* ``llvm.br/cond_br/switch`` -> BRANCH (operands: the condition / switch value only; successor
  operands are in ``Block.succs``); ``llvm.return``, ``llvm.unreachable`` -> RETURN; ``llvm.call`` ->
  CALL (``attrs["callee"]``).  Everything else -> OPAQUE; ``Module.opaque`` counts the OPAQUE ops
  that produce an integer wider than i1 or a pointer.
* Every op: ``attrs["result_types"]`` (printed type texts, one per result).
* ``Function.params`` are the entry block's arguments; ``Function.attrs``: ``reqntid``, ``maxntid``,
  ``exact_block_dim``, ``exact_grid_dim`` (from ``cutlass_launch_facts``), ``launch_facts``,
  ``gpu_module``, ``declaration``, ``variadic``, ``result_type``, ``attributes`` (the whole dict).
* ``Module.attrs``: ``loc_granularity`` ("line" | "function" | "none"), ``structure`` (line, name,
  result types) of every op outside function bodies and of each ``llvm.func`` (for walking all ops in
  order), ``path`` ("fast" | "full").
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from irscan import ir
from irscan.frontend.mlir.grammar_lazy import grammar
from irscan.frontend.mlir.header import finish_module, function_from_header
from irscan.frontend.mlir.indexer import index_module
from irscan.frontend.mlir.locations import (
    LocResolver,
    LocSyntaxError,
    parse_loc_text,
    split_trailing_loc,
    strip_locations,
)
from irscan.frontend.mlir.records import AliasDef, AttrText, Body, RawOp, RawRegion
from irscan.frontend.mlir.semantics import (
    build_spec,
    finish_function,
)
from irscan.frontend.mlir.soup import soup_info, soup_rtypes
from irscan.frontend.mlir.spec import make_op
from irscan.frontend.mlir.templates import NeedFullParse
from irscan.frontend.text import strip_strings

__all__ = ["parse_module", "parse_file", "op_sequence", "strip_locations"]


def parse_module(text: str, path: str, full: bool = False) -> ir.Module:
    """Parse a captured module.  ``full=True`` runs every byte through the grammar (slow, exact).

    Raises :class:`irscan.ir.IRSyntaxError` (file line and column, what was expected) on bad or
    truncated input, on either path.
    """
    if "\t" in text:  # MLIR's lexer takes a tab for a blank; both paths' patterns are written for the
        text = text.replace("\t", " ")  # printer's spaces. One character for one: lines and columns stay
    if not full:
        try:
            return index_module(text, path)
        except NeedFullParse:
            pass  # a line the indexer does not know but the grammar might: let the grammar decide
    return _parse_full(text, path)


def parse_file(path: str, full: bool = False) -> ir.Module:
    """:func:`parse_module` of a file; ``.xz`` files are decompressed."""
    from irscan.resources import read_text

    return parse_module(read_text(path), path, full=full)


def op_sequence(module: ir.Module) -> list[tuple[int, str, tuple[str, ...]]]:
    """Every op of the module in pre-order (= line order): (line, name, result types).

    Includes the ops outside function bodies (``module``, ``gpu.module``, ``llvm.mlir.global``, each
    ``llvm.func``); ``module`` is named ``builtin.module`` as MLIR's walk names it.
    """
    seq = [(ln, name, tuple(rt)) for ln, name, rt in module.attrs.get("structure", [])]
    for fn in module.functions:
        for b in fn.blocks:
            for op in b.ops:
                seq.append((op.line, op.name, tuple(op.attrs.get("result_types") or ())))
    seq.sort(key=lambda x: x[0])
    return [(ln, "builtin.module" if name == "module" else name, rt) for ln, name, rt in seq]


# ------------------------------------------------------------------------------------ full path


def _parse_full(text: str, path: str) -> ir.Module:
    g = grammar()
    try:
        items = g.parse(text)
    except g.UnexpectedInput as exc:
        raise g.syntax_error(path, text, exc) from None
    return _Assembler(text, path).run(items)


class _Assembler:
    """Walks the records of a whole-module parse and builds the :class:`irscan.ir.Module`."""

    def __init__(self, text: str, path: str) -> None:
        self.lines = text.split("\n")
        self.module = ir.Module(ir="mlir", path=path)
        self.structure: list[tuple[int, str, tuple[str, ...]]] = []
        self.opaque: Counter[str] = Counter()
        self.next_id = 0
        self.resolver = LocResolver({})

    def run(self, items: list[Any]) -> ir.Module:
        aliases: dict[str, Any] = {}
        for it in items:
            if isinstance(it, AliasDef) and not it.is_type:
                # raw text, read by the location parser when an op first names the alias
                aliases[it.name] = str(it.value) if isinstance(it.value, AttrText) else ("o",)
        self.resolver = LocResolver(aliases)
        self._outline([(it, False) for it in items if isinstance(it, RawOp)])
        return finish_module(self.module, self.opaque, self.structure, "full")

    def _loc(self, rop: RawOp) -> ir.Loc | None:
        try:
            return self.resolver.resolve(parse_loc_text(rop.loc)) if rop.loc is not None else None
        except LocSyntaxError as exc:
            line = self.lines[rop.line - 1] if rop.line <= len(self.lines) else ""
            raise ir.IRSyntaxError(self.module.path, rop.line, line.rfind("loc(") + 1, f"bad location: {exc}") from None

    def _rtypes_of(self, rop: RawOp) -> tuple[str, ...]:
        b = rop.body
        if b.tag == "generic":
            return soup_rtypes(b.name, strip_strings(self._body_text(rop)), len(rop.results)) or ()
        return b.rtypes or ()

    def _outline(self, tasks: list[tuple[RawOp, bool]]) -> None:
        """Every op outside function bodies into ``structure``, functions into the module, in
        pre-order; ``tasks`` are (op, inside a gpu.module).  An explicit stack, not recursion: region
        nesting is the input's to choose."""
        stack = tasks[::-1]
        while stack:
            rop, gpu = stack.pop()
            b = rop.body
            if b.tag == "func":
                nested = self._function(rop, gpu)
            else:
                self.structure.append((rop.line, b.name, self._rtypes_of(rop)))
                nested = _region_ops(b.regions, gpu or b.name == "gpu.module")
            stack.extend(reversed(nested))

    def _body_text(self, rop: RawOp) -> str:
        line = self.lines[rop.line - 1]
        body = line[rop.col - 1 :].strip()
        if rop.body.regions and body.endswith("{"):
            return body[:-1].rstrip()
        return split_trailing_loc(body)[0]

    def _function(self, rop: RawOp, gpu: bool) -> list[tuple[RawOp, bool]]:
        """Build one function; returns the ops of regions nested in its ops, for :meth:`_outline`."""
        b = rop.body
        fn = function_from_header(b, rop.line, gpu)
        fn.loc = self._loc(rop)
        self.structure.append((rop.line, "llvm.func", ()))
        self.module.functions.append(fn)
        nested: list[tuple[RawOp, bool]] = []
        if not b.regions:
            return nested
        types = {p.name: p.type for p in fn.params}
        post: list[ir.Op] = []
        for bi, rb in enumerate(b.regions[0].blocks):
            block = ir.Block(
                label=rb.label,
                args=tuple(n for n, _ in rb.args),
                arg_widths=tuple(t.int_width for _, t in rb.args),
            )
            for n, t in rb.args:
                types[n] = t.text
            fn.blocks.append(block)
            for r in rb.ops:
                op = self._op(r, block, bi, post, gpu, nested)
                if op is not None:
                    rt = op.attrs["result_types"]
                    if rt:
                        for res, t in zip(op.results, rt, strict=False):
                            types[res] = t
        finish_function(types, post, self.opaque)
        return nested

    def _op(
        self, rop: RawOp, block: ir.Block, bi: int, post: list[ir.Op], gpu: bool, nested: list[tuple[RawOp, bool]]
    ) -> ir.Op | None:
        body: Body = rop.body
        if body.tag == "func":  # a nested function cannot be in an llvm.func; keep it findable anyway
            nested.append((rop, gpu))
            return None
        if body.tag == "generic":
            raw = self._body_text(rop)
            body.info = soup_info(body.name, raw)
            body.rtypes = soup_rtypes(body.name, strip_strings(raw), len(rop.results))
            nested.extend(_region_ops(body.regions, gpu))  # ops of nested regions are not function ops
        spec = build_spec(body)
        op = make_op(
            spec,
            self.next_id,
            rop.results,
            spec.operands,
            self._loc(rop),
            rop.line,
            self.lines[rop.line - 1].strip()[:300],
            bi,
        )
        self.next_id += 1
        block.ops.append(op)
        for label, ops in spec.succs:
            block.succs.append(ir.Successor(label, ops))
        if spec.post:
            post.append(op)
        return op


def _region_ops(regions: list[RawRegion], gpu: bool) -> list[tuple[RawOp, bool]]:
    return [(r, gpu) for region in regions for blk in region.blocks for r in blk.ops]
