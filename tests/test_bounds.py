"""Relational bounds (irscan/analysis/bounds.py): each fact the ranges learn, on a hand-made function.

Each test builds the smallest function that has the fact and asks ``Ranges.bounds`` for the bound
over the kernel's extents that the fact gives; without the fact the bound is absent.
"""

from __future__ import annotations

from typing import Any

from irbuild import FnBuilder

from irscan.analysis import dataflow
from irscan.analysis.bounds import Bound
from irscan.analysis.guards import immediate_dominators
from irscan.analysis.hostgrid import CONFIG_STRUCT, GridDim, module_grids
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Kind, Param, ParamField, Successor

#: a tensor with one dynamic i32 extent (arg.shape[0]) and no dynamic stride
TENSOR = "!llvm.struct<(ptr<1>, struct<(i32, struct<()>)>)>"
M = "arg0.shape[0]"


def _ranges(b: FnBuilder, meta_args: list[dict[str, Any]] | None = None, grid: tuple[GridDim, ...] = ()) -> Ranges:
    fn = b.module.functions[0]
    gr = dataflow.build(b.module, fn, reaching_definitions)
    return Ranges(gr, Facts.of(fn.attrs, None, grid), meta_args or [])


def _val(rg: Ranges, v: str) -> Any:
    return rg.value(int(v[1:]))


def _kernel(**attrs: Any) -> tuple[FnBuilder, str]:
    b = FnBuilder(**attrs)
    a = b.param("%arg0", TENSOR)
    return b, b.op(Kind.EXTRACT, a, attrs={"path": (1, 0)})


def _terms(bs: list[Bound]) -> list[tuple[tuple[tuple[str, int], ...], int]]:
    return [(x.terms, x.const) for x in bs]


def test_a_remainder_by_an_extent_is_below_it() -> None:
    b, m = _kernel()
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    r = b.op(Kind.REM, bid, m, signed=False)
    rg = _ranges(b)
    bs = rg.bounds(_val(rg, r))
    assert (((M, 1),), -1) in _terms(bs)
    assert all(x.i32 for x in bs) and "ctaid.x % arg0.shape[0] < arg0.shape[0]" in bs[0].fact
    # and its interval is the divisor's, not the whole i32 range
    assert rg.interval(_val(rg, r)).lo == 0


def test_divisibility_from_the_layout_leaves_room_for_the_vector() -> None:
    # col0 = (c*8) % D with D % 8 == 0 (?{div=8}): col0 <= D - 8, so col0 + 7 <= D - 1
    b, d = _kernel()
    tid = b.op(Kind.SREG, attrs={"sreg": "tid.x"})
    c8 = b.op(Kind.MUL, tid, b.const(8))
    col = b.op(Kind.ADD, b.op(Kind.REM, c8, d, signed=True), b.const(7))
    div8 = [{"modes": [{"shape": {"kind": "dynamic", "width": 32, "text": "?{div=8}"}, "stride": {"kind": "static"}}]}]
    rg = _ranges(b, div8)
    assert ((((M, 1),), -1)) in _terms(rg.bounds(_val(rg, col)))
    rg = _ranges(b)  # no divisibility recorded: only D + 6
    assert (((M, 1),), -1) not in _terms(rg.bounds(_val(rg, col)))


def test_floor_multiples_stay_below_what_they_round() -> None:
    b, m = _kernel()
    q = b.op(Kind.DIV, m, b.const(4), signed=True)
    four_q = b.op(Kind.MUL, q, b.const(4))
    sh = b.op(Kind.SHL, b.op(Kind.LSHR, m, b.const(3)), b.const(3))
    rg = _ranges(b)
    assert _terms(rg.bounds(_val(rg, four_q)))[0] == (((M, 1),), 0)
    assert _terms(rg.bounds(_val(rg, sh)))[0] == (((M, 1),), 0)


def test_a_scaled_floor_quotient_keeps_its_divisor() -> None:
    """``16*(k >> 8)`` is at most k/16, not k (quantised GEMMs' scale-factor K tile: 16*count with
    count < k >> 8 wraps only from k = 2^35, past every i32 extent)."""
    from fractions import Fraction

    from irscan.checks.reporting import bound_text, rule_a

    b, k = _kernel()
    sixteen_q = b.op(Kind.MUL, b.op(Kind.LSHR, k, b.const(8)), b.const(16))
    rg = _ranges(b)
    best = rg.bounds(_val(rg, sixteen_q))[0]
    assert (best.terms, best.const) == (((M, Fraction(1, 16)),), 0)
    assert bound_text(best).startswith(f"value <= {M}/16 (")
    assert str(rule_a(best, 2**31 - 1)).startswith("(a) it never wraps: ")  # at most 134,217,727


