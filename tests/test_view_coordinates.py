"""An index into a view of a tensor (irscan/analysis/coords.py, ``_sliced_mode``): ``input_row =
input[row, None]`` is ``gep %p[131072*row]`` (PTX ``add.s64 %p, 4*(row << 17)``), and
``input_row[col]`` then indexes mode 1 only: in bounds of the view, ``col`` is below mode 1's
static extent 131072 (flashinfer radix top-k, ``input_row[chunk_start + k]``).
"""

from __future__ import annotations

from typing import Any

from irbuild import FnBuilder

from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Kind

#: f32 (?,131072):(131072,1)
DYN32 = {"kind": "dynamic", "width": 32}


def _static(v: int) -> dict[str, Any]:
    return {"kind": "static", "value": v}


ROWS = {"dtype": "f32", "modes": [{"shape": DYN32, "stride": _static(131072)},
                                  {"shape": _static(131072), "stride": _static(1)}]}  # fmt: skip
TENSOR = "!llvm.struct<(ptr<1>, struct<(i32, struct<()>)>)>"


def _gep(b: FnBuilder, base: str, i: str) -> str:
    return b.op(Kind.GEP, base, i, width=0, attrs={"indices": [("dyn", 1, 32)], "elem_size": 4})


def _bounds(row_stride: int | None) -> list[Any]:
    b = FnBuilder()
    a = b.param("%arg0", TENSOR)
    ptr = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    row = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    view = ptr if row_stride is None else _gep(b, ptr, b.op(Kind.MUL, row, b.const(row_stride)))
    col = b.op(Kind.LOAD, ptr, width=32, addr=0, space="global")  # a data-dependent column
    g = _gep(b, view, col)
    b.op(Kind.LOAD, g, width=32, addr=0, space="global")
    fn = b.module.functions[0]
    rg = Ranges(dataflow.build(b.module, fn, reaching_definitions), Facts.of(fn.attrs), [ROWS])
    return [x for x in rg.bounds(rg.value(int(col[1:])), at=int(g[1:])) if "in bounds" in x.fact]


def test_an_index_into_a_row_view_is_below_the_rows_static_extent() -> None:
    (b,) = _bounds(131072)
    assert (b.terms, b.const, b.tensor, b.modes) == ((), 131071, 0, (1,))
    assert "mode 1 of arg0" in b.fact and "view" in b.fact


def test_without_a_view_the_index_is_an_offset_into_the_whole_tensor() -> None:
    (b,) = _bounds(None)
    assert (b.terms, b.const) == ((("arg0.shape[0]", 131072),), -1)


def test_a_base_that_is_no_whole_row_takes_no_mode() -> None:
    assert [(b.terms, b.const) for b in _bounds(1000)] == [((("arg0.shape[0]", 131072),), -1)]


def test_an_index_scaled_by_a_constant_and_added_to_the_pointers_integer_is_a_coordinate() -> None:
    """flashinfer's top-k row scan: ``sext`` of the column, ``mul`` by 4 in i64, ``add`` to
    ``ptrtoint`` of the row view, ``inttoptr``, load: the constant is the element size (not a stride),
    so the column is below mode 1's static extent in bounds of the view."""
    b = FnBuilder()
    a = b.param("%arg0", TENSOR)
    ptr = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    row = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    view = _gep(b, ptr, b.op(Kind.MUL, row, b.const(131072)))
    col = b.op(Kind.LOAD, ptr, width=32, addr=0, space="global")
    wide = b.op(Kind.SEXT, col, width=64)
    off = b.op(Kind.MUL, wide, b.const(4, width=64), width=64)
    addr = b.op(Kind.CAST, b.op(Kind.ADD, b.op(Kind.CAST, view, width=64), off, width=64), width=0)
    b.op(Kind.LOAD, addr, width=32, addr=0, space="global")
    fn = b.module.functions[0]
    rg = Ranges(dataflow.build(b.module, fn, reaching_definitions), Facts.of(fn.attrs), [ROWS])
    (bound,) = [x for x in rg.bounds(rg.value(int(col[1:])), at=int(wide[1:])) if "in bounds" in x.fact]
    assert (bound.terms, bound.const, bound.tensor, bound.modes) == ((), 131071, 0, (1,))
