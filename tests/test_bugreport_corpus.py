"""``irscan report`` on every buggy corpus program (corpus/manifest.json): each root cause gets a
report with a chain picture and a reduced module that reproduces the finding under ``irscan scan`` by
itself; and for a program whose kernel comes from a file irscan can import, the compile-only repro
script reproduces it under ``irscan audit`` (run again here, not only by the reporter)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from irscan.bugreport.collect import group, load_findings
from irscan.bugreport.reduce import Target
from irscan.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = json.loads((ROOT / "corpus" / "manifest.json").read_text())
BUGGY = sorted(name for name, p in MANIFEST["programs"].items() if not p["clean"])
_OP = re.compile(r"^\s*(?:%[\w.]+(?::\d+)? = )?(?:llvm|nvvm|gpu)\.(?!func|return|br|cond_br)")


def _scan_json(path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main(["scan", str(path), "--format", "json", "--fail-on", "never"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return list(doc["findings"])


def test_report_on_a_capture_stored_compressed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """corpus/thirdparty keeps module.mlir.xz / module.ptx.xz: the report reads them decompressed and
    names the reduced module by its IR (``.reduced.mlir``), not ``.reduced.xz`` (an exit 3 before)."""
    import lzma
    import shutil

    cap = tmp_path / "cap"
    shutil.copytree(ROOT / "corpus" / "captures" / BUGGY[0], cap)
    for m in [*cap.rglob("module.mlir"), *cap.rglob("module.ptx")]:
        m.with_name(m.name + ".xz").write_bytes(lzma.compress(m.read_bytes()))
        m.unlink()
    causes = group(load_findings(cap))
    assert causes
    assert main(["report", "--all", "--no-script", str(cap), "-o", str(tmp_path / "out")]) == 0
    for rc in causes:
        (reduced,) = (tmp_path / "out").glob(f"{rc.id}.reduced.*")
        assert reduced.suffix in (".mlir", ".ptx")
        target = Target.of(next(f for f in rc.findings if f["ir"] == reduced.suffix[1:]))
        assert any(target.matches(f) for f in _scan_json(reduced, capsys)), f"{reduced.name} does not reproduce"


@pytest.mark.parametrize("program", BUGGY)
def test_report_with_reduced_ir_and_picture(program: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cap = ROOT / "corpus" / "captures" / program
    causes = group(load_findings(cap))
    assert causes, f"{program} is buggy in the manifest and has findings"
    assert main(["report", "--all", "--no-script", str(cap), "-o", str(tmp_path)]) == 0
    for rc in causes:
        md = (tmp_path / f"{rc.id}.md").read_text()
        assert f"]({rc.id}.svg)" in md and (tmp_path / f"{rc.id}.svg").read_text().startswith("<svg")
        reduced = next(tmp_path.glob(f"{rc.id}.reduced.*"))
        assert f"]({reduced.name})" in md
        target = Target.of(next(f for f in rc.findings if f["ir"] == reduced.suffix[1:]))
        assert any(target.matches(f) for f in _scan_json(reduced, capsys)), f"{reduced.name} does not reproduce"
        ops = sum(1 for ln in reduced.read_text().splitlines() if _OP.match(ln))
        chain = len(rc.lead["chain"])
        assert ops <= chain + 40, f"{reduced.name}: {ops} ops for a chain of {chain}"


def test_repro_script_reproduces_under_audit(tmp_path: Path) -> None:
    cap = ROOT / "corpus" / "captures" / "varlen_offset_fa4_2611"
    assert main(["report", "bd24c50833c9", str(cap), "-o", str(tmp_path)]) == 0
    md = (tmp_path / "bd24c50833c9.md").read_text()
    assert "`irscan audit -- python bd24c50833c9_repro.py` reproduces it" in md
    script = tmp_path / "bd24c50833c9_repro.py"
    assert "(_cute.sym_int(), 16, 96), stride=(9728, 96, 1)" in script.read_text()
    proc = subprocess.run(
        [sys.executable, "-m", "irscan", "audit", "--format", "json", "--fail-on", "never", "--", "python", script.name],  # noqa: E501
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    doc = json.loads(proc.stdout)
    target = Target.of(next(f for f in load_findings(cap) if f["id"] == "bd24c50833c9"))
    assert any(target.matches(f) for f in doc["findings"]), proc.stderr[-2000:]
