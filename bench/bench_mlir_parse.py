"""MLIR front-end timings: the fast path (cold: empty template caches; warm: best of 3) against the
whole-grammar parse, on the biggest corpus captures, next to the kernel's ``cute.compile`` time where
corpus/thirdparty/index.json records it.

    python bench/bench_mlir_parse.py [--top N]

The DSL's own parser and the analysis are timed by bench_audit.py; this table is the one that tells
whether the fast path (indexer + one grammar parse per op shape) still earns its keep over the full
parse. It was a test that asserted nothing (tests/test_mlir_frontend.py::test_timing) until it moved
here: timings belong in bench/, not in the test suite.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path

from irscan.frontend import mlir
from irscan.frontend.mlir import templates
from irscan.resources import read_text

REPO = Path(__file__).resolve().parents[1]
CAPTURES = sorted(REPO.glob("corpus/captures/**/module.mlir")) + sorted(
    REPO.glob("corpus/thirdparty/**/module.mlir.xz")
)


def compile_seconds() -> dict[Path, float]:
    """cute.compile seconds per third-party module folder."""
    idx = REPO / "corpus" / "thirdparty" / "index.json"
    out: dict[Path, float] = {}
    if idx.exists():
        for entry in json.loads(idx.read_text())["captures"]:
            secs = entry.get("compile_s_without_capture") or entry.get("compile_s_cold")
            for m in entry.get("modules", []):
                if secs:
                    out[REPO / "corpus" / "thirdparty" / entry["name"] / m["module"]] = secs
    return out


def _seconds(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=6, help="how many of the biggest captures (default 6)")
    args = ap.parse_args()
    texts = {p: read_text(p) for p in CAPTURES}
    compile_s = compile_seconds()
    heads = ("MB", "ops", "fast cold", "fast warm", "full", "compile")
    print(f"{'capture':<60} " + " ".join(f"{h:>9}" for h in heads))
    for p in sorted(CAPTURES, key=lambda p: len(texts[p]), reverse=True)[: args.top]:
        text = texts[p]
        templates.clear_caches()
        fast = functools.partial(mlir.parse_module, text, str(p))
        cold = _seconds(fast)
        warm = min(_seconds(fast) for _ in range(3))
        full = _seconds(functools.partial(mlir.parse_module, text, str(p), full=True))
        m = mlir.parse_module(text, str(p))
        nops = sum(len(b.ops) for f in m.functions for b in f.blocks)
        comp = compile_s.get(p.parent)
        cells = [f"{len(text) / 1e6:.2f}", str(nops), f"{cold * 1000:.0f}ms", f"{warm * 1000:.0f}ms", f"{full:.2f}s",
                 f"{comp:.2f}s" if comp else "-"]  # fmt: skip
        print(f"{str(p.relative_to(REPO))[-60:]:<60} " + " ".join(f"{c:>9}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
