"""PTX disguises of a 64 -> 32 -> 64 narrowing, lowered to the shared vocabulary (TRUNC + SEXT/ZEXT).

NVVM and ptxas spell "keep the low 32 bits of x and extend them again" in several ways; the checks
should need no PTX knowledge to see the narrowing, so the front end rewrites each spelling into the
ops MLIR would have (``trunc`` then ``sext``/``zext``), keeping the instruction's own text on every op
for reports (``attrs["idiom"]`` names the spelling):

- ``shl.b64 t, x, 32`` / ``mul.lo.s64 t, x, k*2^32`` then ``shr.s64 y, t, 32`` (``shr.u64``: zero
  extend): ``y = ext(trunc(x*k))``; a shift by ``32+s`` is ``k = 2^s``.  The TRUNC (and the 64-bit
  multiply by ``k`` when ``k != 1``) is emitted at the ``shr``; it reads ``x``, so the pair is taken
  only while neither ``t`` nor ``x`` is written in between, in one block, unguarded.
- ``bfe.s64 y, x, 0, 32`` (``bfe.u64``): sign (zero) extension of the low 32 bits.
- ``mov.b64 {lo, hi}, x`` (an unpack): ``lo = trunc(x)``, ``hi = trunc(x >> 32)``; the extension
  that usually follows (``cvt.s64.s32``) is already a SEXT.  Unpacks of other widths likewise.
- ``cvt.u32.u64`` then ``cvt.s64.s32``: already TRUNC and SEXT (:mod:`irscan.frontend.ptx.opcodes`).

Synthetic registers are named ``%<op id>#lo`` (``#`` cannot occur in a PTX identifier).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from irscan.ir import Kind, Op


class NarrowingIdioms:
    """Per-block state of the rewrite; :meth:`lower` maps each lowered op to the ops to emit."""

    def __init__(self) -> None:
        #: t -> (x, k, text of that op): t was last written as x*k*2^32 (unguarded, in this block)
        self.high: dict[str, tuple[str, int, str]] = {}
        #: x -> the keys of ``high`` that read x
        self.readers: dict[str, set[str]] = {}

    def new_block(self) -> None:
        self.high.clear()
        self.readers.clear()

    def _forget(self, r: str) -> None:
        old = self.high.pop(r, None)
        if old is not None:
            self.readers.get(old[0], set()).discard(r)
        for t in self.readers.pop(r, ()):
            self.high.pop(t, None)

    def lower(self, op: Op, new_id: Callable[[], int]) -> list[Op]:
        """The ops standing for ``op`` (``op`` itself, or its rewrite; ``new_id`` numbers extra ops)."""
        out = self._rewrite(op) or [op]
        for i, o in enumerate(out):  # ids in program order: the first keeps op's own
            o.id = op.id if i == 0 else new_id()
        for r in op.results:
            self._forget(r)
        k = self._high_factor(op)
        if k is not None and isinstance(op.operands[0], str):
            t, x = op.results[0], op.operands[0]
            if t != x:
                self.high[t] = (x, k, op.text)
                self.readers.setdefault(x, set()).add(t)
        return out

    @staticmethod
    def _high_factor(op: Op) -> int | None:
        """k when ``op`` is an unguarded 64-bit ``x * k * 2^32`` (``shl`` by >= 32 or ``mul``)."""
        if op.pred is not None or op.width != 64 or len(op.results) != 1 or len(op.operands) != 2:
            return None
        c = op.operands[1]
        if type(c) is not int:
            return None
        if op.kind is Kind.SHL and 32 <= c < 64:
            return 1 << (c - 32)
        if op.kind is Kind.MUL and c % (1 << 64) % (1 << 32) == 0 and c % (1 << 64):
            return (c % (1 << 64)) >> 32
        return None

    def _rewrite(self, op: Op) -> list[Op] | None:
        kind = op.kind
        if op.pred is not None or len(op.results) != 1:
            return self._unpack(op) if op.attrs.get("note") == "unpack" and op.pred is None else None
        if kind in (Kind.ASHR, Kind.LSHR) and op.width == 64 and op.operands[1:] == (32,):
            src = op.operands[0]
            hit = self.high.get(src) if isinstance(src, str) else None
            if hit is None:
                return None
            x, k, first = hit
            how = f"{'mul' if k != 1 else 'shl'} by {k}*2^32 then {op.name} 32"
            out = _extend(op, x, k, kind is Kind.ASHR, how)
            out[-2].text = f"{first} {op.text}"  # the TRUNC: the pair is the narrowing
            return out
        x0 = op.operands[0] if op.operands else None
        if op.name.startswith(("bfe.s64", "bfe.u64")) and op.operands[1:] == (0, 32) and isinstance(x0, str):
            how = f"{op.name} of the low 32 bits"
            return _extend(op, x0, 1, op.name.startswith("bfe.s"), how)
        return None

    @staticmethod
    def _unpack(op: Op) -> list[Op] | None:
        """``mov.bW {e0, e1, ...}, x``: element i = trunc(x >> i*W/n)."""
        src = op.operands[0] if len(op.operands) == 1 else None
        n = len(op.results)
        if not isinstance(src, str) or n < 2 or not op.width or op.width % n:
            return None
        ew = op.width // n
        out: list[Op] = []
        for i, r in enumerate(op.results):
            x = src
            if i:
                x = f"%{op.id}#{i}"
                out.append(_synth(op, Kind.LSHR, x, (src, i * ew), op.width, None, "unpack"))
                out[-1].signed = False
            out.append(_synth(op, Kind.TRUNC, r, (x,), ew, op.width, "unpack"))
        return out


def _synth(op: Op, kind: Kind, res: str, operands: tuple[str | int, ...], width: int, src: int | None, how: str) -> Op:
    """An op of the rewrite, at ``op``'s place and with its text (its id is set by the caller)."""
    attrs = {"idiom": how}
    return dataclasses.replace(
        op, id=-1, kind=kind, results=(res,), operands=operands, width=width, src_width=src, signed=None,
        flags=frozenset(), attrs=attrs, addr=None, space=None,
    )  # fmt: skip


def _extend(op: Op, x: str, k: int, signed: bool, how: str) -> list[Op]:
    """``y = ext(trunc(x * k))`` standing for ``op``."""
    out: list[Op] = []
    if k != 1:
        t = f"%{op.id}#k"
        out.append(_synth(op, Kind.MUL, t, (x, k), 64, None, how))
        x = t
    lo = f"%{op.id}#lo"
    out.append(_synth(op, Kind.TRUNC, lo, (x,), 32, 64, how))
    ext = _synth(op, Kind.SEXT if signed else Kind.ZEXT, op.results[0], (lo,), 64, 32, how)
    ext.signed = signed
    out.append(ext)
    return out
