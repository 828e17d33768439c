"""grammars/mlir.lark and the MLIR front end (irscan.frontend.mlir) against the DSL's own parser.

Oracle: for every corpus capture (``corpus/captures/**/module.mlir``, ``corpus/thirdparty/**/
module.mlir.xz``), a capture of this file's own kernel, and a hand-written module that exercises the
syntax the corpus may lack, the sequence of ops -- every op, ``builtin.module``, ``gpu.module``,
``llvm.func`` and ``llvm.mlir.global`` included, in pre-order -- with each op's name and result types
is the same from ``parse_module(full=True)``, from the fast path, and from a walk of
``cutlass._mlir.ir.Module.parse`` (run in a child process: this pytest process never imports the DSL).
The DSL's parser does not read most located captures back (an upstream printer bug), so it is fed
``strip_locations(text)``; op names, counts and types do not depend on locations.

Then: bad input raises IRSyntaxError with the real line and column on both paths, and the mapping to
irscan.ir on a tiny real capture (GEP, shared memory, special registers, launch facts, block
arguments and successors, locations).
"""

from __future__ import annotations

import json
import lzma
import random
import sys
from pathlib import Path

import pytest

from irscan import ir
from irscan.frontend import mlir
from irscan.ir import Kind

REPO = Path(__file__).resolve().parents[1]
CORPUS = sorted(REPO.glob("corpus/captures/**/module.mlir")) + sorted(REPO.glob("corpus/thirdparty/**/module.mlir.xz"))
BIG = 300_000  # bytes: a full (all-grammar) parse of more takes seconds


def read(path: Path) -> str:
    return lzma.decompress(path.read_bytes()).decode() if path.suffix == ".xz" else path.read_text()


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return path.name


# ------------------------------------------------------------------------------------ fixtures

KERNEL = '''"""irscan MLIR front-end test kernel: global i32 GEP, shared memory, a runtime loop, Int64, sregs."""
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

N = 4096
THREADS = 128


@cute.kernel
def kern(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx  # MARK:index
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout((THREADS,)), byte_alignment=16)
    s[tidx] = src[i]  # MARK:smem_store
    cute.arch.barrier()  # MARK:barrier
    acc = cutlass.Float32(0.0)
    for j in cutlass.range(n):  # MARK:loop
        acc = acc + s[(tidx + j) % THREADS]
    wide = cutlass.Int64(i) * 3  # MARK:wide
    if wide > 7:
        dst[i] = acc  # MARK:store


@cute.jit
def host(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    kern(src, dst, n).launch(grid=(N // THREADS, 1, 1), block=(THREADS, 1, 1))


src = make_fake_tensor(cutlass.Float32, (N,), stride=(1,), assumed_align=16)
dst = make_fake_tensor(cutlass.Float32, (N,), stride=(1,), assumed_align=16)
cute.compile(host, src, dst, cutlass.Int32(3))
'''

