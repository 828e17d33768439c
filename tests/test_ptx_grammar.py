# ruff: noqa: E501  (PTX test data: TMA opcodes are longer than a line)
"""grammars/ptx.lark and the PTX front end's parse: every corpus PTX, every syntax family, the errors.

The oracle: what we print back from the parse alone (irscan/frontend/ptx/printer.py) must assemble with
``ptxas -arch <its .target>``; and the fast statement splitter must give exactly the syntax tree the
full grammar gives.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from irscan.frontend import ptx
from irscan.frontend.ptx.printer import print_module
from irscan.ir import IRSyntaxError, Kind

ROOT = Path(__file__).resolve().parents[1]
CORPUS_PTX = sorted(
    [*ROOT.glob("corpus/captures/**/module.ptx"), *ROOT.glob("corpus/thirdparty/**/module.ptx.xz")], key=str
)
PTXAS = shutil.which("ptxas")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not on PATH")


def _id(p: Path) -> str:
    return "/".join(p.relative_to(ROOT).parts[-3:-1])


def _ptxas_version() -> str | None:
    if PTXAS is None:
        return None
    out = subprocess.run([PTXAS, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def assemble(text: str, arch: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    f = tmp_path / "printed.ptx"
    f.write_text(text)
    return subprocess.run(
        [PTXAS, "-arch", arch, "-o", str(tmp_path / "out.cubin"), str(f)], capture_output=True, text=True
    )


def check_assembles(text: str, arch: str, tmp_path: Path) -> None:
    r = assemble(text, arch, tmp_path)
    if r.returncode != 0 and "Unsupported .version" in r.stderr:
        pytest.skip(f"this ptxas ({_ptxas_version()}) is older than the PTX: {r.stderr.strip()[:120]}")
    assert r.returncode == 0, r.stderr[:2000]


def _structure(ast: ptx.PtxAst) -> str:
    """The syntax tree without positions and source text (what survives a print and re-parse)."""
    return re.sub(r"(line|src_line)=\d+|text='(?:[^'\\]|\\.)*'|text=\"(?:[^\"\\]|\\.)*\"", "", repr(ast.items))


# ------------------------------------------------------------------------------------------ corpus


def test_corpus_is_there() -> None:
    """The corpus tests below are parametrised over CORPUS_PTX: an empty or partial glob would make them
    pass by testing nothing. Every capture folder (one meta.json each) gives one PTX file."""
    folders = sorted(p.parent for d in ("captures", "thirdparty") for p in (ROOT / "corpus" / d).rglob("meta.json"))
    assert folders and any("thirdparty" in str(f) for f in folders)
    assert sorted(p.parent for p in CORPUS_PTX) == folders


@pytest.mark.parametrize("path", CORPUS_PTX, ids=_id)
def test_corpus_fast_parse_equals_grammar(path: Path) -> None:
    text = ptx.read_text(path)
    fast = ptx.parse_ast(text, str(path))
    ref = ptx.parse_tree(text, str(path))
    assert fast == ref
    mod = ptx.lower(fast)
    assert mod.kernels(), "no .entry found"
    assert all(op.line > 0 and op.text for f in mod.functions for op in f.ops())


@needs_ptxas
@pytest.mark.parametrize("path", CORPUS_PTX, ids=_id)
def test_corpus_print_assembles(path: Path, tmp_path: Path) -> None:
    text = ptx.read_text(path)
    ast = ptx.parse_ast(text, str(path))
    printed = print_module(ast)
    # the printout parses back to the same tree ...
    assert _structure(ptx.parse_ast(printed, "printed")) == _structure(ast)
    # ... and ptxas takes it
    check_assembles(printed, ptx.lower(ast).attrs["target"], tmp_path)


# ------------------------------------------------------------------------------- syntax families

#: sm_90a: module directives and initialisers, .extern/.weak/.visible, .func with a return param,
#: param alignment/arrays/.ptr, .maxntid/.minnctapersm/.maxnreg, .reg ranges, nested scopes with
#: local declarations and labels (twice the same names), predicates, vectors with '_' sinks, dual
#: destinations, every immediate spelling, every address form, '::' qualifiers, call, .pragma,
#: comments, .loc with inlined_at, .file, .section, wgmma, tensormap, elect.sync ...
FAM90 = r"""//
// synthetic: every syntax family irscan's PTX grammar claims, sm_90a
//
.version 8.5
.target sm_90a
.address_size 64

