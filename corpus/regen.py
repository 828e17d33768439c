"""Regenerate corpus/captures/ from corpus/programs/ with irscan's own capture tool.

    python corpus/regen.py                 # every program
    python corpus/regen.py NAME [NAME...]  # some programs (stem, file name or path)

For each program this removes ``captures/<stem>/`` and runs, from the repository root,

    python -m irscan capture --arch sm_90a --out corpus/captures/<stem> -- python corpus/programs/<stem>.py

so that the capture folders are numbered 000_, 001_, ... per compile within the program.  Python
makes the script path absolute, and the DSL writes it into the MLIR locations (``loc("...")``,
``#llvm.di_file``), the PTX ``.file`` lines and meta.json.  ``normalise`` rewrites those to paths
relative to the repository root (``corpus/programs/<stem>.py``), so the checked-in text does not
depend on where the repository was cloned; tests/test_corpus_fresh.py applies the same function to
a fresh capture.  ``normalise`` also drops module.cubin (and its entry in meta.json's "files"): it is
binary, keeps the absolute source directory in its debug line table, and the analysis reads only
module.mlir and module.ptx; leaving it out keeps the checked-in corpus small.

Every CUTE_DSL_* variable of the caller's environment is dropped for the child, so a local
CUTE_DSL_ARCH, CUTE_DSL_KEEP, ... cannot change the captures.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
PROGRAMS = CORPUS / "programs"
CAPTURES = CORPUS / "captures"
ARCH = "sm_90a"
#: files whose text carries the program's path and is rewritten by ``normalise``
TEXT_FILES = ("module.mlir", "module.ptx", "meta.json")
#: files irscan writes that the checked-in corpus leaves out
DROPPED = {"cubin": "module.cubin"}


def program_stems() -> list[str]:
    return sorted(p.stem for p in PROGRAMS.glob("*.py") if not p.name.startswith("_"))


def capture_command(stem: str, out: str | os.PathLike[str]) -> list[str]:
    """The command that captures one program; run it with ``cwd=ROOT`` and ``env=child_env()``."""
    script = f"corpus/programs/{stem}.py"
    return [sys.executable, "-m", "irscan", "capture", "--arch", ARCH, "--out", str(out), "--", "python", script]


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUTE_DSL_", "IRSCAN_"))}
    env["PYTHONHASHSEED"] = "0"
    return env


def normalise_text(text: str, root: str | os.PathLike[str] = ROOT) -> str:
    """Make the repository root disappear from paths: ``<root>/corpus/x.py`` -> ``corpus/x.py``."""
    r = str(Path(root).resolve())
    text = text.replace(r + "/", "")
    return text.replace(f'"{r}"', '"."')


def normalise(folder: str | os.PathLike[str], root: str | os.PathLike[str] = ROOT) -> None:
    """Make every capture under ``folder`` path-independent in place (see ``normalise_text``), and
    drop the files the corpus leaves out (``DROPPED``)."""
    for meta_path in sorted(Path(folder).rglob("meta.json")):
        capture_dir = meta_path.parent
        meta = json.loads(meta_path.read_text())
        for key, name in DROPPED.items():
            (capture_dir / name).unlink(missing_ok=True)
            meta.get("files", {}).pop(key, None)
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")
        for name in TEXT_FILES:
            path = capture_dir / name
            if path.exists():
                text = path.read_text()
                new = normalise_text(text, root)
                if new != text:
                    path.write_text(new)


def capture(stem: str, out: Path) -> None:
    """Capture program ``stem`` into ``out`` (which must not exist yet) and normalise it."""
    proc = subprocess.run(
        capture_command(stem, out), cwd=ROOT, env=child_env(), capture_output=True, text=True, check=False
    )
    folders = sorted(p.parent for p in out.rglob("meta.json")) if out.exists() else []
    if proc.returncode != 0 or not folders:
        raise RuntimeError(f"capture of {stem} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    normalise(out)


def _stem(name: str) -> str:
    stem = Path(name).name
    return stem[:-3] if stem.endswith(".py") else stem


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    known = program_stems()
    stems = [_stem(a) for a in args] or known
    unknown = [s for s in stems if s not in known]
    if unknown:
        print(f"regen: no such program: {', '.join(unknown)} (have: {', '.join(known)})", file=sys.stderr)
        return 2
    CAPTURES.mkdir(parents=True, exist_ok=True)
    for stem in stems:
        out = CAPTURES / stem
        shutil.rmtree(out, ignore_errors=True)
        capture(stem, out)
        sizes = ", ".join(
            f"{d.name[:3]}: mlir {(d / 'module.mlir').stat().st_size} B, ptx {(d / 'module.ptx').stat().st_size} B"
            for d in sorted(p.parent for p in out.rglob("meta.json"))
        )
        print(f"regen: {stem}: {sizes}")
    if not args:
        stale = sorted(p.name for p in CAPTURES.iterdir() if p.is_dir() and p.name not in known)
        for name in stale:
            shutil.rmtree(CAPTURES / name)
            print(f"regen: removed captures/{name} (no such program)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
