"""irscan report's parts on small inputs: the delta reducer, the user's terms and the witness table,
the chain picture, the markdown's sections, and the CLI's bad input (unknown ids, nothing reproduces)."""

from __future__ import annotations

import json
import re
import shutil
import xml.dom.minidom
from pathlib import Path
from typing import Any

import pytest

from irscan.bugreport.collect import group, load_findings
from irscan.bugreport.reduce import Target, ddmin_lines, dsl_accepts
from irscan.bugreport.repro import NoRepro, fake_arg, kept_source
from irscan.bugreport.terms import user_terms, witness_rows
from irscan.cli import main
from irscan.report import dot, markdown

ROOT = Path(__file__).resolve().parent.parent
CAPS = ROOT / "corpus" / "captures"


@pytest.fixture(scope="module")
def stride_findings() -> list[dict[str, Any]]:
    return load_findings(CAPS / "elementwise_i32_stride")


def test_ddmin_keeps_only_what_the_test_needs() -> None:
    lines = [f"l{i}" for i in range(40)]
    out = ddmin_lines(lines, list(range(40)), lambda ls: "l7" in ls and "l31" in ls)
    assert out == ["l7", "l31"]


def test_ddmin_never_removes_a_line_it_was_not_given() -> None:
    lines = ["keep", "a", "b", "c"]
    assert ddmin_lines(lines, [1, 2, 3], lambda ls: True) == ["keep"]


def test_the_dsl_parser_is_the_validity_check() -> None:
    assert dsl_accepts("module {\n}\n")
    assert not dsl_accepts("module {\n  %0 = llvm.add %1, %2 : i32\n}\n")  # undefined operands


def test_twins_are_one_root_cause(stride_findings: list[dict[str, Any]]) -> None:
    causes = group(stride_findings)
    assert len(causes) == 2  # src and dst: two accesses, each with its MLIR finding and PTX twin
    for rc in causes:
        assert sorted(f["ir"] for f in rc.findings) == ["mlir", "ptx"]
        assert rc.lead["ir"] == "mlir"
        assert rc.params == ["src", "dst"]


def test_user_terms() -> None:
    params = ["mO", "mdO", "mCuSeqlens"]
    assert user_terms("9728*load(arg2)", params) == "9728 × mCuSeqlens[...]"
    assert user_terms("ctaid.x*arg1.stride[0] + tid.x", params) == "blockIdx.x × mdO.stride(0) + threadIdx.x"
    assert user_terms("arg0.shape[1]", params) == "mO.shape[1]"
    assert user_terms("arg7", params) == "arg7"  # no such parameter: irscan's own name stays


def test_witness_table_lands_on_the_witness(stride_findings: list[dict[str, Any]]) -> None:
    f = next(x for x in stride_findings if x["ir"] == "mlir")
    rows = witness_rows(f, ["src", "dst"])
    assert [r.intended for r in rows] == [8191 * 262176, 8191 * 262176 + 7 * 1024]
    assert rows[-1].bits32 == f["witness"]["i32"] == 2147490784 - 2**32
    assert rows[-1].offset == rows[-1].bits32 * 2  # bf16: two bytes per element


def test_a_table_that_misses_the_witness_is_not_shown(stride_findings: list[dict[str, Any]]) -> None:
    f = dict(next(x for x in stride_findings if x["ir"] == "mlir"))
    f["witness"] = {**f["witness"], "true": 12345}
    assert witness_rows(f, []) == []


def test_picture_edges_follow_the_operands(stride_findings: list[dict[str, Any]]) -> None:
    ptx = next(x for x in stride_findings if x["ir"] == "ptx")
    g = dot.chain_graph(ptx["chain"])
    mad = next(i for i, s in enumerate(ptx["chain"]) if s["op"].startswith("mad"))
    assert g.in_degree(mad) == 3  # stride, ctaid.x and the shifted ctaid.y
    svg = dot.to_svg(ptx["chain"], "t")
    xml.dom.minidom.parseString(svg)
    assert "WRAPS" in svg and 'stroke-width="3"' in svg
    assert "n4 [label=" in dot.to_dot(ptx["chain"], "t")


