"""The version matrix of a repro script: ``irscan audit`` of it under each CuTe DSL release, each in
its own cached venv, and ``--bisect GOOD BAD`` for the first affected release.

:func:`venv` makes the venvs tests/test_dsl_matrix.py uses too (``~/.cache/irscan-matrix/<release>`` or
``<release>-<flavour>``, ``IRSCAN_MATRIX_CACHE`` moves it), so either one reuses the other's.  irscan
runs in each venv from this checkout (PYTHONPATH), the DSL from the venv.  A release is affected when
the audit reports a finding of the same kernel and check (in whichever IR that release lets irscan
capture), not affected when it captured the kernel without one, and "does not compile" when nothing
was captured.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from irscan.bugreport.collect import Evidence
from irscan.bugreport.reduce import Target
from irscan.findings import kernel_key

AFFECTED, NOT_AFFECTED, NO_COMPILE = "affected", "not affected", "does not compile"
_SPEC = re.compile(r"^(\d+(?:\.\d+)+)(?:\[(\w+)\])?$")
#: releases in order, for --bisect (the ones the matrix venvs cover; PyPI's own list is not queried)
KNOWN = ["4.2.1", "4.3.0", "4.3.5", "4.4.2", "4.5.0", "4.5.1", "4.5.3", "4.6.3", "4.7.1", "4.8.1"]
ROOT = Path(__file__).resolve().parents[2]


def cache() -> Path:
    return Path(os.environ.get("IRSCAN_MATRIX_CACHE", Path.home() / ".cache" / "irscan-matrix"))


def parse_spec(text: str) -> tuple[str, str]:
    """``4.5.0`` or ``4.5.0[cu13]`` -> (release, flavour)."""
    m = _SPEC.match(text.strip())
    if not m:
        from irscan.resources import UsageError

        raise UsageError(f"a release is written 4.5.0 or 4.5.0[cu13] (got {text!r})")
    return m.group(1), m.group(2) or ""


def venv(release: str, flavour: str = "") -> Path:
    """The cached venv's python for ``nvidia-cutlass-dsl[flavour]==release``, made on first use."""
    d = cache() / (f"{release}-{flavour}" if flavour else release)
    py = d / "bin" / "python"
    ok = (
        py.exists()
        and subprocess.run([py, "-c", "import cutlass, lark, networkx"], capture_output=True).returncode == 0
    )
    if not ok:
        subprocess.run([sys.executable, "-m", "venv", d], check=True)
        spec = f"nvidia-cutlass-dsl[{flavour}]=={release}" if flavour else f"nvidia-cutlass-dsl=={release}"
        subprocess.run([py, "-m", "pip", "install", "-q", spec, "lark", "networkx"], check=True, timeout=1800)
    return py


def classify(doc: dict[str, Any], kernel: str, check: str) -> str:
    found = doc.get("findings", []) + doc.get("rule_suppressed", [])
    if any(kernel_key(f["kernel"]) == kernel and f["check"] == check for f in found):
        return AFFECTED
    captured = any(kernel_key(k["kernel"]) == kernel for k in doc.get("kernels", []))
    return NOT_AFFECTED if captured else NO_COMPILE


def audit_json(py: Path, script: Path, timeout: float = 900) -> dict[str, Any] | None:
    """``irscan audit --format json`` of ``script`` by the interpreter ``py`` (irscan from this checkout);
    None when it gives no report."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IRSCAN_", "PYTHON"))}
    env["PYTHONPATH"] = str(ROOT)
    argv = [str(py), "-m", "irscan", "audit", "--format", "json", "--fail-on", "never", "--arch", "sm_90a"]
    try:
        p = subprocess.run(
            [*argv, "--", str(py), script.name], cwd=script.parent, capture_output=True, text=True, env=env,
            timeout=timeout,
        )  # fmt: skip
        doc: dict[str, Any] = json.loads(p.stdout)
        return doc
    except (subprocess.TimeoutExpired, ValueError):
        return None


def run_one(spec: str, script: Path, kernel: str, check: str) -> str:
    """The verdict of ``irscan audit`` of ``script`` under one release."""
    doc = audit_json(venv(*parse_spec(spec)), script)
    return NO_COMPILE if doc is None else classify(doc, kernel, check)


def release_of(meta: dict[str, Any] | None) -> str | None:
    """The capture's release as a spec (``4.5.0[cu13]``), when meta.json recorded it."""
    env = (meta or {}).get("environment") or {}
    ver = env.get("dsl_version")
    if not ver:
        return None
    return f"{ver}[cu13]" if env.get("wheel_flavour") == "cu13" else str(ver)


def bisect(good: str, bad: str, test: Callable[[str], str]) -> tuple[str | None, dict[str, str], str]:
    """The first affected release after ``good`` up to ``bad`` (both with an optional ``[flavour]``, which
    the releases in between take too); the results seen; a note when the ends do not hold."""
    (g, flav), (b, _) = parse_spec(good), parse_spec(bad)
    if g not in KNOWN or b not in KNOWN or KNOWN.index(g) >= KNOWN.index(b):
        return None, {}, f"--bisect needs two releases of {', '.join(KNOWN)}, the good one first"

    def spec(r: str) -> str:
        return f"{r}[{flav}]" if flav else r

    seen = {spec(g): test(spec(g)), spec(b): test(spec(b))}
    if seen[spec(g)] != NOT_AFFECTED or seen[spec(b)] != AFFECTED:
        return None, seen, f"bisect: {spec(g)} is {seen[spec(g)]} and {spec(b)} is {seen[spec(b)]}: nothing to bisect"
    lo, hi = KNOWN.index(g), KNOWN.index(b)  # invariant: lo not affected, hi affected
    while hi - lo > 1:
        mid = (lo + hi) // 2
        seen[spec(KNOWN[mid])] = r = test(spec(KNOWN[mid]))
        if r == AFFECTED:
            hi = mid
        else:
            lo = mid
    return spec(KNOWN[hi]), seen, ""


def filler(matrix: str | None, bisect_range: list[str] | None) -> Callable[[Path, Target, Evidence], None]:
    """The step ``write_report`` runs once the repro script has reproduced."""

    def fill(script: Path, target: Target, ev: Evidence) -> None:
        kernel, check = target.kernel, target.check
        for spec in [s for s in (matrix or "").split(",") if s.strip()]:
            ev.matrix[spec.strip()] = run_one(spec.strip(), script, kernel, check)
        if bisect_range:

            def test(s: str) -> str:
                return ev.matrix.get(s) or run_one(s, script, kernel, check)

            first, seen, note = bisect(bisect_range[0], bisect_range[1], test)
            ev.matrix.update({k: v for k, v in seen.items() if k not in ev.matrix})
            ev.first_bad, ev.bisect_note = first, note

    return fill
