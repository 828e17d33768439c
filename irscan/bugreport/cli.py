"""``irscan report [FINDING_ID...|--all] [CAPTURE_DIR|REPORT.json] [-o DIR]``: wiring only."""

from __future__ import annotations

import argparse
import errno
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser("report", help="write a ready-to-file upstream bug report per root cause, with a minimal repro")
    p.add_argument(
        "items",
        nargs="+",
        metavar="FINDING_ID|SOURCE",
        help="finding ids, then a capture folder, IR file or saved JSON report",
    )
    p.add_argument("--all", action="store_true", help="one report per root cause of every finding")
    p.add_argument("-o", "--out", default="irscan-reports", help="folder for the reports (default ./irscan-reports)")
    p.add_argument("--no-script", action="store_true", help="do not write (and re-run) the compile-only repro script")
    p.add_argument(
        "--matrix", metavar="V1,V2,...", help="run the repro script under each release, e.g. 4.4.2,4.5.0,4.5.1,4.8.1"
    )
    p.add_argument("--bisect", nargs=2, metavar=("GOOD", "BAD"), help="find the first affected release between two")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from irscan.bugreport.collect import group, load_findings
    from irscan.bugreport.write import write_report
    from irscan.cliopts import path_arg, usage_error, writing

    *ids, source = args.items
    src, out = path_arg(source, "the source"), path_arg(args.out, "-o")  # "" would be the current folder
    if not src.exists():
        return usage_error(f"{source}: no such capture folder, IR file or report")
    causes = group(load_findings(src))
    known = {f["id"]: rc for rc in causes for f in rc.findings}
    unknown = [i for i in ids if i not in known]
    if unknown or not (ids or args.all):
        code = usage_error(
            f"no finding {', '.join(unknown)} in {source}" if unknown else "name finding ids or give --all"
        )
        print("  the findings there: " + (", ".join(sorted(known)) or "none"), file=sys.stderr)
        return code
    chosen = causes if args.all else list({id(known[i]): known[i] for i in ids}.values())
    failed = 0
    after = None
    if args.matrix or args.bisect:
        from irscan.bugreport.matrix import filler

        after = filler(args.matrix, args.bisect)
    with writing("-o", out):  # a file, /dev/null, /proc or a symlink loop there is bad usage (exit 2)
        if out.exists() and not out.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "not a folder")
        out.mkdir(parents=True, exist_ok=True)
    for rc in chosen:
        md = write_report(rc, out, not args.no_script, after)
        if md is None:
            failed += 1
        else:
            print(f"irscan: wrote {md}", file=sys.stderr)
    return 1 if failed else 0