#: syntax the corpus may not hold; every line parses in the DSL's own parser too
SYNTAX = r"""#loc = loc("/src/k.py":10:4)
#loc1 = loc("x = a * b"(#loc))
#loc2 = loc(callsite(#loc1 at #loc))
#loc3 = loc(fused[#loc2, #loc])
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @"fmt\0A"("%d\0A\00") {addr_space = 0 : i32} loc(#loc)
  llvm.mlir.global internal @smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8> loc(#loc)
  llvm.mlir.global internal @init() {addr_space = 0 : i32} : i32 {
    %0 = llvm.mlir.constant(7 : i32) : i32
    llvm.return %0 : i32
  }
  gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx88">] {
    llvm.func @k(%arg0: !llvm.ptr<1> loc("<module>"(#loc)), %arg1: i32, %arg2: !llvm.ptr<3>, %arg3: vector<4xi32>, %arg4: i64) attributes {cutlass_launch_facts = {cluster_launch = false, exact_block_dim = array<i64: 128, 1, 1>, exact_grid_dim = array<i64: 7, 1, 1>, schema_version = 1 : i64}, gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>, nvvm.reqntid = array<i32: 128, 1, 1>} {
      %0 = llvm.mlir.constant(100000 : i32) : i32 loc(#loc1)
      %1 = llvm.mlir.constant(true) : i1 loc(#loc2)
      %2 = llvm.mlir.constant(dense<[1, 2, 3, 4]> : vector<4xi32>) : vector<4xi32> loc(#loc3)
      %3 = llvm.mlir.constant(1.500000e+00 : f32) : f32 loc(unknown)
      %4 = nvvm.read.ptx.sreg.tid.x range <i32, 0, 1024> : i32
      %5 = nvvm.read.ptx.sreg.laneid : i32
      %6 = llvm.mul %4, %0 overflow<nsw, nuw> : i32 loc("/src/k.py":11:8)
      %7 = llvm.udiv exact %6, %0 : i32
      %8 = llvm.or disjoint %6, %5 : i32
      %9 = llvm.add %arg3, %2 : vector<4xi32>
      %10 = llvm.icmp "ult" %6, %0 : i32
      %11 = llvm.select %10, %6, %7 : i1, i32
      %12 = llvm.sext %11 : i32 to i64
      %13 = llvm.zext nneg %11 : i32 to i64
      %14 = llvm.trunc %arg4 overflow<nuw> : i64 to i32
      %15 = llvm.intr.smin(%11, %14) : (i32, i32) -> i32
      %16 = llvm.getelementptr inbounds|nuw %arg0[%11] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %17 = llvm.getelementptr %arg0[%12, %11, 1] : (!llvm.ptr<1>, i64, i32) -> !llvm.ptr<1>, !llvm.array<4 x struct<(i32, f64)>>
      %18 = llvm.load volatile %16 {alignment = 4 : i64} : !llvm.ptr<1> -> f32
      %19 = llvm.load %arg2 atomic syncscope("cta") acquire {alignment = 4 : i64} : !llvm.ptr<3> -> i32
      llvm.store %19, %arg2 {alignment = 4 : i64} : i32, !llvm.ptr<3>
      %20 = llvm.atomicrmw add %arg2, %19 acq_rel : !llvm.ptr<3>, i32
      %21 = llvm.cmpxchg %arg2, %19, %20 acq_rel monotonic : !llvm.ptr<3>, i32
      %22 = llvm.extractvalue %21[1] : !llvm.struct<(i32, i1)>
      %23 = llvm.inline_asm has_side_effects asm_dialect = att "ld.shared.u32 $0, [$1];\0A\09// \22%q\22", "=r,r" %arg2 : (!llvm.ptr<3>) -> i32
      nvvm.barrier loc(#loc)
      %24 = "llvm.intr.ctlz"(%19) <{is_zero_poison = false}> : (i32) -> i32
      %25 = nvvm.elect.sync -> i1
      nvvm.cp.async.shared.global %arg2, %arg0, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
      %26 = "mydialect.weird"(%19) {foo = #llvm.fastmath<fast>} : (i32) -> i32
      %27 = llvm.insertvalue %19, %21[0] : !llvm.struct<(i32, i1)>
      %28 = llvm.mlir.zero : i64
      %29 = llvm.freeze %28 : i64
      %30 = llvm.extractelement %arg3[%11 : i32] : vector<4xi32>
      %32 = llvm.shufflevector %arg3, %arg3 [0, 1] : vector<4xi32> 
      llvm.switch %11 : i32, ^bb1(%11 : i32) [
        1: ^bb1(%6 : i32),
        2: ^bb2
      ]
    ^bb1(%31: i32 loc("<module>"(#loc))):  // 3 preds: ^bb0, ^bb0, ^bb1
      llvm.cond_br %10 weights([1, 3]), ^bb1(%31 : i32), ^bb2
    ^bb2:  // 3 preds: ^bb0, ^bb1
      llvm.return
    } loc(#loc)
  } loc(#loc)
  llvm.func @printf(!llvm.ptr, ...) -> i32
  llvm.func @host(%arg0: i32) -> i32 attributes {llvm.emit_c_interface} {
    %0 = llvm.mlir.addressof @"fmt\0A" : !llvm.ptr
    %1 = llvm.call @printf(%0, %arg0) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32) -> i32
    llvm.return %1 : i32
  }
} loc(#loc)
#di_file = #llvm.di_file<"k.py" in "/src">
#loc4 = loc("/src/k.py":99:1)
"""  # noqa: E501, W291


