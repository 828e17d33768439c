"""Cold start: what a fresh ``irscan`` process pays before its first finding, against the compile it
audits, measured side by side in one run.  No timing goes into a test.

1. **cold audit / compile**, per capture: a fresh process imports irscan and scans the capture's MLIR
   and PTX once (imports, grammar tables and first-use costs included: "cold"), then again ("warm");
   cold - warm is the fixed cost.  The compile it is set against: for a corpus program, its
   ``cute.compile`` calls timed in a fresh process with the DSL's caches off (first compile:
   "cold", and the best of the later ones: "warm"); for the third-party captures (quack RMSNorm,
   FA4 forward), whose packages this machine may lack, the times recorded by
   corpus/thirdparty/regen.py in corpus/thirdparty/index.json.
2. **whole processes**: ``python prog.py`` (DSL caches off, as under capture) against
   ``irscan audit -- python prog.py``, wall and CPU (user + system of the process tree), best of
   ``--repeat`` runs taken in turn.  Wall time on a shared machine waits for other work; CPU does not.

Usage: ``python bench/bench_cold.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = {  # (label, capture root, program that makes it or None)
    "quack RMSNorm (small)": (ROOT / "corpus/thirdparty/quack_rmsnorm_fwd_sm90a", None),
    "FA4 fwd sm_90a (big)": (ROOT / "corpus/thirdparty/fa4_fwd_sm90a", None),
    "rmsnorm_row_per_cta": (ROOT / "corpus/captures/rmsnorm_row_per_cta", "rmsnorm_row_per_cta.py"),
    "example_stacked_weights": (ROOT / "corpus/captures/example_stacked_weights", "example_stacked_weights.py"),
}
PROGRAMS = ["example_stacked_weights.py", "rmsnorm_row_per_cta.py"]
NO_CACHE = {"CUTE_DSL_NO_CACHE": "1", "CUTE_DSL_DISABLE_FILE_CACHING": "1", "CUTE_DSL_CACHE_ENABLED": "0"}

SCAN_WORKER = """
import sys, time, json
t0 = time.perf_counter(); c0 = time.process_time()
from pathlib import Path
from irscan.pipeline import scan_paths
t1 = time.perf_counter()
res = scan_paths([Path(sys.argv[1])])
t2 = time.perf_counter(); c2 = time.process_time()
scan_paths([Path(sys.argv[1])])
t3 = time.perf_counter(); c3 = time.process_time()
print(json.dumps({"import": t1 - t0, "cold": t2 - t0, "cold_cpu": c2 - c0, "warm": t3 - t2, "warm_cpu": c3 - c2,
                  "findings": len(res.findings), "modules": sorted(sys.modules)}))
"""

COMPILE_WORKER = """
import sys, time, json, runpy
import cutlass.cute as cute
times = []
real = cute.compile
def timed(*a, **k):
    t0 = time.perf_counter()
    try:
        return real(*a, **k)
    finally:
        times.append(time.perf_counter() - t0)
cute.compile = timed
for i in range(int(sys.argv[2])):
    runpy.run_path(sys.argv[1], run_name="__main__")
print(json.dumps({"times": times}))
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUTE_DSL_", "IRSCAN_"))}
    env.update(extra)
    return env


def _json_run(code: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env or _env(),
                          cwd=ROOT, check=True)  # fmt: skip
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _recorded(name: str) -> tuple[float | None, float | None]:
    for c in json.loads((ROOT / "corpus/thirdparty/index.json").read_text())["captures"]:
        if c["name"] == name:
            return c.get("compile_s_cold"), c.get("compile_s_without_capture")
    return None, None


