"""Audit cost against compile cost, measured side by side in one run.

For each kernel capture (the third-party FA4/quack captures by default: the biggest real modules),
one fresh process per capture:

1. compiles the kernel through its own compile path (``cute.compile``, via corpus/thirdparty/regen.py,
   which needs ``pip install -r corpus/thirdparty/requirements.txt``): the minimum of ``--repeat`` runs
   after a warm-up; with the third-party packages missing it says so and uses the time recorded in
   corpus/thirdparty/index.json, marked "(recorded)";
2. parses the captured MLIR with the DSL's native parser (``cutlass._mlir.ir.Module.parse``);
3. runs irscan on the same captured text: MLIR parse, graph + ranges + checks; PTX parse,
   reaching definitions + graph + ranges + checks; and ``ptxas`` on the same PTX for scale.

It prints one row per capture and the ratios the target is stated in: the whole audit (both IRs)
as a share of ``cute.compile`` (target: under 10 %), warm (best of ``--repeat``) and cold (the first
audit in a fresh process, irscan's imports and grammar loading included), and irscan's MLIR parse
against the native one.
No timing goes into a test.  Usage: ``python bench/bench_audit.py [--repeat N] [names...]``.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
IMPORT_S = 0.0
THIRDPARTY = ROOT / "corpus" / "thirdparty"
DEFAULT = ["fa4_fwd_sm90a", "fa4_fwd_sm100a", "fa4_bwd_sm100a", "fa4_bwd_sm90a", "quack_gemm_sm90a",
           "quack_rmsnorm_fwd_sm90a"]  # fmt: skip


def _read(p: Path) -> str:
    return lzma.decompress(p.read_bytes()).decode() if p.suffix == ".xz" else p.read_text()


FIRST: dict[str, float] = {}  # the first (cold) run of each step in this process


def _best(fn: Any, repeat: int, step: str = "") -> tuple[float, Any]:
    best, out = float("inf"), None
    for i in range(max(repeat, 1)):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        if i == 0 and step:
            FIRST[step] = FIRST.get(step, 0.0) + dt
        best = min(best, dt)
    return best, out


def _compile_seconds(name: str, repeat: int) -> tuple[float | None, str]:
    """Time the kernel's own compile path in this process; None when its packages are missing."""
    sys.path.insert(0, str(THIRDPARTY))
    import regen  # corpus/thirdparty/regen.py

    arch, _desc, fn_name = regen.CAPTURES[name]
    regen._set_env(arch)
    try:
        import cutlass.cute as cute

        timer = regen._CompileTimer(cute.compile)
        cute.compile = timer
        run = getattr(regen, fn_name)(arch)
        run()  # warm-up: first-use costs of the DSL and the library
    except ImportError as exc:
        return None, f"not installed ({exc.name})"
    best = float("inf")
    for _ in range(max(repeat, 1)):
        timer.times.clear()
        run()
        best = min(best, sum(timer.times))
    return best, "measured"


def _recorded(name: str) -> float | None:
    index = json.loads((THIRDPARTY / "index.json").read_text())
    for c in index["captures"]:
        if c["name"] == name:
            return c.get("compile_s_without_capture") or c.get("compile_s_with_capture")
    return None


def worker(name: str, repeat: int) -> dict[str, Any]:
    global IMPORT_S
    t0 = time.perf_counter()
    from irscan.frontend import mlir, ptx
    from irscan.pipeline import scan_module

    IMPORT_S = time.perf_counter() - t0

    folders = sorted(p.parent for p in (THIRDPARTY / name).rglob("meta.json"))
    compile_s, how = _compile_seconds(name, repeat)
    if compile_s is None:
        compile_s, how = _recorded(name), f"recorded ({how})"
    sys.path.insert(0, str(THIRDPARTY))
    import regen

    row: dict[str, Any] = {"name": name, "compile_s": compile_s, "compile": how, "mlir_mb": 0.0, "ptx_kb": 0.0}
    sums = dict.fromkeys(("native", "mlir_parse", "mlir_analysis", "ptx_parse", "ptx_analysis", "ptxas"), 0.0)
    row["findings"] = 0
    for folder in folders:
        one = _measure(folder, repeat, regen, mlir, ptx, scan_module)
        for k in sums:
            sums[k] += one[k]
        row["mlir_mb"] += one["mlir_mb"]
        row["ptx_kb"] += one["ptx_kb"]
        row["findings"] += one["findings"]
    row.update({k: round(v, 4) for k, v in sums.items()})
    # cold: the first audit in a fresh process, including irscan's imports and grammar loading
    row["audit_cold"] = round(FIRST.get("audit", 0.0) + IMPORT_S, 4)
    return row