/* a block comment
   over lines; with ; and { } inside */
.extern .func (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.global .align 4 .u32 counter = 7;
.global .align 1 .b8 $str[4] = {104, 105, 10, 0};
.const .align 8 .b8 table[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0};
.global .align 8 .u64 ptrs[2] = {generic(counter), generic($str)};
.visible .global .align 4 .f32 fval = 0f3F800000;
.weak .global .align 8 .f64 dval = 0d3FF0000000000000;
.extern .shared .align 16 .b8 dyn_smem[];

.func (.param .b32 func_retval0) helper(
	.param .b32 helper_param_0,
	.param .align 8 .b8 helper_param_1[16]
)
{
	.reg .b32 	%r<4>;
	ld.param.u32 	%r1, [helper_param_0];
	ld.param.u32 	%r2, [helper_param_1+8];
	mad.lo.s32 	%r3, %r1, %r2, 3;
	st.param.b32 	[func_retval0], %r3;
	ret;
}

.visible .entry fam90(
	.param .align 8 .b8 fam90_param_0[8],
	.param .u64 .ptr.global.align 16 fam90_param_1,
	.param .u32 fam90_param_2,
	.param .align 64 .b8 fam90_param_3[128]
)
.maxntid 256, 1, 1
.minnctapersm 1
.maxnreg 128
{
	.reg .pred 	%p<8>;
	.reg .b16 	%rs<4>;
	.reg .b32 	%r<40>;
	.reg .f32 	%f<6>;
	.reg .b64 	%rd<24>;
	.reg .f64 	%fd<3>;
	.shared .align 16 .b8 smem[1024];
	.shared .align 8 .b64 mbar[2];
	.local .align 8 .b8 	__local_depot0[16];
	.reg .b64 	%SP;
	.reg .b64 	%SPL;

	.loc	1 10 3
	mov.u64 	%SPL, __local_depot0;
	cvta.local.u64 	%SP, %SPL;
	ld.param.b64 	%rd1, [fam90_param_0];   // trailing comment
	ld.param.u64 	%rd2, [fam90_param_1];
	ld.param.u32 	%r1, [fam90_param_2];
	ld.param.v2.u32 	{%r30, %r31}, [fam90_param_3+8];
	mov.b64 	%rd20, fam90_param_3;
	cvta.to.global.u64 	%rd3, %rd2;
	.loc	1 11 5, function_name $L__info_string0, inlined_at 1 10 3
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %laneid;
	mov.u32 	%r32, %cluster_ctaid.x;
	mad.lo.s32 	%r6, %r3, %r4, %r2;
	mul.wide.s32 	%rd4, %r6, 4;
	mul.wide.u32 	%rd5, %r2, 0x10;
	mad.wide.u32 	%rd21, %r2, 8, %rd5;
	mul.hi.u32 	%r33, %r6, -1431655765;
	mul.lo.s32 	%r34, %r6, 0xFFFFFFFFU;
	add.s64 	%rd6, %rd3, %rd4;
	setp.ge.s32 	%p1, %r6, %r1;
	setp.lt.u32 	%p6, %r2, 32;
	setp.ne.b32 	%p7, %r5, 0;
	@%p1 bra 	$L__BB0_4;
	ld.global.nc.f32 	%f1, [%rd6];
	ld.global.v4.u32 	{%r7, %r8, %r9, _}, [%rd6+16];
	ld.global.f32 	%f2, [%rd6+-4];
	add.rn.f32 	%f3, %f1, %f2;
	fma.rn.f32 	%f4, %f3, 0f40000000, 0fBF800000;
	add.f64 	%fd1, 0d3FF0000000000000, 0d4000000000000000;
	cvt.rn.f32.f64 	%f5, %fd1;
	add.f32 	%f4, %f4, %f5;
	st.global.f32 	[%rd6], %f4;
	st.global.v2.u32 	[%rd6+8], {%r7, %r8};
	cvt.u64.u32 	%rd7, %r9;
	cvt.s64.s32 	%rd8, %r6;
	cvt.u32.u64 	%r10, %rd7;
	cvt.u16.u32 	%rs1, %r10;
	cvt.u32.u16 	%r35, %rs1;
	shl.b32 	%r11, %r10, 2;
	shr.s32 	%r12, %r11, 1;
	shr.u32 	%r13, %r11, 1;
	shr.b64 	%rd22, %rd7, 32;
	and.b32 	%r14, %r12, 255;
	or.b32 	%r15, %r14, %r13;
	xor.b32 	%r16, %r15, 0b1010;
	sub.s32 	%r17, %r16, 017;
	div.u32 	%r18, %r17, 3;
	rem.s32 	%r19, %r17, 5;
	min.s32 	%r20, %r18, %r19;
	max.u32 	%r21, %r18, %r19;
	neg.s32 	%r22, %r21;
	selp.b32 	%r23, %r20, %r22, %p6;
	selp.b64 	%rd9, %rd7, %rd8, %p7;
	not.pred 	%p5, %p7;
	and.pred 	%p4, %p5, %p6;
	mov.b64 	%rd10, {%r23, %r22};
	mov.b64 	{%r24, %r25}, %rd10;
	mov.u32 	%r26, smem;
	st.shared.u32 	[%r26+4], %r24;
	ld.shared.u32 	%r27, [smem+8];
	atom.global.add.u32 	%r28, [%rd6], 1;
	atom.shared.cas.b32 	%r29, [%r26], %r27, %r28;
	red.global.add.u32 	[%rd6], %r29;
	st.local.u32 	[%SPL], %r29;
	ld.const.u32 	%r36, [table+4];
	shfl.sync.bfly.b32 	%r36|%p2, %r36, 16, 31, -1;
	vote.sync.ballot.b32 	%r37, %p2, -1;
	vote.sync.all.pred 	%p3, !%p2, -1;
	bar.sync 	0;
	membar.gl;
	.pragma "nounroll";
$L__BB0_2:
	add.s32 	%r38, %r38, 1;
	setp.lt.u32 	%p3, %r38, 10;
	@!%p3 bra.uni 	$L__BB0_3;
	bra.uni 	$L__BB0_2;
$L__BB0_3:
	{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0], %r38;
	.param .align 8 .b8 param1[16];
	st.param.v2.b32 	[param1], {%r38, %r37};
	.param .b32 retval0;
	call.uni (retval0),
	helper,
	(
	param0,
	param1
	);
	ld.param.b32 	%r39, [retval0];
	} // callseq 0
	// begin inline asm
	{
	.reg .pred       P1;
	LAB_WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 P1, [mbar], %r39, 10000000;
	@P1 bra.uni DONE;
	bra.uni     LAB_WAIT;
	DONE:
	}
	// end inline asm
	// begin inline asm
	{
	.reg .pred       P1;
	.reg .b32 tmp<2>;
	LAB_WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 P1, [mbar+8], %r39, 10000000;
	@P1 bra.uni DONE;
	bra.uni     LAB_WAIT;
	DONE:
	mov.b32 tmp0, %r39;
	add.s32 tmp1, tmp0, 1;
	}
	// end inline asm
	mbarrier.init.shared::cta.b64 	[mbar], 1;
	mbarrier.arrive.expect_tx.shared::cta.b64 	_, [mbar], 1024;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [smem], [%rd1, {%r2, %r3}], [mbar];
	cp.async.ca.shared.global 	[smem+16], [%rd6], 16;
	cp.async.commit_group;
	cp.async.wait_group 	0;
	prefetch.global.L2 	[%rd6];
	prefetch.tensormap 	[%rd1];
	fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;
	tensormap.replace.tile.global_address.global.b1024.b64 	[%rd1], %rd6;
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 	{%r7, %r8, %r9, %r10}, [%r26];
	stmatrix.sync.aligned.m8n8.x4.shared.b16 	[%r26], {%r7, %r8, %r9, %r10};
	elect.sync 	%r11|%p4, -1;
	elect.sync 	_|%p4, -1;
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	setmaxnreg.inc.sync.aligned.u32 	240;
$L__BB0_4:
	.loc	1 20 1
	ret;

}
	.file	1 "/tmp/synthetic.py"
	.section	.debug_str
	{
$L__info_string0:
.b8 104,101,108,112,101,114,0
	}