def test_the_ptx_remainder_idiom_is_below_the_divisor() -> None:
    # x - (x / d) * d, as NVVM writes a remainder: at most d - 1
    b, d = _kernel()
    x = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    q = b.op(Kind.DIV, x, d, signed=False)
    r = b.op(Kind.SUB, x, b.op(Kind.MUL, q, d))
    rg = _ranges(b)
    assert (((M, 1),), -1) in _terms(rg.bounds(_val(rg, r)))


def test_the_remainder_idiom_by_a_constant_is_a_remainder() -> None:
    b, _ = _kernel()
    x = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    r = b.op(Kind.SUB, x, b.op(Kind.MUL, b.op(Kind.DIV, x, b.const(4), signed=False), b.const(4)))
    rg = _ranges(b)
    v = _val(rg, r)
    assert (rg.name(v), rg.interval(v).lo, rg.interval(v).hi) == ("ctaid.x % 4", 0, 3)


def test_min_is_at_most_either_side() -> None:
    b, m = _kernel()
    x = b.op(Kind.MIN, b.op(Kind.SREG, attrs={"sreg": "ctaid.x"}), m, signed=True)
    rg = _ranges(b)
    assert _terms(rg.bounds(_val(rg, x)))[0] == (((M, 1),), 0)


def _guarded(pred: str, swap: bool = False) -> tuple[FnBuilder, str, str, str]:
    """row = 128*ctaid.x + tid.x; if row <pred> M (``swap``: if not): use it there, and after the join."""
    b, m = _kernel(exact_block_dim=(128, 1, 1))
    tid = b.op(Kind.SREG, attrs={"sreg": "tid.x"})
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    row = b.op(Kind.ADD, b.op(Kind.MUL, bid, b.const(128)), tid)
    c = b.op(Kind.ICMP, row, m, width=1, attrs={"pred": pred})
    b.branch(*((("else", ()), ("then", ())) if swap else (("then", ()), ("else", ()))), cond=c)
    b.block("then")
    inside = b.op(Kind.SEXT, row, width=64, src_width=32)
    b.branch(("else", ()))
    b.block("else")
    after = b.op(Kind.SEXT, row, width=64, src_width=32)
    return b, row, inside, after


def test_a_dominating_compare_bounds_the_value_on_its_true_edge() -> None:
    b, row, inside, after = _guarded("slt")
    rg = _ranges(b)
    here = rg.bounds(_val(rg, row), at=int(inside[1:]))
    assert (((M, 1),), -1) in _terms(here) and "guard: 128*ctaid.x + tid.x < arg0.shape[0]" in here[0].fact
    assert (((M, 1),), -1) not in _terms(rg.bounds(_val(rg, row), at=int(after[1:])))  # both edges reach it
    assert (((M, 1),), -1) not in _terms(rg.bounds(_val(rg, row)))  # no use point: no path facts


def test_the_false_edge_of_a_compare_gives_its_negation() -> None:
    b, row, inside, _ = _guarded("sge", swap=True)  # row >= M is false inside: row < M
    rg = _ranges(b)
    assert (((M, 1),), -1) in _terms(rg.bounds(_val(rg, row), at=int(inside[1:])))


def test_ptx_setp_and_guarded_branch_refine_the_fall_through_path() -> None:
    # setp.ge.s32 %p1, %r3, %r1; @%p1 bra DONE; <fall through: %r3 < %r1>; DONE: ...
    b = FnBuilder(ir="ptx")
    b.fn.params.append(Param("k_param_0", ".param .u32 k_param_0", 0, 4))
    b.op(Kind.ARG, width=32, result="%r1", attrs={"param": 0, "field": ParamField(0, 0, 32)})
    b.op(Kind.SREG, result="%r2", attrs={"sreg": "ctaid.x"})
    b.op(Kind.MUL, "%r2", 64, result="%r3")  # op 3
    b.op(Kind.ICMP, "%r3", "%r1", width=1, result="%p1", attrs={"pred": "sge"})
    b.op(Kind.BRANCH, result=False, width=0, pred="%p1", attrs={"target": "DONE"})
    b.fn.blocks[-1].succs, b.fn.blocks[-1].falls_through = [Successor("DONE")], True
    b.block("body")
    b.op(Kind.SEXT, "%r3", width=64, result="%rd1", src_width=32)  # op 6: only the fall-through reaches it
    b.fn.blocks[-1].falls_through = True
    b.block("DONE")
    b.op(Kind.SEXT, "%r3", width=64, result="%rd2", src_width=32)  # op 7: both edges reach it
    rg = _ranges(b)
    guarded = ((("arg0", 1),), -1)
    assert guarded in _terms(rg.bounds(rg.value(3), at=6))
    assert guarded not in _terms(rg.bounds(rg.value(3), at=7))


