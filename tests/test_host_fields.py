"""Kernel parameter fields the host sets from one value (irscan/analysis/hostfields.py): a view built
as ``(16, mpg):(mpg, 1)`` and a scalar ``mpg`` passed alongside read as one atom in the kernel, in MLIR
and (through meta) in PTX; fields of two tensors sharing a value are left apart."""

from __future__ import annotations

from irbuild import FnBuilder
from test_bounds import TENSOR, _val

from irscan.analysis import dataflow
from irscan.analysis.hostfields import module_aliases
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Kind


def _module(second_tensor: bool) -> tuple[FnBuilder, str, str]:
    b = FnBuilder()
    t = b.param("%arg0", TENSOR)
    b.param("%arg1", TENSOR if second_tensor else "i32")
    extent = b.op(Kind.EXTRACT, t, attrs={"path": (1, 0)})
    scalar = (
        b.op(Kind.EXTRACT, "%arg1", attrs={"path": (1, 0)}) if second_tensor else b.op(Kind.ARG, attrs={"param": 1})
    )
    b.function("host")
    mpg = b.param("%arg0", "i32")
    ptr = b.op(Kind.OPAQUE, width=0, name="llvm.mlir.zero")
    view = b.op(Kind.INSERT, mpg, b.op(Kind.INSERT, ptr, b.op(Kind.OPAQUE, width=0, name="llvm.mlir.undef"),
                                       width=0, attrs={"path": (0,)}), width=0, attrs={"path": (1, 0)})  # fmt: skip
    b.op(Kind.LAUNCH, b.const(0), view, view if second_tensor else mpg, width=0, name="cuda.launch_ex",
         attrs={"kernel": "@kernels::@k"})  # fmt: skip
    return b, extent, scalar


def test_a_scalar_the_host_passes_as_a_views_extent_reads_as_that_extent() -> None:
    b, extent, scalar = _module(second_tensor=False)
    meta: dict[str, object] = {}
    aliases = module_aliases(b.module, meta)
    assert aliases == {"k": {(0, (1, 0)): (0, (1, 0)), (1, ()): (0, (1, 0))}}
    assert module_aliases(FnBuilder(ir="ptx").module, meta) == aliases  # the PTX scan gets them via meta
    fn = b.module.functions[0]
    rg = Ranges(dataflow.build(b.module, fn, reaching_definitions), Facts.of(fn.attrs, None, (), aliases["k"]))
    assert _val(rg, extent) == _val(rg, scalar)
    rg = Ranges(dataflow.build(b.module, fn, reaching_definitions), Facts.of(fn.attrs))
    assert _val(rg, extent) != _val(rg, scalar)


def test_two_tensors_sharing_an_extent_are_left_apart() -> None:
    b, _, _ = _module(second_tensor=True)
    assert module_aliases(b.module, None) == {}


def _constant_launches(*values: int) -> tuple[FnBuilder, str]:
    """A kernel ``16384*(head_base + ctaid.y)`` whose scalar ``head_base`` the host passes as a constant
    at each of its launches (flashinfer's KDA prefill: ``Int32(0)``)."""
    b = FnBuilder()
    b.param("%arg0", "i32")
    base = b.op(Kind.ARG, attrs={"param": 0})
    head = b.op(Kind.ADD, base, b.op(Kind.SREG, attrs={"sreg": "ctaid.y"}))
    off = b.op(Kind.MUL, head, b.const(16384))
    b.function("host")
    for v in values:
        b.op(Kind.LAUNCH, b.const(0), b.const(v), width=0, name="cuda.launch_ex", attrs={"kernel": "@kernels::@k"})
    return b, off


def test_a_scalar_every_launch_passes_as_one_constant_is_that_constant() -> None:
    from irscan.analysis.hostfields import module_constants

    b, off = _constant_launches(0, 0)
    meta: dict[str, object] = {}
    consts = module_constants(b.module, meta)
    assert consts == {"k": {(0, ()): 0}}
    assert module_constants(FnBuilder(ir="ptx").module, meta) == consts  # the PTX scan gets them via meta
    fn = b.module.functions[0]
    rg = Ranges(dataflow.build(b.module, fn, reaching_definitions), Facts.of(fn.attrs, None, (), None, consts["k"]))
    assert rg.name(_val(rg, off)) == "16384*ctaid.y"
    b, _ = _constant_launches(0, 4)  # two launches, two values: nothing is known
    assert module_constants(b.module, None) == {}