"""

#: sm_100a: .reqntid/.explicitcluster/.reqnctapercluster, tcgen05.*, TMA with cta_group, st.async
FAM100 = r""".version 8.7
.target sm_100a
.address_size 64

.extern .shared .align 1024 .b8 smem[];

.visible .entry fam100(
	.param .align 64 .b8 fam100_param_0[128],
	.param .u32 fam100_param_1
)
.reqntid 128, 1, 1
.explicitcluster
.reqnctapercluster 2, 1, 1
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<80>;
	.reg .b64 	%rd<8>;

	mov.b64 	%rd1, fam100_param_0;
	ld.param.u32 	%r1, [fam100_param_1];
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %cluster_ctarank;
	mov.u32 	%r4, smem;
	mapa.shared::cluster.u32 	%r5, %r4, 1;
	setp.eq.s32 	%p1, %r2, 0;
	@!%p1 bra 	$L__BB0_2;
	tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 	[%r4], 32;
	tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
$L__BB0_2:
	bar.sync 	0;
	ld.shared.u32 	%r6, [%r4];
	tcgen05.ld.sync.aligned.32x32b.x4.b32 	{%r10, %r11, %r12, %r13}, [%r6];
	tcgen05.wait::ld.sync.aligned;
	tcgen05.st.sync.aligned.32x32b.x4.b32 	[%r6+4], {%r10, %r11, %r12, %r13};
	tcgen05.wait::st.sync.aligned;
	tcgen05.mma.cta_group::1.kind::f16 	[%r6], %rd2, %rd3, %r7, %p2;
	tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 	[%r5];
	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::1 [%r4], [%rd1, {%r2, %r3}], [%r5];
	st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 	[%r5], %r1, [%r5+8];
	barrier.cluster.arrive.release.aligned;
	barrier.cluster.wait.acquire.aligned;
	griddepcontrol.launch_dependents;
	griddepcontrol.wait;
	@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 	%r6, 32;
	ret;

}
"""


@pytest.mark.parametrize("name,text,arch", [("fam90", FAM90, "sm_90a"), ("fam100", FAM100, "sm_100a")])
def test_families_parse_print_assemble(name: str, text: str, arch: str, tmp_path: Path) -> None:
    fast = ptx.parse_ast(text, name)
    assert fast == ptx.parse_tree(text, name)
    printed = print_module(fast)
    assert _structure(ptx.parse_tree(printed, name)) == _structure(fast)
    if PTXAS is None:
        pytest.skip("ptxas not on PATH")
    check_assembles(text, arch, tmp_path)  # the snippet itself is valid PTX ...
    check_assembles(printed, arch, tmp_path)  # ... and so is our printout of it


def _stmts(text: str) -> list[object]:
    """Body statements of the one function in ``text``."""
    ast = ptx.parse_ast(text, "t")
    assert ast == ptx.parse_tree(text, "t")
    return next(it for it in ast.items if isinstance(it, ptx.Func)).body or []


def _kernel(body: str, decls: str = ".reg .b32 %r<9>;\n.reg .b64 %rd<9>;\n.reg .pred %p<4>;") -> str:
    return (
        f".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 k_p)\n{{\n{decls}\n{body}\n}}\n"
    )


@pytest.mark.parametrize(
    "stmt,opcode,operands",
    [
        ("add.s32 %r1, %r2, -7;", "add.s32", ("%r1", "%r2", ptx.Imm("-7", -7))),
        ("add.s32 %r1, %r2, 0x7fffffff;", "add.s32", ("%r1", "%r2", ptx.Imm("0x7fffffff", 0x7FFFFFFF))),
        ("add.u32 %r1, %r2, 4294967295U;", "add.u32", ("%r1", "%r2", ptx.Imm("4294967295U", 4294967295))),
        ("add.u32 %r1, %r2, 010;", "add.u32", ("%r1", "%r2", ptx.Imm("010", 8))),
        ("and.b32 %r1, %r2, 0b1010;", "and.b32", ("%r1", "%r2", ptx.Imm("0b1010", 10))),
        ("mov.f32 %f1, 0f3F800000;", "mov.f32", ("%f1", ptx.Imm("0f3F800000", None))),
        ("mov.f64 %fd1, 0d3FF0000000000000;", "mov.f64", ("%fd1", ptx.Imm("0d3FF0000000000000", None))),
        ("ld.global.u32 %r1, [%rd1+16];", "ld.global.u32", ("%r1", ptx.Addr("%rd1", 16))),
        ("ld.global.u32 %r1, [%rd1+-4];", "ld.global.u32", ("%r1", ptx.Addr("%rd1", -4))),
        ("ld.global.u32 %r1, [ %rd1 + 0 ];", "ld.global.u32", ("%r1", ptx.Addr("%rd1", 0))),
        ("ld.param.u64 %rd1, [k_p];", "ld.param.u64", ("%rd1", ptx.Addr("k_p"))),
        ("ld.param.u32 %r1, [k_p+8];", "ld.param.u32", ("%r1", ptx.Addr("k_p", 8))),
        ("mov.b64 %rd1, {%r1, %r2};", "mov.b64", ("%rd1", ptx.Vec(("%r1", "%r2")))),
        ("mov.b64 {%r1, _}, %rd1;", "mov.b64", (ptx.Vec(("%r1", "_")), "%rd1")),
        (
            "shfl.sync.bfly.b32 %r1|%p1, %r2, 16, 31, -1;",
            "shfl.sync.bfly.b32",
            (ptx.Dual("%r1", "%p1"), "%r2", ptx.Imm("16", 16), ptx.Imm("31", 31), ptx.Imm("-1", -1)),
        ),
        ("elect.sync _|%p1, -1;", "elect.sync", (ptx.Dual("_", "%p1"), ptx.Imm("-1", -1))),
        ("vote.sync.all.pred %p1, !%p2, -1;", "vote.sync.all.pred", ("%p1", ptx.Neg("%p2"), ptx.Imm("-1", -1))),
        (
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
            (ptx.Addr("%r1"), ptx.Addr("%rd1", 0, (ptx.Vec(("%r2", "%r3")),)), ptx.Addr("%r4")),
        ),
        (
            "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;",
            "mbarrier.try_wait.parity.shared::cta.b64",
            ("%p1", ptx.Addr("%r1"), "%r2"),
        ),
        ("tcgen05.wait::st.sync.aligned;", "tcgen05.wait::st.sync.aligned", ()),
        (
            "call.uni (retval0), f, (param0, param1);",
            "call.uni",
            (ptx.Paren(("retval0",)), "f", ptx.Paren(("param0", "param1"))),
        ),
        (
            "frobnicate.sideways.b32 %r1, %r2, [%rd1+8], 3;",
            "frobnicate.sideways.b32",
            ("%r1", "%r2", ptx.Addr("%rd1", 8), ptx.Imm("3", 3)),
        ),
    ],
)
def test_operand_syntax(stmt: str, opcode: str, operands: tuple[object, ...]) -> None:
    body = _stmts(_kernel(stmt))
    instr = body[-1]
    assert isinstance(instr, ptx.Instr)
    assert (instr.opcode, instr.operands) == (opcode, operands)
    assert instr.text == stmt


def test_guards_labels_scopes() -> None:
    body = _stmts(_kernel("@%p1 bra $L1;\n@!%p2 bra.uni $L1;\n$L1:\n{\n.reg .pred P1;\nLAB: @P1 bra LAB;\n}\nret;"))
    kinds = [type(s).__name__ for s in body]
    assert kinds[-5:] == ["Instr", "Instr", "Label", "Scope", "Instr"]
    assert [body[-5].pred, body[-4].pred] == ["%p1", "!%p2"]
    scope = body[-2]
    assert isinstance(scope, ptx.Scope)
    assert [type(s).__name__ for s in scope.body] == ["VarDecl", "Label", "Instr"]


def test_unknown_instruction_is_opaque_not_an_error() -> None:
    mod = ptx.parse_module(_kernel("frobnicate.sideways.b32 %r1, %r2, 3;\nwibble;"), "t")
    ops = mod.functions[0].ops()
    assert [(o.name, o.kind) for o in ops] == [("frobnicate.sideways.b32", Kind.OPAQUE), ("wibble", Kind.OPAQUE)]
    assert ops[0].results == ("%r1",) and ops[0].operands == ("%r2", 3)
    assert mod.opaque["frobnicate.sideways.b32"] == 1


def test_multiline_and_multi_statement_lines() -> None:
    text = _kernel("add.s32 %r1,\n   %r2,\n   %r3;  mul.lo.s32 %r4, %r1, %r1; /* c; { */ sub.s32 %r5, %r4, 1;")
    ops = ptx.parse_module(text, "t").functions[0].ops()
    assert [o.name for o in ops] == ["add.s32", "mul.lo.s32", "sub.s32"]
    assert [o.line for o in ops] == [9, 11, 11]


def test_crlf_line_ends() -> None:
    text = FAM90.replace("\n", "\r\n")
    fast = ptx.parse_ast(text, "crlf")
    assert fast == ptx.parse_tree(text, "crlf")
    assert _structure(fast) == _structure(ptx.parse_ast(FAM90, "crlf"))


def test_declarations_and_initialisers() -> None:
    text = (
        ".version 8.5\n.target sm_90a\n.address_size 64\n"
        ".global .align 8 .u64 ptrs[2] = {generic(g), generic(g)};\n"
        ".global .align 4 .u32 g = 7;\n"
        ".const .align 4 .b8 t[4] = {1, 2, 3, 4};\n"
        ".extern .shared .align 16 .b8 dyn[];\n"
    )
    ast = ptx.parse_ast(text, "t")
    assert ast == ptx.parse_tree(text, "t")
    decls = [it for it in ast.items if isinstance(it, ptx.VarDecl)]
    assert [d.names[0].init for d in decls] == [["generic(g)", "generic(g)"], "7", ["1", "2", "3", "4"], None]
    assert decls[-1].linkage == (".extern",) and decls[-1].names[0].dims == (None,)


# -------------------------------------------------------------------------------------------- errors

ELEMENTWISE = """\
.version 8.8
.target sm_90a
.address_size 64

