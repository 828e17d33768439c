"""The capture folders on disk: one folder per compiled module, ``NNN_<first kernel>/`` holding
module.mlir, module.ptx, module.cubin and meta.json; writing them and reading them back.

Every reader of meta.json goes through :func:`load`, so a folder written by another version, or by
hand, is checked in one place.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irscan.capturing.env import DEFAULT_ARCH
from irscan.capturing.meta import KernelInfo
from irscan.ir import SREG_RANGES, IRSyntaxError
from irscan.resources import read_text

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
    files: dict[str, str] = {}
    if text is not None:
        (folder / MLIR_FILE).write_text(text)
        files["mlir"] = MLIR_FILE
    for key, fname, suffix in (("dump-ptx-path", PTX_FILE, "ptx"), ("dump-cubin-path", CUBIN_FILE, "cubin")):
        for src, name in _dumped(Path(dumps[key]), arch, suffix, fname):
            if src.parent == folder:
                src.rename(folder / name)
            else:  # the user asked for their own dump: leave theirs, keep a copy
                (folder / name).write_bytes(src.read_bytes())
            if suffix == "ptx":
                _drop_trailing_nul(folder / name)
            files[suffix if name == fname else f"{suffix}.{name.split('.')[1]}"] = name
    meta = {
        "schema": SCHEMA,
        "module": folder.name,
        "arch": arch,
        "kernels": [dataclasses.asdict(k) for k in kernels],
        "jit_functions": jits,
        "environment": environment,
        "lineinfo": bool(text and re.search(r'loc\("[^"]+\.py":\d+', text)),
        "files": files,  # what is in the folder; the scan reads every IR file named here
    }
    (folder / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    return Capture(folder, folder.name, arch, kernels, meta)


def _dumped(prefix: Path, arch: str, suffix: str, fname: str) -> list[tuple[Path, str]]:
    """The files the tail dumped at ``prefix``, each with its name in the capture folder.

    The DSL names a dump after the arch it compiled for, which is not always the one asked for (an
    sm_110a target writes ``module.sm_101a.ptx``): the asked-for arch's file, else every arch's, the
    first going to ``fname`` (module.ptx) and further ones keeping their arch (``module.sm_100a.ptx``).
    """
    exact = Path(f"{prefix}.{arch}.{suffix}")
    if exact.exists():
        return [(exact, fname)]
    found = sorted(p for p in prefix.parent.glob(f"{glob.escape(prefix.name)}.*.{suffix}") if p.is_file())
    found = [p for p in found if p.name.count(".") == prefix.name.count(".") + 2]  # <prefix>.<arch>.<suffix>
    stem = fname.removesuffix(f".{suffix}")
    return [(p, fname if i == 0 else f"{stem}.{p.name.split('.')[-2]}.{suffix}") for i, p in enumerate(found)]


def _drop_trailing_nul(path: Path) -> None:
    """cute-to-nvvm's own PTX dump (4.3-4.5, the PTX-only cut) ends with the C string's NUL: text,
    not PTX, so it goes (the PTX of cuda-to-binary's dump has none)."""
    data = path.read_bytes()
    if data.endswith(b"\0"):
        path.write_bytes(data.rstrip(b"\0"))


def load(folder: str | os.PathLike[str]) -> Capture:
    """Read a capture folder back; its meta.json is checked first (:func:`parse_meta`)."""
    d = Path(folder)
    path = d / META_FILE
    meta = parse_meta(read_text(path), str(path))
    kernels = [KernelInfo(**{f: k[f] for f in _KERNEL_FIELDS if f in k}) for k in meta["kernels"]]
    return Capture(d, meta.get("module", d.name), meta.get("arch", DEFAULT_ARCH), kernels, meta)


# ----------------------------------------------------------------------------------------- meta.json checks
# A meta.json decides verdicts (a grid dim bounds ctaid), so a wrong one must be an error that names
# the field, never a traceback deep in the analysis nor a silent verdict ("wraps when ctaid.x >= 0"
# from a 10^40 grid).  Unknown fields are ignored: newer writers may add some.

_KERNEL_FIELDS = tuple(f.name for f in dataclasses.fields(KernelInfo))
_MAX_DIGITS = 40  # no meta.json number has more; longer literals would hit Python's 4,300-digit limit


class _Bad(Exception):
    def __init__(self, where: str, expected: str, value: Any):
        super().__init__(f"{where}: expected {expected}, got {_show(value)}")


def _show(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return "a number too large or not finite" if v == v else "NaN"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, int):
        return str(v) if abs(v) < 10**15 else f"{float(v):g}"
    kinds: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}
    return f"{kinds.get(type(v), type(v).__name__)} {json.dumps(v)[:40]}"


def _need(cond: bool, where: str, expected: str, value: Any) -> None:
    if not cond:
        raise _Bad(where, expected, value)