def test_dominators_of_a_diamond_and_a_loop() -> None:
    # 0 -> 1, 2; 1 -> 3; 2 -> 3; 3 -> 4, 1 (a back edge); 5 unreachable
    succ = [[1, 2], [3], [3], [4, 1], [], [0]]
    assert immediate_dominators(succ) == [0, 0, 0, 0, 3, -1]


def _host_launch(b: FnBuilder, tile: int, launch: bool = True) -> None:
    """The DSL's host code: grid.x = ceil(arg0.shape[0] / tile), grid.y = grid.z = 1, then the launch."""
    b.function("host")
    a = b.param("%arg0", TENSOR)
    m = b.op(Kind.EXTRACT, a, attrs={"path": (1, 0)})
    t = b.const(tile)
    q = b.op(Kind.DIV, m, t, signed=True)
    ne = b.op(Kind.ICMP, m, b.op(Kind.MUL, q, t), width=1, attrs={"pred": "ne"})
    g = b.op(Kind.SELECT, ne, b.op(Kind.ADD, q, b.const(1)), q)
    cfg = b.op(Kind.OPAQUE, b.const(1), width=0, name="llvm.alloca")
    struct = CONFIG_STRUCT + " i64, ptr, ptr, i32)>"
    for axis, v in enumerate((g, b.const(1), b.const(1))):
        at = b.op(Kind.GEP, cfg, width=0, attrs={"indices": [("const", 0), ("const", 0), ("const", axis)],
                                                 "elem_type": struct})  # fmt: skip
        b.op(Kind.STORE, v, at, width=32, addr=1, result=False)
    kind = Kind.LAUNCH if launch else Kind.OPAQUE
    b.op(kind, cfg, a, width=0, name="cuda.launch_ex", attrs={"kernel": "@kernels::@k"})


def test_the_host_grid_bounds_the_block_index_by_the_shape() -> None:
    # grid = ceil(M / 128), block 128: 128*ctaid.x + tid.x <= M + 126 for every M (decided exactly)
    b, _ = _kernel(exact_block_dim=(128, 1, 1))
    tid = b.op(Kind.SREG, attrs={"sreg": "tid.x"})
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    row = b.op(Kind.ADD, b.op(Kind.MUL, bid, b.const(128)), tid)
    _host_launch(b, 128)
    grids = module_grids(b.module, None)
    assert grids["k"][0] == GridDim(0, 0, (1, 0), 128)  # y, z: launch constants 1 (caps)
    rg = _ranges(b, grid=grids["k"])
    (best, *_) = rg.bounds(_val(rg, row))
    assert (best.terms, best.const, best.i32) == (((M, 1),), 126, True)
    assert "grid from host: nctaid.x = ceil(arg0.shape[0] / 128)" in best.fact
    assert rg.atoms[int(bid[1:])].iv.hi == 2**31 // 128 - 1  # the interval knows it too
    rg = _ranges(b)
    assert rg.bounds(_val(rg, row)) == []  # without the host's grid: nothing


def test_an_opaque_launch_of_the_only_kernel_is_recognised_and_the_grid_reaches_ptx_through_meta() -> None:
    b, _ = _kernel()
    _host_launch(b, 64, launch=False)
    meta: dict[str, Any] = {}
    grids = module_grids(b.module, meta)
    assert grids["k"][0] == GridDim(0, 0, (1, 0), 64)
    ptx = FnBuilder(ir="ptx")
    assert module_grids(ptx.module, meta) == grids


def _mode(shape: dict[str, Any], stride: dict[str, Any]) -> dict[str, Any]:
    return {"shape": shape, "stride": stride}


