"""Patch mode's added cost on a compile, side by side with the plain compile (issue 9, point 7).

For each capture (FA4 forward sm_90a, the biggest corpus kernel, and corpus programs), in this
process: the captured LLVM-dialect module is parsed into the DSL's bindings (not timed: a real
compile already holds the module there), then the steps patch mode adds are timed one by one, warm
(best of ``--repeat``): the in-hook scan of the module, the rewrite (clone, plan, build, verify,
print), the MLIR re-scan, the PTX re-scan, ptxas ``-v`` on the patched PTX, and the extra tail on the
unpatched clone that ``registers_before`` costs.  The PTX-side steps run only when a module was rewritten
(FA4 forward's one finding is refused, loop-carried: its columns show what they would cost).  The
plain compile they are set against is
corpus/thirdparty/index.json's recorded ``compile_s_without_capture`` for FA4 (its package may be
missing here) and, for the corpus programs, their ``cute.compile`` timed in a fresh process.

Usage: ``python bench/bench_patch.py [--repeat N]``; prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASES = [
    ("FA4 fwd sm_90a", ROOT / "corpus/thirdparty/fa4_fwd_sm90a", None),
    ("gdn_state_pool_3230", ROOT / "corpus/captures/gdn_state_pool_3230", "gdn_state_pool_3230.py"),
    ("elementwise_static_100k", ROOT / "corpus/captures/elementwise_static_100k", "elementwise_static_100k.py"),
]

TIME_COMPILE = """
import os, sys, time, runpy
os.environ.update(CUTE_DSL_NO_CACHE="1", CUTE_DSL_DISABLE_FILE_CACHING="1", CUTE_DSL_CACHE_ENABLED="0",
                  CUTE_DSL_ARCH="sm_90a")
import cutlass.cute as cute
orig, spent = cute.compile, []
def timed(*a, **k):
    t = time.perf_counter(); r = orig(*a, **k); spent.append(time.perf_counter() - t); return r
cute.compile = timed
runpy.run_path(sys.argv[1], run_name="__main__")
runpy.run_path(sys.argv[1], run_name="__main__")  # warm: the DSL's imports and first-use costs paid
print(sum(spent[len(spent) // 2:]))
"""


def best(fn: Any, repeat: int) -> tuple[float, Any]:
    out, t_best = None, float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        t_best = min(t_best, time.perf_counter() - t0)
    return t_best, out


def measure(folder: Path, repeat: int) -> dict[str, float]:
    from cutlass._mlir import ir, passmanager

    from irscan.capturing.store import find_captures, load
    from irscan.patching.core import patch_module, scan_text
    from irscan.patching.offline import TAIL
    from irscan.patching.parse import parse_module
    from irscan.patching.ptxas import assemble
    from irscan.pipeline import ir_files
    from irscan.resources import read_text

    (cap,) = find_captures(folder)
    meta = load(cap).meta
    text = read_text(ir_files(cap)[0])
    res: dict[str, float] = {}
    with ir.Context(), ir.Location.unknown(), tempfile.TemporaryDirectory() as tmp:
        printed = parse_module(text).operation.get_asm(enable_debug_info=True)
        res["scan"], _ = best(lambda: scan_text(printed, "m.mlir", meta), repeat)

        def tail(op: Any, prefix: str) -> None:
            passmanager.PassManager.parse(TAIL.format(p=prefix)).run(op)

        def rewrite() -> Any:
            m = parse_module(text)
            t0 = time.perf_counter()
            rep, new = patch_module(m, printed, "m.mlir", meta)
            return time.perf_counter() - t0 - rep.seconds.get("scan", 0.0), m, rep

        runs = [rewrite() for _ in range(repeat)]
        t_rw, module, rep = min(runs, key=lambda r: r[0])
        res["rewrite + MLIR re-scan"] = t_rw
        res["patches"] = len(rep.patches)
        res["tail (plain compile's share)"], _ = best(lambda: tail(parse_module(text).operation, f"{tmp}/p"), 1)
        tail(module.operation, f"{tmp}/m")
        ptx = next(Path(tmp).glob("m.*.ptx"))
        res["PTX re-scan"], _ = best(lambda: scan_text(ptx.read_text(), "m.ptx", meta), repeat)
        res["ptxas -v (patched)"], _ = best(lambda: assemble(ptx), repeat)
        if rep.original is not None:
            res["tail on the original (registers_before)"], _ = best(lambda: tail(rep.original.clone(), f"{tmp}/o"), 1)
    return res


def plain_compile(name: str, prog: str | None) -> float:
    if prog is None:
        index = json.loads((ROOT / "corpus/thirdparty/index.json").read_text())
        (c,) = [c for c in index["captures"] if c["name"] == "fa4_fwd_sm90a"]
        return float(c["compile_s_without_capture"])
    out = subprocess.run(
        [sys.executable, "-c", TIME_COMPILE, str(ROOT / "corpus/programs" / prog)], capture_output=True, text=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| capture | plain compile (s) | patches | scan | rewrite + MLIR re-scan | PTX re-scan | ptxas -v "
          "| added, default (s) | added / compile | + registers_before tail (s) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, folder, prog in CASES:
        r = measure(folder, args.repeat)
        compile_s = plain_compile(name, prog)
        added = r["scan"] + r["rewrite + MLIR re-scan"]
        if r["patches"]:  # the PTX-side proof runs only on a module that was rewritten
            added += r["PTX re-scan"] + r["ptxas -v (patched)"]
        extra = r.get("tail on the original (registers_before)", 0.0)
        print(
            f"| {name} | {compile_s:.3f} | {int(r['patches'])} | {r['scan']:.3f} | {r['rewrite + MLIR re-scan']:.3f} "
            f"| {r['PTX re-scan']:.3f} | {r['ptxas -v (patched)']:.3f} | {added:.3f} | {added / compile_s:.1%} "
            f"| {extra:.3f} |"
        )


if __name__ == "__main__":
    main()