def cold_vs_compile(repeat: int) -> list[dict[str, Any]]:
    rows = []
    for label, (folder, program) in CAPTURES.items():
        scan = _json_run(SCAN_WORKER, str(folder))
        if program:
            times = _json_run(COMPILE_WORKER, str(ROOT / "corpus/programs" / program), str(repeat + 1),
                              env=_env(**NO_CACHE))["times"]  # fmt: skip
            compile_cold, compile_warm, how = times[0], min(times[1:]), "measured"
        else:
            compile_cold, compile_warm = _recorded(folder.name)
            how = "recorded"
        heavy = [m for m in ("lark", "networkx", "cutlass") if m in scan["modules"]]
        rows.append({"label": label, **{k: v for k, v in scan.items() if k != "modules"}, "heavy": heavy,
                     "compile_cold": compile_cold, "compile_warm": compile_warm, "compile": how})  # fmt: skip
    return rows


def _measure(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime  # the tree: children waited for are included


def whole_processes(repeat: int) -> list[dict[str, Any]]:
    rows = []
    for program in PROGRAMS:
        path = str(ROOT / "corpus/programs" / program)
        plain = [sys.executable, path]
        audit = [sys.executable, "-m", "irscan", "audit", "--fail-on", "never", "--", "python", path]
        best: dict[str, list[float]] = {"plain": [1e9, 1e9], "audit": [1e9, 1e9]}
        for _ in range(repeat):
            for key, argv, env in (("plain", plain, _env(**NO_CACHE)), ("audit", audit, _env())):
                wall, cpu = _measure(argv, env)
                best[key] = [min(best[key][0], wall), min(best[key][1], cpu)]
        rows.append({"program": program, "plain_wall": best["plain"][0], "plain_cpu": best["plain"][1],
                     "audit_wall": best["audit"][0], "audit_cpu": best["audit"][1]})  # fmt: skip
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    base_wall, base_cpu = min(_measure([sys.executable, "-c", "pass"], _env()) for _ in range(3))
    print(f"python -c pass: {base_wall:.3f} s wall, {base_cpu:.3f} s CPU (interpreter start-up, for scale)\n")

    print("1. cold audit (fresh process: import irscan, scan MLIR + PTX once) against the compile")
    print(f"{'capture':<26}{'import':>8}{'cold':>8}{'cold CPU':>9}{'warm':>8}{'fixed CPU':>10}{'compile':>9}"
          f"{'(warm)':>8}{'cold/compile':>13}  heavy modules imported")  # fmt: skip
    for r in cold_vs_compile(args.repeat):
        ratio = f"{100 * r['cold'] / r['compile_cold']:.0f} %" if r["compile_cold"] else "-"
        mark = "*" if r["compile"] == "recorded" else ""
        print(f"{r['label']:<26}{r['import']:>8.3f}{r['cold']:>8.3f}{r['cold_cpu']:>9.3f}{r['warm']:>8.3f}"
              f"{r['cold_cpu'] - r['warm_cpu']:>10.3f}{r['compile_cold'] or 0:>8.2f}{mark:1}"
              f"{r['compile_warm'] or 0:>8.2f}"
              f"{ratio:>13}  {', '.join(r['heavy']) or '-'}")  # fmt: skip
    print("  * compile time recorded in corpus/thirdparty/index.json (the package is not installed here)")
    print("  fixed CPU: cold - warm CPU, what a fresh process pays once (imports, grammar tables, first use)")
    print("  cold/compile: the cold audit against the first compile in a fresh process (both pay first-use costs)\n")

    print("2. whole processes, best of", args.repeat)
    print(f"{'program':<30}{'plain wall':>11}{'audit wall':>11}{'x':>6}{'plain CPU':>11}{'audit CPU':>11}{'x':>6}")
    for r in whole_processes(args.repeat):
        print(f"{r['program']:<30}{r['plain_wall']:>11.2f}{r['audit_wall']:>11.2f}"
              f"{r['audit_wall'] / r['plain_wall']:>6.2f}{r['plain_cpu']:>11.2f}{r['audit_cpu']:>11.2f}"
              f"{r['audit_cpu'] / r['plain_cpu']:>6.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
