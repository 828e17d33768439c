"""Files irscan reads: its grammars (``grammars/`` at the top of a source checkout, where the design
card keeps them as data, or ``irscan/grammars/`` inside an installed wheel, where setup.py copies
them), and IR text files, plain or xz-compressed as the third-party corpus stores them."""

from __future__ import annotations

import lzma
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def grammar_path(name: str) -> Path:
    for folder in (_HERE / "grammars", _HERE.parent / "grammars"):
        if (folder / name).exists():
            return folder / name
    raise FileNotFoundError(f"irscan grammar {name} is missing from {_HERE / 'grammars'} (a broken install?)")


def read_text(path: str | Path) -> str:
    """An IR file's text; ``.xz`` files are decompressed."""
    p = Path(path)
    if p.suffix == ".xz":
        return lzma.decompress(p.read_bytes()).decode()
    return p.read_text()
