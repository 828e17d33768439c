"""The ``cute.compile`` hook: capture each kernel module's LLVM-dialect MLIR, PTX and cubin.

The DSL runs its whole lowering in one place, ``cutlass.base_dsl.compiler.Compiler.compile(module,
pipeline)``.  We wrap it and run the same pipeline in two halves: ``cute-to-nvvm{llvm-only=true}``
(which stops right before ``cuda-to-binary``), save the module text, then the registered tail
(``cuda-to-binary`` ... ``cuda-error-handling``) with dump paths pointing into our folder.  The two
halves are exactly the passes of the whole, so the PTX and cubin are byte-identical to a plain
compile (tests/test_capture.py proves it).

Fail open: anything of ours that breaks before the first pass runs falls back to the original
compile; anything that breaks afterwards only loses the capture.  Either way the reason goes to
stderr and the user's compile succeeds.  ``strict=True`` turns our failures into errors.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscan.frontend.text import split_top

#: Environment the DSL must see *before* ``import cutlass`` so that no compile is served from a cache.
NO_CACHE_ENV = {"CUTE_DSL_NO_CACHE": "1", "CUTE_DSL_DISABLE_FILE_CACHING": "1", "CUTE_DSL_CACHE_ENABLED": "0"}
DEFAULT_ARCH = "sm_90a"

MLIR_FILE = "module.mlir"
PTX_FILE = "module.ptx"
CUBIN_FILE = "module.cubin"
META_FILE = "meta.json"
TAIL_START = "cuda-to-binary{"


@dataclass
class KernelInfo:
    """What the capture knows about one kernel before any parsing of ours."""

    name: str
    file: str | None = None
    line: int | None = None
    #: one entry per kernel argument: {"index", "type"} and for tensors {"dtype", "space", "layout",
    #: "modes": [{"shape": "static"|"dynamic", "stride": ..., "shape_width", "stride_width"}]}
    args: list[dict[str, Any]] = field(default_factory=list)
    launch: dict[str, Any] = field(default_factory=dict)


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


# ----------------------------------------------------------------------------------------- pipeline


def split_pipeline(pipeline: str, expanded: str) -> tuple[str, str]:
    """Return (first half with ``llvm-only=true``, tail starting at ``cuda-to-binary``).

    ``expanded`` is ``str(PassManager.parse(pipeline))``: the alias expanded to its ~45 passes,
    whose tail is the only part that re-parses as a pipeline of its own.
    """
    if "cute-to-nvvm{" not in pipeline:
        raise ValueError("pipeline has no cute-to-nvvm{...}")
    first = pipeline.replace("cute-to-nvvm{", "cute-to-nvvm{llvm-only=true ", 1)
    at = expanded.find(TAIL_START)
    if at < 0:
        raise ValueError("expanded pipeline has no cuda-to-binary pass")
    return first, "builtin.module(" + expanded[at:]


_DUMP_RE = {k: re.compile(rf"{k}=('[^']*'|[^ ,}}]*)") for k in ("dump-ptx-path", "dump-cubin-path")}


def set_dump_paths(tail: str, prefix: str) -> tuple[str, dict[str, str]]:
    """Point the tail's empty dump paths at ``prefix``; keep the user's own where they set one.

    Returns the new tail and, per kind, the prefix the file will be written under.
    """
    used: dict[str, str] = {}
    for key, rx in _DUMP_RE.items():
        m = rx.search(tail)
        if m is None:
            raise ValueError(f"cuda-to-binary has no {key} option")
        value = m.group(1).strip("'")
        if value:
            used[key] = value
        else:
            used[key] = prefix
            tail = tail[: m.start()] + f"{key}='{prefix}'" + tail[m.end() :]
    return tail, used


def pipeline_arch(pipeline: str) -> str | None:
    m = re.search(r"cubin-chip='?(sm_[0-9a-z]+)", pipeline)
    return m.group(1) if m else None


# ----------------------------------------------------------------------------------------- metadata

_LOC_RE = re.compile(r'"([^"<>]+\.py)":(\d+):(\d+)')
_MEMREF_RE = re.compile(r'!cute\.memref<([^,]+),\s*([a-z_]+)(?:<[^>]*>)?,\s*(?:align<\d+>,\s*)?"([^"]*)"')


def loc_file_line(loc_text: str) -> tuple[str | None, int | None]:
    m = _LOC_RE.search(loc_text)
    return (m.group(1), int(m.group(2))) if m else (None, None)


def _leaves(s: str) -> list[str]:
    s = s.strip()
    if s.startswith("(") and s.endswith(")"):
        return [leaf for part in split_top(s[1:-1]) for leaf in _leaves(part)]
    return [s]


def _mode(entry: str) -> dict[str, Any]:
    """One leaf of a CuTe layout string: '100000' (static), '?' (dynamic i32), '?{i64}' (dynamic i64)."""
    if entry.startswith("?"):
        width = 64 if "i64" in entry else 32
        return {"kind": "dynamic", "width": width, "text": entry}
    return {"kind": "static", "value": int(entry) if entry.lstrip("-").isdigit() else entry, "text": entry}


_COORD_RE = re.compile(r'!cute\.coord_tensor<"[^"]*",\s*"([^"]*)"')


def describe_tensor_type(type_text: str) -> dict[str, Any] | None:
    """Layout facts from the DSL's own tensor type, e.g. ``!cute.memref<f32, gmem, "(?,128):(?{i64},1)">``
    (or a coordinate tensor's, ``!cute.coord_tensor<"(0,0)", "(?,?):(1@0,1@1)">``)."""
    m = _MEMREF_RE.search(type_text)
    c = _COORD_RE.search(type_text) if not m else None
    if not m and not c:
        return None
    if m:
        dtype, space, layout = m.group(1).strip(), m.group(2), m.group(3)
    else:
        assert c is not None
        dtype, space, layout = "coord", "none", c.group(1)
    shape, _, stride = layout.partition(":")
    shapes, strides = _leaves(shape), _leaves(stride) if stride else []
    modes = []
    for i, sh in enumerate(shapes):
        st = strides[i] if i < len(strides) else None
        modes.append({"shape": _mode(sh), "stride": _mode(st) if st is not None else None})
    return {"dtype": dtype, "space": space, "layout": layout, "modes": modes}


def _attr_text(op: Any, name: str) -> str | None:
    try:
        return str(op.attributes[name])
    except (KeyError, IndexError, ValueError):
        return None


def _ints(text: str | None, key: str) -> list[int] | None:
    if not text:
        return None
    m = re.search(rf"{key}\s*=\s*array<i\d+:\s*([-0-9, ]+)>", text)
    return [int(x) for x in m.group(1).split(",")] if m else None


def kernel_signatures(module: Any) -> dict[str, KernelInfo]:
    """Kernel names, Python lines and tensor layouts from the CuTe-level module, before any pass runs."""
    infos: dict[str, KernelInfo] = {}
    for top in module.body.operations:
        if top.operation.name != "gpu.module":
            continue
        for f in top.regions[0].blocks[0].operations:
            name = _attr_text(f, "sym_name")
            if name is None:
                continue
            name = name.strip('"')
            file, line = loc_file_line(str(f.location))
            info = KernelInfo(name=name, file=file, line=line)
            ftype = _attr_text(f, "function_type") or ""
            inputs = ftype[1 : ftype.find(") ->")] if ftype.startswith("(") else ""
            for i, t in enumerate(split_top(inputs)):
                arg: dict[str, Any] = {"index": i, "type": t}
                tensor = describe_tensor_type(t)
                if tensor:
                    arg.update(tensor)
                info.args.append(arg)
            infos[name] = info
    return infos


def jit_functions(module: Any) -> list[dict[str, Any]]:
    """The host-side ``@cute.jit`` functions of the module (outside ``gpu.module``), with their lines."""
    out = []
    for top in module.body.operations:
        name = _attr_text(top, "sym_name")
        if top.operation.name == "gpu.module" or name is None:
            continue
        file, line = loc_file_line(str(top.location))
        out.append({"name": name.strip('"'), "file": file, "line": line})
    return out


def launch_facts(module: Any, infos: dict[str, KernelInfo]) -> None:
    """Launch facts as the lowered kernels carry them (reqntid, exact block/grid dims)."""
    for top in module.body.operations:
        if top.operation.name != "gpu.module":
            continue
        for f in top.regions[0].blocks[0].operations:
            name = (_attr_text(f, "sym_name") or "").strip('"')
            if name not in infos:
                infos[name] = KernelInfo(name=name, file=loc_file_line(str(f.location))[0])
            if _attr_text(f, "gpu.kernel") is None and _attr_text(f, "nvvm.kernel") is None:
                continue
            facts = _attr_text(f, "cutlass_launch_facts")
            launch = {
                "reqntid": _ints(_attr_text(f, "nvvm.reqntid") and f"x = {_attr_text(f, 'nvvm.reqntid')}", "x"),
                "exact_block_dim": _ints(facts, "exact_block_dim"),
                "exact_grid_dim": _ints(facts, "exact_grid_dim"),
                "cluster_launch": "cluster_launch = true" in (facts or ""),
            }
            infos[name].launch = {k: v for k, v in launch.items() if v is not None}


def dsl_environment() -> dict[str, Any]:
    from importlib import metadata

    env: dict[str, Any] = {"python": sys.version.split()[0]}
    for dist in ("nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-cu12", "nvidia-cutlass-dsl-libs-cu13"):
        try:
            env[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    env["dsl_version"] = env.get("nvidia-cutlass-dsl")
    env["wheel_flavour"] = "cu13" if "nvidia-cutlass-dsl-libs-cu13" in env else "cu12"
    return env


# ----------------------------------------------------------------------------------------- the hook


def _safe_name(name: str, limit: int = 60) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:limit] or "module"


class Session:
    """An active capture: where modules go, and what has been captured so far."""

    def __init__(self, out: str | os.PathLike[str], strict: bool = False):
        self.out = Path(out)
        self.strict = strict
        self.captures: list[Capture] = []
        self.errors: list[str] = []
        self.seconds = 0.0  # time our hook added on top of the compile itself
        self._lock = threading.Lock()

    @property
    def kernels(self) -> list[KernelInfo]:
        return [k for c in self.captures for k in c.kernels]

    def _next_dir(self, label: str) -> Path:
        with self._lock:
            n = len(list(self.out.glob("[0-9][0-9][0-9]_*"))) if self.out.exists() else 0
            while True:
                d = self.out / f"{n:03d}_{_safe_name(label)}"
                try:
                    d.mkdir(parents=True, exist_ok=False)
                    return d
                except FileExistsError:
                    n += 1

    def warn(self, what: str, exc: BaseException) -> None:
        msg = f"irscan: capture {what} failed ({type(exc).__name__}: {exc}); the compile goes on without it"
        self.errors.append(msg)
        print(msg, file=sys.stderr)


_active: list[Session] = []
_original: Callable[..., Any] | None = None


def _hooked_compile(self: Any, module: Any, pipeline: str, *args: Any, **kwargs: Any) -> Any:
    assert _original is not None
    session = _active[-1] if _active else None
    if session is None or "cute-to-nvvm{" not in pipeline:
        return _original(self, module, pipeline, *args, **kwargs)
    t0 = time.perf_counter()
    try:
        from cutlass._mlir import passmanager

        first, tail = split_pipeline(pipeline, str(passmanager.PassManager.parse(pipeline)))
        infos = kernel_signatures(module)
        jits = jit_functions(module)
        label = next(iter(infos), "module")
        folder = session._next_dir(label)
        tail, dumps = set_dump_paths(tail, str(folder / "module"))
    except Exception as exc:  # fail open: nothing has run yet, so the plain compile is untouched
        if session.strict:
            raise
        session.warn("set-up", exc)
        return _original(self, module, pipeline, *args, **kwargs)
    overhead = time.perf_counter() - t0

    # The DSL's post-compile hook (TVM-FFI wrapping, verification) expects a fully lowered module:
    # it must run once, after the tail, exactly as in a plain compile.
    post_hook = getattr(self, "_post_compile_hook", None)
    self._post_compile_hook = None
    try:
        _original(self, module, first, *args, **kwargs)  # user errors surface here unchanged
    finally:
        self._post_compile_hook = post_hook

    t1 = time.perf_counter()
    text = None
    try:
        text = module.operation.get_asm(enable_debug_info=True)
        launch_facts(module, infos)
    except Exception as exc:
        if session.strict:
            raise
        session.warn("of the LLVM-dialect module", exc)
    overhead += time.perf_counter() - t1

    result = _original(self, module, tail, *args, **kwargs)

    t2 = time.perf_counter()
    try:
        arch = pipeline_arch(pipeline) or DEFAULT_ARCH
        _finish(session, folder, text, infos, arch, dumps, jits)
    except Exception as exc:
        if session.strict:
            raise
        session.warn("write-out", exc)
    session.seconds += overhead + time.perf_counter() - t2
    return result


def _finish(
    session: Session,
    folder: Path,
    text: str | None,
    infos: dict[str, KernelInfo],
    arch: str,
    dumps: dict[str, str],
    jits: list[dict[str, Any]] | None = None,
) -> None:
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
    kernels = [k for k in infos.values() if k.launch or k.name.startswith("kernel")]
    kernels = kernels or list(infos.values())
    meta = {
        "schema": 1,
        "module": folder.name,
        "arch": arch,
        "kernels": [dataclasses.asdict(k) for k in kernels],
        "jit_functions": jits or [],
        "environment": dsl_environment(),
        "lineinfo": bool(text and re.search(r'loc\("[^"]+\.py":\d+', text)),
        "files": {"mlir": MLIR_FILE, "ptx": PTX_FILE, "cubin": CUBIN_FILE},
    }
    (folder / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    session.captures.append(Capture(folder, folder.name, arch, kernels, meta))


def prepare_environment(arch: str | None = None, lineinfo: bool | None = None) -> None:
    """Set the DSL's environment for a capture; only effective before the first ``import cutlass``."""
    for k, v in NO_CACHE_ENV.items():
        os.environ[k] = v
    if arch:
        os.environ["CUTE_DSL_ARCH"] = arch
    elif "CUTE_DSL_ARCH" not in os.environ and not _has_gpu():
        os.environ["CUTE_DSL_ARCH"] = DEFAULT_ARCH
    if lineinfo is not None:
        os.environ["CUTE_DSL_LINEINFO"] = "1" if lineinfo else "0"


def _has_gpu() -> bool:
    return any(Path(p).exists() for p in ("/dev/nvidia0", "/dev/nvidiactl"))


def install() -> None:
    """Wrap ``Compiler.compile`` (idempotent)."""
    global _original
    from cutlass.base_dsl import compiler

    if _original is None:
        _original = compiler.Compiler.compile
        compiler.Compiler.compile = _hooked_compile  # type: ignore[method-assign]


@contextmanager
def capture(
    out: str | os.PathLike[str] = "irscan-capture",
    arch: str | None = None,
    strict: bool = False,
    lineinfo: bool | None = None,
) -> Iterator[Session]:
    """Capture every module compiled inside the block: ``with irscan.capture(out=DIR) as cap: ...``.

    Caches are switched off and the arch defaults to sm_90a, as far as the DSL has not been imported
    yet; when it has, the settings it already read stay (a note goes to stderr).
    """
    if "cutlass" in sys.modules and not all(os.environ.get(k) == v for k, v in NO_CACHE_ENV.items()):
        print(
            "irscan: cutlass was imported before capture started; set CUTE_DSL_NO_CACHE=1 "
            "(or use `irscan capture`) so that cached compiles are not skipped",
            file=sys.stderr,
        )
    prepare_environment(arch, lineinfo)
    session = Session(out, strict=strict)
    try:
        install()
    except Exception as exc:
        if strict:
            raise
        session.warn("install", exc)
    _active.append(session)
    try:
        yield session
    finally:
        _active.remove(session)


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