def test_two_tensors_sharing_an_extent_are_peers_and_each_weighs_the_other() -> None:
    """The host passes one value as two tensors' extents (flashinfer's KDA decode: the head count of
    dt_bias and of the state pool): the threshold on one extent sizes the other (rule (c)), in MLIR
    and (through meta) in PTX."""
    from irscan.analysis.hostfields import module_peers
    from irscan.checks.shared_extents import extent_peer_needs

    b, _, _ = _module(second_tensor=True)
    meta: dict[str, object] = {}
    peers = module_peers(b.module, meta)
    assert peers == {"k": {(0, (1, 0)): (((1, (1, 0)), 1),), (1, (1, 0)): (((0, (1, 0)), 1),)}}
    assert module_peers(FnBuilder(ir="ptx").module, meta) == peers
    dyn, one, static = (
        {"kind": "dynamic", "width": 32},
        {"kind": "static", "value": 1},
        {"kind": "static", "value": 16384},
    )
    rows = [{"shape": dyn, "stride": static}, {"shape": static, "stride": one}]  # (?,16384):(16384,1)
    args = [{"dtype": "f32", "modes": [{"shape": dyn, "stride": one}]}, {"dtype": "f32", "modes": rows}]
    fn = b.module.functions[0]
    gr = dataflow.build(b.module, fn, reaching_definitions)
    rg = Ranges(gr, Facts.of(fn.attrs, None, (), None, None, peers["k"]), args)
    (need,) = extent_peer_needs(rg, "arg0.shape[0]", 2**24)
    assert (need.tensor, need.bytes) == ("arg1", 2**24 * 16384 * 4)
    assert "arg0.shape[0] is also arg1.shape[0] (the launch sets both from one host value)" in need.why
    assert extent_peer_needs(Ranges(gr, Facts.of(fn.attrs), args), "arg0.shape[0]", 2**24) == []


def test_an_access_far_into_one_peer_sizes_the_other() -> None:
    """flashinfer's MSA prefill: the index table (1,?,16):(?,16,1) i32 and q (?,16,128) bf16 take one
    token count from the launch; at the wrap an access 8.6 GB into the table needs 2^27 tokens, and q
    then holds 550 GB (a mode of one element adds nothing, whatever its stride)."""
    from irscan.analysis.hostfields import module_peers
    from irscan.checks.memory import Need
    from irscan.checks.shared_extents import shared_extent_needs

    b, _, _ = _module(second_tensor=True)
    peers = module_peers(b.module, None)
    dyn, dyn64 = {"kind": "dynamic", "width": 32}, {"kind": "dynamic", "width": 64}

    def st(v: int) -> dict[str, object]:
        return {"kind": "static", "value": v}

    table = {"dtype": "i32", "modes": [{"shape": st(1), "stride": dyn64}, {"shape": dyn, "stride": st(16)},
                                       {"shape": st(16), "stride": st(1)}]}  # fmt: skip
    q = {"dtype": "bf16", "modes": [{"shape": dyn, "stride": st(2048)}, {"shape": st(16), "stride": st(128)},
                                    {"shape": st(128), "stride": st(1)}]}  # fmt: skip
    fn = b.module.functions[0]
    rg = Ranges(dataflow.build(b.module, fn, reaching_definitions), Facts.of(fn.attrs, None, (), None, None,
                peers["k"]), [table, q])  # fmt: skip
    (need,) = shared_extent_needs(rg, [Need("arg0", 2**31 * 4, "the access is 4 bytes per unit")])
    assert (need.tensor, need.bytes) == ("arg1", 2**27 * 2048 * 2)
    assert "that far into arg0 needs arg0.shape[1] >= 134,217,728" in need.why