def _measure(folder: Path, repeat: int, regen: Any, mlir: Any, ptx: Any, scan_module: Any) -> dict[str, Any]:
    meta = json.loads((folder / "meta.json").read_text())
    mtext = _read(next(folder.glob("module.mlir*")))
    ptext = _read(next(folder.glob("module.ptx*")))
    ctx = regen.native_context()
    safe = regen.loc_safe(mtext, ctx)  # the native parser needs the printer-bug workaround
    out: dict[str, Any] = {"mlir_mb": len(mtext) / 1e6, "ptx_kb": len(ptext) / 1e3}
    out["native"] = _best(lambda: regen.native_parse(safe, ctx), repeat)[0]
    out["mlir_parse"], mod = _best(lambda: mlir.parse_module(mtext, "module.mlir"), repeat, "audit")
    out["mlir_analysis"], res = _best(lambda: scan_module(mod, meta), repeat, "audit")
    out["ptx_parse"], pmod = _best(lambda: ptx.parse_module(ptext, "module.ptx"), repeat, "audit")
    out["ptx_analysis"], pres = _best(lambda: scan_module(pmod, meta), repeat, "audit")
    out["findings"] = len(res.findings) + len(pres.findings)
    out["ptxas"] = 0.0
    if shutil.which("ptxas"):
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as fh:
            fh.write(ptext)
        t0 = time.perf_counter()
        subprocess.run(["ptxas", f"-arch={meta['arch']}", "-o", os.devnull, fh.name], capture_output=True)
        out["ptxas"] = time.perf_counter() - t0
        os.unlink(fh.name)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.repeat)))
        return 0
    rows = []
    for name in args.names:
        proc = subprocess.run([sys.executable, __file__, "--worker", name, "--repeat", str(args.repeat)],
                              capture_output=True, text=True)  # fmt: skip
        if proc.returncode != 0:
            print(f"{name}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
            continue
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    head = (f"{'capture':<26}{'MLIR MB':>8}{'PTX KB':>8}{'compile s':>10}{'native':>9}{'mlir prs':>9}"
            f"{'mlir ana':>9}{'ptx prs':>9}{'ptx ana':>9}{'ptxas':>8}{'audit/compile':>14}"
            f"{'cold':>8}{'prs/native':>11}")  # fmt: skip
    print(head)
    for r in rows:
        audit = r["mlir_parse"] + r["mlir_analysis"] + r["ptx_parse"] + r["ptx_analysis"]
        ratio = f"{100 * audit / r['compile_s']:.1f} %" if r["compile_s"] else "-"
        cold = f"{100 * r['audit_cold'] / r['compile_s']:.1f} %" if r["compile_s"] else "-"
        mark = "" if r["compile"] == "measured" else "*"
        print(f"{r['name']:<26}{r['mlir_mb']:>8.2f}{r['ptx_kb']:>8.0f}{r['compile_s'] or 0:>9.2f}{mark:1}"
              f"{r['native']:>9.3f}{r['mlir_parse']:>9.3f}{r['mlir_analysis']:>9.3f}{r['ptx_parse']:>9.3f}"
              f"{r['ptx_analysis']:>9.3f}{r['ptxas']:>8.2f}{ratio:>14}{cold:>8}"
              f"{r['mlir_parse'] / r['native']:>10.1f}x")  # fmt: skip
    if any(r["compile"] != "measured" for r in rows):
        print("* compile time recorded in corpus/thirdparty/index.json (third-party packages not installed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
