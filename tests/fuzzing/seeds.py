"""The inputs the fuzzer mutates: every capture in the corpus (its module.mlir, module.ptx and meta.json),
the third-party ones decompressed.  Real captures, because a mutation of real IR reaches the deep code
(the range analysis, the checks, the twins pairing) that random text never gets past the parser to."""

from __future__ import annotations

import lzma
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"


@dataclass(frozen=True)
class Seed:
    """One IR file of a capture and the meta.json beside it (None when the capture has none)."""

    name: str  # corpus-relative folder, for the report
    ir: str  # "mlir" or "ptx"
    text: str
    meta: str | None

    @property
    def filename(self) -> str:
        return f"module.{self.ir}"


def _read(path: Path) -> str:
    data = path.read_bytes()
    return (lzma.decompress(data) if path.suffix == ".xz" else data).decode()


def _folder_seeds(folder: Path) -> list[Seed]:
    meta = folder / "meta.json"
    meta_text = meta.read_text() if meta.exists() else None
    out = []
    for ir in ("mlir", "ptx"):
        for candidate in (folder / f"module.{ir}", folder / f"module.{ir}.xz"):
            if candidate.exists():
                rel = str(folder.relative_to(CORPUS))
                out.append(Seed(rel, ir, _read(candidate), meta_text))
                break
    return out


@lru_cache(maxsize=4)
def load_seeds(thirdparty: bool = False, max_chars: int | None = None) -> tuple[Seed, ...]:
    """The corpus captures (and, with ``thirdparty``, the big third-party ones); ``max_chars`` drops the
    seeds longer than that, to keep a bounded run's cases fast."""
    roots = [CORPUS / "captures"] + ([CORPUS / "thirdparty"] if thirdparty else [])
    seeds: list[Seed] = []
    for root in roots:
        for meta in sorted(root.rglob("meta.json")):
            seeds.extend(_folder_seeds(meta.parent))
    if max_chars is not None:
        seeds = [s for s in seeds if len(s.text) <= max_chars]
    if not seeds:
        raise FileNotFoundError(f"no corpus capture under {CORPUS}: the fuzzer needs seeds")
    return tuple(seeds)