.visible .entry k(
\t.param .align 8 .b8 k_param_0[8]
)
.reqntid 128, 1, 1
{
\t.reg .b32 \t%r<8>;
\t.reg .b64 \t%rd<6>;
\tld.param.b64 \t%rd1, [k_param_0];
\tmov.u32 \t%r2, %tid.x;
\tmad.lo.s32 \t%r6, %r2, 100000, %r2;
\tmul.wide.u32 \t%rd3, %r6, 4;
\tadd.s64 \t%rd4, %rd1, %rd3;
\tld.global.b32 \t%r7, [%rd4];
\tret;
}
"""


def _error(text: str) -> list[IRSyntaxError]:
    errs = []
    for parse in (ptx.parse_module, ptx.parse_tree):
        with pytest.raises(IRSyntaxError) as ei:
            parse(text, "bad.ptx")
        errs.append(ei.value)
    assert errs[0].line == errs[1].line and errs[0].col == errs[1].col, errs
    return errs


@pytest.mark.parametrize(
    "mangle,line,col,message,expect",
    [
        # truncated inside an instruction
        (lambda s: s[: s.index("100000") + 3], 14, 27, "end of input", "','"),
        # truncated at a statement boundary: the function is never closed
        (lambda s: s[: s.index("\tadd.s64")], 16, 1, "end of input", "'}'"),
        # garbage in the middle of an instruction: a missing comma
        (lambda s: s.replace("%r2, 100000", "%r2 100000"), 14, 23, "'100000'", "','"),
        # a character PTX does not have
        (lambda s: s.replace("100000", "10#000"), 14, 26, "'#'", "','"),
        # an unclosed address
        (lambda s: s.replace("[%rd4]", "[%rd4"), 17, 27, "';'", "']'"),
        # an empty operand
        (lambda s: s.replace("%rd1, %rd3", "%rd1, , %rd3"), 16, 23, "','", "'['"),
        # junk at module level
        (lambda s: s.replace(".address_size 64", ".address_size 64\nfoo bar"), 4, 1, "'foo'", "'.entry'"),
        # one '}' too many
        (lambda s: s + "}\n", 20, 1, "'}'", "'.entry'"),
        # a label where an opcode must be
        (lambda s: s.replace("\tret;", "\t@%p1 L1: ret;"), 18, 7, "L1", "OPCODE"),
    ],
)
def test_errors_have_real_positions(mangle, line: int, col: int, message: str, expect: str) -> None:  # type: ignore[no-untyped-def]
    text = mangle(ELEMENTWISE)
    errs = _error(text)
    for e in errs:
        assert (e.line, e.col) == (line, col), str(e)
        assert message in e.message, str(e)
        assert expect in e.expected, str(e)
        assert str(e).startswith(f"bad.ptx:{line}:{col}: ")


def test_fuzz_fast_path_agrees_with_grammar() -> None:
    """Mutated real PTX: the fast path and the grammar accept the same texts, with the same tree, and
    reject the same texts at the same place; nothing but IRSyntaxError ever comes out."""
    import random

    rng = random.Random(7)
    alphabet = [*'{}[]();,.%@!|<>+-=:_ ax0\n"', "\t", "// c", "/*", "*/", ".reg", "bra", "$L", ".loc 1 2 3", "0x", "U"]
    for _ in range(400):
        base = rng.choice((ELEMENTWISE, FAM90, FAM100))
        s = list(base)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(s))
            r = rng.random()
            if r < 0.4:
                s[i] = rng.choice(alphabet)
            elif r < 0.7:
                s.insert(i, rng.choice(alphabet))
            else:
                del s[i]
        text = "".join(s)
        got = []
        for parse in (ptx.parse_ast, ptx.parse_tree):
            try:
                got.append(parse(text, "fuzz.ptx"))
            except IRSyntaxError as e:
                assert e.line >= 1 and e.col >= 1
                got.append((e.line, e.col))
        assert got[0] == got[1], text
        if isinstance(got[0], ptx.PtxAst):
            ptx.lower(got[0])