def test_fake_args_from_meta() -> None:
    meta = json.loads(next((CAPS / "varlen_offset_fa4_2611").glob("*/meta.json")).read_text())
    args = meta["kernels"][0]["args"]
    assert fake_arg(args[1]) == (
        "_fake(_cutlass.BFloat16, (_cute.sym_int(), 16, 96), stride=(9728, 96, 1), assumed_align=16)"
    )
    assert fake_arg(args[2]) == "_fake(_cutlass.Int32, (5,), stride=(1,), assumed_align=4)"
    with pytest.raises(NoRepro):
        fake_arg({"index": 3, "type": "!cute.tiled_copy<...>"})


def test_kept_source_drops_the_programs_own_compile() -> None:
    text = "import cutlass\nN = 4\n\ndef f():\n    pass\n\nx = make_fake_tensor(1)\ncute.compile(f, x)\n"
    out = kept_source(text)
    assert "compile" not in out and "make_fake_tensor" not in out and "N = 4" in out and "def f" in out


def test_markdown_is_built_from_the_finding(tmp_path: Path) -> None:
    assert main(["report", "--all", "--no-script", str(CAPS / "varlen_offset_fa4_2611"), "-o", str(tmp_path)]) == 0
    md = (tmp_path / "bd24c50833c9.md").read_text()
    assert md.startswith("# [CuTe DSL] `bwd_preprocess`: 32-bit overflow")
    assert "`cute.domain_offset`" in md.splitlines()[0]
    trigger = (
        "`mdO.stride(0) × mCuSeqlens[...] >= 2^31`, i.e. from `mCuSeqlens[...]` = 220,753 at `mdO.stride(0)` = 9,728"
    )
    assert trigger in md.splitlines()[0] and f"## Trigger\n\n{trigger}." in md
    assert "the kernel reads outside the tensor" in md and "not imported by the program" in md
    assert "| `9728 × mCuSeqlens[...]` | 2,147,485,184 | -2,147,482,112 |" in md
    assert "**What the DSL does wrong.** `cute.domain_offset`" in md
    for section in ("## Summary", "## Root cause", "## Trigger", "## Environment", "## Minimal repro", "## Fix"):
        assert section in md
    assert "None" not in md
    assert "![chain of bd24c50833c9](bd24c50833c9.svg)" in md and (tmp_path / "bd24c50833c9.svg").exists()


def test_markdown_title_names_kernel_and_condition(stride_findings: list[dict[str, Any]]) -> None:
    rc = group(stride_findings)[0]
    t = markdown.title(rc)
    assert "`pitched_copy`" in t and "`src.stride(0)` = 262,176" in t


