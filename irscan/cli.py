"""The ``irscan`` command: argument parsing and wiring only; the work happens in the modules it calls.

Exit codes (README, "Exit codes"): 0 nothing at the ``--fail-on`` level; 1 findings at that level;
2 bad input (a located ``file:line:col: error:``) or bad usage; 3 an internal error of irscan;
4 ``audit``: the audited program failed; 5 ``audit``: the audit is incomplete (nothing was compiled,
or a captured module could not be scanned); 130 interrupted (141: stdout closed early).
``capture`` passes the program's own status through.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irscan.cliopts import (
    EXIT_USAGE,
    add_rule_options,
    add_run_options,
    add_triage_options,
    ir_list,
    path_arg,
    usage_error,
    writing,
)

if TYPE_CHECKING:
    from irscan.pipeline import ScanResult

EXIT_FINDINGS, EXIT_INTERNAL, EXIT_PROGRAM_FAILED, EXIT_INCOMPLETE = 1, 3, 4, 5  # EXIT_USAGE: 2 (cliopts.py)
EXIT_INTERRUPTED = 128 + signal.SIGINT
REPORT_AT = "README.md, 'Reporting a bug'"


def _program(args: argparse.Namespace) -> list[str]:
    prog = list(args.program)
    if prog and prog[0] == "--":
        prog = prog[1:]
    if not prog:
        raise SystemExit(usage_error("give the program to run after --, e.g. `-- python script.py`"))
    return prog


def _run(args: argparse.Namespace, out: Path, stdout_to_stderr: bool = False) -> int:
    """Run the user's program with capture armed; after Ctrl-C, say what became of the captures."""
    from irscan.capturing.runner import run_program
    from irscan.resources import UsageError

    if out.exists() and not out.is_dir():  # the hook would fail to write each capture: say so before the run
        raise UsageError(f"--out {out} is not a folder")
    created = not out.exists()
    try:
        cache = getattr(args, "dsl_cache", False)  # audit only; patch mode and the guard keep caches off
        return run_program(_program(args), str(out), args.arch, args.lineinfo, args.strict, stdout_to_stderr, cache)
    except KeyboardInterrupt:
        _after_interrupt(out, created)
        raise


def _after_interrupt(out: Path, created: bool) -> None:
    from irscan.capturing.store import find_captures, unfinished

    for d in unfinished(out) if out.is_dir() else []:
        print(f"irscan: {d} is unfinished (the compile was interrupted): no meta.json, not scanned", file=sys.stderr)
    if created and out.is_dir() and not any(out.iterdir()):
        out.rmdir()  # nothing was compiled: the folder this run made goes too
    elif out.is_dir() and find_captures(out):
        print(f"irscan: the finished captures are in {out}", file=sys.stderr)


def _unfinished_notes(out: Path) -> list[str]:
    from irscan.capturing.store import unfinished

    return [f"irscan: {d} is unfinished (its compile failed): no meta.json, not scanned" for d in unfinished(out)]


def cmd_capture(args: argparse.Namespace) -> int:
    from irscan.capturing.store import find_captures

    out = Path(args.out)
    before = set(find_captures(out)) if out.exists() else set()
    rc = _run(args, out)
    new = [d for d in find_captures(out) if d not in before] if out.exists() else []
    for d in new:
        files = ", ".join(f.name for f in sorted(d.iterdir()))
        print(f"irscan: captured {d} ({files})", file=sys.stderr)
    for note in _unfinished_notes(out) if out.is_dir() else []:
        print(note, file=sys.stderr)
    if not new:
        print("irscan: no kernel was compiled through cute.compile / @cute.jit", file=sys.stderr)
    if rc != 0:
        print(f"irscan: the program exited with status {rc}", file=sys.stderr)
    return rc


