"""The long fuzz run: N random cases from a seed, over the whole corpus, on a pool of workers.

    python -m tests.fuzzing --cases 20000 --seed 1 --findings fuzz-findings.md --cases-dir cases/
    python -m tests.fuzzing --recheck cases/        # which saved reproducers still fail
    python -m tests.fuzzing --replay F.json --seed 1 # an earlier run's classes against today's tree

Case ``i`` of seed ``s`` is generated from ``random.Random(f"{s}:{i}")``, so any case can be rebuilt
from its number.  Failures are deduplicated by class (exception type and innermost irscan frame, or
the kind of contract breach); the first case of each class is shrunk and saved as a reproducer, and
the findings file is rewritten whenever a class appears, so others can work from it while it runs.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from .case import Case
from .families import generate_any
from .harness import Outcome, judge
from .minimize import shrink_and_save
from .report import Findings
from .seeds import load_seeds

_WORK = Path(os.environ.get("TMPDIR", "/tmp")) / f"irscan-fuzz-{os.getpid()}"
_CONF: dict[str, Any] = {}


def build_case(seed: int, index: int, scale: int, thirdparty: bool, families: str = "classic") -> Case:
    rng = random.Random(f"{seed}:{index}")
    case_scale = scale if rng.random() < 0.3 else 1
    return generate_any(rng, load_seeds(thirdparty), case_scale, families)


def _init(conf: dict[str, Any]) -> None:
    _CONF.update(conf)
    limit = conf["memory_gb"] << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    load_seeds(conf["thirdparty"])


def _work(index: int) -> tuple[int, Outcome]:
    case = build_case(_CONF["seed"], index, _CONF["scale"], _CONF["thirdparty"], _CONF["families"])
    out = judge(case, case.materialize(_WORK / f"w{os.getpid()}"), _CONF["timeout"])
    if out.ok:
        out.detail = ""
    return index, out


def _shrink(index: int, key: str, dest: str) -> tuple[str, int]:
    case = build_case(_CONF["seed"], index, _CONF["scale"], _CONF["thirdparty"], _CONF["families"])
    small = shrink_and_save(case, key, _WORK / f"m{os.getpid()}", Path(dest), _CONF["shrink_s"], _CONF["timeout"])
    return str(Path(dest) / "input" / small.target), small.size()


def run(args: argparse.Namespace) -> int:
    conf = {"seed": args.seed, "scale": args.scale, "thirdparty": args.thirdparty, "timeout": args.timeout,
            "memory_gb": args.memory_gb, "shrink_s": args.shrink_s, "families": args.families}  # fmt: skip
    findings = Findings(Path(args.findings), Path(args.cases_dir), " ".join(sys.argv[1:]))
    next_index, done, t0 = 0, 0, time.time()
    retry: deque[int] = deque()  # cases in flight when a worker died, run again
    pending: dict[Future[Any], tuple[str, Any]] = {}
    pool = ProcessPoolExecutor(args.jobs, initializer=_init, initargs=(conf,))
    while (done < args.cases and time.time() - t0 < args.budget_s) or pending:
        while (
            time.time() - t0 < args.budget_s
            and (retry or next_index < args.cases)
            and sum(k == "case" for k, _ in pending.values()) < 4 * args.jobs
        ):
            if retry:
                index = retry.popleft()
            else:
                index, next_index = next_index, next_index + 1
            pending[pool.submit(_work, index)] = ("case", index)
        ready, _ = wait(pending, timeout=args.timeout * 3 + 60, return_when=FIRST_COMPLETED)
        if not ready:  # a worker stuck where the alarm cannot reach: every case in flight is a hang
            ready = set(pending)
            for p in list(pool._processes.values()):  # noqa: SLF001 (no public way to kill a stuck worker)
                p.kill()
        broken = False
        for fut in ready:
            kind, ref = pending.pop(fut)
            try:
                result = fut.result()
            except (BrokenProcessPool, Exception) as exc:  # noqa: BLE001 (a dead worker is a finding)
                broken = True
                if kind == "case":
                    done += 1
                    out = Outcome(None, 0.0, 0, f"worker-died:{type(exc).__name__}", "capturing/CLI",
                                  str(exc)[:200], "the worker process died (a crash, or the memory limit)")  # fmt: skip
                    findings.add(ref, out)
                continue
            if kind == "shrink":
                findings.set_repro(ref, *result)
                continue
            done += 1
            index, out = result
            if findings.add(index, out):
                dest = findings.repro_dir(out.failure)
                build_case(args.seed, index, args.scale, args.thirdparty, args.families).save(dest)
                findings.set_repro(out.failure, str(dest / "input"), out.size)
                pending[pool.submit(_shrink, index, out.failure, str(dest))] = ("shrink", out.failure)
            if done % args.progress == 0:
                findings.write(done, time.time() - t0)
                print(findings.summary_line(done, time.time() - t0), flush=True)
        if broken:
            pool.shutdown(wait=False, cancel_futures=True)
            retry.extend(ref for kind, ref in pending.values() if kind == "case")
            pending = {}
            pool = ProcessPoolExecutor(args.jobs, initializer=_init, initargs=(conf,))
    pool.shutdown()
    findings.write(done, time.time() - t0, final=True)
    print(findings.summary_line(done, time.time() - t0), flush=True)
    return 1 if findings.classes else 0


def recheck(args: argparse.Namespace) -> int:
    """Run every saved reproducer again: which classes are fixed in the current tree."""
    still = 0
    for folder in sorted(p.parent for p in Path(args.recheck).glob("*/case.json")):
        case = Case.load(folder)
        work = _WORK / "recheck"
        out = judge(case, case.materialize(work), args.timeout)
        status = "FIXED" if out.ok else "still fails" if out.failure else "?"
        still += not out.ok
        print(f"{status:12} {folder.name}: rc={out.rc} {out.seconds:.2f}s {out.failure or ''}")
    return 1 if still else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzzing", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--cases", type=int, default=1000, help="how many cases (default 1000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds one case may take (default 10)")
    ap.add_argument("--scale", type=int, default=4, help="how much bigger the long run's nestings/chains get")
    ap.add_argument("--memory-gb", type=int, default=4, help="address-space limit of a worker (default 4)")
    ap.add_argument("--shrink-s", type=float, default=60.0, help="time to shrink each class's reproducer")
    ap.add_argument("--no-thirdparty", dest="thirdparty", action="store_false",
                    help="seed only from corpus/captures (not the big third-party captures)")  # fmt: skip
    ap.add_argument("--findings", default="fuzz-findings.md", help="the findings file, rewritten as classes appear")
    ap.add_argument("--cases-dir", default="fuzz-cases", help="where each class's reproducer is saved")
    ap.add_argument("--progress", type=int, default=250, help="print a summary every this many cases")
    ap.add_argument("--budget-s", type=float, default=float("inf"), help="stop starting cases after this long")
    ap.add_argument("--families", choices=("classic", "new", "all"), default="classic",
                    help="classic: the first mutators (the case numbers of earlier runs); new: strategies.py, "
                    "folders.py, cliargs.py; all: both (a replay takes the run's own)")  # fmt: skip
    ap.add_argument("--recheck", metavar="DIR", help="rerun the reproducers saved in DIR instead")
    ap.add_argument("--replay", metavar="JSON", help="replay the classes of an earlier run's findings .json")
    args = ap.parse_args(argv)
    if args.replay:
        from .replay import replay

        return replay(args)
    return recheck(args) if args.recheck else run(args)


if __name__ == "__main__":
    sys.exit(main())
