"""The capture folders on disk: one folder per compiled module, ``NNN_<first kernel>/`` holding
module.mlir, module.ptx, module.cubin and meta.json; writing them and reading them back.

Every reader of meta.json goes through :func:`load`, so a folder written by another version, or by
hand, is checked in one place.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irscan.capturing.env import DEFAULT_ARCH
from irscan.capturing.meta import KernelInfo

MLIR_FILE = "module.mlir"
PTX_FILE = "module.ptx"
CUBIN_FILE = "module.cubin"
META_FILE = "meta.json"
SCHEMA = 1


@dataclass
class Capture:
    """One compiled module on disk: a folder with module.mlir, module.ptx, module.cubin, meta.json."""

    dir: Path
    module: str
    arch: str
    kernels: list[KernelInfo]
    meta: dict[str, Any]

    @property
    def mlir_path(self) -> Path:
        return self.dir / MLIR_FILE

    @property
    def ptx_path(self) -> Path:
        return self.dir / PTX_FILE

    @property
    def cubin_path(self) -> Path:
        return self.dir / CUBIN_FILE


def _safe_name(name: str, limit: int = 60) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:limit] or "module"


def new_folder(out: Path, label: str) -> Path:
    """Make the next free ``NNN_<label>`` folder under ``out`` (the caller serialises calls)."""
    n = len(list(out.glob("[0-9][0-9][0-9]_*"))) if out.exists() else 0
    while True:
        d = out / f"{n:03d}_{_safe_name(label)}"
        try:
            d.mkdir(parents=True, exist_ok=False)
            return d
        except FileExistsError:
            n += 1


def write(
    folder: Path,
    text: str | None,
    kernels: list[KernelInfo],
    arch: str,
    dumps: dict[str, str],
    jits: list[dict[str, Any]],
    environment: dict[str, Any],
) -> Capture:
    """Fill ``folder``: the module text, the PTX/cubin the tail dumped (moved in, or copied when the user
    asked for dumps of their own), and meta.json."""
    if text is not None:
        (folder / MLIR_FILE).write_text(text)
    for key, fname, suffix in (("dump-ptx-path", PTX_FILE, "ptx"), ("dump-cubin-path", CUBIN_FILE, "cubin")):
        src = Path(f"{dumps[key]}.{arch}.{suffix}")
        if not src.exists():
            continue
        if src.parent == folder:
            src.rename(folder / fname)
        else:  # the user asked for their own dump: leave theirs, keep a copy
            (folder / fname).write_bytes(src.read_bytes())
    meta = {
        "schema": SCHEMA,
        "module": folder.name,
        "arch": arch,
        "kernels": [dataclasses.asdict(k) for k in kernels],
        "jit_functions": jits,
        "environment": environment,
        "lineinfo": bool(text and re.search(r'loc\("[^"]+\.py":\d+', text)),
        "files": {"mlir": MLIR_FILE, "ptx": PTX_FILE, "cubin": CUBIN_FILE},
    }
    (folder / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    return Capture(folder, folder.name, arch, kernels, meta)


def load(folder: str | os.PathLike[str]) -> Capture:
    """Read a capture folder back."""
    d = Path(folder)
    meta = json.loads((d / META_FILE).read_text())
    kernels = [KernelInfo(**k) for k in meta.get("kernels", [])]
    return Capture(d, meta.get("module", d.name), meta.get("arch", DEFAULT_ARCH), kernels, meta)


def find_captures(root: str | os.PathLike[str]) -> list[Path]:
    """Every capture folder under ``root`` (a folder holding meta.json), in name order."""
    r = Path(root)
    if (r / META_FILE).exists():
        return [r]
    return sorted(p.parent for p in r.rglob(META_FILE))
