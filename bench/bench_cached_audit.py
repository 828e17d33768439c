"""A repeated ``irscan audit`` of an unchanged program against the plain run, side by side.

``irscan audit`` leaves the DSL's caches on (irscan/capturing/cache.py): a module the DSL serves
from its cache is not lowered again, and irscan puts back the capture it stored under the DSL's key.
For each program, with fresh cache folders (``CUTE_DSL_CACHE_DIR``, ``IRSCAN_CACHE_DIR``) in a
temporary directory, this times (best of ``--repeat``, each a fresh process, CPU seconds):

* ``plain``: ``python prog.py`` as the user runs it, the DSL's caches on (its default) and warm
  (``cute.compile`` turns them off for itself, so for these programs that is a full compile);
* ``plain+lineinfo``: the same with ``CUTE_DSL_LINEINFO=1`` and the caches off: what line info costs;
* ``audit --no-cache``: what ``irscan audit`` did before (caches off, line info on);
* ``audit, first``: the first audit, caches cold (lowers and stores);
* ``audit, repeated``: the audit again, program unchanged (the target: within 10 % of ``plain``).

Programs: a corpus program and quack's sm_90a GEMM (bench/programs/quack_gemm_sm90a.py, run with
``--venv``'s python, default /work/tpvenv, skipped when quack is missing there).  No timing goes into
a test.  Usage: ``python bench/bench_cached_audit.py [--repeat N] [--venv DIR] [programs...]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = [
    ROOT / "corpus" / "programs" / "elementwise_i32_stride.py",
    ROOT / "bench" / "programs" / "quack_gemm_sm90a.py",
]
NO_CACHE = {"CUTE_DSL_NO_CACHE": "1", "CUTE_DSL_DISABLE_FILE_CACHING": "1"}


def _time(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of the process and its children: on a shared machine, waiting on
    other work inflates wall time but not this."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _best(argv: list[str], env: dict[str, str], repeat: int) -> float:
    return min(_time(argv, env) for _ in range(max(repeat, 1)))


def bench(prog: Path, python: str, repeat: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="irscan-bench-cache-") as tmp:
        env = {**os.environ, "CUTE_DSL_CACHE_DIR": f"{tmp}/dsl", "IRSCAN_CACHE_DIR": f"{tmp}/irscan"}
        for k in (*NO_CACHE, "CUTE_DSL_LINEINFO"):
            env.pop(k, None)
        run = [python, str(prog)]
        audit = [python, "-m", "irscan", "audit", "--fail-on", "never", "--format", "json", "--"]
        out: dict[str, float] = {}
        _time(run, env)  # warm-up: the DSL's file cache and the OS's
        out["plain"] = _best(run, env, repeat)
        out["plain+lineinfo"] = _best(run, {**env, **NO_CACHE, "CUTE_DSL_LINEINFO": "1"}, repeat)
        out["plain, no cache"] = _best(run, {**env, **NO_CACHE}, repeat)
        out["audit --no-cache"] = _best(audit[:-1] + ["--no-cache", "--", *run], env, repeat)
        out["audit, first"] = _time(audit + run, env)
        out["audit, repeated"] = _best(audit + run, env, repeat)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("programs", nargs="*", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--venv", default="/work/tpvenv", help="python for programs under bench/programs/")
    args = ap.parse_args(argv)
    venv_python = str(Path(args.venv) / "bin" / "python")
    cols = ["plain", "audit, repeated", "plain+lineinfo", "plain, no cache", "audit --no-cache", "audit, first"]
    print(f"{'program':34} " + " ".join(f"{c:>17}" for c in cols) + "  repeated/plain")
    for prog in args.programs:
        python = (
            venv_python if prog.parent.name == "programs" and prog.parent.parent.name == "bench" else sys.executable
        )
        if not Path(python).exists():
            print(f"{prog.name:34} skipped: no {python}")
            continue
        try:
            r = bench(prog, python, args.repeat)
        except subprocess.CalledProcessError as exc:
            print(f"{prog.name:34} failed: {exc}")
            continue
        ratio = r["audit, repeated"] / r["plain"]
        print(f"{prog.stem[:34]:34} " + " ".join(f"{r[c]:>16.2f}s" for c in cols) + f"  {ratio:>13.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