@pytest.fixture(scope="session")
def tiny(run_python, tmp_path_factory):
    """``irscan capture`` of KERNEL: (module.mlir path, kernel script path, source lines)."""
    root = tmp_path_factory.mktemp("mlir_tiny")
    script = root / "mlir_kernel.py"
    script.write_text(KERNEL)
    proc = run_python("-m", "irscan", "capture", "--out", root / "cap", "--", "python", script, cwd=root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    mods = sorted((root / "cap").glob("*/module.mlir"))
    assert len(mods) == 1, proc.stderr[-3000:]
    return mods[0], script, KERNEL.split("\n")


@pytest.fixture(scope="session")
def syntax_file(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("mlir_syntax") / "module.mlir"
    p.write_text(SYNTAX)
    return p


NATIVE_WALK = r"""
import json, lzma, sys, time
import cutlass.cute  # registers the DSL's dialects with every Context made afterwards
from cutlass._mlir import ir
from irscan.frontend.mlir import strip_locations

ctx = ir.Context()
ctx.allow_unregistered_dialects = True
out = {}
for path in sys.argv[1:]:
    raw = open(path, "rb").read()
    text = (lzma.decompress(raw) if path.endswith(".xz") else raw).decode()
    text = strip_locations(text)
    seq = []

    def walk(op):
        op = op.operation
        seq.append([op.name, [str(r.type) for r in op.results]])
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    walk(inner)

    with ctx:
        t0 = time.perf_counter()
        module = ir.Module.parse(text)
        secs = time.perf_counter() - t0
        walk(module.operation)
    out[path] = {"ops": seq, "parse_s": secs}
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="session")
def native(run_python, tiny, syntax_file):
    """The DSL parser's op sequence (and parse time) of every oracle file, from one child process."""
    paths = [str(p) for p in CORPUS] + [str(tiny[0]), str(syntax_file)]
    proc = run_python("-c", NATIVE_WALK, *paths, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def my_sequence(module: ir.Module) -> list[list]:
    return [[name, list(rt)] for _, name, rt in mlir.op_sequence(module)]


def check_oracle(path: Path, native: dict) -> None:
    text = read(path)
    want = native[str(path)]["ops"]
    for full in (False, True):
        got = my_sequence(mlir.parse_module(text, str(path), full=full))
        label = "full" if full else "fast"
        assert len(got) == len(want), f"{label}: {len(got)} ops, the DSL's parser has {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=False)):
            assert g == w, f"{label}: op #{i} is {g}, the DSL's parser says {w}"


# --------------------------------------------------------------------------------- the oracle


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=rel(p), marks=[pytest.mark.slow] if p.stat().st_size > BIG else []) for p in CORPUS],
)
def test_oracle_corpus(path: Path, native) -> None:
    check_oracle(path, native)


def test_oracle_tiny_capture(tiny, native) -> None:
    check_oracle(tiny[0], native)


def test_oracle_syntax_module(syntax_file, native) -> None:
    check_oracle(syntax_file, native)


def test_corpus_is_there() -> None:
    """The oracle tests are parametrised over CORPUS: an empty or partial glob would make them pass by
    testing nothing. Every capture folder (one meta.json each) gives one MLIR file."""
    folders = sorted(p.parent for d in ("captures", "thirdparty") for p in (REPO / "corpus" / d).rglob("meta.json"))
    assert folders and any("thirdparty" in str(f) for f in folders)
    assert sorted(p.parent for p in CORPUS) == folders


# ------------------------------------------------------------------------------- the grammar


def test_grammar_is_lalr_with_contextual_lexer() -> None:
    from irscan.frontend.mlir.grammar import parser

    lk = parser().lark
    assert lk.options.parser == "lalr" and lk.options.lexer == "contextual"


def test_parser_tables_cached_and_keyed_by_the_grammar(tmp_path, monkeypatch) -> None:
    """The tables of a grammar are kept in the cache and read back; a changed grammar gets its own file,
    and a table at its path built from another grammar is never used (lark checks the hash it starts
    with), so a grammar edited without regenerating anything parses by its new rules."""
    from irscan.frontend import lark_tables

    monkeypatch.setenv("IRSCAN_CACHE_DIR", str(tmp_path / "cache"))
    g = tmp_path / "g.lark"
    g.write_text('start: "a"\n')
    assert lark_tables.build(g).parse("a") is not None
    (old,) = (tmp_path / "cache").iterdir()
    assert lark_tables.build(g).parse("a") is not None and list((tmp_path / "cache").iterdir()) == [old]

    g.write_text('start: "b"\n')
    new = lark_tables.table_path("g", g.read_text(), lark_tables.LALR)
    assert new is not None and new != old
    new.write_bytes(old.read_bytes())  # stale tables where the new grammar's belong
    assert lark_tables.build(g).parse("b") is not None


