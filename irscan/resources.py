"""Where the grammars are: ``grammars/`` at the top of a source checkout (the design card keeps them
there, as data), or ``irscan/grammars/`` inside an installed wheel (setup.py copies them in)."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def grammar_path(name: str) -> Path:
    for folder in (_HERE / "grammars", _HERE.parent / "grammars"):
        if (folder / name).exists():
            return folder / name
    raise FileNotFoundError(f"irscan grammar {name} is missing from {_HERE / 'grammars'} (a broken install?)")
