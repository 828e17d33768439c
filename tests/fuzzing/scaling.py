"""Is a scan's time linear in its input?  Each grower makes one kind of input ``k`` times bigger (more
independent ops, a longer dependency chain, a longer line, deeper nesting, more functions, more
files); the input is scanned at 1x, 4x and 16x and the time per MB and the growth are printed.
Linear time grows ~16x from 1x to 16x; the run flags growth over 32x (super-linear) or over 5 s/MB.
Not a test (no timing thresholds in the suite): a measurement, run by hand.

    python -m tests.fuzzing.scaling [--base 1.0] [--only NAME]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from .case import Case
from .harness import judge
from .seeds import load_seeds

Grower = Callable[[str, str, int], dict[str, bytes | None]]


def _insert_body(text: str, ir: str, lines: list[str]) -> str:
    """``lines`` put in the first function body, before its first terminator."""
    m = re.search(r"^\s*(?:llvm\.return|ret;)", text, re.M)
    at = m.start() if m else len(text)
    return text[:at] + "\n".join(lines) + "\n" + text[at:]


def _values(text: str, ir: str, k: int) -> dict[str, bytes | None]:
    n = 2000 * k
    if ir == "ptx":
        new = [f"\t.reg .b32 \t%fz<{n}>;"] + [f"\tadd.s32 \t%fz{i}, %r1, {i};" for i in range(n)]
    else:
        src = re.search(r"(%\w+) = nvvm\.read\.ptx\.sreg\.tid\.x", text)
        v = src.group(1) if src else "%0"
        new = [f"    %fz{i} = llvm.add {v}, {v} : i32" for i in range(n)]
    return {f"module.{ir}": _insert_body(text, ir, new).encode()}


def _chain(text: str, ir: str, k: int) -> dict[str, bytes | None]:
    n = 1000 * k
    if ir == "ptx":
        new = ["\tmov.u32 \t%fz0, %r1;", f"\t.reg .b32 \t%fz<{n + 1}>;"]
        new += [f"\tadd.s32 \t%fz{i + 1}, %fz{i}, 3;" for i in range(n)]
        new += [f"\tst.global.u32 \t[%rd1], %fz{n};"]
    else:
        src = re.search(r"(%\w+) = nvvm\.read\.ptx\.sreg\.tid\.x", text)
        v = src.group(1) if src else "%0"
        new = [f"    %fz0 = llvm.add {v}, {v} : i32"]
        new += [f"    %fz{i + 1} = llvm.add %fz{i}, {v} : i32" for i in range(n)]
    return {f"module.{ir}": _insert_body(text, ir, new).encode()}


def _long_line(text: str, ir: str, k: int) -> dict[str, bytes | None]:
    return {f"module.{ir}": _insert_body(text, ir, ["// " + "x" * (250_000 * k)]).encode()}


def _long_name(text: str, ir: str, k: int) -> dict[str, bytes | None]:
    name = "%" + "a" * (100_000 * k)
    line = f"\tadd.s32 \t{name}, %r1, 1;" if ir == "ptx" else f"    {name} = llvm.add %0, %0 : i32"
    return {f"module.{ir}": _insert_body(text, ir, [line]).encode()}


def _nesting(text: str, ir: str, k: int) -> dict[str, bytes | None]:
    d = 500 * k
    line = "{" * d + "}" * d if ir == "ptx" else "    %fzn = llvm.mlir.constant(" + "[" * d + "1" + "]" * d + ") : i32"
    return {f"module.{ir}": _insert_body(text, ir, [line]).encode()}


def _functions(text: str, ir: str, k: int) -> dict[str, bytes | None]:
    pat = r"(\.visible\s+\.entry\s+)([\w$]+)" if ir == "ptx" else r"(llvm\.func\s+@)([\w$]+)"
    names = [m.group(2) for m in re.finditer(pat, text)]
    parts = [text]
    for i in range(4 * k):
        t = text
        for nm in names:
            t = t.replace(nm, f"{nm}_fz{i}")
        if ir == "mlir":  # one module: the copies' functions go inside the first one's
            body = re.search(r"(gpu\.module[^\n]*\{\n)(.*)(\n\s*\}\s*\n\s*\}?)", t, re.S)
            if body is None:
                break
            parts.append(body.group(2))
        else:
            parts.append(re.sub(r"^\.(?:version|target|address_size)[^\n]*\n", "", t, flags=re.M))
    if ir == "mlir":
        head = re.search(r"(.*gpu\.module[^\n]*\{\n)(.*)(\n\s*\}\s*\n\s*\}?.*)", text, re.S)
        if head is None:
            return {"module.mlir": text.encode()}
        return {"module.mlir": (head.group(1) + "\n".join(parts[1:] + [head.group(2)]) + head.group(3)).encode()}
    return {"module.ptx": "\n".join(parts).encode()}


def _files(text: str, ir: str, k: int) -> dict[str, bytes | None]:
    return {f"f{i}/module.{ir}": text.encode() for i in range(8 * k)}


GROWERS: dict[str, Grower] = {"values": _values, "chain": _chain, "long_line": _long_line, "long_name": _long_name,
                              "nesting": _nesting, "functions": _functions, "files": _files}  # fmt: skip


def measure(base: float, only: str | None, timeout: float) -> int:
    seeds = load_seeds(False, 80_000)
    picks = [next(s for s in seeds if s.name.startswith("captures/elementwise_static_100k/") and s.ir == ir)
             for ir in ("mlir", "ptx")]  # fmt: skip
    flagged = 0
    work = Path("/tmp") / "irscan-scaling"
    print(f"{'grower':10} {'ir':4} {'1x MB':>7} {'1x s':>6} {'4x s':>6} {'16x s':>6} {'s/MB@16x':>8} {'16x/1x':>7}")
    for name, grow in GROWERS.items():
        if only and name != only:
            continue
        for seed in picks:
            times, sizes, rcs = [], [], []
            for k in (1, 4, 16):
                files = grow(seed.text, seed.ir, max(1, round(k * base)))
                case = Case(files, "", [name])
                out = judge(case, case.materialize(work), timeout)
                times.append(out.seconds)
                sizes.append(out.size / 1e6)
                rcs.append(out.failure or out.rc)
            ratio = times[2] / max(times[0], 1e-3)
            per_mb = times[2] / max(sizes[2], 1e-6)
            bad = ratio > 32 and times[2] > 0.5 or per_mb > 5 or any(isinstance(r, str) for r in rcs)
            flagged += bad
            print(f"{name:10} {seed.ir:4} {sizes[0]:7.2f} {times[0]:6.2f} {times[1]:6.2f} {times[2]:6.2f} "
                  f"{per_mb:8.2f} {ratio:7.1f} rc={rcs} {'<- FLAG' if bad else ''}", flush=True)  # fmt: skip
    return 1 if flagged else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzzing.scaling", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--base", type=float, default=1.0, help="size of the 1x input, relative (default 1)")
    ap.add_argument("--only", help="one grower")
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args(argv)
    return measure(args.base, args.only, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
