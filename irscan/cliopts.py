"""The command line's vocabulary: option groups several commands share, and the types of their
values (paths, IR lists, memory sizes).  A bad value is bad usage (exit 2), said in one line."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

EXIT_USAGE = 2


def usage_error(msg: str) -> int:
    print(f"irscan: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--arch", help="GPU arch to compile for when none is detected (default sm_90a)")
    p.add_argument(
        "--no-lineinfo",
        dest="lineinfo",
        action="store_false",
        help="do not ask the DSL for line info (findings then map to the kernel's def line only)",
    )
    p.add_argument("--strict", action="store_true", help="make irscan's own failures fail the run")
    p.add_argument("program", nargs=argparse.REMAINDER, help="-- python script.py [args]")


def ir_list(value: str) -> tuple[str, ...]:
    from irscan.resources import UsageError

    irs = tuple(x.strip() for x in value.split(",") if x.strip())
    bad = [x for x in irs if x not in ("mlir", "ptx")]
    if bad or not irs:
        raise UsageError(f"--ir takes mlir, ptx or mlir,ptx (got {value!r})")
    return irs


def path_arg(value: str, what: str = "a path") -> Path:
    """A path from the command line; ``""`` would be Path("."), the current folder, which nobody named."""
    from irscan.resources import UsageError

    if not value:
        raise UsageError(f"{what} is empty")
    return Path(value)


@contextlib.contextmanager
def writing(option: str, path: Path) -> Iterator[None]:
    """Writing an output the command line named (``--dot``, ``--write-baseline``): a path that cannot
    be written (a folder, a file where a folder belongs, a missing parent, /proc) is bad usage, exit 2."""
    from irscan.resources import UsageError

    try:
        yield
    except OSError as exc:
        raise UsageError(f"{option} {path}: {exc.strerror or exc}") from exc


def add_triage_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline", metavar="FILE", help="report only findings not in this baseline (or saved report)")
    p.add_argument("--write-baseline", metavar="FILE", help="write this run's findings as a baseline and exit 0")


def memory_size(text: str) -> int:
    from irscan.checks.memory import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    except OverflowError:  # 400 digits: past a float; argparse lets anything but ValueError escape
        raise argparse.ArgumentTypeError(f"not a memory size: {text[:40]!r}...: too large") from None


def add_rule_options(p: argparse.ArgumentParser) -> None:
    """The reporting rule's two knobs (README, "What is reported")."""
    from irscan.checks.memory import DEFAULT_GPU, DEFAULT_MAX_MEMORY

    p.add_argument("--all", action="store_true", help="also print the findings the reporting rule suppressed, with why")
    p.add_argument(
        "--max-memory",
        type=memory_size,
        default=DEFAULT_MAX_MEMORY,
        metavar="SIZE",
        help=f"the most memory one GPU has (141GB, 288GiB, bytes): a wrap every tensor would need more than "
        f"this to reach is suppressed (default: the largest single GPU shipping today, {DEFAULT_GPU}, "
        f"taken as {DEFAULT_MAX_MEMORY:,} bytes)",
    )