def test_a_tile_count_the_host_divides_from_a_token_count_sizes_the_tokens_tensor() -> None:
    """cuDNN's QSA: ``tiles = ceil(T / 128)`` is one tensor's extent, ``T`` another's: at ``tiles >= X``
    the other holds at least ``128*(X - 1) + 1`` rows (not the other way round: T says nothing of how
    many tiles a tensor holds)."""
    from irscan.analysis.hostfields import module_peers

    b = FnBuilder()
    b.param("%arg0", TENSOR)
    b.param("%arg1", TENSOR)
    b.function("host")
    t = b.param("%arg0", "i32")

    def view(extent: str) -> str:
        undef = b.op(Kind.OPAQUE, width=0, name="llvm.mlir.undef")
        return b.op(Kind.INSERT, extent, undef, width=0, attrs={"path": (1, 0)})

    tiles = b.op(Kind.DIV, t, b.const(128), attrs={"signed": True})
    b.op(Kind.LAUNCH, b.const(0), view(t), view(tiles), width=0, name="cuda.launch_ex",
         attrs={"kernel": "@kernels::@k"})  # fmt: skip
    assert module_peers(b.module, None) == {"k": {(1, (1, 0)): (((0, (1, 0)), 128),)}}


def test_an_extent_the_host_computes_by_its_own_arithmetic_is_no_allocation() -> None:
    """b12x's X4T decode: ``make_tensor(ptr, (num_experts * rows * columns,))`` in Int32 is a product
    the host forms (and that wraps with the offsets it should bound): the field's ideal range is the
    64-bit one, so no rule (a) bound rests on it; a view of the host's own extent keeps its i32 range."""
    from irscan.analysis.hostfields import module_computed

    b = FnBuilder()
    b.param("%arg0", TENSOR)
    extent = b.op(Kind.EXTRACT, "%arg0", attrs={"path": (1, 0)})
    b.function("host")
    n = b.param("%arg0", "i32")
    undef = b.op(Kind.OPAQUE, width=0, name="llvm.mlir.undef")
    view = b.op(Kind.INSERT, b.op(Kind.MUL, n, b.const(917504)), undef, width=0, attrs={"path": (1, 0)})
    b.op(Kind.LAUNCH, b.const(0), view, width=0, name="cuda.launch_ex", attrs={"kernel": "@kernels::@k"})
    computed = module_computed(b.module, None)
    assert computed == {"k": {(0, (1, 0)): 1}}
    fn = b.module.functions[0]
    gr = dataflow.build(b.module, fn, reaching_definitions)
    rg = Ranges(gr, Facts.of(fn.attrs, None, (), None, None, None, None, computed["k"]))
    assert rg.interval(_val(rg, extent)).hi > 2**31
    rg2 = Ranges(gr, Facts.of(fn.attrs))
    assert rg2.interval(_val(rg2, extent)).hi == 2**31 - 1
    plain, _, _ = _module(second_tensor=False)  # the scalar passed as the extent itself: not computed
    assert module_computed(plain.module, None) == {}


def test_a_scalar_the_host_computes_as_a_ceil_quotient_of_a_32bit_value_is_capped() -> None:
    """FA-style ``n_blocks = ceil(seqlen / 128)`` passed as an Int32 scalar: at most 2^24 whatever the
    32-bit seqlen is (hostfields.module_caps), so ``128*n_blocks - 1`` never reaches 2^31."""
    from irscan.analysis.hostfields import module_caps

    b = FnBuilder()
    b.param("%arg0", "i32")
    blocks = b.op(Kind.ARG, attrs={"param": 0})
    b.function("host")
    b.param("%arg0", "i32")
    seqlen = b.op(Kind.ARG, attrs={"param": 0})
    n = b.op(Kind.DIV, b.op(Kind.ADD, seqlen, b.const(127)), b.const(128))
    b.op(Kind.LAUNCH, b.const(0), n, width=0, name="cuda.launch_ex", attrs={"kernel": "@kernels::@k"})
    caps = module_caps(b.module, {})
    assert caps == {"k": {(0, ()): 2**24}}
    fn = b.module.functions[0]
    facts = Facts.of(fn.attrs, None, (), None, None, None, caps["k"])
    rg = Ranges(dataflow.build(b.module, fn, reaching_definitions), facts)
    assert rg.interval(_val(rg, blocks)).hi == 2**24
