"""One fuzz case: a small tree of files (an IR file, maybe a meta.json) and the path ``irscan scan`` is
given, generated from a seed capture by a random choice of mutations, reproducible from its number."""

from __future__ import annotations

import json
import lzma
import os
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .hostile import NON_IR, corrupt_xz, mutate_meta
from .mutators import BYTE_MUTATORS, TEXT_MUTATORS, Mutator
from .seeds import Seed


@dataclass
class Case:
    """``files`` maps a path relative to the case folder to its bytes (None: an empty folder there);
    ``fifos`` are named pipes; ``target`` is what is scanned (``""``: the case folder itself);
    ``mutated`` is the file that minimisation shrinks; ``area`` is the part of the input attacked;
    ``links`` are symlinks (path, what it points to); ``argv`` replaces ``scan TARGET`` (``{}`` in an
    argument is the case folder) for a case that attacks the command line; ``twin``: an input that
    must get the same answer."""

    files: dict[str, bytes | None]
    target: str
    what: list[str] = field(default_factory=list)
    mutated: str | None = None
    area: str = "ir"
    fifos: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    argv: tuple[str, ...] = ()
    twin: Case | None = None  # the same input before a meaning-preserving change (metamorphic.py)

    def size(self) -> int:
        """Bytes of input as irscan reads them (an .xz counts decompressed): the measure time is linear in."""
        return sum(
            _unpacked_size(data) if name.endswith(".xz") else len(data or b"") for name, data in self.files.items()
        )

    def materialize(self, root: Path) -> Path:
        """Write the case under ``root`` (emptied first); returns the path to scan."""
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        for rel, data in self.files.items():
            p = root / rel
            if data is None:
                p.mkdir(parents=True, exist_ok=True)
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
        for rel in self.fifos:
            os.mkfifo(root / rel)
        for rel, to in self.links:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(to, root / rel)
        return root / self.target if self.target else root

    def save(self, folder: Path) -> Path:
        """A reproducer on disk: the tree itself plus case.json (what to scan and how it was made)."""
        target = self.materialize(folder / "input")
        info = {"target": self.target, "what": self.what, "mutated": self.mutated, "area": self.area,
                "fifos": list(self.fifos), "files": sorted(self.files), "links": [list(x) for x in self.links],
                "argv": list(self.argv)}  # fmt: skip
        (folder / "case.json").write_text(json.dumps(info, indent=1) + "\n")
        argv = " ".join(self.argv).replace("{}", str(target)) if self.argv else f"scan {target}"
        (folder / "README").write_text(f"irscan {argv}\n# {'; '.join(self.what)}\n")
        if self.twin is not None:
            self.twin.save(folder / "twin")
        return target

    @classmethod
    def load(cls, folder: Path) -> Case:
        info = json.loads((folder / "case.json").read_text())
        root = folder / "input"
        files: dict[str, bytes | None] = {}
        for rel in info["files"]:
            p = root / rel
            files[rel] = None if p.is_dir() else p.read_bytes()
        links = tuple((a, b) for a, b in info.get("links", ()))
        twin = cls.load(folder / "twin") if (folder / "twin" / "case.json").exists() else None
        return cls(files, info["target"], info["what"], info["mutated"], info["area"], tuple(info["fifos"]), links,
                   tuple(info.get("argv", ())), twin)  # fmt: skip


#: an xz bomb is counted this far (past irscan's own limit, resources.MAX_TEXT_BYTES), in 16 MiB steps
_SIZE_CAP = 320 << 20


def _unpacked_size(data: bytes | None) -> int:
    """Bytes an .xz unpacks to (concatenated streams), or its own length when it is not xz."""
    total, rest = 0, data or b""
    try:
        while rest and total <= _SIZE_CAP:
            dec = lzma.LZMADecompressor()
            total += len(dec.decompress(rest, max_length=16 << 20))
            while not dec.eof and not dec.needs_input and total <= _SIZE_CAP:
                total += len(dec.decompress(b"", max_length=16 << 20))
            if not dec.eof:
                break
            rest = dec.unused_data
    except lzma.LZMAError:
        pass
    return total or len(data or b"")


