"""Inline PTX memory ops in the MLIR (frontend/mlir/asm.py, the inline-asm rows of frontend/mlir/memroles.py).

CuTe DSL code (flashinfer's fp4_common.ld_global_v4_u32 / st_global_u64) issues global loads and stores
as ``llvm.inline_asm`` whose address is an ``i64`` made by ``llvm.ptrtoint`` of a GEP with an i32
index.  The asm string's PTX names the access, its space and which ``$N`` is the address; the analysis
then follows the i64 back through the ptrtoint to the GEP, a widening point like any other.  An asm
that is not a memory statement stays as the generic rule leaves it, and no asm text may crash.
"""

from __future__ import annotations

import random

import pytest

from irscan.frontend import mlir
from irscan.frontend.mlir.asm import asm_memory, operand_slots
from irscan.ir import AddressSpace, IRSyntaxError, Kind, Module, Op
from irscan.pipeline import scan_module

G, S = AddressSpace.GLOBAL, AddressSpace.SHARED


@pytest.mark.parametrize(
    ("asm", "constraints", "kind", "addrs", "tmap"),
    [
        ("ld.global.v4.u32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l", Kind.LOAD, ((0, G),), None),
        ("st.global.u64 [$0], $1;", "l,l", Kind.STORE, ((0, G),), None),
        ("@$2 st.global.v2.f32 [$0+8], {$1, $1};", "l,f,b", Kind.STORE, ((0, G),), None),
        ("atom.global.add.u32 $0, [$1], $2;", "=r,l,r,~{memory}", Kind.ATOMIC, ((0, G),), None),
        ("ld.shared.u32 $0, [$1];", "=r,r", Kind.LOAD, ((0, S),), None),
        # both element addresses, the global one among them; the TMA map is a handle
        ("cp.async.cg.shared.global [$0], [$1], 16;", "r,l", Kind.MEMOP, ((0, S), (1, G)), None),
        ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
         "r,l,r,r,r", Kind.MEMOP, ((0, S), (4, S)), 1),
        # an address the asm computes from its operand: copies, cvta and adds of an immediate
        ("{\n .reg .u64 a;\n cvta.to.global.u64 a, $1;\n add.u64 a, a, 16;\n ld.global.u32 $0, [a]; // [x]\n}",
         "=r,l", Kind.LOAD, ((0, G),), None),
        # ${N} / ${N:mod} references, labels, an indirect output that takes an operand
        ("L1: ld.global.nc.u32 ${0}, [${1:x}];", "=r,l", Kind.LOAD, ((0, G),), None),
        ("st.global.u32 [$1], $2;", "=*m,l,r", Kind.STORE, ((1, G),), None),
    ],
)  # fmt: skip
def test_memory_statements_are_read(
    asm: str, constraints: str, kind: Kind, addrs: tuple[tuple[int, AddressSpace], ...], tmap: int | None
) -> None:
    mem = asm_memory(asm, constraints)
    assert mem is not None
    assert (mem.kind, mem.addrs, mem.tensor_map) == (kind, addrs, tmap)


@pytest.mark.parametrize(
    ("asm", "constraints"),
    [
        ("and.b32 $0, $1, 0x7FFF7FFF;", "=r,r"),
        ("max.bf16x2 $0, $1, $2;", "=r,r,r"),
        ("mov.b64 $0, $1;", "=l,l"),
        ("{\n .reg .b32 t[4];\n mov.b32 $0, t[1];\n}", "=r"),  # brackets, but no memory statement
        ("ld.global.u32 $0, [$0];", "=r"),  # the address is the result: nothing to follow
        ("ld.global.u32 $0, [foo];", "=r"),  # a symbol: no operand to follow
    ],
)
def test_other_asm_is_not_a_memory_op(asm: str, constraints: str) -> None:
    assert asm_memory(asm, constraints) is None


def test_operands_are_numbered_over_the_constraints() -> None:
    # outputs (=r, =&r) are results; inputs, tied and indirect constraints take operands; clobbers neither
    assert operand_slots("=r,=&r,l,0,*m,=*m,~{memory}") == ((None, None, 0, 1, 2, 3), 4)


def test_malformed_asm_never_raises() -> None:
    rng = random.Random(7)
    pieces = ["ld", ".global", ".v4", ".u32", " ", "$", "$1", "${", "}", "{", "[", "]", "+", "-", ",", ";", "@",
              "!", ":", "::", "%", "st", "cp.async", "a", "0x", "\n", "//", "/*", "*/", "\\", '"', "L:",
              "9" * 30]  # fmt: skip
    for _ in range(3000):
        asm = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30)))
        cons = ",".join(rng.choice(["=r", "l", "r", "=*m", "~{memory}", "", "=", "*"]) for _ in range(rng.randrange(4)))
        mem = asm_memory(asm, cons)
        assert mem is None or all(0 <= i < mem.operands for i, _ in mem.addrs)


# ------------------------------------------------------------------------------ through the front end


