"""The corpus of known answers: corpus/manifest.json is well formed, and corpus/captures/ is what
corpus/programs/ compiles to today (regenerate with ``python corpus/regen.py``).

The freshness test recompiles every program with ``irscan capture`` (one subprocess per program,
run in parallel, about a second of CPU each) and compares with the checked-in capture after the
same path normalisation (corpus/regen.py ``normalise``): the same module folders, module.mlir and
module.ptx equal once the PTX version-stamp comments are dropped, meta.json equal without its
``environment``.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"
MANIFEST_PATH = CORPUS / "manifest.json"
MANIFEST = json.loads(MANIFEST_PATH.read_text())
PROGRAMS = MANIFEST["programs"]
STEMS = sorted(PROGRAMS)

CHECKS = {"narrow-widened-late", "trunc-then-extend"}
SEVERITIES = {"must", "may"}
SIGNEDNESS = {"signed", "unsigned"}
EXPECT_KEYS = {"kernel", "check", "severity", "line", "input", "threshold", "signedness", "why"}
EXPECT_OPTIONAL = {"lines_ok", "ptx"}
INPUT_RE = re.compile(
    r"^(?:(?P<sreg>(?:tid|ntid|ctaid|nctaid)\.[xyz])"
    r"|arg(?P<arg>\d+)(?:\.(?P<field>shape|stride)\[(?P<mode>\d+)\])?"
    r"|load\(arg(?P<load>\d+)\))$"
)
#: PTX header comments that name the compiler build, not the program
VERSION_STAMP = re.compile(r"^\s*//.*(?:Compiler Build ID|Cuda compilation tools|Based on NVVM)")
CAPTURE_FILES = ("module.mlir", "module.ptx", "meta.json")


def _load_regen():
    spec = importlib.util.spec_from_file_location("corpus_regen", CORPUS / "regen.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


regen = _load_regen()


def capture_dirs(folder: Path) -> list[Path]:
    return sorted(p.parent for p in folder.rglob("meta.json"))


def kernel_metas(stem: str) -> list[dict]:
    return [
        k
        for d in capture_dirs(CORPUS / "captures" / stem)
        for k in json.loads((d / "meta.json").read_text())["kernels"]
    ]


def comparable_text(text: str) -> list[str]:
    return [line for line in text.splitlines() if not VERSION_STAMP.match(line)]


def comparable_meta(text: str) -> dict:
    meta = json.loads(text)
    meta.pop("environment", None)
    return meta


# ------------------------------------------------------------------------------------- manifest


def test_manifest_top_level():
    assert set(MANIFEST) == {"schema", "example", "programs"}
    assert MANIFEST["schema"] == 1
    assert MANIFEST["example"] in PROGRAMS, "the bundled example must be one of the programs"
    assert not PROGRAMS[MANIFEST["example"]]["clean"], "the bundled example shows a bug"


def test_manifest_lists_every_program_and_capture():
    on_disk = set(regen.program_stems())
    assert set(PROGRAMS) == on_disk, "manifest programs and corpus/programs/*.py differ"
    captured = {p.name for p in (CORPUS / "captures").iterdir() if p.is_dir()}
    assert captured == on_disk, "corpus/captures/ folders and programs differ (run python corpus/regen.py)"


def test_manifest_has_both_kinds():
    clean = [s for s in STEMS if PROGRAMS[s]["clean"]]
    buggy = [s for s in STEMS if not PROGRAMS[s]["clean"]]
    assert clean and buggy
    assert {e["severity"] for s in buggy for e in PROGRAMS[s]["expect"]} == SEVERITIES
    assert {e["check"] for s in buggy for e in PROGRAMS[s]["expect"]} == CHECKS


@pytest.mark.parametrize("stem", STEMS)
def test_manifest_entry(stem: str):
    entry = PROGRAMS[stem]
    assert set(entry) == {"source", "covers", "clean", "expect"}
    assert entry["source"] == f"programs/{stem}.py"
    source = CORPUS / entry["source"]
    assert source.is_file()
    doc = ast.get_docstring(ast.parse(source.read_text()))
    assert doc and "Known answer" in doc, "each program's docstring states what it covers and its known answer"
    assert isinstance(entry["covers"], list) and entry["covers"]
    assert all(isinstance(c, str) and c for c in entry["covers"])
    assert isinstance(entry["clean"], bool)
    assert isinstance(entry["expect"], list)
    if entry["clean"]:
        assert entry["expect"] == [], "a clean program expects no finding"
    else:
        assert entry["expect"], "a program that is not clean expects at least one finding"

    dirs = capture_dirs(CORPUS / "captures" / stem)
    assert dirs, f"no capture for {stem} (run python corpus/regen.py {stem})"
    assert [d.name[:4] for d in dirs] == [f"{i:03d}_" for i in range(len(dirs))]
    for d in dirs:
        for name in CAPTURE_FILES:
            assert (d / name).is_file(), f"{d.name}/{name} missing"

    kernels = kernel_metas(stem)
    n_lines = len(source.read_text().splitlines())
    for e in entry["expect"]:
        assert EXPECT_KEYS <= set(e) <= EXPECT_KEYS | EXPECT_OPTIONAL, sorted(set(e) ^ EXPECT_KEYS)
        assert e["check"] in CHECKS and e["severity"] in SEVERITIES and e["signedness"] in SIGNEDNESS
        matched = [k for k in kernels if e["kernel"] in k["name"]]
        assert matched, f"no captured kernel name contains {e['kernel']!r}"
        for line in [e["line"], *e.get("lines_ok", [])]:
            assert isinstance(line, int) and 1 <= line <= n_lines
        assert isinstance(e["threshold"], int) and not isinstance(e["threshold"], bool) and e["threshold"] > 0
        assert isinstance(e["why"], str) and len(e["why"]) > 40
        if "ptx" in e:
            assert set(e["ptx"]) == {"threshold", "signedness"}
            assert isinstance(e["ptx"]["threshold"], int) and e["ptx"]["signedness"] in SIGNEDNESS
        m = INPUT_RE.match(e["input"])
        assert m, f"bad input name {e['input']!r}"
        for k in matched:
            arg = m.group("arg") or m.group("load")
            if arg is not None:
                assert int(arg) < len(k["args"]), f"{e['input']}: kernel has {len(k['args'])} arguments"
            if m.group("field"):
                modes = k["args"][int(arg)].get("modes", [])
                assert int(m.group("mode")) < len(modes)
                part = modes[int(m.group("mode"))][m.group("field")]
                assert part and part["kind"] == "dynamic", f"{e['input']} is not a dynamic field"
            if e["severity"] == "must":
                assert k["launch"].get("exact_grid_dim"), "a must finding relies on a static launch"


@pytest.mark.parametrize("stem", STEMS)
def test_checked_in_capture_is_path_independent(stem: str):
    """Paths in the captures are relative to the repository root: no clone folder leaks in."""
    for d in capture_dirs(CORPUS / "captures" / stem):
        mlir = (d / "module.mlir").read_text()
        ptx = (d / "module.ptx").read_text()
        meta = json.loads((d / "meta.json").read_text())
        assert str(ROOT) not in mlir + ptx
        files = set(re.findall(r'loc\("([^"<>]+\.py)":\d+:\d+\)', mlir))
        assert files == {f"corpus/programs/{stem}.py"}, files
        assert re.findall(r'\.file\s+\d+\s+"([^"]+)"', ptx) == [f"corpus/programs/{stem}.py"]
        assert all(k["file"] == f"corpus/programs/{stem}.py" for k in meta["kernels"])
        assert not (d / "module.cubin").exists()


def test_normalise_text_makes_paths_relative(tmp_path: Path):
    root = tmp_path / "clone"
    text = f'loc("{root}/corpus/programs/x.py":3:1) #llvm.di_file<"x.py" in "{root}/corpus/programs"> "{root}"'
    assert regen.normalise_text(text, root) == (
        'loc("corpus/programs/x.py":3:1) #llvm.di_file<"x.py" in "corpus/programs"> "."'
    )


# ------------------------------------------------------------------------------------- freshness


@pytest.fixture(scope="module")
def fresh(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """Capture, in parallel, every program whose freshness test was selected; stem -> folder or error."""
    wanted = sorted(
        {
            item.callspec.params["stem"]
            for item in request.session.items
            if item.originalname == "test_capture_is_fresh" and hasattr(item, "callspec")
        }
    )
    base = tmp_path_factory.mktemp("fresh")

    def one(stem: str) -> Path | str:
        out = base / stem
        try:
            regen.capture(stem, out)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            return str(exc)
        return out

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = dict(zip(wanted, pool.map(one, wanted), strict=True))
    yield results
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_capture_is_fresh(stem: str, fresh: dict[str, Path | str]):
    out = fresh[stem]
    assert isinstance(out, Path), out
    ref_dirs = capture_dirs(CORPUS / "captures" / stem)
    new_dirs = capture_dirs(out)
    assert [d.name for d in new_dirs] == [d.name for d in ref_dirs], "module folders differ: run python corpus/regen.py"
    for ref, new in zip(ref_dirs, new_dirs, strict=True):
        assert sorted(p.name for p in new.iterdir()) == sorted(p.name for p in ref.iterdir())
        for name in ("module.mlir", "module.ptx"):
            a = comparable_text((ref / name).read_text())
            b = comparable_text((new / name).read_text())
            assert a == b, f"{ref.name}/{name} is stale: run python corpus/regen.py {stem}"
        assert comparable_meta((ref / "meta.json").read_text()) == comparable_meta((new / "meta.json").read_text())
