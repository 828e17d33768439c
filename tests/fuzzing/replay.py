"""Replay an earlier run's failure classes against the current tree.

The tree changes while a long run goes (others fix what it finds), and a run's workers keep the
modules they imported at its start; a replay rebuilds each class's example cases from their numbers,
judges them now, shrinks and saves a reproducer for each class that still fails, and rewrites the
findings file with a status per class: open, fixed, or changed into another class.

    python -m tests.fuzzing --replay runs/findings-seed2.json --seed 2 --findings F.md --cases-dir DIR
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from .harness import judge
from .minimize import shrink_and_save
from .report import Findings, Klass

_WORK = Path(os.environ.get("TMPDIR", "/tmp")) / f"irscan-replay-{os.getpid()}"


def _replay_one(k: Klass, conf: dict[str, Any], dest: str) -> tuple[str, str, str, int, str, str]:
    """(key, status, reproducer path, its size, last line, detail) for one class, as the tree is now."""
    from .run import build_case

    work = _WORK / f"w{os.getpid()}"
    now: list[str] = []
    for index in k.examples[: conf["tries"]]:
        case = build_case(conf["seed"], index, conf["scale"], conf["thirdparty"], conf["families"])
        out = judge(case, case.materialize(work), conf["timeout"])
        if out.failure == k.key:
            small = shrink_and_save(case, k.key, work, Path(dest), conf["shrink_s"], conf["timeout"])
            path = Path(dest) / "input" / small.target
            status = f"open: case #{index} fails the same way in the current tree"
            return k.key, status, str(path), small.size(), out.last_line, out.detail
        now.append(f"#{index}: {out.failure or f'ok (rc={out.rc})'}")
    if all("ok (rc=" in x for x in now):
        return k.key, f"fixed: {len(now)} example case(s) keep the contract now", "", 0, k.last_line, k.detail
    return k.key, "changed: " + "; ".join(now), "", 0, k.last_line, k.detail


def replay(args: argparse.Namespace) -> int:
    findings = Findings.load(Path(args.replay), Path(args.findings), Path(args.cases_dir))
    findings.note = f"Replayed against the tree of {time.strftime('%Y-%m-%d %H:%M:%S')} (statuses below)."
    conf = {"seed": args.seed, "scale": args.scale, "thirdparty": args.thirdparty, "timeout": args.timeout,
            "shrink_s": args.shrink_s, "tries": 4, "families": args.families}  # fmt: skip
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(_replay_one, k, conf, str(findings.repro_dir(k.key)))
                   for k in findings.classes.values()]  # fmt: skip
        for fut in futures:
            key, status, path, size, last, detail = fut.result()
            k = findings.classes[key]
            k.status, k.repro, k.repro_size, k.last_line, k.detail = status, path, size, last, detail
            print(f"{status.split(':')[0]:8} {key}", flush=True)
    findings.write(None, None, final=True)
    return 1 if any(k.status.startswith("open") for k in findings.classes.values()) else 0
