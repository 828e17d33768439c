"""irscan/reaching.py: reaching definitions over PTX's non-SSA registers.

Hand-written PTX for each rule (redefinition, loops, guarded definitions, joins, uses with no
definition, inline-asm scopes), then real captures checked against an independent, slow oracle
(a backward search from each use), and the speed on the biggest corpus file.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from irbuild import ptx_kernel

from irscan.analysis.reaching import GUARD, cfg_successors, reaching_definitions
from irscan.frontend import ptx
from irscan.ir import Function

ROOT = Path(__file__).resolve().parents[1]
CORPUS_PTX = sorted(
    [*ROOT.glob("corpus/captures/**/module.ptx"), *ROOT.glob("corpus/thirdparty/**/module.ptx.xz")], key=str
)


def fn_of(body: str) -> Function:
    return ptx_kernel(body, rd=4)


def by_text(fn: Function) -> dict[str, int]:
    """Op text -> op id (the snippets keep texts unique)."""
    out = {}
    for op in fn.ops():
        assert op.text not in out, op.text
        out[op.text] = op.id
    return out


def defs(fn: Function, text: str, operand: int) -> list[str]:
    """The texts of the ops whose definitions reach operand ``operand`` of the op written ``text``."""
    ids = by_text(fn)
    texts = {v: k for k, v in ids.items()}
    return [texts[i] for i in reaching_definitions(fn, guards=True)[(ids[text], operand)]]


def test_straight_line_redefinition() -> None:
    fn = fn_of("mov.u32 %r1, 1;\nmov.u32 %r1, 2;\nadd.s32 %r2, %r1, 1;\nmov.u32 %r1, 3;\nadd.s32 %r3, %r1, %r2;")
    assert defs(fn, "add.s32 %r2, %r1, 1;", 0) == ["mov.u32 %r1, 2;"]
    assert defs(fn, "add.s32 %r3, %r1, %r2;", 0) == ["mov.u32 %r1, 3;"]
    assert defs(fn, "add.s32 %r3, %r1, %r2;", 1) == ["add.s32 %r2, %r1, 1;"]


def test_loop_carried_definition() -> None:
    fn = fn_of(
        "mov.u32 %r1, 0;\n"
        "$L_loop:\n"
        "add.s32 %r1, %r1, 1;\n"
        "setp.lt.s32 %p1, %r1, 10;\n"
        "@%p1 bra $L_loop;\n"
        "mov.u32 %r2, %r1;"
    )
    assert defs(fn, "add.s32 %r1, %r1, 1;", 0) == ["mov.u32 %r1, 0;", "add.s32 %r1, %r1, 1;"]
    assert defs(fn, "setp.lt.s32 %p1, %r1, 10;", 0) == ["add.s32 %r1, %r1, 1;"]
    assert defs(fn, "@%p1 bra $L_loop;", GUARD) == ["setp.lt.s32 %p1, %r1, 10;"]
    assert defs(fn, "mov.u32 %r2, %r1;", 0) == ["add.s32 %r1, %r1, 1;"]


def test_use_before_def_in_a_loop_body_sees_the_back_edge() -> None:
    fn = fn_of(
        "mov.u32 %r1, 0;\n"
        "mov.u32 %r3, 0;\n"
        "$L_head:\n"
        "add.s32 %r2, %r3, %r1;\n"
        "mul.lo.s32 %r3, %r2, 3;\n"
        "add.s32 %r1, %r1, 1;\n"
        "setp.ne.s32 %p1, %r1, 8;\n"
        "@%p1 bra.uni $L_head;\n"
        "ret;"
    )
    assert defs(fn, "add.s32 %r2, %r3, %r1;", 0) == ["mov.u32 %r3, 0;", "mul.lo.s32 %r3, %r2, 3;"]
    assert defs(fn, "add.s32 %r2, %r3, %r1;", 1) == ["mov.u32 %r1, 0;", "add.s32 %r1, %r1, 1;"]


def test_guarded_definition_does_not_kill() -> None:
    fn = fn_of(
        "mov.u32 %r1, 1;\n"
        "@%p1 mov.u32 %r1, 2;\n"
        "add.s32 %r2, %r1, 1;\n"
        "@!%p2 mov.u32 %r1, 4;\n"
        "add.s32 %r4, %r1, 1;\n"
        "mov.u32 %r1, 3;\n"
        "add.s32 %r3, %r1, 1;"
    )
    assert defs(fn, "add.s32 %r2, %r1, 1;", 0) == ["mov.u32 %r1, 1;", "@%p1 mov.u32 %r1, 2;"]
    assert defs(fn, "add.s32 %r4, %r1, 1;", 0) == ["mov.u32 %r1, 1;", "@%p1 mov.u32 %r1, 2;", "@!%p2 mov.u32 %r1, 4;"]
    assert defs(fn, "add.s32 %r3, %r1, 1;", 0) == ["mov.u32 %r1, 3;"]


def test_guarded_definition_across_blocks() -> None:
    fn = fn_of("mov.u32 %r1, 1;\n@%p1 mov.u32 %r1, 2;\nbra.uni $L_next;\n$L_next:\nadd.s32 %r2, %r1, 1;")
    assert defs(fn, "add.s32 %r2, %r1, 1;", 0) == ["mov.u32 %r1, 1;", "@%p1 mov.u32 %r1, 2;"]


def test_if_else_join() -> None:
    fn = fn_of(
        "setp.eq.s32 %p1, %r9, 0;\n"
        "@%p1 bra $L_else;\n"
        "mov.u32 %r1, 10;\n"
        "bra.uni $L_join;\n"
        "$L_else:\n"
        "mov.u32 %r1, 20;\n"
        "$L_join:\n"
        "add.s32 %r2, %r1, 1;"
    )
    assert defs(fn, "add.s32 %r2, %r1, 1;", 0) == ["mov.u32 %r1, 10;", "mov.u32 %r1, 20;"]
    # %r9 is read but never written: no definition reaches it
    assert defs(fn, "setp.eq.s32 %p1, %r9, 0;", 0) == []


def test_unreachable_code_and_dead_defs() -> None:
    fn = fn_of("mov.u32 %r1, 1;\nbra.uni $L_end;\nmov.u32 %r1, 2;\n$L_end:\nadd.s32 %r2, %r1, 1;")
    assert defs(fn, "add.s32 %r2, %r1, 1;", 0) == ["mov.u32 %r1, 1;"]


def test_address_operands_vectors_and_symbols() -> None:
    fn = fn_of(
        "ld.param.u64 %rd1, [k_p];\n"
        "ld.global.v2.u32 {%r1, %r2}, [%rd1+8];\n"
        "mov.b64 %rd2, {%r1, %r2};\n"
        "st.global.u32 [%rd2], %r2;"
    )
    rd = reaching_definitions(fn)
    ids = by_text(fn)
    ld = ids["ld.global.v2.u32 {%r1, %r2}, [%rd1+8];"]
    assert rd[(ld, 0)] == [ids["ld.param.u64 %rd1, [k_p];"]]
    pack = ids["mov.b64 %rd2, {%r1, %r2};"]
    assert rd[(pack, 0)] == [ld] and rd[(pack, 1)] == [ld]
    st = ids["st.global.u32 [%rd2], %r2;"]
    assert rd[(st, 0)] == [pack] and rd[(st, 1)] == [ld]
    # the parameter symbol is not a register: no entry
    assert (ids["ld.param.u64 %rd1, [k_p];"], 0) not in rd


def test_inline_asm_scopes_are_separate_registers() -> None:
    asm = (
        "{\n.reg .pred P1;\nLAB_WAIT:\nmbarrier.try_wait.parity.shared.b64 P1, [%r1], %r2;\n"
        "@P1 bra.uni DONE;\nbra.uni LAB_WAIT;\nDONE:\n}\n"
    )
    fn = fn_of("mov.u32 %r1, 0;\nmov.u32 %r2, 0;\n" + asm + asm)
    rd = reaching_definitions(fn, guards=True)
    assert all(k >= 0 for _, k in reaching_definitions(fn))  # guards only when asked for
    waits = [o for o in fn.ops() if o.name.startswith("mbarrier")]
    bras = [o for o in fn.ops() if o.pred]
    assert [rd[(b.id, GUARD)] for b in bras] == [[waits[0].id], [waits[1].id]]
    # each wait loops on itself: its address is the one %r1 definition
    assert rd[(waits[1].id, 0)] == [fn.ops()[0].id]


def test_cfg_successors() -> None:
    fn = fn_of("$L_a:\n@%p1 bra $L_a;\nbra.uni $L_b;\n$L_b:\nret;")
    assert cfg_successors(fn) == [[1], [1, 2], [3], []]


# --------------------------------------------------------------------------------- real captures


def oracle(fn: Function, op_index: tuple[int, int], reg: str) -> list[int]:
    """Backward search from a use: the definitions of ``reg`` met first on some path, guarded ones
    letting the search go on."""
    blocks = fn.blocks
    succ = cfg_successors(fn)
    preds: list[list[int]] = [[] for _ in blocks]
    for i, ss in enumerate(succ):
        for s in ss:
            preds[s].append(i)
    found: set[int] = set()

    def scan(bi: int, upto: int) -> bool:
        """Scan block bi backwards from op index upto-1; True if an unguarded definition stops it."""
        for op in reversed(blocks[bi].ops[:upto]):
            if reg in op.results:
                found.add(op.id)
                if op.pred is None:
                    return True
        return False

    live = {0}
    todo = [0]
    while todo:
        for s in succ[todo.pop()]:
            if s not in live:
                live.add(s)
                todo.append(s)
    preds = [[p for p in ps if p in live] for ps in preds]  # code that never runs defines nothing
    bi, k = op_index
    if not scan(bi, k):
        seen: set[int] = set()
        stack = list(preds[bi])
        while stack:
            b = stack.pop()
            if b in seen:
                continue
            seen.add(b)
            if not scan(b, len(blocks[b].ops)):
                stack.extend(preds[b])
    return sorted(found)


def _check_against_oracle(fn: Function, sample: int | None, seed: int = 0) -> int:
    rd = reaching_definitions(fn, guards=True)
    where = {op.id: (bi, k) for bi, b in enumerate(fn.blocks) for k, op in enumerate(b.ops)}
    ops = {op.id: op for op in fn.ops()}
    keys = sorted(rd)
    if sample is not None and len(keys) > sample:
        keys = random.Random(seed).sample(keys, sample)
    for op_id, idx in keys:
        op = ops[op_id]
        reg = op.pred.lstrip("!") if idx == GUARD else op.operands[idx]
        assert isinstance(reg, str)
        got = rd[(op_id, idx)]
        assert got == oracle(fn, where[op_id], reg), (op.text, idx, reg)
        for d in got:
            assert reg in ops[d].results
    return len(keys)


def test_real_capture_elementwise() -> None:
    paths = sorted(ROOT.glob("corpus/captures/elementwise_static_100k/*/module.ptx"))
    if not paths:
        pytest.skip("corpus/captures/elementwise_static_100k not captured yet")
    fn = ptx.parse_file(paths[0]).kernels()[0]
    rd = reaching_definitions(fn, guards=True)
    # straight-line NVVM output: every register read has exactly one definition
    assert rd and all(len(v) == 1 for v in rd.values())
    assert _check_against_oracle(fn, None) == len(rd)


@pytest.mark.parametrize("path", CORPUS_PTX, ids=lambda p: "/".join(p.relative_to(ROOT).parts[-3:-1]))
def test_corpus_against_oracle(path: Path) -> None:
    mod = ptx.parse_file(path)
    for fn in mod.functions:
        _check_against_oracle(fn, sample=300)


def _random_body(rng: random.Random) -> str:
    """A small random PTX body: labels, guarded and plain branches, returns, guarded definitions."""
    labels = [f"$L{i}" for i in range(rng.randint(1, 6))]
    lines = [f"{lab}:" for lab in labels]
    for _ in range(rng.randint(1, 30)):
        c = rng.random()
        if c < 0.2:
            lines.append(f"{rng.choice(['', '@%p1 ', '@!%p2 '])}bra {rng.choice(labels)};")
        elif c < 0.25:
            lines.append("ret;")
        elif c < 0.35:
            lines.append(f"setp.lt.s32 %p{rng.randrange(1, 4)}, %r{rng.randrange(5)}, 3;")
        else:
            g = rng.choice(["", "", "@%p1 ", "@!%p3 "])
            lines.append(f"{g}add.s32 %r{rng.randrange(5)}, %r{rng.randrange(5)}, %r{rng.randrange(5)};")
    rng.shuffle(lines)
    return "\n".join(lines) + "\nret;"


@pytest.mark.parametrize("seed", range(40))
def test_random_cfgs_against_oracle(seed: int) -> None:
    """Irreducible loops, loops into the entry, unreachable blocks, guarded redefinitions: the sparse
    (phi-node) answer equals the backward search on every read."""
    fn = fn_of(_random_body(random.Random(seed)))
    assert _check_against_oracle(fn, None) > 0