DYN32, UNIT = {"kind": "dynamic", "width": 32}, {"kind": "static", "value": 1}
VECTOR = {"type": '!cute.memref<f32, gmem, "(?):(1)">', "dtype": "f32", "modes": [_mode(DYN32, UNIT)]}


def _indexed(loaded: bool) -> tuple[FnBuilder, str, str]:
    """gep arg0.ptr[16384*ctaid.x] (or [load(...)]) of f32: an offset into a 1-D tensor of i32 extent."""
    b = FnBuilder()
    a = b.param("%arg0", TENSOR)
    ptr = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    base = b.op(Kind.GEP, ptr, width=0, attrs={"indices": [("const", 0)], "elem_size": 4})  # a view of it
    if loaded:
        i = b.op(Kind.LOAD, base, width=32, addr=0, space="global")
    else:
        i = b.op(Kind.MUL, b.op(Kind.SREG, attrs={"sreg": "ctaid.x"}), b.const(16384))
    g = b.op(Kind.GEP, base, i, width=0, attrs={"indices": [("dyn", 1, 32)], "elem_size": 4})
    b.op(Kind.STORE, b.const(0), g, width=32, addr=1, space="global", result=False)
    return b, i, g


def test_an_offset_into_a_tensor_of_i32_extent_is_below_it_in_bounds() -> None:
    b, i, g = _indexed(loaded=False)
    rg = _ranges(b, [VECTOR])
    before = {n: rg.gr.preds(n) for n in rg.gr.nodes()}
    (best, *_) = rg.bounds(_val(rg, i), at=int(g[1:]))
    assert (best.terms, best.const, best.i32, best.tensor, best.modes) == (((M, 1),), -1, True, 0, (0,))
    assert rg.bounds(_val(rg, i), at=int(g[1:]))[0] == best  # asking again: the same (the graph is only read)
    assert {n: rg.gr.preds(n) for n in rg.gr.nodes()} == before
    rg = _ranges(b, [dict(VECTOR, modes=[_mode({"kind": "dynamic", "width": 64}, UNIT)])])  # an i64 extent:
    (wide,) = rg.bounds(_val(rg, i), at=int(g[1:]))  # no rule (a) bound; it names the tensor for rule (b)
    assert (wide.terms, wide.const, wide.i32, wide.tensor, wide.modes) == (((M, 1),), -1, False, 0, (0,))
    rg = _ranges(b, [dict(VECTOR, dtype="f16")])  # the index is not in the tensor's elements
    assert rg.bounds(_val(rg, i), at=int(g[1:])) == []


def test_a_loaded_coordinate_is_below_the_extent_of_the_tensor_it_indexes() -> None:
    b, i, g = _indexed(loaded=True)
    rg = _ranges(b, [VECTOR])
    (best,) = rg.bounds(_val(rg, i), at=int(g[1:]))
    assert (best.terms, best.tensor, best.modes) == (((M, 1),), 0, (0,))


def test_static_strides_of_other_modes_count_into_the_offset_bound() -> None:
    # (?, 128, 128):(16384, 128, 1): offset <= 16384*(shape[0] - 1) + 127*128 + 127
    b, i, g = _indexed(loaded=False)
    st = [_mode(DYN32, {"kind": "static", "value": 16384}), _mode({"kind": "static", "value": 128},
          {"kind": "static", "value": 128}), _mode({"kind": "static", "value": 128}, UNIT)]  # fmt: skip
    rg = _ranges(b, [dict(VECTOR, modes=st)])
    (best,) = rg.bounds(_val(rg, i), at=int(g[1:]))
    assert (best.terms, best.const, best.tensor) == (((M, 16384),), -1, None)  # not one mode's coordinate


def test_meta_entries_of_compile_time_arguments_are_skipped() -> None:
    # the DSL's signature lists a tiled copy first; the kernel has no parameter for it
    b, i, g = _indexed(loaded=False)
    rg = _ranges(b, [{"type": "!cute.tiled_copy<...>"}, VECTOR])
    assert rg.meta_args == [VECTOR]
    assert rg.bounds(_val(rg, i), at=int(g[1:]))[0].tensor == 0


