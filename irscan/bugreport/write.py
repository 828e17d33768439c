"""The files of one report, each re-checked before the report may say so: the picture, the reduced
module (scanned alone again once written), the repro script (audited again), the markdown.  A root
cause none of whose repros reproduces gets no report: it is said on stderr instead."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from irscan.bugreport import matrix
from irscan.bugreport import repro as repro_mod
from irscan.bugreport.collect import Evidence, RootCause
from irscan.bugreport.reduce import Target, reduce_module, scan_alone
from irscan.report import dot, markdown
from irscan.resources import read_text


def _reduce(rc: RootCause, out: Path, ev: Evidence) -> None:
    """The MLIR first (it carries the launch facts by itself), else the PTX."""
    for f in [rc.lead, *sorted((x for x in rc.findings if x is not rc.lead), key=lambda x: x["ir"] != "mlir")]:
        src = Path(f["ir_file"])
        if not src.exists():
            ev.reduced_note = f"the captured module {src} is gone"
            continue
        target = Target.of(f)
        # captures may hold module.mlir.xz / module.ptx.xz (corpus/thirdparty): the IR's own suffix counts
        suffix = Path(src.stem).suffix if src.suffix == ".xz" else src.suffix
        red = reduce_module(read_text(src), suffix, target)
        if red is None:
            ev.reduced_note = f"the captured {f['ir'].upper()} module does not reproduce without its meta.json"
            continue
        name = f"{rc.id}.reduced{suffix}"
        (out / name).write_text(red.text)
        if not any(target.matches(x) for x in scan_alone(out / name)):  # re-run: the written file itself
            ev.reduced_note = f"the reduced {f['ir'].upper()} module stopped reproducing once written"
            (out / name).unlink()
            continue
        ev.reduced, ev.reduced_ops = name, (red.ops_before, red.ops_after)
        notes = []
        if red.dsl_parses:
            notes.append("The DSL's own parser (`cutlass._mlir.ir.Module.parse`) accepts it")
        if suffix == ".mlir":
            notes.append("its locations (the Python statements) are kept" if red.located else
                         "its locations are stripped (the printed ones do not parse back)")  # fmt: skip
        ev.reduced_note = ", ".join(n for n in notes if n) + ("." if notes else "")
        return


def _python_of(rc: RootCause) -> tuple[Path | None, str]:
    """The interpreter of the release the capture was made with: this one, or its matrix venv."""
    from irscan.capturing.meta import dsl_environment

    spec, here = matrix.release_of(rc.meta), matrix.release_of({"environment": dsl_environment()})
    if spec is None or spec == here:
        return None, ""
    try:
        return matrix.venv(*matrix.parse_spec(spec)), f"Re-run under {spec}, the release it was captured with."
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"Not re-run: the capture's release {spec} has no venv here ({exc})."


def _repro(rc: RootCause, out: Path, ev: Evidence, after: Callable[[Path, Target, Evidence], None] | None) -> None:
    try:
        text, how = repro_mod.build(rc)
    except repro_mod.NoRepro as exc:
        ev.repro_note = str(exc)
        return
    script = out / f"{rc.id}_repro.py"
    script.write_text(text)
    python, why = _python_of(rc)
    if python is None and why:  # no interpreter of the capture's release: not re-run, and said so
        ev.repro, ev.repro_reproduces, ev.repro_note = script.name, None, f"{how} {why}"
        return
    ok, res = repro_mod.check(script, Target.of(rc.lead), python)
    ev.repro, ev.repro_reproduces, ev.repro_note = script.name, ok, " ".join(x for x in (how, why, res) if x)
    if ok and after is not None:
        after(script, Target.of(rc.lead), ev)


def write_report(
    rc: RootCause,
    out: Path,
    with_script: bool = True,
    after_repro: Callable[[Path, Target, Evidence], None] | None = None,
) -> Path | None:
    """``out/<id>.md`` and its files; None (and a line on stderr) when nothing reproduces.  ``after_repro``
    runs once the repro script has reproduced (the version matrix)."""
    out.mkdir(parents=True, exist_ok=True)
    ev = Evidence()
    _reduce(rc, out, ev)
    if with_script:
        _repro(rc, out, ev, after_repro)
    else:
        ev.repro_note = "not written (`--no-script`)"
    if ev.reduced is None and not ev.repro_reproduces:
        why = "; ".join(n for n in (ev.reduced_note, ev.repro_note) if n)
        print(f"irscan: {rc.id}: no repro reproduces the finding ({why}); no report written", file=sys.stderr)
        return None
    svg = f"{rc.id}.svg"
    (out / svg).write_text(dot.to_svg(rc.lead["chain"], f"{rc.id}: {rc.lead['expression']}"))
    ev.svg = svg
    md = out / f"{rc.id}.md"
    md.write_text(markdown.render(rc, ev))
    return md
