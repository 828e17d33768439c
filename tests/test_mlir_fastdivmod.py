"""CuTe's FastDivmod in MLIR (irscan/analysis/divmod.py) and the coordinate an MLIR tensor's 64-bit
stride multiplies (irscan/analysis/coords.py), as FA4's split-KV combine writes them:

``t = trunc(lshr(mul(zext x, zext m), 32))`` is the 32-bit multiply-high PTX spells ``mul.hi.u32``;
``q = (t + ((x - t) >> s1)) >> s2`` is then the quotient of x by the struct member before m
(``extractvalue %arg[0]``), and ``x - q*d`` is ``x % d``.  ``sext q`` times the tensor's own i64
stride of mode m, plus other modes' offsets, as a GEP's index: in bounds below ``shape[m]``.
"""

from __future__ import annotations

from typing import Any

from irbuild import FnBuilder

from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Kind

DYN32, DYN64 = {"kind": "dynamic", "width": 32}, {"kind": "dynamic", "width": 64}
#: f32 (?,?):(1,?{i64}): the LSE of one split
LSE = {"dtype": "f32", "modes": [{"shape": DYN32, "stride": {"kind": "static", "value": 1}},
                                 {"shape": DYN32, "stride": DYN64}]}  # fmt: skip
TENSOR = "!llvm.struct<(ptr<1>, struct<(struct<(i32, i32)>, struct<(i64)>)>)>"
DIVISOR = "!llvm.struct<(i32, i32, i8, i8)>"


def _build(mulhi_width: int = 64, stride_path: tuple[int, ...] = (1, 1, 0)) -> tuple[Ranges, dict[str, str]]:
    b = FnBuilder()
    a = b.param("%arg0", TENSOR)
    fd = b.param("%arg1", DIVISOR)
    d, m, s1, s2 = (b.op(Kind.EXTRACT, fd, width=w, attrs={"path": (i,)}) for i, w in enumerate((32, 32, 8, 8)))
    s1, s2 = (b.op(Kind.ZEXT, s, src_width=8) for s in (s1, s2))
    x = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    wide = [b.op(Kind.ZEXT, v, width=mulhi_width, src_width=32) for v in (x, m)]
    t = b.op(Kind.TRUNC, b.op(Kind.LSHR, b.op(Kind.MUL, *wide, width=mulhi_width), b.const(32, 64), width=mulhi_width),
             src_width=mulhi_width)  # fmt: skip
    q = b.op(Kind.LSHR, b.op(Kind.ADD, t, b.op(Kind.LSHR, b.op(Kind.SUB, x, t), s1)), s2)
    r = b.op(Kind.SUB, x, b.op(Kind.MUL, q, d))
    stride = b.op(Kind.EXTRACT, a, width=64, attrs={"path": stride_path})
    wq = b.op(Kind.SEXT, q, width=64, src_width=32)
    off = b.op(Kind.ADD, b.op(Kind.SEXT, r, width=64, src_width=32), b.op(Kind.MUL, wq, stride, width=64), width=64)
    base = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    g = b.op(Kind.GEP, base, off, width=0, attrs={"indices": [("dyn", 1, 64)], "elem_size": 4})
    b.op(Kind.STORE, b.const(0), g, width=32, addr=1, space="global", result=False)
    fn = b.module.functions[0]
    meta: list[dict[str, Any]] = [LSE, {}]
    return Ranges(dataflow.build(b.module, fn, reaching_definitions), Facts.of(fn.attrs), meta), {
        "q": q, "r": r, "wq": wq}  # fmt: skip


def _val(rg: Ranges, v: str) -> Any:
    return rg.value(int(v[1:]))


def test_the_mlir_multiply_high_makes_a_fast_divmod_and_its_remainder() -> None:
    rg, v = _build()
    r = _val(rg, v["r"])
    assert rg.name(r) == "ctaid.x % arg1[0]" and rg.interval(r).lo == 0
    assert any(u.fact.startswith("FastDivmod") for u in rg.uppers[_val(rg, v["q"]).terms[0][0]])


def test_a_product_that_is_not_twice_the_width_is_no_multiply_high() -> None:
    rg, v = _build(mulhi_width=48)
    assert " % " not in rg.name(_val(rg, v["r"]))


def test_a_quotient_times_its_tensors_i64_stride_into_a_gep_is_below_that_modes_extent() -> None:
    rg, v = _build()
    bs = [b for b in rg.bounds(_val(rg, v["q"]), at=int(v["wq"][1:])) if b.tensor is not None]
    assert [(b.terms, b.const, b.tensor, b.modes) for b in bs] == [((("arg0.shape[1]", 1),), -1, 0, (1,))]


def test_a_stride_that_is_not_the_tensors_own_gives_no_coordinate() -> None:
    rg, v = _build(stride_path=(1, 0, 1))  # a shape field, not the stride
    assert [b for b in rg.bounds(_val(rg, v["q"]), at=int(v["wq"][1:])) if b.tensor is not None] == []