def test_a_loop_counter_is_bounded_by_the_loops_own_bound() -> None:
    # i = 0; do { use(i); i += 1 } while (i < M): the counter holds at most M (its exit value)
    b, m = _kernel()
    zero = b.const(0)
    b.branch(("loop", (zero,)))
    b.block("loop", ("%i",), (32,))
    nxt = b.op(Kind.ADD, "%i", b.const(1))
    c = b.op(Kind.ICMP, nxt, m, width=1, attrs={"pred": "slt"})
    b.branch(("loop", (nxt,)), ("exit", ()), cond=c)
    b.block("exit")
    rg = _ranges(b)
    phi = rg.gr.block_args["loop"][0]
    bs = rg.bounds(rg.value(phi))
    assert (((M, 1),), 0) in _terms(bs) and "loop:" in bs[0].fact


def test_a_guard_holds_down_a_long_dominator_chain() -> None:
    # if row < M: 2,000 blocks in a row, the use at their end; else: return (no walk per query
    # back to the entry, no recursion)
    b, row, _, _ = _guarded("slt")
    then = next(x for x in b.fn.blocks if x.label == "then")
    then.succs = [Successor("c0")]
    for i in range(2000):
        b.block(f"c{i}")
        b.branch((f"c{i + 1}", ()))
    b.block("c2000")
    use = b.op(Kind.SEXT, row, width=64, src_width=32)
    rg = _ranges(b)
    assert (((M, 1),), -1) in _terms(rg.bounds(_val(rg, row), at=int(use[1:])))
    else_op = next(x for x in b.fn.blocks if x.label == "else").ops[0].id
    assert (((M, 1),), -1) not in _terms(rg.bounds(_val(rg, row), at=else_op))  # the false edge


def test_fast_divmod_remainder_is_below_its_divisor_field() -> None:
    # cute.fast_divmod_divisor {divisor, multiplier, shift1, shift2}: r = x - q*divisor < divisor
    b = FnBuilder(ir="ptx")
    b.fn.params.append(Param("k_param_0", ".param .align 4 .b8 k_param_0[12]", 0, 12))
    for reg, off, w in (("%d", 0, 32), ("%m", 4, 32), ("%s1", 8, 8), ("%s2", 9, 8)):
        b.op(Kind.ARG, width=w, result=reg, attrs={"param": 0, "field": ParamField(0, off, w)})
    b.op(Kind.SREG, result="%x", attrs={"sreg": "ctaid.x"})
    b.op(Kind.MULHI, "%x", "%m", result="%h")
    b.op(Kind.SUB, "%x", "%h", result="%t0")
    b.op(Kind.LSHR, "%t0", "%s1", result="%t")
    b.op(Kind.ADD, "%t", "%h", result="%u")
    b.op(Kind.LSHR, "%u", "%s2", result="%q")
    b.op(Kind.MUL, "%q", "%d", result="%p")
    b.op(Kind.SUB, "%x", "%p", result="%r")
    rg = _ranges(b)
    r = rg.value(len(b.fn.ops()))
    assert rg.name(r) == "ctaid.x % arg0" and rg.interval(r).lo == 0
    assert ((("arg0", 1),), -1) in _terms(rg.bounds(r))


def test_not_is_negation_minus_one_so_reverse_order_stays_affine() -> None:
    # FA4's causal order: num_blocks - 1 - m_block, written ~m_block + num_blocks
    b, m = _kernel()
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    rev = b.op(Kind.ADD, b.op(Kind.XOR, bid, b.const(-1)), m)
    rg = _ranges(b)
    assert rg.name(_val(rg, rev)) == "arg0.shape[0] - 1*ctaid.x - 1"


def test_selects_that_are_min_max_and_clamps() -> None:
    b, m = _kernel()
    x = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    lt = b.op(Kind.ICMP, x, m, width=1, attrs={"pred": "slt"})
    mn = b.op(Kind.SELECT, lt, x, m)  # min(x, M)
    top = b.op(Kind.SUB, m, b.const(1))
    clamp = b.op(Kind.SELECT, lt, x, top)  # x < M ? x : M - 1
    rg = _ranges(b)
    assert (((M, 1),), 0) in _terms(rg.bounds(_val(rg, mn)))
    assert (((M, 1),), -1) in _terms(rg.bounds(_val(rg, clamp)))
    mx = b.op(Kind.SELECT, lt, m, x)  # max(x, M): no upper bound over M
    rg = _ranges(b)
    assert (((M, 1),), 0) not in _terms(rg.bounds(_val(rg, mx)))