def _obj(v: Any, where: str) -> dict[str, Any]:
    _need(isinstance(v, dict), where, "an object", v)
    return v  # type: ignore[no-any-return]


def _list(v: Any, where: str) -> list[Any]:
    _need(isinstance(v, list), where, "a list", v)
    return v  # type: ignore[no-any-return]


def _str(d: dict[str, Any], key: str, where: str, optional: bool = True, null: bool = False) -> None:
    if key not in d:
        _need(optional, f"{where}.{key}" if where else key, "a string (the field is missing)", None)
        return
    v = d[key]
    _need(isinstance(v, str) or (null and v is None), f"{where}.{key}" if where else key, "a string", v)


def _int(v: Any, where: str, lo: int, hi: int | None = None, null: bool = False) -> None:
    if null and v is None:
        return
    ok = isinstance(v, int) and not isinstance(v, bool) and v >= lo and (hi is None or v <= hi)
    bound = f"an integer from {lo} to {hi}" if hi is not None else f"an integer >= {lo}"
    _need(ok, where, bound, v)


def _dims(v: Any, where: str, regs: str) -> None:
    """1 to 3 launch dims, each within the ISA's limits for ``regs`` (ntid: block, nctaid: grid)."""
    dims = _list(v, where)
    _need(1 <= len(dims) <= 3, where, "1 to 3 dims", v)
    for axis, d in zip("xyz", dims, strict=False):
        lo, hi = SREG_RANGES[f"{regs}.{axis}"]
        _int(d, f"{where}[{'xyz'.index(axis)}]", lo, hi)
    if regs == "ntid":
        _need(math.prod(dims) <= SREG_RANGES["ntid.x"][1], where, "at most 1024 threads per block", v)


def _mode(v: Any, where: str) -> None:
    m = _obj(v, where)
    _need(m.get("kind") in ("static", "dynamic"), f"{where}.kind", '"static" or "dynamic"', m.get("kind"))
    if m["kind"] == "dynamic":
        _need(m.get("width") in (32, 64) and not isinstance(m.get("width"), bool), f"{where}.width", "32 or 64",
              m.get("width"))  # fmt: skip
    elif "value" in m:
        _need(isinstance(m["value"], str) or (isinstance(m["value"], int) and not isinstance(m["value"], bool)),
              f"{where}.value", "an integer or a string", m["value"])  # fmt: skip
    _str(m, "text", where)
    _str(m, "sym", where)  # the SymInt a fake tensor's extent shares with other modes (capturing/meta.py)


def _arg(v: Any, where: str, host: bool = False) -> None:
    """A kernel argument, or (``host``) a host tensor it names (``view_of``, ``sym_peers``; one level)."""
    a = _obj(v, where)
    if "index" in a:
        _int(a["index"], f"{where}.index", 0)
    if "host_arg" in a:
        _int(a["host_arg"], f"{where}.host_arg", 0, null=True)
    if not host and "view_of" in a:
        _arg(a["view_of"], f"{where}.view_of", host=True)
    for i, peer in enumerate(_list(a.get("sym_peers", []), f"{where}.sym_peers") if not host else ()):
        _arg(peer, f"{where}.sym_peers[{i}]", host=True)
    for key in ("type", "dtype", "space", "layout", "origin"):
        _str(a, key, where)
    if "use_32bit_stride" in a:
        _need(isinstance(a["use_32bit_stride"], bool), f"{where}.use_32bit_stride", "true or false",
              a["use_32bit_stride"])  # fmt: skip
    if "modes" in a:
        for i, m in enumerate(_list(a["modes"], f"{where}.modes")):
            mw = f"{where}.modes[{i}]"
            _mode(_obj(m, mw).get("shape"), f"{mw}.shape")
            if m.get("stride") is not None:
                _mode(m["stride"], f"{mw}.stride")


def _kernel(v: Any, where: str) -> None:
    k = _obj(v, where)
    _need(isinstance(k.get("name"), str) and bool(k.get("name")), f"{where}.name", "a kernel name", k.get("name"))
    _str(k, "file", where, null=True)
    _int(k.get("line"), f"{where}.line", 1, null=True)
    for i, a in enumerate(_list(k.get("args", []), f"{where}.args")):
        _arg(a, f"{where}.args[{i}]")
    launch = _obj(k.get("launch", {}), f"{where}.launch")
    for key, regs in (("reqntid", "ntid"), ("exact_block_dim", "ntid"), ("exact_grid_dim", "nctaid")):
        if key in launch:
            _dims(launch[key], f"{where}.launch.{key}", regs)
    if "cluster_launch" in launch:
        _need(isinstance(launch["cluster_launch"], bool), f"{where}.launch.cluster_launch", "true or false",
              launch["cluster_launch"])  # fmt: skip


