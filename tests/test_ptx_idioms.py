"""PTX disguises of a 64 -> 32 -> 64 narrowing (irscan/frontend/ptx/idioms.py), one small PTX kernel each.

Each form is lowered to TRUNC + SEXT/ZEXT (the vocabulary MLIR has), so ``trunc-then-extend`` reports
it with no PTX knowledge; near misses (another shift amount, the source rewritten in between, a guard,
a block boundary) are left as they are.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from irscan.frontend import ptx
from irscan.ir import Function, Kind
from irscan.pipeline import scan_paths

HEAD = """.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_p, .param .u64 k_n)
{
.reg .pred %p<2>;
.reg .b32 %r<10>;
.reg .b64 %rd<20>;
ld.param.u64 %rd1, [k_p];
ld.param.u64 %rd2, [k_n];
mov.u32 %r5, %ctaid.x;
mul.wide.u32 %rd3, %r5, 1048576;
add.s64 %rd4, %rd3, %rd2;
"""
#: the narrowed-and-extended %rd10 indexes a global load
TAIL = """shl.b64 %rd11, %rd10, 2;
add.s64 %rd12, %rd1, %rd11;
ld.global.u32 %r9, [%rd12];
st.global.u32 [%rd12+4], %r9;
ret;
}
"""
#: form -> (PTX, whether the extension is signed)
FORMS = {
    "shl 32, shr.s64 32": ("shl.b64 %rd5, %rd4, 32;\nshr.s64 %rd10, %rd5, 32;", True),
    "mul 2^32, shr.s64 32": ("mul.lo.s64 %rd5, %rd4, 4294967296;\nshr.s64 %rd10, %rd5, 32;", True),
    "mul 3*2^32, shr.u64 32": ("mul.lo.s64 %rd5, %rd4, 12884901888;\nshr.u64 %rd10, %rd5, 32;", False),
    "shl 33, shr.s64 32": ("shl.b64 %rd5, %rd4, 33;\nshr.s64 %rd10, %rd5, 32;", True),
    "cvt.u32.u64, cvt.s64.s32": ("cvt.u32.u64 %r1, %rd4;\ncvt.s64.s32 %rd10, %r1;", True),
    "cvt.u32.u64, cvt.u64.u32": ("cvt.u32.u64 %r1, %rd4;\ncvt.u64.u32 %rd10, %r1;", False),
    "bfe.s64 0 32": ("bfe.s64 %rd10, %rd4, 0, 32;", True),
    "bfe.u64 0 32": ("bfe.u64 %rd10, %rd4, 0, 32;", False),
    "mov.b64 unpack, cvt.s64.s32": ("mov.b64 {%r1, %r2}, %rd4;\ncvt.s64.s32 %rd10, %r1;", True),
}
#: near misses: not a narrowing of %rd4 (no TRUNC of it)
NOT = {
    "shr by 31": "shl.b64 %rd5, %rd4, 32;\nshr.s64 %rd10, %rd5, 31;",
    "source rewritten in between": "shl.b64 %rd5, %rd4, 32;\nadd.s64 %rd4, %rd4, 1;\nshr.s64 %rd10, %rd5, 32;",
    "guarded shr": "shl.b64 %rd5, %rd4, 32;\n@%p1 shr.s64 %rd10, %rd5, 32;",
    "another block": "shl.b64 %rd5, %rd4, 32;\n$L1:\nshr.s64 %rd10, %rd5, 32;",
    "mul by 2^31": "mul.lo.s64 %rd5, %rd4, 2147483648;\nshr.s64 %rd10, %rd5, 32;",
    "bfe of other bits": "bfe.s64 %rd10, %rd4, 8, 32;",
}


def fn_of(body: str) -> Function:
    return ptx.parse_module(HEAD + body + "\n" + TAIL, "t.ptx").functions[0]


def extension_of_rd10(fn: Function) -> tuple[Kind, Kind | None, bool | None]:
    """(kind of %rd10's definition, kind of the def of its operand, signedness of the extension)."""
    ops = fn.ops()
    d = next(o for o in ops if o.results == ("%rd10",))
    src = next((o for o in ops if d.operands and o.results == (d.operands[0],)), None)
    return d.kind, src.kind if src else None, d.signed


@pytest.mark.parametrize("form", FORMS)
def test_form_lowers_to_trunc_then_extend(form: str) -> None:
    body, signed = FORMS[form]
    fn = fn_of(body)
    assert extension_of_rd10(fn) == (Kind.SEXT if signed else Kind.ZEXT, Kind.TRUNC, signed)
    ids = [o.id for o in fn.ops()]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)  # extra ops numbered in program order
    assert all(o.text for o in fn.ops())  # every op keeps the instruction's text


