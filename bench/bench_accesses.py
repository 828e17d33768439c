"""What the access records cost (irscan/diff/accesses.py: every global-memory access with the width of
its index arithmetic, which ``irscan diff`` needs for its narrowed report): the scan of each corpus
set with and without them, CPU seconds in this process, best of ``--repeat``.  No timing goes into a
test.

Usage: ``python bench/bench_accesses.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import irscan.pipeline as pipeline

ROOT = Path(__file__).resolve().parents[1]
SETS = {"corpus/captures": ROOT / "corpus" / "captures", "corpus/thirdparty": ROOT / "corpus" / "thirdparty"}


def _scan(root: Path) -> int:
    return sum(len(pipeline.scan_capture(c).accesses) for c in pipeline.find_captures(root))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    records = pipeline.access_records

    def none(*_: Any, **__: Any) -> list[dict[str, Any]]:
        return []

    print("| set | accesses | scan without (s) | scan with (s) | added |")
    print("|---|---|---|---|---|")
    for label, root in SETS.items():
        _scan(root)  # warm: grammars, imports, linecache
        times = {}
        n = 0
        for name, fn in (("without", none), ("with", records)):
            pipeline.access_records = fn  # type: ignore[assignment]
            best = float("inf")
            for _ in range(args.repeat):
                t = time.process_time()
                n = _scan(root) or n
                best = min(best, time.process_time() - t)
            times[name] = best
        pipeline.access_records = records
        added = times["with"] / times["without"] - 1
        print(f"| {label} | {n} | {times['without']:.2f} | {times['with']:.2f} | {added:+.0%} |")


if __name__ == "__main__":
    main()