def test_parser_tables_never_fail_on_a_bad_cache(tmp_path, monkeypatch) -> None:
    from irscan.frontend import lark_tables

    g = tmp_path / "g.lark"
    g.write_text('start: "a"\n')
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("IRSCAN_CACHE_DIR", str(tmp_path / "file" / "sub"))  # cannot be made
    assert lark_tables.cache_dir() is None and lark_tables.build(g).parse("a") is not None
    monkeypatch.setenv("IRSCAN_CACHE_DIR", str(tmp_path / "cache"))
    path = lark_tables.table_path("g", g.read_text(), lark_tables.LALR)
    assert path is not None
    path.write_bytes(b"garbage")  # corrupt: rebuilt and rewritten
    assert lark_tables.build(g).parse("a") is not None and path.read_bytes() != b"garbage"


def test_printer_bug_loc_after_zero_operand_op() -> None:
    text = '#l = loc("/a.py":3:1)\nllvm.func @f() {\n  nvvm.barrier loc(#l)\n  llvm.return loc(#l)\n}\n'
    for full in (False, True):
        m = mlir.parse_module(text, "t.mlir", full=full)
        op = m.functions[0].blocks[0].ops[0]
        assert op.name == "nvvm.barrier" and op.operands == () and op.loc == ir.Loc("/a.py", 3, 1)


def test_unknown_custom_syntax_is_opaque_never_an_error() -> None:
    text = (
        "llvm.func @f(%a: i32, %p: !llvm.ptr<3>) {\n"
        "  %0 = mydialect.thing %a, box[%a, %p] l2_cache_hint = %a"
        ' {x = 1 : i64, y = #foo.bar<"q", [1]>} : i32, <3> -> (i32) loc("/a.py":1:1)\n'
        '  mydialect.other<{k = 1}> (%0) ^bb1 "s" @sym::@t -> * ? | = 0x1F 1.5e3 ... loc(unknown)\n'
        "  llvm.return\n"
        "}\n"
    )
    for full in (False, True):
        m = mlir.parse_module(text, "t.mlir", full=full)
        ops = m.functions[0].blocks[0].ops
        assert [o.kind for o in ops] == [Kind.OPAQUE, Kind.OPAQUE, Kind.RETURN]
        assert ops[0].operands == ("%a", "%a", "%p", "%a")
        assert ops[0].attrs["result_types"] == ("i32",)
        assert ops[1].operands == ("%0",)
        assert ops[0].loc == ir.Loc("/a.py", 1, 1)


def test_function_headers() -> None:
    """A result type right before the body's `{` (not an attribute dictionary); result attributes."""
    text = (
        "llvm.func @g(%a: i32 {llvm.noundef}) -> (i32 {llvm.noundef}) {\n  llvm.return %a : i32\n}\n"
        "llvm.func @h() -> i32 {\n  %0 = llvm.mlir.constant(1 : i32) : i32\n  llvm.return %0 : i32\n}\n"
        "llvm.func internal @decl(!llvm.ptr, ...) -> !llvm.struct<(i32, i32)>\n"
    )
    for full in (False, True):
        m = mlir.parse_module(text, "f.mlir", full=full)
        assert [(f.name, f.attrs.get("result_type")) for f in m.functions] == [
            ("g", "i32"),
            ("h", "i32"),
            ("decl", "!llvm.struct<(i32, i32)>"),
        ]
        assert [(p.name, p.type) for p in m.functions[0].params] == [("%a", "i32")]
        assert m.functions[2].attrs["declaration"] and m.functions[2].attrs["variadic"]


def test_region_op_inside_a_function_defers_to_the_grammar() -> None:
    text = (
        "llvm.func @f(%c: i1, %a: i32) -> i32 {\n"
        '  "scf.if"(%c) ({\n    %0 = llvm.add %a, %a : i32\n    "scf.yield"() : () -> ()\n'
        '  }, {\n    "scf.yield"() : () -> ()\n  }) : (i1) -> ()\n'
        "  llvm.return %a : i32\n}\n"
    )
    seqs = []
    for full in (False, True):
        m = mlir.parse_module(text, "f.mlir", full=full)
        assert [o.name for o in m.functions[0].ops()] == ["scf.if", "llvm.return"]
        seqs.append(mlir.op_sequence(m))
    assert seqs[0] == seqs[1] and [n for _, n, _ in seqs[0]][2] == "llvm.add"


