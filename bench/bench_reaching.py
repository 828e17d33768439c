"""Reaching definitions on generated register-heavy PTX: CPU seconds and peak traced memory.

    python bench/bench_reaching.py [--module path/to/reaching.py]

Issue 7 measured a 100k-register file at 105 s and 11 GB for the whole scan; the cause was the
bit-vector reaching definitions (one mask of O(all defs) bits per register). The shapes here are
the ones that exposed it: one definition per register in one block (``regs``), and the same with a
branch every ten instructions and reads of other registers (``regs_blocks``: many blocks, many
registers live across them). ``--module`` times another implementation (a saved older copy) on the
same inputs, for before/after tables.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import tracemalloc
from collections.abc import Callable
from types import ModuleType

from irscan.frontend import ptx
from irscan.ir import Function

HEAD = (
    ".version 8.8\n.target sm_90a\n.address_size 64\n\n"
    ".visible .entry k(\n\t.param .align 8 .b8 k_param_0[8]\n)\n{\n\t.reg .b32 %r<8>;\n"
)


def regs(n: int) -> str:
    """``n`` registers, each defined once from itself, in one block."""
    body = "".join(f"\tadd.s32 %q{i}, %q{i}, 1;\n" for i in range(n))
    return f"{HEAD}\t.reg .b32 %q<{n}>;\n{body}\tret;\n}}\n"


def regs_blocks(n: int, every: int = 10, loop: bool = False) -> str:
    """``n`` registers, a guarded branch every ``every`` instructions, each reading another register;
    with ``loop``, all inside one loop whose back edge joins every register's definitions."""
    body = [f"\t.reg .b32 %q<{n}>;\n\t.reg .pred %p<2>;\n", "TOP:\n" if loop else ""]
    for i in range(n):
        if i % every == 0:
            body.append(f"\t@%p1 bra L{i};\nL{i}:\n")
        body.append(f"\tadd.s32 %q{i}, %q{(i * 7919) % n}, 1;\n")
    if loop:
        body.append("\t@%p1 bra TOP;\n")
    return HEAD + "".join(body) + "\tret;\n}\n"


def loop_blocks(n: int, every: int = 10) -> str:
    """Like ``regs_blocks`` inside one loop whose back edge joins every register's definitions."""
    return regs_blocks(n, every, loop=True)


def measure(fn: Function, run: Callable[[Function], object]) -> tuple[float, float]:
    """(CPU seconds untraced, peak traced MB) of a call: two calls, since tracing slows Python 2-3x."""
    t0 = time.process_time()
    run(fn)
    secs = time.process_time() - t0
    tracemalloc.start()
    run(fn)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return secs, peak


def load(path: str | None) -> ModuleType:
    if path is None:
        from irscan.analysis import reaching

        return reaching
    spec = importlib.util.spec_from_file_location("reaching_under_test", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--module", help="a reaching.py to time instead of the installed one")
    ap.add_argument("--sizes", default="regs:10000,regs:100000,regs_blocks:40000,loop_blocks:40000")
    args = ap.parse_args()
    mod = load(args.module)
    gens = {"regs": regs, "regs_blocks": regs_blocks, "loop_blocks": loop_blocks}
    print(f"{'input':<20} {'ops':>8} {'blocks':>7} {'CPU s':>8} {'peak MB':>8}")
    for spec in args.sizes.split(","):
        name, n = spec.split(":")
        fn = ptx.parse_module(gens[name](int(n)), f"{name}{n}.ptx").functions[0]
        secs, peak = measure(fn, mod.reaching_definitions)
        ops = sum(len(b.ops) for b in fn.blocks)
        print(f"{name + ':' + n:<20} {ops:>8} {len(fn.blocks):>7} {secs:>8.2f} {peak:>8.0f}")


if __name__ == "__main__":
    main()