def _mutate_text(
    rng: random.Random, seed: Seed, scale: int, what: list[str], mutators: dict[str, Mutator] = TEXT_MUTATORS
) -> bytes:
    text = seed.text
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        name = rng.choice(sorted(mutators))
        text = mutators[name](rng, text, seed.ir, scale)
        what.append(name)
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.2:
        name = rng.choice(sorted(BYTE_MUTATORS))
        data = BYTE_MUTATORS[name](rng, data)
        what.append(name)
    return data


def _whole_file_case(rng: random.Random, seed: Seed) -> Case:
    """Not IR, an IR under the wrong name, a folder without meta.json or without IR, a FIFO."""
    kind = rng.choice(("non_ir", "non_ir", "wrong_ext", "no_meta", "no_ir", "empty_dir", "dir_named_ir", "fifo"))
    other = "ptx" if seed.ir == "mlir" else "mlir"
    meta = (seed.meta or "{}").encode()
    if kind == "non_ir":
        data = rng.choice(NON_IR)
        name = f"x.{rng.choice(('mlir', 'ptx', 'mlir.xz'))}"
        return Case({name: data}, name, [f"non-IR {data[:30]!r}"], name, "ir")
    if kind == "wrong_ext":
        name = f"module.{rng.choice((other, 'txt', 'json', 'mlir.txt'))}"
        return Case({name: seed.text.encode()}, name, [f"{seed.ir} text named {name}"], name, "ir")
    if kind == "no_meta":
        return Case({seed.filename: seed.text.encode()}, "", ["capture folder without meta.json"], None, "ir")
    if kind == "no_ir":
        return Case({"meta.json": meta}, "", ["capture folder with meta.json and no IR"], None, "capturing")
    if kind == "empty_dir":
        return Case({"sub": None}, "", ["folder with only an empty folder"], None, "capturing")
    if kind == "dir_named_ir":
        return Case({"x.mlir": None, "meta.json": meta}, "x.mlir", ["a folder named x.mlir"], None, "capturing")
    return Case({"meta.json": meta}, "module.mlir", ["a FIFO named module.mlir"], None, "capturing",
                fifos=("module.mlir",))  # fmt: skip


FAMILIES = ("ir", "meta", "xz", "whole")


def generate(rng: random.Random, seeds: tuple[Seed, ...], scale: int = 1, family: str | None = None) -> Case:
    """One case: usually a mutated IR file in a capture folder, sometimes a hostile meta.json beside
    intact IR, a corrupt .xz, or something that is not IR at all (``family`` forces one of these)."""
    seed = rng.choice(seeds)
    if family is None:
        family = rng.choices(FAMILIES, weights=(68, 15, 7, 10))[0]
    what = [f"seed {seed.name}/{seed.filename}"]
    meta = seed.meta.encode() if seed.meta is not None else None
    if family == "whole":
        case = _whole_file_case(rng, seed)
        case.what[:0] = what
        return case
    if family == "meta":
        data, how = mutate_meta(rng, seed.meta)
        files: dict[str, bytes | None] = {seed.filename: seed.text.encode(), "meta.json": data}
        return Case(files, rng.choice(("", seed.filename)), [*what, how], "meta.json", "meta.json")
    if family == "xz":
        payload = _mutate_text(rng, seed, scale, what) if rng.random() < 0.5 else seed.text.encode()
        data, how = corrupt_xz(rng, payload)
        name = seed.filename + ".xz"
        files = {name: data} if meta is None else {name: data, "meta.json": meta}
        return Case(files, rng.choice(("", name)), [*what, how], name, "xz")
    return ir_case(rng, seed, scale, what)


def ir_case(
    rng: random.Random, seed: Seed, scale: int, what: list[str], mutators: dict[str, Mutator] = TEXT_MUTATORS
) -> Case:
    """The seed's IR file mutated by ``mutators`` (sometimes packed as .xz), usually in its capture folder."""
    meta = seed.meta.encode() if seed.meta is not None else None
    data = _mutate_text(rng, seed, scale, what, mutators)
    files: dict[str, bytes | None]
    if rng.random() < 0.3:
        name = seed.filename + ".xz"
        files, what = {name: lzma.compress(data, preset=0)}, [*what, "xz"]
    else:
        name, files = seed.filename, {seed.filename: data}
    if meta is not None and rng.random() < 0.8:
        files["meta.json"] = meta
    target = rng.choice(("", name)) if "meta.json" in files else name
    return Case(files, target, what, name, "ir")