def test_crlf_and_no_locations(syntax_file) -> None:
    text = syntax_file.read_text()
    for variant in (text.replace("\n", "\r\n"), mlir.strip_locations(text)):
        fast, full = mlir.parse_module(variant, "v.mlir"), mlir.parse_module(variant, "v.mlir", full=True)
        assert fast.attrs["path"] == "fast"
        assert mlir.op_sequence(fast) == mlir.op_sequence(full)
        assert [o.kind for o in fast.functions[0].ops()] == [o.kind for o in full.functions[0].ops()]
    assert mlir.parse_module(mlir.strip_locations(text), "v.mlir").attrs["loc_granularity"] == "none"


def test_types_and_sizes() -> None:
    from irscan.frontend.mlir.grammar import parse_type
    from irscan.frontend.mlir.types import type_size

    cases = {
        "i32": 4,
        "i1": 1,
        "bf16": 2,
        "vector<4xf32>": 16,
        "vector<2xbf16>": 4,
        "!llvm.ptr<3>": 8,
        "!llvm.array<4 x struct<(i32, f64)>>": 64,
        "!llvm.struct<(i8, i32)>": 8,
        "!llvm.struct<packed (i8, i32)>": 5,
        "!llvm.struct<(ptr<1>, struct<(struct<()>, struct<(i32, i64)>)>)>": 24,
        '!llvm.struct<"opaque_t", opaque>': None,
        "!cuda.launch_cfg<max_attrs = 17>": None,
    }
    for text, size in cases.items():
        ty = parse_type(text)
        assert ty.text == text
        assert type_size(ty) == size, text
    assert parse_type("!llvm.ptr<1>").space == "1" and parse_type("!llvm.ptr").space == "0"
    nested = parse_type("!llvm.struct<(ptr<1>, struct<(i32, i64)>)>")
    assert [f.text for f in nested.fields] == ["!llvm.ptr<1>", "!llvm.struct<(i32, i64)>"]
    assert parse_type("(i32, !llvm.ptr) -> !llvm.struct<(i32, i32)>").kind == "func"


