"""The ``irscan`` command: argument parsing and wiring only; the work happens in the modules it calls."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from irscan.pipeline import ScanResult

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
    from irscan.capturing.runner import run_program
    from irscan.capturing.store import find_captures

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


def _emit(res: ScanResult, fmt: str, environment: dict[str, Any] | None = None) -> None:
    from irscan.report import json as json_report
    from irscan.report import text

    if fmt == "json":
        print(json_report.render(res.findings, res.kernels, res.unseen, environment=environment, errors=res.errors))
    else:
        print(text.render(res.findings, res.kernels, res.unseen))
        for e in res.errors:
            print(e, file=sys.stderr)


def _irs(value: str) -> tuple[str, ...]:
    irs = tuple(x.strip() for x in value.split(",") if x.strip())
    bad = [x for x in irs if x not in ("mlir", "ptx")]
    if bad or not irs:
        raise ValueError(f"--ir takes mlir, ptx or mlir,ptx (got {value!r})")
    return irs


def cmd_scan(args: argparse.Namespace) -> int:
    from irscan.ir import IRSyntaxError
    from irscan.pipeline import reaches, scan_paths

    try:
        res = scan_paths([Path(p) for p in args.paths], _irs(args.ir))
    except IRSyntaxError as exc:
        print(f"{exc.path}:{exc.line}:{exc.col}: error: {exc.message}", file=sys.stderr)
        if exc.expected:
            print(f"  expected one of: {', '.join(exc.expected[:15])}", file=sys.stderr)
        return EXIT_USAGE
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError) as exc:
        return _usage_error(str(exc))
    _emit(res, args.format)
    return EXIT_FINDINGS if reaches(res.findings, args.fail_on) else 0


def cmd_audit(args: argparse.Namespace) -> int:
    from irscan.capturing.meta import dsl_environment
    from irscan.capturing.runner import run_program
    from irscan.ir import IRSyntaxError
    from irscan.pipeline import reaches, scan_safely

    tmp = None if args.out else tempfile.TemporaryDirectory(prefix="irscan-audit-")
    out = Path(args.out or tmp.name)  # type: ignore[union-attr]
    try:
        rc = run_program(_program(args), str(out), args.arch, args.lineinfo, args.strict,
                         stdout_to_stderr=args.format == "json")  # fmt: skip
        if rc != 0:
            print(f"irscan: the audited program exited with status {rc}; scanning what it compiled", file=sys.stderr)
        try:
            res = scan_safely(out, args.strict, _irs(args.ir))
        except IRSyntaxError as exc:
            print(f"irscan: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if not res.kernels and not res.errors:
            print("irscan: no kernel was captured (nothing compiled through cute.compile / @cute.jit)", file=sys.stderr)
            if args.strict:
                return EXIT_USAGE
        _emit(res, args.format, dsl_environment())
        if tmp is not None and res.findings:
            print("irscan: the captures were temporary; `irscan audit --out DIR` keeps them", file=sys.stderr)
        if args.strict and (res.errors or rc != 0):
            return EXIT_USAGE
        return EXIT_FINDINGS if reaches(res.findings, args.fail_on) else 0
    finally:
        if tmp is not None:
            tmp.cleanup()


def cmd_rules(args: argparse.Namespace) -> int:
    from irscan import checks
    from irscan.report import json as json_report
    from irscan.report import text

    try:
        chosen = [checks.get(i) for i in args.ids] if args.ids else list(checks.CHECKS)
    except KeyError as exc:
        return _usage_error(str(exc.args[0]))
    print(json_report.render_rules(chosen) if args.format == "json" else text.render_rules(chosen))
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="irscan", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("capture", help="run a program and capture every CuTe DSL kernel it compiles")
    p.add_argument("--out", default="irscan-capture", help="folder for the captures (default ./irscan-capture)")
    _add_run_options(p)
    p.set_defaults(func=cmd_capture)

    fail = {"choices": ["must", "may", "never"], "help": "exit 1 when findings reach this severity"}
    p = sub.add_parser("scan", help="scan captured IR: files (.mlir, .ptx, .xz) or capture folders")
    p.add_argument("paths", nargs="+")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--fail-on", default="must", **fail)  # type: ignore[arg-type]
    p.add_argument("--ir", default="mlir,ptx", help="which IRs to scan: mlir, ptx or mlir,ptx (default both)")
    p.set_defaults(func=cmd_scan)

    p = sub.add_parser("audit", help="run a program, capture what it compiles and scan it (compile-time audit)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--fail-on", default="must", **fail)  # type: ignore[arg-type]
    p.add_argument("--ir", default="mlir,ptx", help="which IRs to scan (default both)")
    p.add_argument("--out", help="keep the captures in this folder (default: a temporary one)")
    _add_run_options(p)
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("rules", help="print each check's doc: what it finds, why it is a bug, an example, the fix")
    p.add_argument("ids", nargs="*", metavar="CHECK", help="check ids (default: all)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=cmd_rules)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:
        return _usage_error(str(exc))


if __name__ == "__main__":
    sys.exit(main())
