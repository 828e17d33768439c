"""The checked-in third-party captures (corpus/thirdparty: real quack and FA4 kernels).

Default run (no torch, quack or flash-attn needed): every capture listed in index.json is on disk,
decompresses, matches its recorded sizes, its MLIR parses in the DSL's own parser
(``cutlass._mlir.ir.Module.parse``, through ``regen.native_parse``) and its PTX holds each kernel's
``.entry``.  The parsing runs in one child process, so this pytest process never imports the DSL.

``-m thirdparty``: regenerate the quack RMSNorm capture into a temp dir and compare it with the
checked-in one, ignoring version stamps and paths.
"""

import importlib.util
import json
import lzma
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
THIRDPARTY = REPO / "corpus" / "thirdparty"
REGEN = THIRDPARTY / "regen.py"
INDEX = json.loads((THIRDPARTY / "index.json").read_text())
CAPTURES = {e["name"]: e for e in INDEX["captures"]}


def regen_module():
    spec = importlib.util.spec_from_file_location("thirdparty_regen", REGEN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def child_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("CUTE_DSL_", "IRSCAN_"))}


def module_dirs(root: Path, entry: dict) -> list[Path]:
    return [root / entry["name"] / m["module"] for m in entry["modules"]]


def read(folder: Path, key: str) -> bytes:
    """module.<key> or module.<key>.xz, as bytes (the name meta.json records wins)."""
    meta = json.loads((folder / "meta.json").read_text())
    name = meta["files"].get(key, f"module.{key}")
    data = (folder / name).read_bytes()
    return lzma.decompress(data) if name.endswith(".xz") else data


