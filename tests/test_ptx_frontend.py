"""irscan/ptx.py's meaning: PTX instructions -> ir.Op kinds, widths, operands, addresses, blocks, locations.

Checked on a real capture (the elementwise program), on one-line snippets for every mapping rule, on
PTX from outside the CuTe corpus (nvcc, Triton), and for speed on the biggest corpus file.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from irscan.analysis.reaching import reaching_definitions
from irscan.frontend import ptx
from irscan.frontend.ptx.printer import print_module
from irscan.ir import AddressSpace, Kind, Loc, Op, ParamField

ROOT = Path(__file__).resolve().parents[1]
CORPUS_PTX = sorted(
    [*ROOT.glob("corpus/captures/**/module.ptx"), *ROOT.glob("corpus/thirdparty/**/module.ptx.xz")], key=str
)


def _only(ops: list[Op], name: str) -> list[Op]:
    found = [o for o in ops if o.name == name]
    assert found, f"no {name} in {[o.name for o in ops]}"
    return found


# ------------------------------------------------------------------------------- a real capture


@pytest.fixture(scope="module")
def elementwise():
    paths = sorted(ROOT.glob("corpus/captures/elementwise_static_100k/*/module.ptx"))
    if not paths:
        pytest.skip("corpus/captures/elementwise_static_100k not captured yet")
    mod = ptx.parse_file(paths[0])
    program = (ROOT / "corpus/programs/elementwise_static_100k.py").read_text().splitlines()
    return mod, program


def test_elementwise_module(elementwise) -> None:  # type: ignore[no-untyped-def]
    mod, _ = elementwise
    assert mod.ir == "ptx" and mod.attrs["target"] == "sm_90a" and mod.attrs["address_size"] == 64
    (k,) = mod.kernels()
    assert k.kernel and k.name.startswith("kernel_cutlass_copy_kernel")
    assert len(k.attrs["reqntid"]) == 3
    assert [(p.index, p.size) for p in k.params] == [(0, 8), (1, 8)]
    assert k.params[0].type == f".param .align 8 .b8 {k.params[0].name}[8]"
    assert k.blocks[0].label == "entry"
    assert k.blocks[-1].ops[-1].kind is Kind.RETURN and not k.blocks[-1].falls_through


def test_elementwise_kinds(elementwise) -> None:  # type: ignore[no-untyped-def]
    mod, _ = elementwise
    fn = mod.kernels()[0]
    ops = fn.ops()
    defs = {r: o for o in ops for r in o.results}
    for mad in _only(ops, "mad.lo.s32"):
        assert (mad.kind, mad.width, mad.signed, len(mad.operands)) == (Kind.MAD, 32, True, 3)
    (mw,) = _only(ops, "mul.wide.u32")
    assert (mw.kind, mw.width, mw.src_width, mw.signed) == (Kind.MULWIDE, 64, 32, False)
    assert mw.operands[1] == 4 and defs[mw.operands[0]].kind is Kind.MAD
    args = _only(ops, "ld.param.b64")
    assert [(a.kind, a.attrs["field"], a.attrs["param_size"]) for a in args] == [
        (Kind.ARG, ParamField(0, 0, 64), 8),
        (Kind.ARG, ParamField(1, 0, 64), 8),
    ]
    (ld,) = _only(ops, "ld.global.b32")
    assert (ld.kind, ld.space, ld.addr, ld.width) == (Kind.LOAD, "global", 0, 32)
    base = ld.operands[ld.addr]
    assert base.startswith("%rd") and defs[base].name == "add.s64"
    assert "disp" not in ld.attrs and "symbol" not in ld.attrs
    (st,) = _only(ops, "st.global.b32")
    assert (st.kind, st.space, st.addr, st.results) == (Kind.STORE, "global", 0, ())
    assert st.operands[1] == ld.results[0]
    sregs = {o.attrs["sreg"]: o.attrs["range"] for o in ops if o.kind is Kind.SREG}
    assert sregs["tid.x"] == (0, 1023)
    assert sregs["ctaid.x"] == (0, 2**31 - 1)
    assert sregs.get("ctaid.y", (0, 65534)) == (0, 65534)
    assert all(o.line > 0 and o.text.endswith(";") for o in ops)
    assert mod.opaque == {}


def test_elementwise_locations(elementwise) -> None:  # type: ignore[no-untyped-def]
    mod, program = elementwise
    ops = mod.kernels()[0].ops()
    (ld,) = _only(ops, "ld.global.b32")
    assert isinstance(ld.loc, Loc) and ld.loc.file.endswith("elementwise_static_100k.py")
    assert "src[row, col]" in program[ld.loc.line - 1]
    tid = next(o for o in ops if o.attrs.get("sreg") == "tid.x")
    assert "thread_idx()" in program[tid.loc.line - 1]
    # the text and line of each op are the file's
    text = ptx.read_text(sorted(ROOT.glob("corpus/captures/elementwise_static_100k/*/module.ptx"))[0])
    lines = text.splitlines()
    assert all(lines[o.line - 1].strip() == o.text for o in ops)


# -------------------------------------------------------------------------- every mapping rule

HEAD = """.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_p0, .param .align 8 .b8 k_p1[24])
.maxntid 256, 1
{
.reg .pred %p<4>;
.reg .b16 %rs<4>;
.reg .b32 %r<20>;
.reg .f32 %f<4>;
.reg .b64 %rd<20>;
.shared .align 8 .b8 smem[64];
"""


def lower_one(stmt: str) -> Op:
    mod = ptx.parse_module(HEAD + stmt + "\n}\n", "t.ptx")
    return mod.functions[0].ops()[-1]


@pytest.mark.parametrize(
    "stmt,kind,width,src_width,signed",
    [
        ("mul.lo.s32 %r1, %r2, %r3;", Kind.MUL, 32, None, True),
        ("mul.lo.u32 %r1, %r2, %r3;", Kind.MUL, 32, None, False),
        ("mul.lo.s64 %rd1, %rd2, %rd3;", Kind.MUL, 64, None, True),
        ("mul.hi.u32 %r1, %r2, %r3;", Kind.MULHI, 32, None, False),
        ("mul.wide.s32 %rd1, %r2, %r3;", Kind.MULWIDE, 64, 32, True),
        ("mul.wide.u32 %rd1, %r2, 4;", Kind.MULWIDE, 64, 32, False),
        ("mul.wide.u16 %r1, %rs2, %rs3;", Kind.MULWIDE, 32, 16, False),
        ("mad.lo.s32 %r1, %r2, %r3, %r4;", Kind.MAD, 32, None, True),
        ("mad.wide.s32 %rd1, %r2, %r3, %rd4;", Kind.MADWIDE, 64, 32, True),
        ("add.s32 %r1, %r2, %r3;", Kind.ADD, 32, None, True),
        ("add.u64 %rd1, %rd2, %rd3;", Kind.ADD, 64, None, False),
        ("sub.s32 %r1, %r2, %r3;", Kind.SUB, 32, None, True),
        ("shl.b32 %r1, %r2, 3;", Kind.SHL, 32, None, None),
        ("shl.b64 %rd1, %rd2, 3;", Kind.SHL, 64, None, None),
        ("shr.s32 %r1, %r2, 3;", Kind.ASHR, 32, None, True),
        ("shr.u32 %r1, %r2, 3;", Kind.LSHR, 32, None, False),
        ("shr.b64 %rd1, %rd2, 32;", Kind.LSHR, 64, None, False),
        ("shr.s64 %rd1, %rd2, 32;", Kind.ASHR, 64, None, True),
        ("and.b32 %r1, %r2, 255;", Kind.AND, 32, None, None),
        ("or.b16 %rs1, %rs2, %rs3;", Kind.OR, 16, None, None),
        ("xor.b64 %rd1, %rd2, %rd3;", Kind.XOR, 64, None, None),
        ("div.s32 %r1, %r2, %r3;", Kind.DIV, 32, None, True),
        ("div.u32 %r1, %r2, %r3;", Kind.DIV, 32, None, False),
        ("rem.u64 %rd1, %rd2, %rd3;", Kind.REM, 64, None, False),
        ("min.s32 %r1, %r2, %r3;", Kind.MIN, 32, None, True),
        ("max.u32 %r1, %r2, %r3;", Kind.MAX, 32, None, False),
        ("neg.s32 %r1, %r2;", Kind.NEG, 32, None, True),
        ("cvt.u64.u32 %rd1, %r2;", Kind.ZEXT, 64, 32, False),
        ("cvt.s64.s32 %rd1, %r2;", Kind.SEXT, 64, 32, True),
        ("cvt.u32.u64 %r1, %rd2;", Kind.TRUNC, 32, 64, False),
        ("cvt.s32.s64 %r1, %rd2;", Kind.TRUNC, 32, 64, True),
        ("cvt.u32.u16 %r1, %rs2;", Kind.ZEXT, 32, 16, False),
        ("cvt.u32.s32 %r1, %r2;", Kind.MOV, 32, None, None),
        ("cvta.to.global.u64 %rd1, %rd2;", Kind.CAST, 64, None, False),
        ("mov.b32 %r1, %r2;", Kind.MOV, 32, None, None),
        ("mov.u32 %r1, 7;", Kind.CONST, 32, None, False),
        ("mov.u32 %r1, %tid.x;", Kind.SREG, 32, None, False),
        ("ld.global.nc.u32 %r1, [%rd2];", Kind.LOAD, 32, None, False),
        ("st.shared.b64 [%r1], %rd2;", Kind.STORE, 64, None, None),
        ("atom.global.add.u32 %r1, [%rd2], 1;", Kind.ATOMIC, 32, None, False),
        ("red.global.add.u64 [%rd2], %rd3;", Kind.ATOMIC, 64, None, False),
        ("bra.uni $L1;\n$L1:", Kind.BRANCH, 0, None, None),
        ("ret;", Kind.RETURN, 0, None, None),
        ("exit;", Kind.RETURN, 0, None, None),
        ("add.f32 %f1, %f2, %f3;", Kind.OPAQUE, 32, None, None),
        ("cvt.rn.f32.s32 %f1, %r2;", Kind.OPAQUE, 32, None, None),
        ("cvt.rzi.s32.f32 %r1, %f2;", Kind.OPAQUE, 32, None, True),
    ],
)
def test_kind_width_sign(stmt: str, kind: Kind, width: int, src_width: int | None, signed: bool | None) -> None:
    text = HEAD + stmt + "\n}\n"
    ops = ptx.parse_module(text, "t.ptx").functions[0].ops()
    op = ops[-1]
    assert (op.kind, op.width, op.src_width) == (kind, width, src_width), op
    if kind is not Kind.OPAQUE:
        assert op.signed == signed, op


def test_results_and_operands() -> None:
    op = lower_one("mad.lo.s32 %r1, %r2, %r3, %r4;")
    assert (op.results, op.operands) == (("%r1",), ("%r2", "%r3", "%r4"))
    op = lower_one("selp.b32 %r1, %r2, 5, %p1;")
    assert (op.kind, op.results, op.operands) == (Kind.SELECT, ("%r1",), ("%p1", "%r2", 5))
    op = lower_one("shfl.sync.bfly.b32 %r1|%p1, %r2, 16, 31, -1;")
    assert (op.kind, op.results, op.operands, op.attrs["shuffled"]) == (
        Kind.SHUFFLE,
        ("%r1", "%p1"),
        ("%r2", 16, 31, -1),
        0,
    )
    op = lower_one("ld.global.v4.u32 {%r1, %r2, _, %r4}, [%rd1+16];")
    assert (op.results, op.operands, op.attrs["disp"], op.attrs["vec"]) == (("%r1", "%r2", "%r4"), ("%rd1",), 16, 4)
    op = lower_one("st.global.v2.u32 [%rd1+-8], {%r1, %r2};")
    assert (op.results, op.operands, op.addr, op.attrs["disp"]) == ((), ("%rd1", "%r1", "%r2"), 0, -8)
    op = lower_one("@!%p2 add.s32 %r1, %r1, 1;")
    assert op.pred == "!%p2"
    op = lower_one("vote.sync.all.pred %p1, !%p2, -1;")
    assert (op.operands, op.attrs["negated"]) == (("%p2", -1), (0,))


@pytest.mark.parametrize(
    "stmt,pred,cmp,signed,src_width",
    [
        ("setp.lt.s32 %p1, %r1, %r2;", "slt", "lt", True, 32),
        ("setp.lt.u32 %p1, %r1, %r2;", "ult", "lt", False, 32),
        ("setp.le.s64 %p1, %rd1, %rd2;", "sle", "le", True, 64),
        ("setp.ge.u32 %p1, %r1, 5;", "uge", "ge", False, 32),
        ("setp.gt.s32 %p1, %r1, 5;", "sgt", "gt", True, 32),
        ("setp.eq.b32 %p1, %r1, 0;", "eq", "eq", None, 32),
        ("setp.ne.s64 %p1, %rd1, 0;", "ne", "ne", True, 64),
        ("setp.lo.u32 %p1, %r1, %r2;", "ult", "lo", False, 32),
        ("setp.hs.u64 %p1, %rd1, %rd2;", "uge", "hs", False, 64),
    ],
)
def test_setp(stmt: str, pred: str, cmp: str, signed: bool | None, src_width: int) -> None:
    op = lower_one(stmt)
    assert (op.kind, op.attrs["pred"], op.attrs["ptx_cmp"], op.signed, op.src_width, op.width) == (
        Kind.ICMP,
        pred,
        cmp,
        signed,
        src_width,
        1,
    )
    assert op.results == ("%p1",) and len(op.operands) == 2


def test_float_setp_and_combined_setp_are_opaque() -> None:
    assert lower_one("setp.lt.f32 %p1, %f1, %f2;").kind is Kind.OPAQUE
    assert lower_one("setp.lt.and.s32 %p1, %r1, %r2, %p2;").kind is Kind.OPAQUE


@pytest.mark.parametrize(
    "sreg,rng",
    [
        ("tid.x", (0, 1023)),
        ("tid.y", (0, 1023)),
        ("tid.z", (0, 63)),
        ("ntid.x", (1, 1024)),
        ("ctaid.x", (0, 2**31 - 1)),
        ("ctaid.y", (0, 65534)),
        ("ctaid.z", (0, 65534)),
        ("nctaid.x", (1, 2**31 - 1)),
        ("nctaid.y", (1, 65535)),
        ("laneid", (0, 31)),
        ("warpid", (0, 63)),
        ("cluster_ctaid.x", (0, 15)),
        ("cluster_ctarank", (0, 15)),
        ("clusterid.x", (0, 2**31 - 1)),
    ],
)
def test_sreg_ranges(sreg: str, rng: tuple[int, int]) -> None:
    op = lower_one(f"mov.u32 %r1, %{sreg};")
    assert (op.kind, op.attrs["sreg"], op.attrs["range"], op.operands) == (Kind.SREG, sreg, rng, ())


def test_sreg_without_fixed_range() -> None:
    op = lower_one("mov.u64 %rd1, %clock64;")
    assert (op.kind, op.attrs["sreg"], "range" in op.attrs) == (Kind.SREG, "clock64", False)


def test_const_and_immediates_as_the_type_sees_them() -> None:
    assert lower_one("mov.u32 %r1, 7;").attrs["value"] == 7
    assert lower_one("mov.s32 %r1, -1;").attrs["value"] == -1
    assert lower_one("mov.u32 %r1, -1;").attrs["value"] == 2**32 - 1
    c = lower_one("mov.f32 %f1, 0f3F800000;")
    assert c.kind is Kind.CONST and "value" not in c.attrs
    assert lower_one("mul.hi.u32 %r1, %r2, -1431655765;").operands == ("%r2", 2863311531)
    assert lower_one("add.s32 %r1, %r2, 0xFFFFFFFF;").operands == ("%r2", -1)
    assert lower_one("and.b64 %rd1, %rd2, -4294967296;").operands == ("%rd2", -4294967296)
    assert lower_one("mul.wide.s32 %rd1, %r2, 0xFFFFFFFF;").operands == ("%r2", -1)


def test_pack_unpack_and_symbol_moves() -> None:
    pack = lower_one("mov.b64 %rd1, {%r1, %r2};")
    assert (pack.kind, pack.attrs["note"], pack.results, pack.operands) == (
        Kind.OPAQUE,
        "pack",
        ("%rd1",),
        ("%r1", "%r2"),
    )
    # an unpack is its halves: %r1 = trunc %rd1, %r2 = trunc (%rd1 >> 32) (tests/test_ptx_idioms.py)
    unpack = lower_one("mov.b64 {%r1, %r2}, %rd1;")
    assert (unpack.kind, unpack.attrs["idiom"], unpack.results, unpack.width, unpack.src_width) == (
        Kind.TRUNC,
        "unpack",
        ("%r2",),
        32,
        64,
    )
    sym = lower_one("mov.u32 %r1, smem;")
    assert (sym.kind, sym.operands, sym.attrs["symbol"]) == (Kind.MOV, ("smem",), True)


def test_params_as_arg() -> None:
    a = lower_one("ld.param.u64 %rd1, [k_p0];")
    assert (a.kind, a.attrs["param"], a.attrs["field"], a.attrs["param_size"], a.width, a.addr) == (
        Kind.ARG,
        0,
        ParamField(0, 0, 64),
        8,
        64,
        None,
    )
    b = lower_one("ld.param.b32 %r1, [k_p1+16];")
    assert (b.kind, b.attrs["field"], b.attrs["param_size"]) == (Kind.ARG, ParamField(1, 16, 32), 24)
    v = lower_one("ld.param.v2.u32 {%r1, %r2}, [k_p1+8];")  # the last of its two reads (see below)
    assert (v.kind, v.results, v.attrs["field"]) == (Kind.ARG, ("%r2",), ParamField(1, 12, 32))


def test_addresses_and_spaces() -> None:
    ld = lower_one("ld.global.nc.u32 %r1, [%rd4+16];")
    assert (ld.operands, ld.addr, ld.space, ld.attrs["disp"]) == (("%rd4",), 0, "global", 16)
    ld = lower_one("ld.u32 %r1, [%rd4];")
    assert ld.space == "generic"
    ld = lower_one("ld.shared.u32 %r1, [smem+8];")
    assert (ld.operands, ld.space, ld.attrs["symbol"], ld.attrs["disp"]) == (("smem",), "shared", True, 8)
    ld = lower_one("ld.shared::cluster.u32 %r1, [%r2];")
    assert (ld.space, ld.attrs["space_qual"]) == (AddressSpace.SHARED_CLUSTER, "shared::cluster")
    cp = lower_one("cp.async.ca.shared.global [%r1], [%rd2], 16;")
    assert (cp.kind, cp.addr, cp.space, cp.operands) == (Kind.MEMOP, 1, "global", ("%r1", "%rd2", 16))
    assert cp.attrs["addrs"] == ((0, "shared", 0, False), (1, "global", 0, False))
    tma = lower_one(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];"
    )
    # the tensor map (operand 1, with the coordinates) is a handle; the element address is shared
    assert (tma.kind, tma.operands, tma.addr, tma.space, tma.attrs["tensor_map"]) == (
        Kind.MEMOP,
        ("%r1", "%rd1", "%r2", "%r3", "%r4"),
        0,
        "shared_cluster",
        1,
    )
    for stmt in (
        "prefetch.global.L2 [%rd1];",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];",
        "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r5], {%r1, %r2, %r3, %r4};",
        "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;",
        "mbarrier.init.shared.b64 [%r1], 1;",
        "tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;",
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r1], 64;",
    ):
        op = lower_one(stmt)
        assert op.kind is Kind.MEMOP and op.addr is not None and op.space, stmt
    atom = lower_one("atom.shared.cas.b32 %r1, [%r2], %r3, %r4;")
    assert (atom.kind, atom.results, atom.operands, atom.addr, atom.space) == (
        Kind.ATOMIC,
        ("%r1",),
        ("%r2", "%r3", "%r4"),
        0,
        "shared",
    )
    cv = lower_one("cvta.to.global.u64 %rd1, %rd2;")
    assert cv.attrs["cvta"] is True and cv.attrs["cvta_space"] == "global"


def test_call() -> None:
    text = (
        ".version 8.5\n.target sm_90a\n.address_size 64\n"
        ".func (.param .b32 r) f(.param .b32 a)\n{\n.reg .b32 %r<2>;\n"
        "ld.param.b32 %r1, [a];\nst.param.b32 [r], %r1;\nret;\n}\n"
        ".visible .entry k()\n{\n.reg .b32 %r<3>;\n{\n.param .b32 param0;\nst.param.b32 [param0], %r1;\n"
        ".param .b32 retval0;\ncall.uni (retval0), f, (param0);\nld.param.b32 %r2, [retval0];\n}\nret;\n}\n"
    )
    mod = ptx.parse_module(text, "t.ptx")
    f, k = mod.functions
    assert not f.kernel and k.kernel
    assert f.ops()[0].kind is Kind.ARG
    call = next(o for o in k.ops() if o.kind is Kind.CALL)
    assert (call.operands, call.attrs["callee"], call.attrs["args"], call.attrs["retvals"]) == (
        ("f", "param0"),
        "f",
        ("param0",),
        ("retval0",),
    )
    assert next(o for o in k.ops() if o.name == "ld.param.b32").kind is Kind.LOAD  # a return value, not an ARG


def test_blocks_and_control_flow() -> None:
    mod = ptx.parse_module(
        HEAD
        + "mov.u32 %r1, 0;\n$L_loop:\nadd.s32 %r1, %r1, 1;\nsetp.lt.s32 %p1, %r1, 10;\n@%p1 bra $L_loop;\n"
        + "bra.uni $L_end;\n$L_dead:\nmov.u32 %r2, 1;\n$L_end:\n@%p2 ret;\nexit;\n}\n",
        "t.ptx",
    )
    fn = mod.functions[0]
    got = [(b.label, [s.label for s in b.succs], b.falls_through, len(b.ops)) for b in fn.blocks]
    assert got == [
        ("entry", [], True, 1),
        ("$L_loop", ["$L_loop"], True, 3),
        (".bb2", ["$L_end"], False, 1),
        ("$L_dead", [], True, 1),
        ("$L_end", [], True, 1),
        (".bb5", [], False, 1),
    ]
    assert all(op.block == i for i, b in enumerate(fn.blocks) for op in b.ops)
    assert fn.attrs["maxntid"] == (256, 1, 1)


def test_scoped_names_are_renamed_per_scope() -> None:
    asm = (
        "{\n.reg .pred P1;\n.reg .b32 t<2>;\nLAB: mbarrier.try_wait.parity.shared.b64 P1, [%r1], %r2;\n"
        "@P1 bra DONE;\nbra LAB;\nDONE:\nmov.b32 t1, %r2;\n}\n"
    )
    mod = ptx.parse_module(HEAD + asm + asm + "ret;\n}\n", "t.ptx")
    fn = mod.functions[0]
    labels = [b.label for b in fn.blocks]
    assert len(labels) == len(set(labels))
    assert {"LAB@1", "DONE@1", "LAB@2", "DONE@2"} <= set(labels)
    waits = [o for o in fn.ops() if o.name.startswith("mbarrier")]
    assert [w.results for w in waits] == [("P1@1",), ("P1@2",)]
    bras = [o for o in fn.ops() if o.kind is Kind.BRANCH]
    assert [(b.pred, b.attrs["target"]) for b in bras] == [
        ("P1@1", "DONE@1"),
        (None, "LAB@1"),
        ("P1@2", "DONE@2"),
        (None, "LAB@2"),
    ]
    assert [o.results for o in fn.ops() if o.name == "mov.b32"] == [("t1@1",), ("t1@2",)]
    assert waits[0].text == "mbarrier.try_wait.parity.shared.b64 P1, [%r1], %r2;"


def test_vector_register_components() -> None:
    asm = "{\n.reg .v4 .s32 abcd;\nmov.s32 abcd.x, %r1;\nmov.s32 abcd.y, %r2;\nst.global.v4.s32 [%rd1], abcd;\n}\n"
    ops = ptx.parse_module(HEAD + asm + "ret;\n}\n", "t.ptx").functions[0].ops()
    assert ops[0].results == ("abcd@1.x",)
    st = ops[2]
    assert st.operands == ("%rd1", "abcd@1.x", "abcd@1.y", "abcd@1.z", "abcd@1.w")
    # declared at function level: no renaming, still its components
    body = ".reg .v2 .b32 pair;\nmov.b32 pair.x, %r1;\nst.global.v2.b32 [%rd1], pair;\nret;\n}\n"
    ops = ptx.parse_module(HEAD + body, "t.ptx").functions[0].ops()
    assert ops[0].results == ("pair.x",) and ops[1].operands == ("%rd1", "pair.x", "pair.y")


def test_opaque_counts_only_what_matters() -> None:
    mod = ptx.parse_module(
        HEAD
        + "add.f32 %f1, %f2, %f3;\nnot.pred %p1, %p2;\nbar.sync 0;\npopc.b32 %r1, %r2;\n"
        + "prmt.b32 %r1, %r2, %r3, 0x3210;\n"
        + "mov.b64 %rd1, {%r1, %r2};\n}\n",
        "t.ptx",
    )
    assert mod.opaque == {"popc.b32": 1, "prmt.b32": 1, "mov.b64": 1}


def test_loc_resolution_and_line_zero() -> None:
    text = (
        HEAD
        + ".loc 1 7 3\nmov.u32 %r1, 1;\n.loc 2 9 0\nmov.u32 %r2, 2;\n.loc 1 0 0\nmov.u32 %r3, 3;\n}\n"
        + '.file 1 "/src/a.py"\n.file 2 "/src/b.py", 1700000000, 1234\n'
    )
    ops = ptx.parse_module(text, "t.ptx").functions[0].ops()
    assert [o.loc for o in ops] == [Loc("/src/a.py", 7, 3), Loc("/src/b.py", 9, 0), None]


# ------------------------------------------------------------------- PTX from outside the corpus

CUDA_SRC = r"""
#include <cstdio>
__device__ __noinline__ int helper(int a, int b) { return a * b + 3; }
__constant__ int ctab[4] = {1, 2, 3, 4};
__device__ int gcount = 7;
__global__ void __launch_bounds__(256, 2) kern(const float* __restrict__ x, float* y, long n, int* cnt, int sel) {
  __shared__ float sm[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float loc[8];
  for (int k = 0; k < 8; ++k) loc[k] = x[(i + k) % n];
  sm[threadIdx.x] = loc[sel & 7];
  __syncthreads();
  if (i < n) y[i] = sm[(threadIdx.x + 1) % 256] + helper(i, ctab[i & 3]);
  switch (sel) {
    case 0: atomicAdd(cnt, 1); break;
    case 1: atomicMax(cnt, i); break;
    case 2: atomicCAS(cnt, 0, i); break;
    case 3: printf("hi %d\n", i); break;
    default: break;
  }
  unsigned m = __ballot_sync(0xffffffff, i & 1);
  int v = __shfl_xor_sync(0xffffffff, i, 1);
  if (m == 3 && v == 5) gcount++;
}
"""


def _scan_all(text: str, path: str) -> ptx.PtxAst:
    ast = ptx.parse_ast(text, path)
    assert ast == ptx.parse_tree(text, path)
    mod = ptx.lower(ast)
    for fn in mod.functions:
        rd = reaching_definitions(fn)
        assert all(isinstance(v, list) for v in rd.values())
    return ast


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("flags", [["-lineinfo"], ["-G"]], ids=["lineinfo", "debug"])
def test_nvcc_ptx(flags: list[str], tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(CUDA_SRC)
    out = tmp_path / "k.ptx"
    subprocess.run(["nvcc", "-arch=sm_80", "-ptx", *flags, str(src), "-o", str(out)], check=True, capture_output=True)
    ast = _scan_all(out.read_text(), str(out))
    mod = ptx.lower(ast)
    kern = next(f for f in mod.kernels() if "kern" in f.name)
    assert kern.attrs["maxntid"] == (256, 1, 1) and kern.attrs["minnctapersm"] == 2
    kinds = {o.kind for f in mod.functions for o in f.ops()}  # -G keeps atomicAdd & co. as calls
    assert {Kind.CALL, Kind.ATOMIC, Kind.LOAD, Kind.STORE, Kind.ARG, Kind.SREG, Kind.ICMP} <= kinds
    assert "vprintf" in mod.attrs["declarations"]
    if shutil.which("ptxas"):
        printed = tmp_path / "printed.ptx"
        printed.write_text(print_module(ast))
        r = subprocess.run(
            ["ptxas", "-arch", "sm_80", "-o", str(tmp_path / "o.cubin"), str(printed)], capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr


@pytest.mark.slow
def test_triton_ptx(tmp_path: Path) -> None:
    triton = pytest.importorskip("triton")
    tl = pytest.importorskip("triton.language")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    try:
        k = triton.compile(
            ASTSource(fn=add_kernel, signature=sig, constexprs={"BLOCK": 1024}), target=GPUTarget("cuda", 80, 32)
        )
    except Exception as e:  # noqa: BLE001 - no backend here is not our failure
        pytest.skip(f"triton cannot compile here: {e}")
    ast = _scan_all(k.asm["ptx"], "triton.ptx")
    ops = ptx.lower(ast).kernels()[0].ops()
    assert any(o.kind is Kind.LOAD and o.space == "global" for o in ops)
    assert any(o.attrs.get("sreg") == "ctaid.x" for o in ops)


def test_a_vector_parameter_load_reads_one_field_per_register() -> None:
    """``ld.param.v2.b32 {%r1, %r2}, [k_p+8]``: a tensor's shape and stride side by side, two fields."""
    from irbuild import ptx_kernel

    fn = ptx_kernel("ld.param.v2.b32 {%r1, %r2}, [k_p+8];\nadd.s32 %r3, %r1, %r2;\nret;")
    args = [op for op in fn.ops() if op.kind is Kind.ARG]
    assert [(op.results, op.attrs["field"].offset, op.attrs["field"].width) for op in args] == [
        (("%r1",), 8, 32),
        (("%r2",), 12, 32),
    ]
    assert len({op.id for op in fn.ops()}) == len(fn.ops())