def _emit(
    res: ScanResult, fmt: str, environment: dict[str, Any] | None = None, show_all: bool = False, **extra: Any
) -> None:
    """The report on stdout; in text form irscan's notes and errors go to stderr.  ``extra``: top-level
    fields of the JSON document beyond report.json's (the audited program's status).  ``show_all``
    (``--all``): the text report also prints the findings the reporting rule suppressed."""
    import json

    from irscan.report import json as json_report
    from irscan.report import text

    if fmt == "sarif":
        from irscan.report import sarif

        print(sarif.render(res.findings, res.errors, {k: v for k, v in extra.items() if k != "program"} or None))
        return
    if fmt == "json":
        doc = json_report.document(
            res.findings, res.kernels, res.unseen, environment=environment, errors=res.errors, accesses=res.accesses,
            rule_suppressed=res.rule_suppressed,
        )  # fmt: skip
        print(json.dumps({**doc, **extra}, indent=2, default=str))
    else:
        print(text.render(res.findings, res.kernels, res.unseen, res.rule_suppressed, show_all))
        for e in res.errors:
            print(e, file=sys.stderr)


def cmd_scan(args: argparse.Namespace) -> int:
    from irscan.pipeline import reaches, scan_paths

    res = scan_paths([path_arg(p) for p in args.paths], ir_list(args.ir), args.max_memory)
    extra = _triage(res, args)
    _emit(res, args.format, show_all=args.all, **extra)
    if args.dot is not None:  # a picture of each finding's chain (irscan/report/dot.py)
        from irscan.report.dot import write_all

        dot = path_arg(args.dot, "--dot")
        with writing("--dot", dot):
            write_all(res.findings, dot)
    return EXIT_FINDINGS if reaches(res.findings, args.fail_on) else 0


def _triage(res: ScanResult, args: argparse.Namespace) -> dict[str, Any]:
    """Inline suppressions and the baseline (irscan/diff/triage.py); the JSON field they add."""
    from irscan.diff import baseline, triage

    res.findings, t = triage.findings(res.findings, res.accesses, Path(args.baseline) if args.baseline else None)
    if args.write_baseline is not None:
        out = path_arg(args.write_baseline, "--write-baseline")
        with writing("--write-baseline", out):
            baseline.write(out, res.findings)
        print(f"irscan: wrote {len(res.findings)} finding(s) to the baseline {args.write_baseline}", file=sys.stderr)
        res.findings = []
    if args.format == "text":
        for line in t.lines():
            print(line, file=sys.stderr)
    return {"suppressed": t.summary()}


def _report_of(path: str, irs: tuple[str, ...]) -> dict[str, Any]:
    """One side of ``irscan diff``: a saved ``--format json`` report, or a fresh scan of captures."""
    import json

    from irscan.diff.load import is_report, load_report
    from irscan.pipeline import scan_paths
    from irscan.report import json as json_report

    if is_report(path_arg(path)):
        return load_report(Path(path))
    res = scan_paths([Path(path)], irs)
    doc = json_report.document(res.findings, res.kernels, res.unseen, errors=res.errors, accesses=res.accesses)
    loaded: dict[str, Any] = json.loads(json.dumps(doc, default=str))  # the form a saved report has
    return loaded


def cmd_diff(args: argparse.Namespace) -> int:
    from irscan.diff import triage
    from irscan.diff.match import diff
    from irscan.report import diff as render

    irs = ir_list(args.ir)
    base, new = _report_of(args.base, irs), _report_of(args.new, irs)
    t = triage.documents(base, new, Path(args.baseline) if args.baseline else None)
    d = diff(base, new)
    extra = {"suppressed": t.summary(), "errors": [*base.get("errors", []), *new.get("errors", [])]}
    if args.format == "json":
        print(render.render_json(d, args.base, args.new, extra))
    elif args.format == "markdown":
        print(render.render_markdown(d))
    elif args.format == "sarif":
        from irscan.report import sarif

        print(sarif.render_diff(d, extra))
    else:
        print(render.render_text(d))
        for line in t.lines():
            print(line, file=sys.stderr)
    return EXIT_FINDINGS if d.reaches(args.fail_on) else 0