def test_unknown_id_lists_the_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["report", "deadbeef0000", str(CAPS / "elementwise_i32_stride"), "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "no finding deadbeef0000" in err and "10e7088dc9db" in err and "81b1d6b011fc" in err
    assert not list(tmp_path.iterdir())


def test_nothing_reproduces_no_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A saved report whose modules are gone and whose kernel's source is elsewhere: no repro of
    either kind reproduces, so no report is written as if one did (exit 1, said on stderr)."""
    cap = tmp_path / "cap"
    shutil.copytree(next((CAPS / "elementwise_i32_stride").iterdir()), cap)
    meta = json.loads((cap / "meta.json").read_text())
    meta["kernels"][0]["file"] = str(tmp_path / "gone.py")
    (cap / "meta.json").write_text(json.dumps(meta))
    assert main(["scan", str(cap), "--format", "json", "--fail-on", "never"]) == 0
    saved = tmp_path / "report.json"
    saved.write_text(capsys.readouterr().out)
    for m in cap.glob("module.*"):
        m.unlink()
    out = tmp_path / "out"
    assert main(["report", "--all", str(saved), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "no repro reproduces the finding" in err and "no report written" in err
    assert not list(out.glob("*.md"))


def test_target_is_check_severity_and_threshold(stride_findings: list[dict[str, Any]]) -> None:
    f = next(x for x in stride_findings if x["ir"] == "mlir")
    t = Target.of(f)
    assert t.matches(f)
    assert not t.matches({**f, "severity": "must"})
    assert not t.matches({**f, "wraps_when": {**f["wraps_when"], "threshold": 262175}})


def test_a_must_finding_says_the_launch_reaches_it(tmp_path: Path) -> None:
    assert main(["report", "--all", "--no-script", str(CAPS / "elementwise_static_100k"), "-o", str(tmp_path)]) == 0
    (md,) = tmp_path.glob("*.md")
    text = md.read_text()
    assert "`blockIdx.x` goes up to 99,999, so every launch of this kernel wraps" in text
    assert "i.e. from `blockIdx.x` = 21,474 at `src.stride(0)` = 100,000" in text
    assert "The PTX of the same access wraps when `blockIdx.x >= 42949`." in text  # zero-extended in the PTX


def test_a_compile_only_program_is_its_own_repro_when_the_arguments_do_not_map(tmp_path: Path) -> None:
    """stacked_layers_seed000's host function builds the kernels' arguments itself (8 against 4), so the
    recorded ones cannot be passed to it: the script is the program as it is, and it reproduces."""
    assert main(["report", "121ef63b03c3", str(CAPS / "stacked_layers_seed000"), "-o", str(tmp_path)]) == 0
    md = (tmp_path / "121ef63b03c3.md").read_text()
    assert "re-run, `irscan audit -- python 121ef63b03c3_repro.py` reproduces it. The program itself" in md
    script = (tmp_path / "121ef63b03c3_repro.py").read_text()
    assert script.startswith("# Compile-only repro of irscan finding 121ef63b03c3")
    compile(script, "repro", "exec")  # the header keeps the program's docstring and imports valid


@pytest.mark.parametrize("text", ["[1, 2]", '{"findings": [{"id": "x"}]}', "{not json", '{"findings": 3}'])
def test_a_json_file_that_is_not_a_report_is_bad_input(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "r.json"
    bad.write_text(text)
    assert main(["report", "--all", str(bad), "-o", str(tmp_path / "out")]) == 2
    assert re.search(rf"^{re.escape(str(bad))}:1:\d+: error: not a", capsys.readouterr().err, re.M)


def test_findings_that_share_the_wrapping_op_are_one_report(tmp_path: Path) -> None:
    """rmsnorm_row_per_cta: the load of mX and the store of mY use one row offset (one llvm.mul, CSE'd):
    one report for both accesses and their PTX twins, named by the statement the op comes from."""
    causes = group(load_findings(CAPS / "rmsnorm_row_per_cta"))
    assert [sorted(f["id"] for f in rc.findings) for rc in causes] == [
        sorted(["a686763ca512", "4c9287148481", "1b28f262feb8", "78d45c02f980"])
    ]
    assert causes[0].id == "a686763ca512"  # the finding without an origin: the wrapping op's own statement
    assert main(["report", "1b28f262feb8", str(CAPS / "rmsnorm_row_per_cta"), "--no-script", "-o", str(tmp_path)]) == 0
    md = (tmp_path / "a686763ca512.md").read_text()
    assert "- the store at rmsnorm_row_per_cta.py:34: `y_vecs = cute.zipped_divide(mY[row, None], (VEC,))`" in md


def test_a_folded_constexpr_offset_is_named_as_coordinate_times_stride(tmp_path: Path) -> None:
    """stacked_layers_seed000: layer = 30 is a Constexpr, so the IR adds 30 * 70,778,880 = 2,123,366,400 as
    one constant; the report reads it back as 30 x w_gate.stride(0) (30 < 48 layers)."""
    assert (
        main(["report", "121ef63b03c3", str(CAPS / "stacked_layers_seed000"), "--no-script", "-o", str(tmp_path)]) == 0
    )
    title = (tmp_path / "121ef63b03c3.md").read_text().splitlines()[0]
    assert "`w_gate.stride(1) × blockIdx.x + 30 × w_gate.stride(0) >= 2^31`" in title
    assert "at `w_gate.stride(0)` = 70,778,880, `w_gate.stride(1)` = 5,120" in title
