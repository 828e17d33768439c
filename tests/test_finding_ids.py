"""Finding ids are stable (README, "Finding ids"): unrelated ops, blank and comment lines and renumbered
SSA values / registers in a real captured module leave every id, and the finding set, unchanged."""

from __future__ import annotations

import lzma
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from irbuild import finding as _finding

from irscan.findings import Finding, assign_ids, canonical_expression, kernel_key, portable_path
from irscan.pipeline import ir_files, scan_capture, scan_paths

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = sorted(p.parent for p in (ROOT / "corpus" / "captures").glob("*/*/meta.json"))
#: third-party captures whose expressions name IR values (an MLIR loop-carried %N, PTX %rN registers)
THIRDPARTY = [
    next((ROOT / "corpus" / "thirdparty" / run).glob(f"{i}_*"))
    for run, i in (("fa4_bwd_sm90a", "001"), ("fa4_bwd_sm100a", "001"), ("quack_rmsnorm_fwd_sm90a", "000"))
]

STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _outside_strings(line: str, sub: Any) -> str:
    """Apply ``sub`` to the parts of ``line`` outside string literals (inline asm, names, locations)."""
    out, last = [], 0
    for m in STRING.finditer(line):
        out += [sub(line[last : m.start()]), m.group()]
        last = m.end()
    return "".join([*out, sub(line[last:])])


#: added to every renumbered value: a rebuild's numbers are longer or shorter, not only reordered
SHIFT = 100_000


def _renumbering(numbers: set[str]) -> dict[str, str]:
    """A bijection of value numbers that reorders them (within each length, the sorted order reversed)
    and moves them all by SHIFT."""
    by_len: dict[int, list[str]] = {}
    for n in numbers:
        by_len.setdefault(len(n), []).append(n)
    out: dict[str, str] = {}
    for group in by_len.values():
        group.sort(key=int)
        out.update((a, str(int(b) + SHIFT)) for a, b in zip(group, reversed(group), strict=True))
    return out


MLIR_SSA = re.compile(r"%(\d+)\b")
MLIR_KERNEL = re.compile(r"^\s*llvm\.func @kernel_.*\{\s*$")


def mutate_mlir(text: str) -> str:
    """Comment and blank lines at the top, unused constants at the top of every kernel body, a comment
    between every few ops, and every numbered SSA value renamed."""
    used = {m.group(1) for m in MLIR_SSA.finditer(text)}
    perm = _renumbering(used)

    def rename(part: str) -> str:
        return MLIR_SSA.sub(lambda m: f"%{perm[m.group(1)]}", part)

    out = ["// irscan stability test: unrelated lines", ""]
    for i, line in enumerate(text.splitlines()):
        out.append(_outside_strings(line, rename))
        if MLIR_KERNEL.match(line):
            out += [
                "      // padding",
                "      %irscan_pad0 = llvm.mlir.constant(7 : i32) : i32",
                "",
                "      %irscan_pad1 = llvm.mlir.constant(123456789 : i64) : i64",
            ]
        elif i % 7 == 3 and line.startswith("      %"):
            out.append("      // an unrelated comment")
    return "\n".join(out) + "\n"


PTX_REG_DECL = re.compile(r"(\.reg\s+\.\w+\s+%(\w+?)<)(\d+)>")
PTX_REG = re.compile(r"%([A-Za-z_]\w*?)(\d+)\b")


def mutate_ptx(text: str) -> str:
    """A comment at the top, an extra register and ``mov`` at the top of every entry body, comment and
    blank lines inside it, and the registers of every declared class renumbered."""
    classes = {m.group(2) for m in PTX_REG_DECL.finditer(text)}
    text = PTX_REG_DECL.sub(lambda m: f"{m.group(1)}{int(m.group(3)) + SHIFT}>", text)  # room for the new numbers
    used = {(m.group(1), m.group(2)) for m in PTX_REG.finditer(text) if m.group(1) in classes}
    perm: dict[tuple[str, str], str] = {}
    for cls in classes:
        perm.update({(cls, a): b for a, b in _renumbering({n for c, n in used if c == cls}).items()})

    def rename(part: str) -> str:
        return PTX_REG.sub(lambda m: f"%{m.group(1)}{perm.get((m.group(1), m.group(2)), m.group(2))}", part)

    out, in_entry = ["// irscan stability test: unrelated lines", ""], False
    for i, line in enumerate(text.splitlines()):
        in_entry = in_entry or line.startswith(".visible .entry")
        out.append(_outside_strings(line, rename))
        if in_entry and line == "{":
            out += [
                "\t// padding",
                "\t.reg .b32 \t%irpad<2>;",
                "",
                "\tmov.u32 \t%irpad0, 7;",
                "\tmov.u32 \t%irpad1, %irpad0;",
            ]
            in_entry = False
        elif i % 9 == 4 and line.startswith("\t") and line.rstrip().endswith(";"):
            out += ["\t// an unrelated comment", ""]
    return "\n".join(out) + "\n"