def test_syntax_module_mapping(syntax_file) -> None:
    m = mlir.parse_module(syntax_file.read_text(), str(syntax_file))
    k = m.functions[0]
    assert k.name == "k" and k.kernel and k.attrs["gpu_module"]
    assert k.attrs["reqntid"] == (128, 1, 1) and k.attrs["maxntid"] == (256, 1, 1)
    assert k.attrs["exact_block_dim"] == (128, 1, 1) and k.attrs["exact_grid_dim"] == (7, 1, 1)
    assert [(p.name, p.type, p.index) for p in k.params][:2] == [("%arg0", "!llvm.ptr<1>", 0), ("%arg1", "i32", 1)]
    ops = {o.results[0] if o.results else f"{o.name}@{o.line}": o for o in k.ops()}
    assert ops["%0"].kind == Kind.CONST and ops["%0"].attrs["value"] == 100000 and ops["%0"].width == 32
    assert ops["%0"].loc == ir.Loc("/src/k.py", 10, 4, "x = a * b")  # NameLoc through an alias
    assert ops["%1"].attrs["value"] == 1 and ops["%1"].width == 1  # true
    assert "value" not in ops["%2"].attrs and "value" not in ops["%3"].attrs
    assert ops["%1"].loc == ops["%0"].loc  # callsite -> callee
    assert ops["%2"].loc == ops["%0"].loc  # fused -> first
    assert ops["%3"].loc is None  # unknown
    assert ops["%4"].attrs["range"] == (0, 1023) and ops["%4"].attrs["sreg"] == "tid.x"
    assert ops["%5"].attrs["range"] == (0, 31)  # the ISA's, when the IR states none
    assert ops["%6"].flags == {"nsw", "nuw"} and ops["%6"].loc == ir.Loc("/src/k.py", 11, 8)
    assert (ops["%7"].kind, ops["%7"].signed, ops["%7"].flags) == (Kind.DIV, False, {"exact"})
    assert ops["%9"].kind == Kind.OPAQUE  # vector arithmetic
    assert (ops["%10"].kind, ops["%10"].attrs["pred"], ops["%10"].signed) == (Kind.ICMP, "ult", False)
    assert ops["%11"].kind == Kind.SELECT and ops["%11"].operands == ("%10", "%6", "%7")
    assert (ops["%12"].kind, ops["%12"].width, ops["%12"].src_width, ops["%12"].signed) == (Kind.SEXT, 64, 32, True)
    assert (ops["%14"].kind, ops["%14"].width, ops["%14"].src_width) == (Kind.TRUNC, 32, 64)
    assert (ops["%15"].kind, ops["%15"].signed) == (Kind.MIN, True)
    g = ops["%16"]
    assert g.kind == Kind.GEP and g.operands == ("%arg0", "%11") and g.addr is None
    assert g.attrs["indices"] == [("dyn", 1, 32)] and g.attrs["elem_type"] == "f32" and g.attrs["elem_size"] == 4
    assert g.space == "global" and g.flags == {"inbounds", "nuw"}
    g2 = ops["%17"]
    assert g2.attrs["indices"] == [("dyn", 1, 64), ("dyn", 2, 32), ("const", 1)] and g2.attrs["elem_size"] == 64
    assert (ops["%18"].kind, ops["%18"].addr, ops["%18"].space, ops["%18"].width) == (Kind.LOAD, 0, "global", 0)
    assert (ops["%19"].width, ops["%19"].space) == (32, "shared")
    st = ops[f"llvm.store@{ops['%19'].line + 1}"]
    assert (st.kind, st.addr, st.width, st.operands) == (Kind.STORE, 1, 32, ("%19", "%arg2"))
    assert (ops["%20"].kind, ops["%20"].addr, ops["%20"].attrs["op"]) == (Kind.ATOMIC, 0, "add")
    assert (ops["%21"].kind, ops["%21"].addr) == (Kind.ATOMIC, 0)
    assert (ops["%22"].kind, ops["%22"].attrs["path"], ops["%22"].width) == (Kind.EXTRACT, (1,), 1)
    asm = ops["%23"]
    # its PTX is a load (frontend/mlir/asm.py): the statement's kind, not the generic MEMOP
    assert (asm.kind, asm.addr, asm.space) == (Kind.LOAD, 0, "shared") and asm.attrs["asm"].startswith("ld.shared.u32")
    assert ops["%24"].kind == Kind.OPAQUE and m.opaque.get("llvm.intr.ctlz") == 1
    assert ops["%26"].kind == Kind.OPAQUE and m.opaque.get("mydialect.weird") == 1
    assert ops["%27"].kind == Kind.INSERT and ops["%28"].attrs["value"] == 0 and ops["%29"].kind == Kind.MOV
    assert ops["%30"].attrs["result_types"] == ("i32",)
    assert ops["%32"].attrs["result_types"] == ("vector<2xi32>",)
    blocks = {b.label: b for b in k.blocks}
    assert [(s.label, s.operands) for s in blocks["^bb0"].succs] == [
        ("^bb1", ("%11",)),
        ("^bb1", ("%6",)),
        ("^bb2", ()),
    ]
    assert blocks["^bb1"].args == ("%31",) and blocks["^bb1"].arg_widths == (32,)
    assert [(s.label, s.operands) for s in blocks["^bb1"].succs] == [("^bb1", ("%31",)), ("^bb2", ())]
    assert blocks["^bb1"].ops[0].operands == ("%10",)  # cond_br: the condition only
    printf, host = m.functions[1], m.functions[2]
    assert printf.attrs["declaration"] and printf.attrs["variadic"] and not printf.blocks
    assert not host.kernel and host.ops()[1].kind == Kind.CALL and host.ops()[1].attrs["callee"] == "printf"
    ids = [o.id for f in m.functions for o in f.ops()]
    assert ids == list(range(len(ids)))


# ------------------------------------------------------------------------------------ errors


def _lines(text: str) -> list[str]:
    return text.split("\n")


def test_truncated_inside_a_function(syntax_file) -> None:
    lines = _lines(syntax_file.read_text())
    cut = next(i for i, line in enumerate(lines) if "llvm.extractvalue %21[1]" in line) + 1
    text = "\n".join(lines[:cut]) + "\n"
    for full in (False, True):
        with pytest.raises(ir.IRSyntaxError) as ei:
            mlir.parse_module(text, "cut.mlir", full=full)
        e = ei.value
        assert (e.path, e.line) == ("cut.mlir", cut), (full, str(e))
        assert e.expected