PARSE_ALL = r"""
import json, sys, importlib.util
spec = importlib.util.spec_from_file_location("thirdparty_regen", sys.argv[1])
regen = importlib.util.module_from_spec(spec); spec.loader.exec_module(regen)
ctx = regen.native_context()
out = {}
for folder in sys.argv[2:]:
    text = regen.read_text(__import__("pathlib").Path(folder), "module.mlir")
    try:
        fixed = regen.loc_safe(text, ctx)
        module, secs = regen.native_parse(text, ctx)
        funcs = []
        def visit(block):
            for op in block.operations:
                op = op.operation
                if op.name == "llvm.func":
                    funcs.append(str(op.attributes["sym_name"]).strip('"'))
                elif op.name in ("builtin.module", "gpu.module"):
                    visit(op.regions[0].blocks[0])
        visit(module.body)
        out[folder] = {"ok": True, "secs": secs, "funcs": funcs,
                       "locs": [text.count(" loc("), fixed.count(" loc(")]}
    except Exception as exc:
        out[folder] = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:2000]}"}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def parsed() -> dict:
    """Native parse of every checked-in module, in one child process (the DSL stays out of this one)."""
    folders = [str(d) for e in CAPTURES.values() for d in module_dirs(THIRDPARTY, e)]
    proc = subprocess.run(
        [sys.executable, "-c", PARSE_ALL, str(REGEN), *folders],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_index_lists_the_required_captures():
    archs = {(e["name"].rsplit("_", 1)[0], e["arch"]) for e in INDEX["captures"]}
    for need in [
        ("quack_rmsnorm_fwd", "sm_90a"),
        ("quack_gemm", "sm_90a"),
        ("fa4_fwd", "sm_90a"),
        ("fa4_fwd", "sm_100a"),
        ("fa4_bwd", "sm_100a"),
    ]:
        assert need in archs, need
    versions = json.loads((THIRDPARTY / "versions.json").read_text())
    for dist in ("nvidia-cutlass-dsl", "quack-kernels", "flash-attn-4", "torch"):
        assert versions.get(dist), dist
    assert not INDEX.get("failed"), INDEX.get("failed")


@pytest.mark.parametrize("name", list(CAPTURES))
def test_capture_on_disk(name):
    entry = CAPTURES[name]
    assert entry["modules"], name
    if name in ("fa4_bwd_sm90a", "fa4_bwd_sm100a"):  # preprocess, main, postprocess
        assert len(entry["modules"]) == 3
    total = {"mlir": 0, "ptx": 0}
    for m, folder in zip(entry["modules"], module_dirs(THIRDPARTY, entry), strict=True):
        assert folder.is_dir(), folder
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["arch"] == entry["arch"]
        assert [k["name"] for k in meta["kernels"]] == m["kernels"]
        mlir, ptx = read(folder, "mlir"), read(folder, "ptx")
        assert len(mlir) == m["mlir_bytes"] and len(ptx) == m["ptx_bytes"]
        total["mlir"] += len(mlir)
        total["ptx"] += len(ptx)
        text = ptx.decode()
        assert text.strip(), folder
        assert f".target {entry['arch']}" in text
        for k in m["kernels"]:
            assert re.search(rf"\.entry\s+{re.escape(k)}\s*\(", text), (folder, k)
        assert b"gpu.module @kernels" in mlir and b"llvm.func" in mlir
        if meta.get("cubin_dropped"):
            assert "cubin" not in meta["files"]
        else:
            assert read(folder, "cubin")[:4] == b"\x7fELF"
    assert total == {"mlir": entry["mlir_bytes"], "ptx": entry["ptx_bytes"]}


@pytest.mark.parametrize("name", list(CAPTURES))
def test_mlir_parses_natively(name, parsed):
    entry = CAPTURES[name]
    for m, folder in zip(entry["modules"], module_dirs(THIRDPARTY, entry), strict=True):
        res = parsed[str(folder)]
        assert res["ok"], res.get("error")
        for k in m["kernels"]:
            assert k in res["funcs"], (folder, k)
        before, after = res["locs"]
        assert before == after > 0, "loc_safe must keep every location"


def test_corpus_stays_small():
    """Under 11 MB: the captures of the tuned-on set and sixteen holdout sets (158 captures, about 70 KB
    each), their cubins dropped and their meta.json on one line (regen.py)."""
    size = sum(f.stat().st_size for f in THIRDPARTY.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    assert size < 11e6, size


# ----------------------------------------------------------------------------------------- regenerate


def normalise(text: str) -> str:
    """Drop what legitimately differs between machines and releases: paths and version stamps."""
    text = re.sub(r'"[^"\n]*?/(site-packages|dist-packages)/', '"<site>/', text)
    text = re.sub(r'"/[^"\n]*?/(quack|flash_attn|cutlass|nvidia_cutlass_dsl)/', r'"<site>/\1/', text)
    text = re.sub(r"^//.*$", "", text, flags=re.M)  # PTX header comments: compiler build stamps
    text = re.sub(r"^\s*\.version\s+[\d.]+", ".version", text, flags=re.M)
    return text


def meta_essentials(folder: Path) -> dict:
    meta = json.loads((folder / "meta.json").read_text())
    kernels = [
        {"name": k["name"], "line": k["line"], "launch": k["launch"], "args": k["args"]} for k in meta["kernels"]
    ]
    return {"arch": meta["arch"], "kernels": kernels, "lineinfo": meta["lineinfo"]}


@pytest.mark.thirdparty
@pytest.mark.slow
def test_regen_rmsnorm_matches_checked_in(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("quack")
    name = "quack_rmsnorm_fwd_sm90a"
    proc = subprocess.run(
        [sys.executable, str(REGEN), "--out", str(tmp_path), "--no-timing", name],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    new = {e["name"]: e for e in json.loads((tmp_path / "index.json").read_text())["captures"]}[name]
    old = CAPTURES[name]
    assert [m["module"] for m in new["modules"]] == [m["module"] for m in old["modules"]]
    assert new["kernels"] == old["kernels"]
    for a, b in zip(module_dirs(tmp_path, new), module_dirs(THIRDPARTY, old), strict=True):
        assert meta_essentials(a) == meta_essentials(b)
        for key in ("mlir", "ptx"):
            assert normalise(read(a, key).decode()) == normalise(read(b, key).decode()), key


def test_regen_helpers_without_the_dsl():
    """The parts of regen.py that need no DSL: normalisation, the PTX entry scan, the capture table."""
    regen = regen_module()
    assert regen._entries(".visible .entry foo(\n.param .u64 a\n)\n.entry bar (") == ["foo", "bar"]
    assert set(CAPTURES) <= set(regen.CAPTURES)
    site = 'loc("/x/lib/python3.11/site-packages/quack/rmsnorm.py":1:2)'
    assert normalise(site) == 'loc("<site>/quack/rmsnorm.py":1:2)'
