"""Patch mode on a GPU: each case of bench/gpu/patch_cases.py unpatched and patched, each in its own
process, against a torch reference; prints the markdown table that README.md's "Patch mode" shows.

Runnable on any CUDA machine with torch and the DSL: ``python bench/gpu/patch_proof.py [--json OUT]``.
Unpatched, ``fault`` should fault and ``corrupt`` differ (shared/docs/gpu-results.md); patched, all
match.  ``speed`` times the kernel below its threshold (median of 20 launches) patched and unpatched.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = {
    "fault": "static layout x Int32 row (offset passes 2^31, sign-extended)",
    "corrupt": "block_idx x static row stride (zero-extended, passes 2^32)",
    "ub": "stacked layers, constant layer offset (nsw add passes 2^31)",
    "speed": "the corrupt kernel below its threshold (2.1e9 elements): kernel time",
}


def one(case: str, mode: str) -> dict:
    proc = subprocess.run(
        [sys.executable, str(HERE / "patch_cases.py"), case, mode], capture_output=True, text=True, timeout=300
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:  # the process itself died (a fault can take the interpreter down)
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"case": case, "mode": mode, "right": False, "detail": f"process exited {proc.returncode}: {tail[:200]}"}
    return json.loads(lines[-1])


def cell(r: dict) -> str:
    verdict = "right" if r.get("right") else "WRONG"
    extra = f", {r['kernel_ms_median']:.3f} ms ({r['GBps']:.0f} GB/s)" if "kernel_ms_median" in r else ""
    return f"{verdict}: {r['detail']}{extra}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="also write every result here")
    ap.add_argument("cases", nargs="*", default=list(CASES))
    args = ap.parse_args()
    results = [one(c, m) for c in args.cases for m in ("plain", "patched")]
    print("| case | unpatched | patched (irscan.patch) | patches |")
    print("|---|---|---|---|")
    for c in args.cases:
        plain, patched = [r for r in results if r["case"] == c]
        pats = ", ".join(f"{p['rule']} ({p['ops_rewritten']} ops)" for p in patched.get("patches", [])) or "none"
        print(f"| {CASES[c]} | {cell(plain)} | {cell(patched)} | {pats} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
