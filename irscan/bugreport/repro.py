"""A standalone compile-only repro script: the kernel's own source file (its definitions kept, its
top-level compile calls and fake tensors dropped) and one ``cute.compile`` of the recorded host
function with fake tensors of the shapes, strides and dtypes meta.json recorded.  No GPU is needed;
``irscan audit -- python <id>_repro.py`` must report the finding again (``check``)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

from irscan.bugreport.collect import RootCause, function_at
from irscan.bugreport.reduce import Target
from irscan.findings import kernel_key

_DTYPES = {
    "bf16": "BFloat16", "f16": "Float16", "f32": "Float32", "f64": "Float64", "i8": "Int8", "i16": "Int16",
    "i32": "Int32", "i64": "Int64", "u8": "Uint8", "u16": "Uint16", "u32": "Uint32", "u64": "Uint64",
}  # fmt: skip
_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8}
_ALIGN = re.compile(r"align<(\d+)>")
_DIV = re.compile(r"div=(\d+)")
#: top-level calls that make the program's own fake tensors or compile it: the repro makes its own
_DROP_CALLS = {"compile", "make_fake_tensor", "from_dlpack", "make_fake_compact_tensor"}


class NoRepro(Exception):
    """Why no script can be written (the report says it)."""


def _dim(mode: dict[str, Any], key: str) -> str:
    m = mode[key]
    if m["kind"] == "static":
        return str(m["value"])
    div = _DIV.search(str(m.get("text", "")))
    d = f"divisibility={div.group(1)}" if div else ""
    return (
        f"_cute.sym_int64({d})"
        if m.get("width") == 64
        else f"_cute.sym_int32({d})"
        if key == "stride"
        else f"_cute.sym_int({d})"
    )


def fake_arg(arg: dict[str, Any]) -> str:
    """The Python expression of one recorded kernel argument."""
    dtype = arg.get("dtype")
    if dtype is None:
        scalar = _DTYPES.get(str(arg.get("type")))
        if scalar is None:
            raise NoRepro(f"argument {arg.get('index')} is a `{arg.get('type', '?')[:40]}`, not a tensor or a scalar")
        return f"_cutlass.{scalar}(0)"
    if dtype not in _DTYPES or arg.get("space") != "gmem" or "(" in str(arg.get("layout", "")).split(":")[0][1:]:
        raise NoRepro(f"argument {arg.get('index')} has a layout the script cannot rebuild (`{arg.get('layout')}`)")
    modes = arg["modes"]
    shape = ", ".join(_dim(m, "shape") for m in modes)
    stride = ", ".join(_dim(m, "stride") for m in modes)
    align = _ALIGN.search(str(arg.get("type", "")))
    size = _BYTES.get(re.sub(r"\D", "", dtype), 4)
    comma = "," if len(modes) == 1 else ""
    return (
        f"_fake(_cutlass.{_DTYPES[dtype]}, ({shape}{comma}), stride=({stride}{comma}), "
        f"assumed_align={align.group(1) if align else size})"
    )


def _calls(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            out.add(f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "")
    return out


def kept_source(text: str) -> str:
    """The program without its top-level statements that build fake tensors or compile (and without a
    ``__main__`` block): its imports, constants and definitions."""
    tree = ast.parse(text)
    lines = text.split("\n")
    drop: set[int] = set()
    for st in tree.body:
        main = isinstance(st, ast.If) and "__main__" in ast.unparse(st.test)
        if main or (
            not isinstance(st, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)) and _calls(st) & _DROP_CALLS
        ):
            drop.update(range(st.lineno - 1, (st.end_lineno or st.lineno)))
    return "\n".join(ln for i, ln in enumerate(lines) if i not in drop)


def _header(rc: RootCause, fn: str, how: str) -> str:
    """Comment lines, not a docstring: the program's own docstring and ``from __future__`` stay first."""
    f = rc.lead
    w = f.get("wraps_when") or {}
    text = (
        f"Compile-only repro of irscan finding {rc.id} (written by `irscan report`): {f['check']} in "
        f"`{fn}` -> `{kernel_key(str(f['kernel']))}`, {w.get('text', '')}.\n\n{how}  No GPU needed:\n\n"
        f"    irscan audit -- python {rc.id}_repro.py\n"
    )
    return "".join(f"# {ln}".rstrip() + "\n" for ln in text.split("\n")[:-1]) + "\n"


