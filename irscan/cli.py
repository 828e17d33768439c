"""The ``irscan`` command: argument parsing and wiring only; the work happens in the modules it calls."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

EXIT_FINDINGS, EXIT_USAGE = 1, 2


def _program(args: argparse.Namespace) -> list[str]:
    prog = list(args.program)
    if prog and prog[0] == "--":
        prog = prog[1:]
    if not prog:
        raise SystemExit(_usage_error("give the program to run after --, e.g. `-- python script.py`"))
    return prog


def _usage_error(msg: str) -> int:
    print(f"irscan: error: {msg}", file=sys.stderr)
    return EXIT_USAGE


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--arch", help="GPU arch to compile for when none is detected (default sm_90a)")
    p.add_argument(
        "--no-lineinfo",
        dest="lineinfo",
        action="store_false",
        help="do not ask the DSL for line info (findings then map to the kernel's def line only)",
    )
    p.add_argument("--strict", action="store_true", help="make irscan's own failures fail the run")
    p.add_argument("program", nargs=argparse.REMAINDER, help="-- python script.py [args]")


def cmd_capture(args: argparse.Namespace) -> int:
    from irscan.capture import find_captures
    from irscan.runner import run_program

    out = Path(args.out)
    before = set(find_captures(out)) if out.exists() else set()
    rc = run_program(_program(args), str(out), args.arch, args.lineinfo, args.strict)
    new = [d for d in find_captures(out) if d not in before] if out.exists() else []
    for d in new:
        files = ", ".join(f.name for f in sorted(d.iterdir()))
        print(f"irscan: captured {d} ({files})", file=sys.stderr)
    if not new:
        print("irscan: no kernel was compiled through cute.compile / @cute.jit", file=sys.stderr)
    if rc != 0:
        print(f"irscan: the program exited with status {rc}", file=sys.stderr)
    return rc


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="irscan", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("capture", help="run a program and capture every CuTe DSL kernel it compiles")
    p.add_argument("--out", default="irscan-capture", help="folder for the captures (default ./irscan-capture)")
    _add_run_options(p)
    p.set_defaults(func=cmd_capture)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:
        return _usage_error(str(exc))


if __name__ == "__main__":
    tempfile  # noqa: B018 (kept for subcommands that stage captures in a temporary folder)
    sys.exit(main())