def _copy(folder: Path, dest: Path, mutate: bool) -> Path:
    """The capture as plain files under ``dest`` (decompressed), mutated or not."""
    dest.mkdir(parents=True)
    shutil.copy(folder / "meta.json", dest / "meta.json")
    for f in ir_files(folder):
        text = lzma.decompress(f.read_bytes()).decode() if f.suffix == ".xz" else f.read_text()
        name = f.name.removesuffix(".xz")
        if mutate:
            text = mutate_mlir(text) if name.endswith(".mlir") else mutate_ptx(text)
        (dest / name).write_text(text)
    return dest


def _view(f: Finding) -> tuple[Any, ...]:
    """What must survive the mutation: everything but IR lines, IR text and messages naming IR values."""
    ww = (f.wraps_when or {}).get("text")
    kinds = tuple(s["kind"] for s in f.sinks)
    return (f.id, f.twin, f.ir, f.check, f.severity, f.kernel, f.file, f.line, f.col,
            canonical_expression(f.expression), ww and canonical_expression(ww), kinds)  # fmt: skip


@pytest.mark.parametrize("folder", CAPTURES + THIRDPARTY, ids=lambda p: p.parent.name)
def test_unrelated_ops_lines_and_renumbering_leave_ids_unchanged(folder: Path, tmp_path: Path) -> None:
    before = scan_capture(_copy(folder, tmp_path / "a" / folder.name, mutate=False)).findings
    after = scan_capture(_copy(folder, tmp_path / "b" / folder.name, mutate=True)).findings
    assert sorted(map(_view, after)) == sorted(map(_view, before))
    if before:  # the mutation did move the IR: ids that hashed IR lines would have changed
        assert [f.ir_line for f in after] != [f.ir_line for f in before]
    texts = [p.read_text() for p in sorted((tmp_path / "b" / folder.name).glob("module.*"))]
    assert all("irscan stability test" in t for t in texts)


def test_the_mutation_renames_ir_values_a_finding_names() -> None:
    """The third-party cases carry SSA and register names in their expressions, so the canonical form
    is exercised (not only line shifts)."""
    res = scan_paths(THIRDPARTY[:2])
    everything = res.findings + res.rule_suppressed  # ids are given to the held-back findings too
    named = [f.expression for f in everything if "%" in f.expression]
    assert {f.ir for f in everything if "%" in f.expression} == {"mlir", "ptx"}, named
    assert all("%r" not in canonical_expression(e) and "^bb" not in canonical_expression(e) for e in named)


def test_ids_are_unique_in_a_document_and_twins_point_both_ways() -> None:
    res = scan_paths([ROOT / "corpus" / "captures", ROOT / "corpus" / "thirdparty"])
    ids = Counter(f.id for f in res.findings)
    assert ids and max(ids.values()) == 1
    everything = res.findings + res.rule_suppressed  # a twin may be held back (the MLIR by rule (c), say)
    assert max(Counter(f.id for f in everything).values()) == 1
    by_id = {f.id: f for f in everything}
    twinned = [f for f in everything if f.twin]
    assert twinned and all(by_id[f.twin].twin == f.id for f in twinned)


def test_the_same_capture_twice_folds_into_one_finding_per_access_and_twins_stay_within_a_folder(
    tmp_path: Path,
) -> None:
    """Issue 8: the same kernel in several modules is one finding per access, IR and check, with both
    modules listed; so no id repeats (no ``-2``) and a twin still names a finding of its own folder."""
    src = ROOT / "corpus" / "captures" / "elementwise_static_100k"
    for side in ("a", "b"):
        shutil.copytree(src, tmp_path / side)
    one = scan_paths([src]).findings
    two = scan_paths([tmp_path]).findings
    assert len(two) == len(one)
    assert {f.id for f in two} == {f.id for f in one}
    for f in two:
        assert len(f.modules) == 2 and f.occurrences == 2 * next(g.occurrences for g in one if g.id == f.id)
        twin = next(g for g in two if g.id == f.twin)
        assert Path(twin.ir_file).parent == Path(f.ir_file).parent


