"""What the launch guard adds to a launch: the DSL's call path with and without the guard's check.

Compiles corpus programs under ``irscan.guard`` (their own ``cute.compile`` calls, unchanged), then
times calls of the function ``cute.compile`` returned, with safe (below-threshold) virtual tensors:

* ``plain``: the DSL's own ``__call__`` of the same object (the guard's check skipped);
* ``guarded``: the guarded ``__call__`` (check, then the DSL's ``__call__``);
* ``check``: the generated check alone.

CUDA is stubbed at the DSL's executor (plain JIT: ``run_compiled_program`` returns 0 after the DSL
has packed the arguments; TVM-FFI: the C function behind the kwargs wrapper is replaced by a no-op,
so that row is the guard's cost over a stub).  A kernel with no finding keeps the DSL's class: its
row shows the same call twice.  Best of ``--repeat`` runs of ``--number`` calls, in microseconds.
No timing goes into a test.  Usage: ``python bench/bench_guard.py [--repeat N] [--number N]``.
"""

from __future__ import annotations

import argparse
import time
import timeit
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "corpus" / "programs"


def cases() -> list[tuple[str, str, tuple[Any, ...]]]:
    """(program, what it checks, safe call arguments)."""
    from irscan.guarding.dryrun import virtual

    pitched = virtual((8192, 8192), (8192, 1), "float16")
    x, w = virtual((4096, 8192), (8192, 1), "float16"), virtual((8192,), (1,), "float16")
    o, do = virtual((65536, 16, 96), (1536, 96, 1), "float16"), virtual((65536, 16, 96), (9728, 96, 1), "float16")
    seq, ps = virtual((5,), (1,), "int32"), virtual((4, 16, 8192), (131072, 8192, 1), "float32")
    a = virtual((4096, 4096), (4096, 1), "float32")
    return [
        ("elementwise_i32_stride", "2 conditions, static grid", (pitched, pitched)),
        ("rmsnorm_row_per_cta", "2 conditions, grid from the host code", (x, w, x, 1e-6)),
        ("varlen_offset_fa4_2611", "2 contracts, 4 tensors", (o, do, seq, ps)),
        ("elementwise_add_dynamic_i64", "no finding", (a, a, a)),
    ]


class _StubExecutor:
    """The DSL's executor with the CUDA call taken out (the arguments are packed before it)."""

    def run_compiled_program(self, exe_args: list[Any]) -> int:
        return 0


def _stub(f: Any, tvm: bool) -> None:
    if tvm:
        f._kwargs_wrapper = lambda *a, **k: 0
    else:
        f._default_executor = _StubExecutor()


def _best(fn: Any, repeat: int, number: int) -> float:
    return min(timeit.repeat(fn, repeat=repeat, number=number)) / number * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=2000)
    args = ap.parse_args()

    import irscan
    from irscan.guarding.dryrun import compiled_by

    rows = []
    t0 = time.perf_counter()
    with irscan.guard(mode="raise") as session:
        compiled = {(name, tvm): compiled_by(PROGRAMS / f"{name}.py", "--enable-tvm-ffi" if tvm else "")[-1]
                    for name, _, _ in cases() for tvm in (False, True)}  # fmt: skip
    compile_s = time.perf_counter() - t0
    for name, what, call in cases():
        for tvm in (False, True):
            f = compiled[(name, tvm)]
            _stub(f, tvm)
            checker = getattr(f, "_irscan_guard", None)
            dsl_call = type(f).__mro__[1].__call__ if checker is not None else type(f).__call__
            plain = _best(lambda: dsl_call(f, *call), args.repeat, args.number)  # noqa: B023
            guarded = _best(lambda: f(*call), args.repeat, args.number)  # noqa: B023
            check = _best(lambda: checker(call, {}), args.repeat, args.number) if checker else 0.0  # noqa: B023
            rows.append((name, "tvm-ffi" if tvm else "plain JIT", what, plain, guarded, check))
    print(f"{'program':<28} {'path':<10} {'checks':<38} {'plain':>8} {'guarded':>8} {'added':>7} {'check':>7}")
    for name, path, what, plain, guarded, check in rows:
        print(f"{name:<28} {path:<10} {what:<38} {plain:8.2f} {guarded:8.2f} {guarded - plain:7.2f} {check:7.2f}")
    print("(microseconds per call, best of --repeat; CUDA stubbed at the executor)")
    n, share = len(session.modules), session.seconds / compile_s
    print(f"preparing the checks: {session.seconds * 1e3 / n:.0f} ms a module ({n} modules, {share:.0%} of their")
    print(f"{compile_s:.1f} s of compiles, first-use imports included)")


if __name__ == "__main__":
    main()
