"""Hostile command lines: ``irscan scan``, ``diff``, ``rules``, ``report`` and ``patch`` with option
values no one meant (an output path that is a file, a folder, missing its parent or a device; a
baseline that is not JSON, not a report, a folder, an IR file; an empty path, a path twice, ``-``;
odd ``--ir``/``--max-memory``/``--fail-on`` spellings) around an intact capture.

The contract for a command line: exit 0/1, or 2 with a located error for a bad input file or
``irscan: error: ...`` (or argparse's ``usage:`` block) for bad usage; never exit 3, a traceback or a
hang.  ``{}`` in an argument is the case folder, which holds ``cap/`` (a copy of the seed capture) and
the files the options name."""

from __future__ import annotations

import random

from .case import Case
from .seeds import Seed

_BAD_JSON = (b"{", b"", b"[]", b"null", b'{"schema_version": 1}', b'{"findings": 5}', b'{"findings": [1, null]}',
             b'{"schema_version": 99, "findings": []}', b"\xff\xfe", b"[" * 50000 + b"]" * 50000,
             b'{"findings": [{"id": null}]}', b'{"findings": [{"id": "x", "file": 5, "line": "a"}]}')  # fmt: skip

#: output paths: {} is the case folder
_OUT_PATHS = ("{}/afile", "{}/adir", "{}/nosuch/deeper/x", "/dev/null", "/dev/full", "/proc/x", "", "{}/cap",
              "{}/cap/module.mlir", "{}/link_loop")  # fmt: skip
_IN_PATHS = ("{}/cap", "{}/cap/module.mlir", "{}/cap/module.ptx", "{}/nosuch", "{}/adir", "{}/afile", "", ".", "-",
             "{}/bad.json", "{}/link_loop", "/dev/null", "{}/cap/meta.json", "{}/cap/")  # fmt: skip
_IR = ("mlir", "ptx", "mlir,ptx", "", ",", "MLIR", " ptx ", "mlir,ptx,mlir", "ptx;mlir", "mlir,")
_MEMORY = ("141GB", "0", "-1", "1e400GB", "nanGB", "infGB", "1.5TB", "288GiB", "9" * 400, "1KB", " 2GB", "2 GB",
           "0x10GB", "１GB")  # fmt: skip
_FORMATS = ("text", "json", "sarif", "markdown", "xml", "")


def _files(seed: Seed, rng: random.Random) -> dict[str, bytes | None]:
    files: dict[str, bytes | None] = {f"cap/{seed.filename}": seed.text.encode(), "adir": None,
                                      "afile": b"some text\n", "bad.json": rng.choice(_BAD_JSON)}  # fmt: skip
    if seed.meta is not None:
        files["cap/meta.json"] = seed.meta.encode()
    return files


def _opt(rng: random.Random, p: float, *args: str) -> list[str]:
    return list(args) if rng.random() < p else []


def _scan_argv(rng: random.Random) -> list[str]:
    argv = ["scan"]
    argv += [rng.choice(_IN_PATHS) for _ in range(rng.choice((1, 1, 1, 2, 3)))]
    argv += _opt(rng, 0.3, "--format", rng.choice(_FORMATS))
    argv += _opt(rng, 0.3, "--ir", rng.choice(_IR))
    argv += _opt(rng, 0.3, "--max-memory", rng.choice(_MEMORY))
    argv += _opt(rng, 0.2, "--fail-on", rng.choice(("must", "may", "never", "all", "")))
    argv += _opt(rng, 0.3, "--dot", rng.choice(_OUT_PATHS))
    argv += _opt(rng, 0.3, "--baseline", rng.choice(("{}/bad.json", *_IN_PATHS)))
    argv += _opt(rng, 0.2, "--write-baseline", rng.choice(_OUT_PATHS))
    argv += _opt(rng, 0.2, "--all")
    return argv


COMMANDS = ("diff", "diff", "rules", "report", "patch")  # besides scan, with their weights


def _other_argv(rng: random.Random, commands: tuple[str, ...]) -> list[str]:
    cmd = rng.choice(commands)
    if cmd == "diff":
        argv = ["diff", rng.choice(_IN_PATHS), rng.choice(_IN_PATHS)]
        argv += _opt(rng, 0.3, "--format", rng.choice(_FORMATS))
        argv += _opt(rng, 0.3, "--ir", rng.choice(_IR))
        argv += _opt(rng, 0.3, "--baseline", rng.choice(("{}/bad.json", *_IN_PATHS)))
        return argv
    if cmd == "rules":
        return ["rules", *rng.sample(("narrow-widened-late", "trunc-then-extend", "", "x", "NARROW-WIDENED-LATE"), 2)]
    if cmd == "report":
        ids = rng.choice(([], ["--all"], ["0123456789abcdef"], ["", "--all"]))
        return ["report", *ids, rng.choice(("{}/bad.json", *_IN_PATHS)), "-o", rng.choice(_OUT_PATHS), "--no-script"]
    return ["patch", rng.choice(("{}/bad.json", *_IN_PATHS)), "-o", rng.choice(_OUT_PATHS)]


def cli_case(rng: random.Random, seed: Seed, scale: int, commands: tuple[str, ...] = COMMANDS) -> Case:
    """One command line around a copy of ``seed``'s capture (``scan``, or one of ``commands``)."""
    argv = _scan_argv(rng) if rng.random() < 0.6 else _other_argv(rng, commands)
    files = _files(seed, rng)
    what = [f"seed {seed.name}/{seed.filename}", "irscan " + " ".join(repr(a) if not a else a for a in argv)]
    return Case(files, "", what, None, "CLI", links=(("link_loop", "link_loop"),), argv=tuple(argv))