def check_meta(doc: Any) -> None:
    """Raise ``_Bad`` naming the first field of a meta.json document that this irscan cannot use."""
    d = _obj(doc, "meta.json")
    _need(d.get("schema") == SCHEMA and not isinstance(d.get("schema"), bool), "schema", f"{SCHEMA}",
          d.get("schema"))  # fmt: skip
    _str(d, "module", "")
    _str(d, "arch", "")
    _need("kernels" in d, "kernels", "a list of kernels (the field is missing)", None)
    for i, k in enumerate(_list(d["kernels"], "kernels")):
        _kernel(k, f"kernels[{i}]")
    for i, j in enumerate(_list(d.get("jit_functions", []), "jit_functions")):
        _str(_obj(j, f"jit_functions[{i}]"), "name", f"jit_functions[{i}]", optional=False)
        _int(j.get("line"), f"jit_functions[{i}].line", 1, null=True)
    for key in ("environment", "files"):
        _obj(d.get(key, {}), key)


def _parse_int(text: str) -> int | float:
    return int(text) if len(text) <= _MAX_DIGITS else math.inf  # rejected below as "too large"


def parse_meta(text: str, path: str) -> dict[str, Any]:
    """A meta.json document, checked; any fault is an :class:`IRSyntaxError` at ``path``."""
    try:
        doc = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise IRSyntaxError(path, exc.lineno, exc.colno, f"not valid JSON: {exc.msg}", ["a JSON object"]) from None
    except RecursionError:  # json's C scanner stops on deep nesting with this, cleanly
        raise IRSyntaxError(path, 1, 1, "JSON nested too deeply", ["a capture's meta.json"]) from None
    except MemoryError:  # so it does past memory: read_text caps the bytes, not the objects they make
        raise IRSyntaxError(path, 1, 1, "JSON too large to hold in memory", ["a capture's meta.json"]) from None
    try:
        check_meta(doc)
    except _Bad as exc:
        raise IRSyntaxError(path, 1, 1, str(exc)) from None
    return doc  # type: ignore[no-any-return]


#: IR suffixes a capture folder may hold (the third-party corpus stores its files xz-compressed)
_IR_NAMES = (".mlir", ".ptx", ".mlir.xz", ".ptx.xz")


def ir_files(folder: Path, meta: dict[str, Any]) -> list[Path]:
    """Every IR file of a capture: those meta.json's ``files`` names (``mlir``, ``ptx``, ``ptx.<arch>``;
    the name, or it compressed or decompressed: ``.xz``), then any other IR file in the folder.  A named file that is
    missing is an error at meta.json: a scan that skipped it would look clean."""
    out: list[Path] = []
    for key, name in meta.get("files", {}).items():
        if key.split(".")[0] not in ("mlir", "ptx") or not isinstance(name, str):
            continue
        cands = (folder / name, folder / f"{name}.xz", folder / name.removesuffix(".xz"))  # compressed or not
        hit = next((c for c in cands if c.is_file()), None)
        if hit is None:
            others = sorted(f.name for f in folder.glob("*") if f.name.endswith(_IR_NAMES) and f.name != name)
            also = f"; the folder holds {', '.join(others)}" if others else ""
            raise IRSyntaxError(str(folder / META_FILE), 1, 1, f"files.{key} names {name}, which is not in the "
                                f"capture folder{also}", [f"{name} next to meta.json"])  # fmt: skip
        out.append(hit)
    have = {f.name.removesuffix(".xz") for f in out}  # one copy of each: module.ptx or module.ptx.xz
    rest = sorted(f for f in folder.glob("*") if f.name.endswith(_IR_NAMES) and f.is_file())
    return out + [f for f in rest if f.name.removesuffix(".xz") not in have]


def unfinished(root: str | os.PathLike[str]) -> list[Path]:
    """Capture folders a compile began but did not finish (no meta.json): it failed or was interrupted."""
    r = Path(root)
    return sorted(d for d in r.glob("[0-9][0-9][0-9]_*") if d.is_dir() and not (d / META_FILE).exists())


def find_captures(root: str | os.PathLike[str]) -> list[Path]:
    """Every capture folder under ``root`` (a folder holding meta.json), in name order."""
    r = Path(root)
    if (r / META_FILE).exists():
        return [r]
    return sorted(p.parent for p in r.rglob(META_FILE))


#: capture failures of the hook, one per line, at the capture root: the hook runs in the audited
#: program's process and fails open there; the audit in irscan's process reads them into its errors
ERRORS_FILE = "irscan-errors.txt"


def record_error(root: str | os.PathLike[str], message: str) -> None:
    try:
        r = Path(root)
        r.mkdir(parents=True, exist_ok=True)
        with open(r / ERRORS_FILE, "a", encoding="utf-8") as f:
            f.write(" ".join(message.split()) + "\n")
    except OSError:
        pass  # the message went to stderr already; the user's compile goes on


def recorded_errors(root: str | os.PathLike[str]) -> list[str]:
    p = Path(root) / ERRORS_FILE
    try:
        return [line for line in p.read_text(encoding="utf-8", errors="replace").splitlines() if line]
    except OSError:
        return []