def _program_status(rc: int) -> dict[str, Any]:
    status: dict[str, Any] = {"exit_status": rc}
    if rc < 0:
        status["signal"] = signal.Signals(-rc).name if -rc in signal.valid_signals() else str(-rc)
    return status


def cmd_audit(args: argparse.Namespace) -> int:
    from irscan.capturing.meta import dsl_environment
    from irscan.pipeline import reaches, scan_safely

    irs = ir_list(args.ir)
    tmp = None if args.out else tempfile.TemporaryDirectory(prefix="irscan-audit-")
    out = Path(args.out or tmp.name)  # type: ignore[union-attr]
    try:
        program = _program(args)
        if args.guard:  # the launch guard rides on the capture: IRSCAN_GUARD in the program's environment
            os.environ["IRSCAN_GUARD"] = args.guard
        if args.patch:  # patch mode rides on it too (irscan/patching): the program runs the patched kernels
            os.environ["IRSCAN_PATCH"] = "1"
        args.dsl_cache = not (args.no_cache or args.guard or args.patch)
        rc = _run(args, out, stdout_to_stderr=args.format != "text")
        res = scan_safely(out, args.strict, irs, args.max_memory)
        scan_errors = len(res.errors)
        res.errors += _unfinished_notes(out) if out.is_dir() else []
        if rc != 0:
            how = f"was killed by {_program_status(rc)['signal']}" if rc < 0 else f"exited with status {rc}"
            after = "; what it compiled before that was scanned" if res.kernels or scan_errors else ""
            res.errors.append(f"irscan: the audited program {how}{after}")
        if not res.kernels and not scan_errors:
            res.errors.append("irscan: no kernel was captured (nothing compiled through cute.compile / @cute.jit)")
        extra = _triage(res, args)
        if args.patch:
            from irscan.patching.cli import audit_fields

            fields, lines = audit_fields(out)
            extra.update(fields)
            for line in lines if args.format == "text" else []:
                print(line, file=sys.stderr)
        _emit(res, args.format, dsl_environment(), args.all, program={"argv": program, **_program_status(rc)}, **extra)
        if tmp is not None and res.findings:
            print("irscan: the captures were temporary; `irscan audit --out DIR` keeps them", file=sys.stderr)
        if rc != 0:
            return EXIT_PROGRAM_FAILED
        if (not res.kernels and not scan_errors) or (scan_errors and not args.keep_going):
            return EXIT_INCOMPLETE
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
        return usage_error(str(exc.args[0]))
    print(json_report.render_rules(chosen) if args.format == "json" else text.render_rules(chosen))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from irscan import __version__

    ap = argparse.ArgumentParser(prog="irscan", description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--version", action="version", version=f"irscan {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("capture", help="run a program and capture every CuTe DSL kernel it compiles")
    p.add_argument("--out", default="irscan-capture", help="folder for the captures (default ./irscan-capture)")
    add_run_options(p)
    p.set_defaults(func=cmd_capture)

    fail = {"choices": ["must", "may", "never"], "help": "exit 1 when findings reach this severity"}
    p = sub.add_parser("scan", help="scan captured IR: files (.mlir, .ptx, .xz) or capture folders")
    p.add_argument("paths", nargs="+")
    p.add_argument("--format", choices=["text", "json", "sarif"], default="text")
    p.add_argument("--fail-on", default="must", **fail)  # type: ignore[arg-type]
    p.add_argument("--ir", default="mlir,ptx", help="which IRs to scan: mlir, ptx or mlir,ptx (default both)")
    p.add_argument("--dot", metavar="DIR", help="also write each finding's chain as DIR/<id>.dot and DIR/<id>.svg")
    add_triage_options(p)
    add_rule_options(p)
    p.set_defaults(func=cmd_scan)

    p = sub.add_parser("audit", help="run a program, capture what it compiles and scan it (compile-time audit)")
    p.add_argument("--format", choices=["text", "json", "sarif"], default="text")
    add_triage_options(p)
    p.add_argument("--fail-on", default="must", **fail)  # type: ignore[arg-type]
    p.add_argument("--ir", default="mlir,ptx", help="which IRs to scan (default both)")
    add_rule_options(p)
    p.add_argument("--out", help="keep the captures in this folder (default: a temporary one)")
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="a captured module irscan cannot scan is listed in the errors but does not fail the audit (exit 5)",
    )
    p.add_argument(
        "--guard",
        nargs="?",
        const="raise",
        choices=["raise", "warn"],
        help="also check every launch before it reaches the GPU: a launch that wraps raises irscan.WrapError "
        "(raise, the default) or warns once per kernel (warn)",
    )
    p.add_argument(
        "--patch",
        action="store_true",
        help="compile every kernel from its patched module (wrapping chains rewritten to 64 bits, verified; "
        "--strict: a patch that cannot be verified is an error); the report's findings are the re-scan's",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="turn the DSL's caches off (by default they stay on; a cache hit reuses the capture stored under "
        "its key in $IRSCAN_CACHE_DIR or ~/.cache/irscan/captures)",
    )
    add_run_options(p)
    p.set_defaults(func=cmd_audit)

    from irscan.patching.cli import add_parser as add_patch_parser

    add_patch_parser(sub)  # irscan patch CAPTURE_DIR|FILE.mlir|FILE.ptx -o OUT

    from irscan.bugreport.cli import add_parser as add_report_parser

    add_report_parser(sub)  # irscan report [FINDING_ID...|--all] SOURCE -o OUT (irscan/bugreport)

    p = sub.add_parser("diff", help="what got narrower between two builds (new, fixed, changed, narrowed)")
    p.add_argument("base", metavar="BASE", help="capture folder or saved --format json report of the base build")
    p.add_argument("new", metavar="NEW", help="the same for the new build")
    p.add_argument("--format", choices=["text", "json", "sarif", "markdown"], default="text")
    p.add_argument(
        "--fail-on",
        choices=["new", "worse", "never"],
        default="new",
        help="exit 1 on new findings or narrowed accesses (new, the default), also on changed-for-worse (worse)",
    )
    p.add_argument("--ir", default="mlir,ptx", help="which IRs to compare (default both)")
    p.add_argument("--baseline", metavar="FILE", help="leave out findings in this baseline (or saved report)")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("rules", help="print each check's doc: what it finds, why it is a bug, an example, the fix")
    p.add_argument("ids", nargs="*", metavar="CHECK", help="check ids (default: all)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=cmd_rules)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run one command under the error contract: bad input is exit 2 with its location, a bug of
    irscan's is exit 3 with one line (IRSCAN_DEBUG=1 shows its traceback), Ctrl-C is exit 130."""
    from irscan.ir import IRSyntaxError
    from irscan.resources import UsageError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except IRSyntaxError as exc:
        print(f"{exc.path}:{exc.line}:{exc.col}: error: {exc.message}", file=sys.stderr)
        if exc.expected:
            print(f"  expected one of: {', '.join(exc.expected[:15])}", file=sys.stderr)
        return EXIT_USAGE
    except UsageError as exc:
        return usage_error(str(exc))
    except KeyboardInterrupt:
        print("irscan: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `irscan scan ... | head`: the reader left; nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except Exception as exc:
        if os.environ.get("IRSCAN_DEBUG") == "1":
            raise
        what = (str(exc).strip().splitlines() or [""])[0][:300]
        print(
            f"irscan: internal error: {type(exc).__name__}: {what} (please report it: {REPORT_AT}; "
            "rerun with IRSCAN_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
