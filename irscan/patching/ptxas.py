"""ptxas: assemble a patched PTX (proof that it is valid) and read its register counts (``-v``).

Which ptxas: ``$IRSCAN_PTXAS``; the one ``nvidia-cuda-nvcc-cu12`` installs (it rebuilds the DSL's own
cubins byte for byte, shared/docs/patch-and-guard.md); then ``$CUDA_HOME/bin`` and ``PATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_REGS = re.compile(r"Used (\d+) registers")
_TARGET = re.compile(r"^\s*\.target\s+(sm_\w+)", re.M)


class PtxasError(Exception):
    """ptxas is missing or rejected the PTX; the message is ptxas's own diagnostics (or why none ran)."""


@dataclass
class Assembled:
    cubin: Path | None
    registers: dict[str, int] = field(default_factory=dict)  # entry -> registers per thread
    log: str = ""


def find_ptxas() -> str | None:
    env = os.environ.get("IRSCAN_PTXAS")
    if env:
        return env
    try:
        import nvidia.cuda_nvcc as nvcc  # type: ignore[import-not-found]

        cand = Path(next(iter(nvcc.__path__))) / "bin" / "ptxas"
        if cand.exists():
            return str(cand)
    except ImportError:
        pass
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and (Path(home) / "bin" / "ptxas").exists():
        return str(Path(home) / "bin" / "ptxas")
    return shutil.which("ptxas")


def arch_of(ptx: str, default: str = "sm_90a") -> str:
    m = _TARGET.search(ptx)
    return m.group(1) if m else default


def assemble(ptx: Path, out: Path | None = None, arch: str | None = None) -> Assembled:
    """``ptxas -v -arch <arch> ptx -o out``; raises :class:`PtxasError` when it fails."""
    exe = find_ptxas()
    if exe is None:
        raise PtxasError("no ptxas found (set IRSCAN_PTXAS, or pip install nvidia-cuda-nvcc-cu12)")
    arch = arch or arch_of(ptx.read_text(errors="replace"))
    with tempfile.TemporaryDirectory(prefix="irscan-ptxas-") as tmp:
        target = out or Path(tmp) / "out.cubin"
        proc = subprocess.run(
            [exe, "-v", f"-arch={arch}", str(ptx), "-o", str(target)], capture_output=True, text=True, timeout=600
        )
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise PtxasError(
                f"ptxas rejected {ptx.name}: {log.strip().splitlines()[-1] if log.strip() else proc.returncode}"
            )
        return Assembled(out, registers(log), log)


def registers(log: str) -> dict[str, int]:
    """Entry name -> registers, from ptxas ``-v`` output (each 'Used N registers' follows its entry)."""
    out: dict[str, int] = {}
    entry = None
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            entry = m.group(1)
            continue
        r = _REGS.search(line)
        if r and entry is not None and entry not in out:
            out[entry] = int(r.group(1))
    return out