def test_id_ignores_what_the_compiler_renumbers_and_keeps_what_the_reader_names() -> None:
    f = _finding()
    same = [
        _finding(ir_line=4000, ir_file="elsewhere/module.mlir", message="other"),
        _finding(kernel="kernel_cutlass_copy_kernel_tensorptrf32gmemalign16o8192i64div41_3"),
        _finding(file="/ci/build/prog/k.py"),
    ]
    assert all(g.id == f.id for g in same)
    different = [
        _finding(ir="ptx"),
        _finding(check="trunc-then-extend"),
        _finding(line=32),
        _finding(expression="100000*ctaid.y"),
        _finding(kernel="kernel_cutlass_other_kernel_tensorptrf32gmemalign16o1000_0"),
    ]
    assert len({f.id, *(g.id for g in different)}) == 1 + len(different)
    assert _finding(expression="128*(%r462 (IR line 598))").id == _finding(expression="128*(%r17 (IR line 9))").id


def test_duplicates_are_numbered_by_column_then_sink_kind_not_by_ir_line() -> None:
    fs = [
        _finding(col=30, ir_line=1),
        _finding(col=5, ir_line=2, sink={"kind": "store"}),
        _finding(col=5, ir_line=3, sink={"kind": "load"}),
    ]
    base = fs[0].id
    assign_ids(fs)
    assert [f.id for f in fs] == [f"{base}-3", f"{base}-2", base]
    assign_ids(reversed(fs))  # scan order does not matter when column or sink tell them apart
    assert [f.id for f in fs] == [f"{base}-3", f"{base}-2", base]


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("kernel_cutlass_copy_kernel_tensorptrf32gmemalign16o1000001000001000001_tensorptrf32gmemalign16o10_0",
         "copy_kernel"),
        ("kernel_cutlass_mlp_down_tensorptrbf16gmemalign16o4851201382470778880138241_tensorptrf32gm_30_1", "mlp_down"),
        ("kernel_cutlass_tma_copy_kernel_CopyAtom_ThrID10_TVLayoutSrc1409601_TVLayoutDst1409601__0", "tma_copy_kernel"),
        ("kernel_cutlass_gate_rowsum_tensorptrbf16gmemalign16o481382451207077888051201_30_0", "gate_rowsum"),
        ("kernel_cutlass_kernel_quackrmsnormRMSNorm_object_at__tensorptrbf16gmemalign8o4096i64div41_0",
         "kernel_quackrmsnormRMSNorm"),
        ("kernel_cutlass_kernel___main__Tile_object_at__tensorptrf32gmemo1_0", "kernel___main__Tile"),
        ("kernel_cutlass_foo_30_2", "foo"),
        ("kernel_cutlass_conv_2d_tensorptrf32gmemo1_0", "conv_2d"),
    ],
)  # fmt: skip
def test_kernel_key_drops_the_layout_mangling_and_the_counter(name: str, key: str) -> None:
    assert kernel_key(name) == key


def test_kernel_keys_of_the_corpus_are_python_names() -> None:
    import json

    names = {k["name"] for m in ROOT.glob("corpus/*/*/*/meta.json") for k in json.loads(m.read_text())["kernels"]}
    keys = {kernel_key(n) for n in names}
    assert not any(re.search(r"tensor|gmem|align|_\d+$", k) for k in keys), keys
    assert {"copy_kernel", "row_copy", "kernel_flash_attncuteflash_fwd_sm90FlashAttentionForwardSm90"} <= keys


def test_portable_path() -> None:
    site = "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/flash_attn/cute/flash_fwd.py"
    assert portable_path(site) == "flash_attn/cute/flash_fwd.py"
    assert portable_path("/usr/lib/python3/dist-packages/quack/rmsnorm.py") == "quack/rmsnorm.py"
    assert portable_path("corpus/programs/elementwise_static_100k.py") == "elementwise_static_100k.py"
    assert portable_path("C:\\work\\kernels\\k.py") == "k.py"
