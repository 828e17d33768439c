"""What each CuTe DSL release offers the capture hook, found out from the release itself.

Measured (tests/test_dsl_matrix.py, no GPU): 4.6 and later, and the ``[cu13]`` wheels of 4.5, accept
``cute-to-nvvm{llvm-only=true}``, which stops right before ``cuda-to-binary``; the hook runs the
pipeline in two halves and captures the LLVM-dialect MLIR, the PTX and the cubin.  The base wheels
of 4.3 to 4.5 (and 4.4.2 ``[cu13]``) reject that option (``ValueError: failed to add
cute-to-nvvm with options llvm-only=true``, which the DSL re-raises as an internal compiler error,
killing the user's program if the hook passed it on), but their ``cute-to-nvvm`` takes the
``dump-ptx-path``/``dump-cubin-path`` options of its ``cuda-to-binary``: the hook runs the pipeline
once, whole, with the dump paths set, and captures the PTX and cubin (no MLIR).  What a release
offers is asked of its own pass-pipeline parser at each compile (parsing costs microseconds), never
read off a version number, so a release not seen here is handled by what it accepts.

Nothing here runs a pass: a release that offers neither cut makes ``cut`` raise, before anything ran,
and the hook falls back to the plain compile (fail open), the reason in the session's errors.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

TAIL_START = "cuda-to-binary{"
ALIAS = "cute-to-nvvm{"
#: the releases the version matrix tested (major, minor), oldest and newest
TESTED = ((4, 3), (4, 8))

_warned: set[str] = set()


def _with_option(pipeline: str, option: str) -> str:
    return pipeline.replace(ALIAS, f"{ALIAS}{option} ", 1)


def _parses(parse: Callable[[str], Any], pipeline: str) -> bool:
    try:
        parse(pipeline)
    except Exception:  # the release's parser says no: a ValueError or its own MLIRError
        return False
    return True


def cut(
    pipeline: str, parse: Callable[[str], Any], split: Callable[[str, str], tuple[str, str]]
) -> tuple[str | None, str]:
    """(first half or None, the pipeline the dumps are set on).

    Two halves where the release has ``llvm-only``: ``split(pipeline, expanded)`` (the hook's
    ``split_pipeline``: ``cute-to-nvvm{llvm-only=true ...}`` and the expansion's tail).  PTX only
    where its ``cute-to-nvvm`` takes the dump options: (None, the whole pipeline with empty dump
    paths for ``set_dump_paths`` to fill).  Raises ValueError naming what the release lacks when it
    offers neither.
    """
    if ALIAS not in pipeline:
        raise ValueError("pipeline has no cute-to-nvvm{...}")
    expanded = str(parse(pipeline))
    first = _with_option(pipeline, "llvm-only=true")
    at = expanded.find(TAIL_START)
    if at >= 0 and _parses(parse, first):
        return split(pipeline, expanded)
    missing = [f"{k}=" for k in ("dump-ptx-path", "dump-cubin-path") if f"{k}=" not in pipeline]
    whole = _with_option(pipeline, " ".join(missing))
    if _parses(parse, whole):
        note_once(
            "ptx-only",
            "irscan: this nvidia-cutlass-dsl release has no cute-to-nvvm{llvm-only=true} cut: "
            "capturing PTX and cubin only (no LLVM-dialect MLIR)",
        )
        return None, whole
    lacks = "no cuda-to-binary pass in its expanded pipeline" if at < 0 else "no llvm-only option on cute-to-nvvm"
    raise ValueError(f"this nvidia-cutlass-dsl release offers no capture cut ({lacks}, and no dump-ptx-path)")


def note_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        print(message, file=sys.stderr)


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    if not version:
        return None
    parts = []
    for p in version.split("."):
        digits = "".join(ch for ch in p if ch.isdigit()) if p[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts) or None


def installed_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("nvidia-cutlass-dsl")
    except Exception:  # not installed, or unreadable metadata: nothing to warn about
        return None


def is_tested(version: str | None) -> bool | None:
    """Whether the release is one the version matrix covers (None: the version is unknown)."""
    v = version_tuple(version)
    if v is None:
        return None
    return TESTED[0] <= v[:2] <= TESTED[1]


def warn_if_untested(version: str | None) -> None:
    """A release newer (or older) than the matrix is not refused: it gets a note, once."""
    if is_tested(version) is False:
        lo, hi = (".".join(map(str, t)) for t in TESTED)
        note_once(
            "untested",
            f"irscan: nvidia-cutlass-dsl {version} is not among the releases irscan was tested with "
            f"({lo}.x to {hi}.x); captures may be incomplete (the hook still fails open)",
        )