def _kernel(body: str) -> str:
    """A kernel with a global bf16 tensor %arg0 and an i32 row count %arg1; row = ctaid.x * 4096 (nsw)."""
    return (
        "module {\n  llvm.func @k(%arg0: !llvm.ptr<1>, %arg1: i32) attributes {nvvm.kernel} {\n"
        "    %0 = nvvm.read.ptx.sreg.ctaid.x : i32\n"
        "    %1 = llvm.mlir.constant(4096 : i32) : i32\n"
        "    %2 = llvm.mul %0, %1 overflow<nsw> : i32\n"
        "    %3 = llvm.getelementptr %arg0[%2] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, bf16\n"
        "    %4 = llvm.ptrtoint %3 : !llvm.ptr<1> to i64\n" + body + "    llvm.return\n  }\n}\n"
    )


LOAD = (
    '    %5 = llvm.inline_asm asm_dialect = att "ld.global.v4.u32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l" %4'
    " : (i64) -> !llvm.struct<(i32, i32, i32, i32)>\n"
)
STORE = (
    '    llvm.inline_asm has_side_effects asm_dialect = att "st.global.u64 [$0], $1;", "l,l" %4, %4'
    " : (i64, i64) -> ()\n"
)
# a bit reverse: no memory, no copy (``mov.b64 $0, $1`` is a copy since: tests/test_ranges.py)
NOT_MEMORY = '    %5 = llvm.inline_asm asm_dialect = att "brev.b64 $0, $1;", "=l,l" %4 : (i64) -> i64\n'


def _asm_op(m: Module) -> Op:
    return next(o for o in m.functions[0].ops() if o.name == "llvm.inline_asm")


ASM_OPS = [(LOAD, Kind.LOAD, "ld.global.v4.u32"), (STORE, Kind.STORE, "st.global.u64")]


@pytest.mark.parametrize("full", [False, True], ids=["fast", "full"])
@pytest.mark.parametrize(("body", "kind", "opcode"), ASM_OPS, ids=["ld", "st"])
def test_inline_asm_address_is_found_on_both_parse_paths(body: str, kind: Kind, opcode: str, full: bool) -> None:
    op = _asm_op(mlir.parse_module(_kernel(body), "k.mlir", full=full))
    assert (op.kind, op.addr, op.space, op.attrs["asm_op"]) == (kind, 0, AddressSpace.GLOBAL, opcode)


@pytest.mark.parametrize(("body", "kind", "opcode"), ASM_OPS, ids=["ld", "st"])
def test_the_i32_gep_index_is_reported_through_ptrtoint(body: str, kind: Kind, opcode: str) -> None:
    found = scan_module(mlir.parse_module(_kernel(body), "k.mlir")).findings
    want = [("narrow-widened-late", kind.value, "global")]
    assert [(f.check, f.sink["kind"], f.sink["space"]) for f in found] == want
    assert "4096*ctaid.x" in found[0].expression


def test_inttoptr_of_the_address_is_followed() -> None:
    body = (
        "    %5 = llvm.mlir.constant(64 : i64) : i64\n"
        "    %6 = llvm.add %4, %5 : i64\n"
        "    %7 = llvm.inttoptr %6 : i64 to !llvm.ptr<1>\n"
        "    %8 = llvm.load %7 : !llvm.ptr<1> -> i32\n"
    )
    found = scan_module(mlir.parse_module(_kernel(body), "k.mlir")).findings
    assert [(f.sink["kind"], f.sink["op"]) for f in found] == [("load", "llvm.load")]


def test_asm_that_is_not_a_memory_op_stays_opaque() -> None:
    m = mlir.parse_module(_kernel(NOT_MEMORY), "k.mlir")
    assert _asm_op(m).kind is Kind.OPAQUE
    assert m.opaque.get("llvm.inline_asm") == 1  # counted as unseen, as before
    assert not scan_module(m).findings


def test_a_shared_asm_access_is_a_small_window() -> None:
    body = (
        "    %5 = llvm.trunc %4 : i64 to i32\n"
        '    %6 = llvm.inline_asm asm_dialect = att "ld.shared.u32 $0, [$1];", "=r,r" %5 : (i32) -> i32\n'
    )
    m = mlir.parse_module(_kernel(body), "k.mlir")
    assert (_asm_op(m).kind, _asm_op(m).space) == (Kind.LOAD, AddressSpace.SHARED)
    assert not scan_module(m).findings  # the same wrapping index, into a window below 4 GiB


def test_operand_count_that_disagrees_with_the_constraints_is_ignored() -> None:
    body = '    %5 = llvm.inline_asm asm_dialect = att "ld.global.u32 $0, [$1];", "=r,l,l" %4 : (i64) -> i32\n'
    assert _asm_op(mlir.parse_module(_kernel(body), "k.mlir")).kind is Kind.OPAQUE


@pytest.mark.parametrize(
    "asm",
    ["ld.global.u32 $0, [$1", "[[[[$1]]]]", "st.global [$99999999999999999999], $1;", "$", "${", "\\22[$1]\\22",
     "ld.global.u32 $0, [$1+" + "9" * 5000 + "];", "{" * 3000 + "ld.global.u32 $0, [$1];" + "}" * 3000],
)  # fmt: skip
def test_malformed_asm_in_a_module_never_crashes(asm: str) -> None:
    body = f'    %5 = llvm.inline_asm asm_dialect = att "{asm}", "=r,l" %4 : (i64) -> i32\n'
    for full in (False, True):
        try:
            m = mlir.parse_module(_kernel(body), "k.mlir", full=full)
        except IRSyntaxError:
            continue
        scan_module(m)