def test_a_select_falling_back_to_a_constant_is_below_the_compares_bound() -> None:
    """cuDNN FROST's row clamp ``row if row < n_rows else 0`` (``selp r, row, 0, row < n``): the true
    arm is below n, the other arm a constant, so the value is at most n - 1 (the interval; the relation
    says n, as n may be 0),
    however far ``16*ctaid.x`` reaches by itself; with the arms the other way round nothing holds."""
    b, m = _kernel()
    row = b.op(Kind.MUL, b.op(Kind.SREG, attrs={"sreg": "ctaid.x"}), b.const(16))
    lt = b.op(Kind.ICMP, row, m, width=1, attrs={"pred": "slt"})
    kept = b.op(Kind.SELECT, lt, row, b.const(0))
    swapped = b.op(Kind.SELECT, lt, b.const(0), row)
    n2 = b.op(Kind.ARG, width=32, attrs={"field": None})
    wrapped = b.op(
        Kind.SUB, row, b.op(Kind.SELECT, b.op(Kind.ICMP, row, n2, width=1, attrs={"pred": "slt"}), b.const(0), n2)
    )
    second = b.op(Kind.SELECT, lt, wrapped, b.const(0))  # row - (row >= n2 ? n2 : 0) if row < M else 0
    rg = _ranges(b)
    assert rg.interval(_val(rg, second)).hi == 2**31 - 2
    assert rg.interval(_val(rg, kept)).hi == 2**31 - 2
    assert (((M, 1),), 0) in _terms(rg.bounds(_val(rg, kept)))  # M - 1, plus 1 for the 0 when M may be 0
    assert rg.interval(_val(rg, swapped)).hi > 2**31
    assert all(t != ((M, 1),) for t, _ in _terms(rg.bounds(_val(rg, swapped))))


def test_a_32_bit_compare_with_a_truncated_i64_extent_keeps_the_value_below_2_31() -> None:
    """flashinfer's KDA sort: ``n_seq = Int32(seq_order.shape[0])`` truncates an i64 extent, and the
    loop runs ``i < n_seq``: the compare orders 32-bit registers, so inside ``i <= 2^31 - 2`` whatever
    the 64-bit extent is (the relation to the extent alone, an i64, would bound nothing)."""
    b = FnBuilder()
    a = b.param("%arg0", "!llvm.struct<(ptr<1>, struct<(i64, struct<()>)>)>")
    n = b.op(Kind.TRUNC, b.op(Kind.EXTRACT, a, width=64, attrs={"path": (1, 0)}), width=32)
    i = b.op(Kind.LOAD, b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)}), width=32, addr=0, space="global")
    b.branch(("then", ()), ("else", ()), cond=b.op(Kind.ICMP, i, n, width=1, attrs={"pred": "slt"}))
    b.block("then")
    inside = b.op(Kind.SEXT, i, width=64, src_width=32)
    b.block("else")
    rg = _ranges(b)
    here = rg.bounds(_val(rg, i), at=int(inside[1:]))
    assert ((), 2**31 - 2) in _terms(here) and any("(a 32-bit compare)" in x.fact for x in here)
    b2, row, inside2, _ = _guarded("slt")  # an i32 extent: its own bound, no second one
    rg2 = _ranges(b2)
    assert not any("(a 32-bit compare)" in x.fact for x in rg2.bounds(_val(rg2, row), at=int(inside2[1:])))


def test_a_bound_knows_its_value_with_every_extent_at_its_most() -> None:
    """``128*(ctaid.x % m)`` under a host cap m <= 2^24 (a ceil quotient of a 32-bit extent, hostfields):
    the bound ``128*m - 128`` stays below 2^31 with m at its most, which rule (a) reads as never wrapping
    whatever the extent's type (CUTLASS's elementwise_add tile counts)."""
    b, m = _kernel()
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    v = b.op(Kind.MUL, b.op(Kind.REM, bid, m, signed=False), b.const(128))
    fn = b.module.functions[0]
    gr = dataflow.build(b.module, fn, reaching_definitions)
    rg = Ranges(gr, Facts.of(fn.attrs, None, (), None, None, None, {(0, (1, 0)): 2**24}))
    (bound,) = [x for x in rg.bounds(_val(rg, v)) if x.terms]
    assert bound.terms == ((M, 128),) and bound.const == -128
    assert bound.most == 128 * 2**24 - 128