def _recorded_call(rc: RootCause, src_file: Path, node: ast.FunctionDef, text: str) -> str:
    """The program's definitions and one compile of ``node`` with the recorded arguments."""
    params = [a.arg for a in node.args.args]
    args = rc.kernel_meta().get("args", [])
    if len(params) != len(args):
        raise NoRepro(
            f"`{node.name}` takes {len(params)} arguments and the kernel {len(args)}: the recorded ones do not map"
        )
    try:
        fakes = [fake_arg(a) for a in args]
    except (KeyError, TypeError, ValueError, AttributeError):
        raise NoRepro("meta.json's record of the kernel's arguments is incomplete") from None
    how = (
        f"The source is {src_file.name} without its own compile calls; the call below passes fake tensors of the\n"
        "shapes, strides and dtypes the capture recorded."
    )
    tail = [
        "",
        "# --- the recorded call: fake tensors as the capture's meta.json describes the kernel's arguments ---",
        "import cutlass as _cutlass",
        "import cutlass.cute as _cute",
        "from cutlass.cute.runtime import make_fake_tensor as _fake",
        "",
        "_ARGS = [",
        *(f"    {x}," for x in fakes),
        "]",
        f"_cute.compile({node.name}, *_ARGS)",
        "",
    ]
    return _header(rc, node.name, how) + kept_source(text).rstrip("\n") + "\n" + "\n".join(tail)


def _compile_only(text: str) -> bool:
    """A program that compiles with fake tensors of its own and needs nothing else: no torch, no CUDA."""
    return (
        "make_fake_tensor" in text
        and re.search(r"^\s*(?:import|from)\s+(?:torch|cuda|numpy)\b", text, re.M) is None
        and re.search(r"^\S.*\bcompile\(", text, re.M) is not None
    )


def build(rc: RootCause) -> tuple[str, str]:
    """The script's text and how it was made; raises NoRepro with the reason when there can be none.

    First choice: the recorded call (fake tensors from meta.json).  When the host function's arguments
    do not map onto the kernel's (it builds the kernel's arguments itself) and the program is itself
    compile-only, the script is the program as it is, its own fake tensors included."""
    km = rc.kernel_meta()
    src_file = Path(km.get("file") or "")
    if not km.get("file") or not src_file.is_file():
        raise NoRepro("the kernel's source file is not on this machine")
    jit = next((j for j in (rc.meta or {}).get("jit_functions", []) if j.get("file") == km["file"]), None)
    node = function_at(src_file, int(jit["line"])) if jit else None
    if node is None:
        raise NoRepro("no host @cute.jit function of the kernel's file was recorded")
    text = src_file.read_text()
    try:
        return _recorded_call(rc, src_file, node, text), "Fake tensors of the recorded shapes, strides and dtypes."
    except SyntaxError as exc:
        raise NoRepro(f"{src_file} does not parse ({exc.msg})") from None
    except NoRepro as exc:
        if not _compile_only(text):
            raise
        how = f"{src_file.name} as it is: it compiles with fake tensors of its own ({exc})."
        return _header(rc, node.name, how) + text, f"The program itself, compile-only ({exc})."


def check(script: Path, target: Target, python: Path | None = None) -> tuple[bool, str]:
    """``irscan audit`` of the script in a fresh process (``python``: another release's venv); whether it
    reports ``target`` again."""
    from irscan.bugreport.matrix import audit_json

    doc = audit_json(python or Path(sys.executable), script)
    if doc is None:
        return False, "`irscan audit` of it gave no report"
    found = doc.get("findings", []) + doc.get("rule_suppressed", [])
    if any(target.matches(x) for x in found):
        return True, ""
    status = doc.get("program", {}).get("exit_status")
    return False, f"The audit (program exit {status}) reports {len(doc.get('findings', []))} other finding(s)."