def test_truncated_mid_line(syntax_file) -> None:
    lines = _lines(syntax_file.read_text())
    i = next(i for i, line in enumerate(lines) if "llvm.mul %4, %0" in line)
    text = "\n".join(lines[:i] + [lines[i][: lines[i].index(",") + 1]])
    for full in (False, True):
        with pytest.raises(ir.IRSyntaxError) as ei:
            mlir.parse_module(text, "cut.mlir", full=full)
        assert ei.value.line == i + 1, (full, str(ei.value))


@pytest.mark.parametrize(
    "needle, insert_before",
    [
        ("llvm.mul %4, %0", " : i32 loc"),  # an op with a rule
        ("llvm.extractvalue %21[1]", " : !llvm"),
        ("nvvm.cp.async.shared.global", " : !llvm.ptr<3>"),  # a generic op
    ],
)
def test_garbage_token_mid_op(syntax_file, needle: str, insert_before: str) -> None:
    lines = _lines(syntax_file.read_text())
    i = next(i for i, line in enumerate(lines) if needle in line)
    at = lines[i].index(insert_before)
    lines[i] = lines[i][:at] + " $$" + lines[i][at:]
    text = "\n".join(lines)
    for full in (False, True):
        with pytest.raises(ir.IRSyntaxError) as ei:
            mlir.parse_module(text, "bad.mlir", full=full)
        e = ei.value
        assert (e.line, e.col) == (i + 1, at + 2), (full, str(e))  # 1-based column of the '$'
        assert e.expected and "$" in e.message


def test_stray_region_end() -> None:
    for full in (False, True):
        with pytest.raises(ir.IRSyntaxError) as ei:
            mlir.parse_module("llvm.func @f() {\n  llvm.return\n}\n}\n", "x.mlir", full=full)
        assert ei.value.line == 4


def test_undefined_location_alias() -> None:
    for full in (False, True):
        with pytest.raises(ir.IRSyntaxError) as ei:
            mlir.parse_module("llvm.func @f() {\n  llvm.return loc(#nope)\n}\n", "x.mlir", full=full)
        assert ei.value.line == 2 and "#nope" in str(ei.value)


def test_mutations_raise_only_syntax_errors(syntax_file) -> None:
    """Seeded random cuts and insertions: either a module or an IRSyntaxError with a line, never a crash."""
    text = syntax_file.read_text()
    rng = random.Random(7)
    for _ in range(120):
        k = rng.randrange(len(text))
        kind = rng.randrange(3)
        if kind == 0:
            bad = text[:k]
        elif kind == 1:
            bad = text[:k] + rng.choice(["$", ")", "(", "}", '"', " = ", "\n", "#", "<", "%", "{"]) + text[k:]
        else:
            bad = text[:k] + text[k + 1 :]
        for full in (False, True):
            try:
                mlir.parse_module(bad, "m.mlir", full=full)
            except ir.IRSyntaxError as e:
                assert e.line >= 1, str(e)


# ----------------------------------------------------------------- mapping on a real capture


def _line_of(source: list[str], mark: str) -> int:
    return next(i + 1 for i, line in enumerate(source) if f"# MARK:{mark}" in line)


@pytest.fixture(scope="module")
def tiny_module(tiny):
    path, script, source = tiny
    return mlir.parse_module(path.read_text(), str(path)), script, source


def test_tiny_functions_and_launch_facts(tiny_module) -> None:
    m, script, source = tiny_module
    kernels = m.kernels()
    assert len(kernels) == 1
    k = kernels[0]
    assert k.attrs["gpu_module"] and k.attrs["reqntid"] == (128, 1, 1)
    assert k.attrs["exact_block_dim"] == (128, 1, 1) and k.attrs["exact_grid_dim"] == (32, 1, 1)
    assert [p.name for p in k.params] == ["%arg0", "%arg1", "%arg2"]
    assert k.params[0].type == "!llvm.struct<(ptr<1>, struct<(struct<()>, struct<()>)>)>" and k.params[2].type == "i32"
    assert not k.blocks[0].args  # the params are not entry-block arguments
    hosts = [f for f in m.functions if not f.kernel and f.blocks]
    assert hosts and all("gpu_module" not in f.attrs for f in hosts)
    assert m.attrs["loc_granularity"] == "line"
    assert k.loc is not None and k.loc.file == str(script)


