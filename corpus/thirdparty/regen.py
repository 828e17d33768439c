"""Regenerate the third-party captures: real quack and FlashAttention-4 kernels, compiled with no GPU.

    python corpus/thirdparty/regen.py                 # all of them
    python corpus/thirdparty/regen.py quack_rmsnorm_fwd_sm90a fa4_fwd_sm100a
    python corpus/thirdparty/regen.py --list
    python corpus/thirdparty/regen.py --out /tmp/x --no-timing quack_rmsnorm_fwd_sm90a

Each capture runs in its own subprocess (fresh DSL state, env vars set before ``import cutlass``),
through the kernels' OWN compile paths (quack's undecorated ``_compile_*`` functions, FA4's
``_flash_attn_fwd`` / ``_flash_attn_bwd`` under ``FakeTensorMode``), inside
``irscan.capture(out=..., lineinfo=True)``.  Needs ``pip install -r corpus/thirdparty/requirements.txt``.

Per capture the worker measures the ``cute.compile`` wall time three times in the same process:
a warm-up compile (no capture, discarded as ``cold``), one inside ``irscan.capture``, one outside it
again; and the DSL's native parse (``cutlass._mlir.ir.Module.parse``) of each captured module.

The parent then moves the folders to ``corpus/thirdparty/<name>/<NNN_module>/``, compresses
``module.mlir``/``module.ptx`` with xz (preset 9), drops ``module.cubin`` (``"cubin_dropped": true``
in meta.json) and writes ``index.json`` and ``versions.json``.  ``loc(...)`` paths and PTX ``.file``
lines keep the absolute site-packages paths of the machine that ran this.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
INDEX = HERE / "index.json"
VERSIONS = HERE / "versions.json"
PACKAGES = [
    "nvidia-cutlass-dsl",
    "nvidia-cutlass-dsl-libs-base",
    "nvidia-cutlass-dsl-libs-core",
    "nvidia-cutlass-dsl-libs-cu12",
    "quack-kernels",
    "flash-attn-4",
    "torch",
    "triton",
    "numpy",
    "einops",
    "apache-tvm-ffi",
]
XZ_PRESET = 9
COMPRESS = ("module.mlir", "module.ptx")

# name -> (arch, description, worker function name)
CAPTURES: dict[str, tuple[str, str, str]] = {
    "quack_rmsnorm_fwd_sm90a": ("sm_90a", "quack RMSNorm forward, bf16 x/out, f32 weight, N=4096, rstd", "_quack_rmsnorm"),
    "quack_softmax_fwd_sm90a": ("sm_90a", "quack Softmax forward, bf16, N=4096", "_quack_softmax"),
    "quack_cross_entropy_fwd_sm90a": (
        "sm_90a",
        "quack CrossEntropy forward, bf16 logits, i64 target, N=32768, lse",
        "_quack_cross_entropy",
    ),
    "quack_gemm_sm90a": ("sm_90a", "quack GEMM sm90, bf16 A/B/D, K-major, tile 128x256, cluster 2x1, persistent", "_quack_gemm"),
    "fa4_fwd_sm90a": ("sm_90a", "FA4 forward sm90, bf16, hdim 128, causal", "_fa4_fwd"),
    "fa4_fwd_sm100a": ("sm_100a", "FA4 forward sm100, bf16, hdim 128, causal", "_fa4_fwd"),
    "fa4_bwd_sm100a": ("sm_100a", "FA4 backward sm100, bf16, hdim 128, causal (preprocess, main, postprocess)", "_fa4_bwd"),
    "fa4_bwd_sm90a": ("sm_90a", "FA4 backward sm90, bf16, hdim 128, causal (preprocess, main, postprocess)", "_fa4_bwd"),
}


# ----------------------------------------------------------------------------------------- helpers


def native_context() -> Any:
    """An MLIR context of the DSL's own bindings in which the captured text parses.

    ``import cutlass.cute`` registers the DSL's dialects (llvm, nvvm, gpu, cuda, cute, ...) with the
    bindings' site initialisers, so every ``ir.Context()`` created afterwards loads them; unregistered
    dialects are allowed on top in case a module carries an op nothing registers.
    """
    import cutlass.cute  # noqa: F401  (registers the DSL's dialects)
    from cutlass._mlir import ir

    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    return ctx


# A bare op (no results, operands or attributes) followed only by its location: ``nvvm.barrier loc(#loc9)``.
_BARE_OP_LOC = re.compile(r"^([ \t]*)([a-z_][\w.]*) (loc\([^\n]*\))[ \t]*$", re.M)
_generic_cache: dict[str, str | None] = {}


def _generic_form(op: str, ctx: Any) -> str | None:
    """Generic form of a bare ``op`` if its custom parser would swallow a trailing ``loc(...)``, else None.

    The upstream printer writes ``nvvm.barrier loc(#loc9)``; ``nvvm.barrier``'s custom syntax starts with
    an optional attribute (``$reductionOp``), so the parser reads ``loc(#loc9)`` as that attribute, and
    as the ``#loc`` aliases are printed at the end of the file it fails with "undefined symbol alias id".
    The generic form ``"nvvm.barrier"() <{...}> : () -> () loc(#loc9)`` is the same op and parses.
    """
    from cutlass._mlir import ir

    if op in _generic_cache:
        return _generic_cache[op]
    result = None
    with ctx:
        for body in (f"{op}@LOC\n    llvm.unreachable", f"{op}@LOC"):  # ordinary op, then terminator
            probe = "llvm.func @f() {\n    " + body + '\n}\n#l = loc("x":1:1)\n'
            try:
                ir.Module.parse(probe.replace("@LOC", " loc(#l)"))
                break  # parses with a trailing location: nothing to fix
            except Exception as exc:
                if "undefined symbol alias" not in str(exc):
                    continue
                m = ir.Module.parse(probe.replace("@LOC", ""))
                f = m.body.operations[0]
                first = f.regions[0].blocks[0].operations[0]
                result = first.get_asm(print_generic_op_form=True).strip()
                break
    _generic_cache[op] = result
    return result


def loc_safe(text: str, ctx: Any = None) -> str:
    """Work around the upstream printer bug that makes location-bearing text fail to parse back.

    Rewrites each bare op whose custom syntax would read its trailing ``loc(...)`` as an optional
    attribute (``nvvm.barrier`` in the captured kernels) into its generic form, keeping the location.
    Nothing else changes; text without such ops comes back unchanged.
    """
    ctx = ctx or native_context()
    names = {m.group(2) for m in _BARE_OP_LOC.finditer(text)}
    fixes = {n: g for n in names if (g := _generic_form(n, ctx)) is not None}
    if not fixes:
        return text

    def sub(m: re.Match[str]) -> str:
        g = fixes.get(m.group(2))
        return m.group(0) if g is None else f"{m.group(1)}{g} {m.group(3)}"

    return _BARE_OP_LOC.sub(sub, text)


def native_parse(text: str, ctx: Any = None) -> tuple[Any, float]:
    """Parse captured MLIR text with the DSL's own parser, ``cutlass._mlir.ir.Module.parse``.

    Returns (module, seconds of the parse alone).  ``ctx`` defaults to :func:`native_context`; the
    text goes through :func:`loc_safe` first (not timed; a regex pass) because the printer's output
    with locations does not parse back as it is.
    """
    from cutlass._mlir import ir

    ctx = ctx or native_context()
    text = loc_safe(text, ctx)
    with ctx:
        t0 = time.perf_counter()
        module = ir.Module.parse(text)
        return module, time.perf_counter() - t0


def read_text(folder: Path, name: str) -> str:
    """``name`` or ``name.xz`` from a capture folder, as text."""
    p = folder / name
    if p.exists():
        return p.read_text()
    return lzma.decompress((folder / (name + ".xz")).read_bytes()).decode()


def package_versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for dist in PACKAGES:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


# ----------------------------------------------------------------------------------------- worker side


def _set_env(arch: str) -> None:
    from irscan.capture import prepare_environment

    prepare_environment(arch, lineinfo=True)
    os.environ["QUACK_CACHE_ENABLED"] = "0"
    sm = arch.removeprefix("sm_").rstrip("af")
    os.environ["FLASH_ATTENTION_ARCH"] = f"sm_{sm}"
    os.environ["FLASH_ATTENTION_NUM_SMS"] = "132" if sm == "90" else "148"


def _install_post_hook_shim() -> None:
    """Run the DSL's post-compile hook only after the whole pipeline, not after the llvm-only half.

    With ``--enable-tvm-ffi`` (every quack and FA4 compile), ``Compiler._post_compile_hook`` attaches
    the TVM-FFI host wrapper and verifies the module.  irscan's capture runs ``Compiler.compile`` twice
    (``llvm-only=true``, then the tail), so the hook ran on the half-lowered module and failed
    verification (``'llvm.mlir.addressof' op must reference a global ... @cuda_init``).  Installed
    under irscan's hook (before ``irscan.capture`` wraps ``Compiler.compile``), this skips the hook for
    the llvm-only half; the tail run still calls it once, as a plain compile does.
    """
    from cutlass.base_dsl import compiler

    original = compiler.Compiler.compile
    if getattr(original, "_thirdparty_shim", False):
        return

    def compile_(self: Any, module: Any, pipeline: str, *args: Any, **kwargs: Any) -> Any:
        if "llvm-only=true" not in pipeline:
            return original(self, module, pipeline, *args, **kwargs)
        hook, self._post_compile_hook = self._post_compile_hook, None
        try:
            return original(self, module, pipeline, *args, **kwargs)
        finally:
            self._post_compile_hook = hook

    compile_._thirdparty_shim = True  # type: ignore[attr-defined]
    compiler.Compiler.compile = compile_  # type: ignore[method-assign]


class _CompileTimer:
    """Stand-in for ``cutlass.cute.compile`` that records each call's wall time."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.times: list[float] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.times.append(time.perf_counter() - t0)

    def __getitem__(self, item: Any) -> Any:
        return self.inner[item]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _FakeHardwareInfo:
    """``cutlass.utils.HardwareInfo`` asks the driver; FA4 sm100 asks it for the SM count while tracing."""

    def __init__(self, device_id: int = 0):
        self.sms = int(os.environ.get("FLASH_ATTENTION_NUM_SMS", "132"))

    def get_device_multiprocessor_count(self) -> int:
        return self.sms

    def get_max_active_clusters(self, cluster_size: int = 1) -> int:
        return self.sms // cluster_size

    def get_l2_cache_size_in_bytes(self) -> int:
        return 50 * 1024 * 1024


def _quack_rmsnorm(arch: str):
    import importlib

    from cutlass import BFloat16, Float32

    mod = importlib.import_module("quack.rmsnorm")  # quack/__init__ shadows the module with a function
    return lambda: mod._compile_rmsnorm_fwd.__wrapped__(
        BFloat16, BFloat16, None, Float32, None, None, 4096, True, False, False, False
    )


def _quack_softmax(arch: str):
    from cutlass import BFloat16
    from quack.softmax import Softmax

    return lambda: Softmax.compile.__wrapped__(BFloat16, BFloat16, 4096)


def _quack_cross_entropy(arch: str):
    from cutlass import BFloat16, Int64
    from quack.cross_entropy import CrossEntropy

    # dtype, target_dtype, target_logit_dtype, N, has_lse, has_dx, weight_dtype, target_logit_ndim
    return lambda: CrossEntropy.compile.__wrapped__(BFloat16, Int64, None, 32768, True, False, None, 1)


def _quack_gemm(arch: str):
    import importlib

    from cutlass import BFloat16

    gemm = importlib.import_module("quack.gemm")
    from quack.gemm_config import SplitKMode
    from quack.rounding import RoundingMode

    cap = (9, 0) if arch.startswith("sm_90") else (10, 0)
    return lambda: gemm._compile_gemm.__wrapped__(
        BFloat16, BFloat16, BFloat16, None,  # a, b, d, c dtypes
        "k", "k", "n", None,  # a, b, d, c majors
        (128, 256), (2, 1, 1),  # tile_shape_mn, cluster_shape_mnk
        False, True, False,  # pingpong, persistent, is_dynamic_persistent
        None, None, 0,  # rowvec, colvec dtypes, colvec_ndim
        0, 0, False,  # alpha_mode, beta_mode, add_to_output
        None, False, False, False, False, False,  # concat_layout, varlen_m/k, gather_A, tma_gather, batch_idx_permute
        cap, RoundingMode.RN, 0, None,  # device_capacity, rounding_mode, sr_seed_mode, num_warps
        split_k_mode=SplitKMode.SERIAL,
    )  # fmt: skip


def _fa4_reset_caches() -> None:
    from flash_attn.cute import interface
    from flash_attn.cute.cache_utils import JITCache

    for obj in vars(interface).values():
        if callable(obj) and hasattr(obj, "compile_cache"):
            obj.compile_cache = JITCache()


def _fa4_setup() -> None:
    import cutlass.utils
    from flash_attn.cute import tile_scheduler

    cutlass.utils.HardwareInfo = _FakeHardwareInfo
    tile_scheduler.HardwareInfo = _FakeHardwareInfo


FA4_SHAPE = dict(batch=2, seqlen=1024, nheads=16, hdim=128)


def _fa4_fwd(arch: str):
    import torch
    from flash_attn.cute.interface import _flash_attn_fwd
    from torch._subclasses.fake_tensor import FakeTensorMode

    _fa4_setup()
    b, s, h, d = (FA4_SHAPE[k] for k in ("batch", "seqlen", "nheads", "hdim"))

    def run() -> None:
        _fa4_reset_caches()
        with FakeTensorMode():
            q, k, v = (torch.empty(b, s, h, d, dtype=torch.bfloat16, device="cuda") for _ in range(3))
            _flash_attn_fwd(q, k, v, causal=True, return_lse=True)

    return run


def _fa4_bwd(arch: str):
    import torch
    from flash_attn.cute.interface import _flash_attn_bwd
    from torch._subclasses.fake_tensor import FakeTensorMode

    _fa4_setup()
    b, s, h, d = (FA4_SHAPE[k] for k in ("batch", "seqlen", "nheads", "hdim"))

    def run() -> None:
        _fa4_reset_caches()
        with FakeTensorMode():
            q, k, v, out, dout = (torch.empty(b, s, h, d, dtype=torch.bfloat16, device="cuda") for _ in range(5))
            lse = torch.empty(b, h, s, dtype=torch.float32, device="cuda")
            _flash_attn_bwd(q, k, v, out, dout, lse, causal=True)

    return run


def worker(name: str, out: Path, timing: bool) -> dict[str, Any]:
    """Compile one capture (in this fresh process) into ``out``; return what index.json records."""
    arch, _desc, fn_name = CAPTURES[name]
    _set_env(arch)
    from irscan.capture import capture

    _install_post_hook_shim()
    import cutlass.cute as cute

    timer = _CompileTimer(cute.compile)
    cute.compile = timer
    run = globals()[fn_name](arch)
    result: dict[str, Any] = {"name": name, "arch": arch}

    if timing:  # warm-up: first-use costs of the DSL and the library, no capture
        timer.times.clear()
        run()
        result["compile_s_cold"] = round(sum(timer.times), 3)
    timer.times.clear()
    with capture(out=out, lineinfo=True, strict=True) as cap:
        run()
    result["compile_s_with_capture"] = round(sum(timer.times), 3)
    result["compile_calls"] = len(timer.times)
    result["capture_hook_s"] = round(cap.seconds, 3)
    if cap.errors:
        result["capture_errors"] = cap.errors
    if timing:
        timer.times.clear()
        run()
        result["compile_s_without_capture"] = round(sum(timer.times), 3)

    ctx = native_context()
    modules = []
    for c in cap.captures:
        text = c.mlir_path.read_text()
        native_parse(text, ctx)  # warm the context once per module, then time a second parse
        _, secs = native_parse(text, ctx)
        modules.append({"dir": c.dir.name, "native_parse_s": round(secs, 4)})
    result["modules"] = modules
    return result


# ----------------------------------------------------------------------------------------- parent side


def _compress(folder: Path, drop_cubin: bool) -> dict[str, Any]:
    info: dict[str, Any] = {"module": folder.name}
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text())
    for fname in COMPRESS:
        p = folder / fname
        if not p.exists():
            continue
        data = p.read_bytes()
        xz = lzma.compress(data, preset=XZ_PRESET)
        (folder / (fname + ".xz")).write_bytes(xz)
        p.unlink()
        key = fname.split(".")[1]
        info[f"{key}_bytes"] = len(data)
        info[f"{key}_xz_bytes"] = len(xz)
        meta["files"][key] = fname + ".xz"
        if key == "ptx":
            info["ptx_entries"] = [
                line.split()[-1].rstrip("(")
                for line in data.decode().splitlines()
                if line.lstrip().startswith(".entry") or line.lstrip().startswith(".visible .entry")
            ]
    cubin = folder / "module.cubin"
    if cubin.exists():
        info["cubin_bytes"] = cubin.stat().st_size
        if drop_cubin:
            cubin.unlink()
            meta["cubin_dropped"] = True
            meta["files"].pop("cubin", None)
    meta["compressed"] = "xz"
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    info["kernels"] = [k["name"] for k in meta["kernels"]]
    return info


def run_one(name: str, out_root: Path, timing: bool, drop_cubin: bool, keep_raw: bool) -> dict[str, Any]:
    arch, desc, _ = CAPTURES[name]
    with tempfile.TemporaryDirectory(prefix=f"irscan-{name}-") as tmp:
        res_path = Path(tmp) / "result.json"
        cap_dir = Path(tmp) / "cap"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--out", str(cap_dir)]
        cmd += ["--result", str(res_path)] + ([] if timing else ["--no-timing"])
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0 or not res_path.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
            raise RuntimeError(f"{name}: worker failed (rc={proc.returncode}):\n" + "\n".join(tail))
        result = json.loads(res_path.read_text())
        dest = out_root / name
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        modules = []
        for m in result.pop("modules"):
            shutil.move(str(cap_dir / m["dir"]), str(dest / m["dir"]))
            info = m if keep_raw else {**m, **_compress(dest / m["dir"], drop_cubin)}
            modules.append(info)
    entry = {"name": name, "arch": arch, "description": desc, **result, "modules": modules}
    entry["kernels"] = [k for m in modules for k in m.get("kernels", [])]
    for key in ("mlir_bytes", "ptx_bytes", "mlir_xz_bytes", "ptx_xz_bytes"):
        if all(key in m for m in modules):
            entry[key] = sum(m[key] for m in modules)
    entry["native_parse_s"] = round(sum(m["native_parse_s"] for m in modules), 4)
    entry["worker_wall_s"] = round(wall, 1)
    return entry


def _dir_size(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="captures to regenerate (default: all)")
    ap.add_argument("--out", type=Path, default=HERE, help="root folder (default: corpus/thirdparty)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-timing", dest="timing", action="store_false", help="one compile per capture, no timings")
    ap.add_argument("--keep-cubin", action="store_true", help="keep module.cubin (default: dropped)")
    ap.add_argument("--keep-going", action="store_true", help="record failures in index.json and go on")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        result = worker(args.worker, args.out, args.timing)
        args.result.write_text(json.dumps(result, indent=2) + "\n")
        return 0
    if args.list:
        for n, (arch, desc, _) in CAPTURES.items():
            print(f"{n:32} {arch:8} {desc}")
        return 0

    names = args.names or list(CAPTURES)
    unknown = [n for n in names if n not in CAPTURES]
    if unknown:
        ap.error(f"unknown capture(s): {unknown}; see --list")
    out_root: Path = args.out
    out_root.mkdir(parents=True, exist_ok=True)
    index_path = out_root / "index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {"captures": []}
    by_name = {e["name"]: e for e in index.get("captures", [])}
    failed = []
    for name in names:
        print(f"[regen] {name} ...", file=sys.stderr, flush=True)
        try:
            entry = run_one(name, out_root, args.timing, not args.keep_cubin, keep_raw=False)
        except Exception as exc:
            if not args.keep_going:
                raise
            print(f"[regen] {exc}", file=sys.stderr)
            failed.append(name)
            by_name.pop(name, None)
            index.setdefault("failed", {})[name] = str(exc)[-2000:]
            continue
        index.get("failed", {}).pop(name, None)
        by_name[name] = entry
        print(
            f"[regen] {name}: {len(entry['modules'])} module(s), MLIR {entry.get('mlir_bytes', 0) / 1e6:.2f} MB, "
            f"compile {entry.get('compile_s_without_capture', '-')} s / with capture "
            f"{entry['compile_s_with_capture']} s, parse {entry['native_parse_s']} s",
            file=sys.stderr,
        )
    order = {n: i for i, n in enumerate(CAPTURES)}
    index["captures"] = sorted(by_name.values(), key=lambda e: order.get(e["name"], 99))
    if not index.get("failed"):
        index.pop("failed", None)
    index["note"] = (
        "compile_s_*: summed wall time of every cute.compile call the kernel's own compile path made "
        "(cold = first compile in a fresh process, no capture; with/without capture = the next two, same "
        "process). mlir/ptx bytes are uncompressed. native_parse_s: cutlass._mlir.ir.Module.parse of the "
        "captured text (second parse in a warm context)."
    )
    index_path.write_text(json.dumps(index, indent=2) + "\n")
    (out_root / "versions.json").write_text(json.dumps(package_versions(), indent=2) + "\n")
    print(f"[regen] {out_root}: {_dir_size(out_root) / 1e6:.2f} MB on disk", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
