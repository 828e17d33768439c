"""``irscan scan`` of a folder of capture-less subfolders, one tiny PTX file in each: wall seconds.

    python bench/bench_loose_files.py [512 2048 8192]

pipeline.scan_loose_files scans each folder's IR files together; it once picked each folder's files
out of the whole list (folders x files: 2,048 folders took 10 s, 512 took 1.2 s).  Files are now
grouped by folder once, and the time should grow with the number of files only.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from irscan.pipeline import scan_loose_files

PTX = ".version 8.8\n.target sm_90a\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n"


def tree(root: Path, folders: int) -> None:
    for i in range(folders):
        d = root / f"d{i:05d}"
        d.mkdir()
        (d / "k.ptx").write_text(PTX)


def main(argv: list[str]) -> None:
    for n in [int(a) for a in argv] or [512, 2048, 8192]:
        with tempfile.TemporaryDirectory() as tmp:
            tree(Path(tmp), n)
            t0 = time.perf_counter()
            res = scan_loose_files(Path(tmp), ("mlir", "ptx"))
            dt = time.perf_counter() - t0
        print(f"{n:6d} folders: {dt:7.2f} s  ({dt / n * 1e3:.2f} ms a folder, {len(res.kernels)} kernels)")


if __name__ == "__main__":
    main(sys.argv[1:])