def test_tiny_global_gep_with_i32_index(tiny_module) -> None:
    m, script, source = tiny_module
    k = m.kernels()[0]
    geps = [o for o in k.ops() if o.kind == Kind.GEP and o.space == "global"]
    assert len(geps) == 2  # src[i] and dst[i]
    for g in geps:
        assert g.attrs["indices"] == [("dyn", 1, 32)] and g.attrs["elem_type"] == "f32" and g.attrs["elem_size"] == 4
        assert g.addr is None and len(g.operands) == 2
    load = next(o for o in k.ops() if o.kind == Kind.LOAD and o.operands[0] == geps[0].results[0])
    assert (load.addr, load.space, load.width) == (0, "global", 0)
    store = next(o for o in k.ops() if o.kind == Kind.STORE and o.operands[1] == geps[1].results[0])
    assert store.loc is not None and (store.loc.file, store.loc.line) == (str(script), _line_of(source, "store"))
    # the index is bidx * 128 + tidx, computed in i32 at the marked line
    idx_def = {o.results[0]: o for o in k.ops() if o.results}[geps[0].operands[1]]
    assert idx_def.kind == Kind.ADD and idx_def.width == 32
    assert (
        idx_def.loc.line == _line_of(source, "index") and idx_def.loc.name == "i = bidx * THREADS + tidx  # MARK:index"
    )


def test_tiny_shared_memory_and_sregs(tiny_module) -> None:
    m, script, source = tiny_module
    k = m.kernels()[0]
    smem = [o for o in k.ops() if o.kind in (Kind.GEP, Kind.LOAD, Kind.STORE) and o.space == "shared"]
    assert {o.kind for o in smem} == {Kind.GEP, Kind.LOAD, Kind.STORE}
    sregs = {o.attrs["sreg"]: o for o in k.ops() if o.kind == Kind.SREG}
    assert sregs["tid.x"].attrs["range"] == (0, 1023) and sregs["tid.x"].width == 32
    assert sregs["ctaid.x"].attrs["range"] == (0, 2147483646)
    barrier = next(o for o in k.ops() if o.name == "nvvm.barrier")
    assert barrier.loc.line == _line_of(source, "barrier")  # the printer-bug shape: `nvvm.barrier loc(#locN)`
    shuffles = [o for o in k.ops() if o.name == "nvvm.shfl.sync"]
    assert shuffles and all(o.kind is Kind.SHUFFLE and o.attrs["shuffled"] == 1 for o in shuffles)
    assert "nvvm.shfl.sync" not in m.opaque


def test_tiny_blocks_args_and_successors(tiny_module) -> None:
    m, _, _ = tiny_module
    k = m.kernels()[0]
    labels = {b.label for b in k.blocks}
    loop = next(b for b in k.blocks if b.args)
    assert len(loop.args) == 3 and loop.arg_widths == (32, 0, 32)  # j: i32, acc: f32, (tidx + j) % 128: i32
    feeds = [(b.label, s) for b in k.blocks for s in b.succs if s.label == loop.label]
    assert len(feeds) == 2 and all(len(s.operands) == 3 for _, s in feeds)
    for b in k.blocks:
        for s in b.succs:
            assert s.label in labels
        term = b.ops[-1]
        assert term.kind in (Kind.BRANCH, Kind.RETURN)
        if term.name == "llvm.cond_br":
            assert len(term.operands) == 1 and len(b.succs) == 2
    wide = next(o for o in k.ops() if o.kind == Kind.SEXT)
    assert (wide.width, wide.src_width, wide.signed) == (64, 32, True)
    consts = [o for o in k.ops() if o.kind == Kind.CONST and "value" in o.attrs]
    assert {(o.attrs["value"], o.width) for o in consts} >= {(128, 32), (3, 64), (7, 64), (1, 1)}


def test_tiny_every_operand_is_defined(tiny_module) -> None:
    m, _, _ = tiny_module
    for fn in m.functions:
        defined = {p.name for p in fn.params}
        for b in fn.blocks:
            defined |= set(b.args)
            for o in b.ops:
                defined |= set(o.results)
        for b in fn.blocks:
            for o in b.ops:
                assert set(o.operands) <= defined, o.text
            for s in b.succs:
                assert set(s.operands) <= defined


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-v"]))