@pytest.mark.parametrize("form", FORMS)
def test_form_is_reported_as_trunc_then_extend(form: str, tmp_path: Path) -> None:
    p = tmp_path / "k.ptx"
    p.write_text(HEAD + FORMS[form][0] + "\n" + TAIL)
    found = scan_paths([p]).findings
    assert [f.check for f in found] == ["trunc-then-extend"], [f.message for f in found]


@pytest.mark.parametrize("case", NOT)
def test_near_misses_are_not_rewritten(case: str) -> None:
    fn = fn_of(NOT[case])
    assert not any(o.kind is Kind.TRUNC and o.operands == ("%rd4",) for o in fn.ops())
    assert not any("idiom" in o.attrs for o in fn.ops())


def test_the_pair_is_the_narrowing_in_reports() -> None:
    fn = fn_of(FORMS["shl 32, shr.s64 32"][0])
    trunc = next(o for o in fn.ops() if o.kind is Kind.TRUNC)
    assert trunc.text == "shl.b64 %rd5, %rd4, 32; shr.s64 %rd10, %rd5, 32;"
    assert trunc.attrs["idiom"] == "shl by 1*2^32 then shr.s64 32"
    # the shl itself stays: its value may have other users
    assert any(o.kind is Kind.SHL and o.results == ("%rd5",) for o in fn.ops())


def test_unpack_gives_both_halves() -> None:
    fn = fn_of(FORMS["mov.b64 unpack, cvt.s64.s32"][0])
    by_result = {o.results[0]: o for o in fn.ops() if o.results}
    hi = by_result["%r2"]
    assert (hi.kind, hi.width, hi.src_width) == (Kind.TRUNC, 32, 64)
    shift = by_result[str(hi.operands[0])]
    assert (shift.kind, shift.operands) == (Kind.LSHR, ("%rd4", 32))


def test_a_trunc_of_an_extension_is_no_narrowing(tmp_path: Path) -> None:
    """``cvt.u32.u64`` of ``cvt.u64.u32 %r`` gives %r back bit for bit (a 32-bit value NVVM keeps
    widened, cudnn's split-KV combine loop counter): no trunc-then-extend; a 32-bit wrap before the
    extension stays a narrow-widened-late finding (flashinfer MSA's shl.b32 11 row offset)."""
    body = """mov.u32 %r6, %ctaid.y;
mul.lo.s32 %r7, %r5, 2048;
add.s32 %r8, %r7, %r6;
cvt.u64.u32 %rd5, %r8;
cvt.u32.u64 %r2, %rd5;
cvt.s64.s32 %rd10, %r2;
"""
    p = tmp_path / "k.ptx"
    p.write_text(HEAD + body + TAIL)
    found = scan_paths([p]).findings
    assert [f.check for f in found] == ["narrow-widened-late"], [f.message for f in found]
    # 2048*ctaid.x + ctaid.y passes 2^31 - 1 from ctaid.x 1,048,545 with ctaid.y at 65,534
    assert found[0].wraps_when is not None and found[0].wraps_when["text"] == "ctaid.x >= 1048545"


@pytest.mark.parametrize("clamp", ["min.s64", "max.s64"])
def test_a_widened_offset_clamped_in_64_bits_still_reaches_the_address(clamp: str, tmp_path: Path) -> None:
    # flashinfer's gathered K column, min(k_base + 8*chunk, k_last) with the i64 k_last: the i32 sum
    # wraps before the cvt, and the clamp passes the wrapped (negative) column on to the load
    p = tmp_path / "k.ptx"
    p.write_text(HEAD + f"shl.b32 %r6, %r5, 20;\ncvt.s64.s32 %rd9, %r6;\n{clamp} %rd10, %rd9, %rd2;\n" + TAIL)
    found = scan_paths([p]).findings
    assert [f.check for f in found] == ["narrow-widened-late"], [f.message for f in found]
    assert found[0].wraps_when is not None and found[0].wraps_when.get("threshold") == 2048
