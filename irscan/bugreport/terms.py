"""A finding in its user's terms: irscan's atoms (``arg1.stride[0]``, ``load(arg2)``, ``ctaid.x``) as the
kernel's Python parameters and CUDA's names (``mdO.stride(0)``, ``mCuSeqlens[...]``, ``blockIdx.x``),
and the wrapping expression evaluated step by step at the witness (the table of a report).

The evaluation is checked against the witness the range analysis computed: a table whose last row is
not the witness's true value is not shown (the report then gives the witness alone)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

_SREG = {"ctaid": "blockIdx", "tid": "threadIdx", "ntid": "blockDim", "nctaid": "gridDim"}
_ATOM = re.compile(
    r"load\((arg\d+)\)|\b(arg\d+)\.(stride|shape)\[(\d+)\]|\b(arg\d+)\b|\b(ctaid|tid|ntid|nctaid)\.([xyz])\b"
)
_STRIDE_INDEX = re.compile(r"\.stride\[(\d+)\]")  # irscan's own spelling left in a sentence
_BYTES = re.compile(r"(\d+) byte\(s\) per unit")


def _param(arg: str, params: list[str]) -> str:
    i = int(arg[3:])
    return params[i] if i < len(params) else arg


def user_terms(expr: str, params: list[str]) -> str:
    """``expr`` with each atom as its user writes it."""

    def sub(m: re.Match[str]) -> str:
        if m.group(1):
            return f"{_param(m.group(1), params)}[...]"
        if m.group(2):
            call = "stride" if m.group(3) == "stride" else "shape"
            return (
                f"{_param(m.group(2), params)}.{call}({m.group(4)})"
                if call == "stride"
                else (f"{_param(m.group(2), params)}.shape[{m.group(4)}]")
            )
        if m.group(5):
            return _param(m.group(5), params)
        return f"{_SREG[m.group(6)]}.{m.group(7)}"

    out = _ATOM.sub(sub, expr).replace(" * ", " × ").replace("*", " × ")
    return _STRIDE_INDEX.sub(r".stride(\1)", out)


def element_bytes(f: dict[str, Any]) -> int | None:
    """Bytes of address per unit of the wrapping value, as rule (c) read it off the access."""
    m = _BYTES.search(str((f.get("memory") or {}).get("why", "")))
    return int(m.group(1)) if m else None


def atom_values(f: dict[str, Any]) -> dict[str, int]:
    """The witness's inputs: the free input at its threshold, a special register at the most the launch
    lets it be (its step's range); inputs with neither stay unknown."""
    w = f.get("wraps_when") or {}
    out: dict[str, int] = {}
    if w.get("input") and w.get("threshold") is not None:
        out[str(w["input"])] = int(w["threshold"])
    for s in f.get("chain", []):
        if s.get("role") != "input" or not s.get("range"):
            continue
        for m in re.finditer(r"\b(ctaid|tid|ntid|nctaid)\.([xyz])\b", str(s.get("text", ""))):
            out.setdefault(f"{m.group(1)}.{m.group(2)}", int(s["range"][1]))
    return out


@dataclass
class Row:
    step: str
    intended: int
    bits32: int
    offset: int | None  # bytes, the 32-bit value extended as the widening does


def _eval(node: ast.expr, values: dict[str, int]) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, values), _eval(node.right, values)
        ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
        if type(node.op) in ops:
            return ops[type(node.op)]
        if isinstance(node.op, (ast.Div, ast.FloorDiv)) and b:
            return a // b
        if isinstance(node.op, ast.RShift):
            return a >> b
        if isinstance(node.op, ast.LShift):
            return a << b
    key = ast.unparse(node)
    if key in values:
        return values[key]
    raise KeyError(key)


def _terms(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_terms(node.left), node.right]
    return [node]


def _wrap(v: int, signed: bool) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if signed and v >= 1 << 31 else v


def witness_rows(f: dict[str, Any], params: list[str]) -> list[Row]:
    """The expression's running sum, one row per term, at the witness; [] when it cannot be evaluated
    or does not land on the witness's true value."""
    wit = f.get("witness") or {}
    try:
        tree = ast.parse(str(f.get("expression", "")), mode="eval").body
    except SyntaxError:
        return []
    values, signed, size = atom_values(f), wit.get("extension") != "zero", element_bytes(f)
    rows, total = [], 0
    try:
        for i, term in enumerate(_terms(tree)):
            total += _eval(term, values)
            text = user_terms(ast.unparse(term), params)
            step = text if i == 0 else f"+ {text}"
            rows.append(Row(step, total, _wrap(total, signed), _wrap(total, signed) * size if size else None))
    except KeyError:
        return []
    return rows if rows and rows[-1].intended == wit.get("true") else []


_CONST_TERM = re.compile(r"(?:(?<=^)|(?<=\+ ))(\d+)(?=$| \+)")
_FACTOR = re.compile(r"(?<![\w.\[])(\d+)\*(?=[a-z(])")


def _static_modes(f: dict[str, Any], args: list[dict[str, Any]], params: list[str]) -> list[tuple[int, int, str]]:
    """(stride, static extent or 0, name) of each static stride other than 1 of the accessed tensor."""
    tensor = str((f.get("memory") or {}).get("tensor") or "")
    out = []
    for a in args:
        if not isinstance(a, dict) or f"arg{a.get('index')}" != tensor:
            continue
        for k, m in enumerate(a.get("modes", [])):
            st, sh = m.get("stride", {}), m.get("shape", {})
            if st.get("kind") == "static" and isinstance(st.get("value"), int) and st["value"] > 1:
                extent = sh["value"] if sh.get("kind") == "static" and isinstance(sh.get("value"), int) else 0
                out.append((int(st["value"]), extent, f"{_param(tensor, params)}.stride({k})"))
    return out


def static_strides(f: dict[str, Any], args: list[dict[str, Any]], params: list[str]) -> dict[int, str]:
    """The accessed tensor's static strides (other than 1) by value: ``{9728: "mdO.stride(0)"}``, so that a
    constant factor of the expression can be named as the stride it is."""
    out: dict[int, str] = {}
    for stride, _, name in _static_modes(f, args, params):
        out.setdefault(stride, name)
    return out


def name_offsets(expr: str, f: dict[str, Any], args: list[dict[str, Any]], params: list[str]) -> str:
    """A constant term that is a coordinate times a static stride, the coordinate inside that mode's
    static extent (a Constexpr index: ``layer = 30`` folded into ``2123366400``), as ``30*w.stride(0)``:
    the largest such stride, so the reading is the one a layout gives."""
    modes = sorted(_static_modes(f, args, params), reverse=True)

    def sub(m: re.Match[str]) -> str:
        v = int(m.group(1))
        for stride, extent, name in modes:
            if v % stride == 0 and 0 < v // stride < extent:
                return f"{v // stride}*{name}"
        return m.group(0)

    return _CONST_TERM.sub(sub, expr)


def name_strides(expr: str, strides: dict[int, str]) -> str:
    """``9728*load(arg2)`` -> ``mdO.stride(0)*load(arg2)`` where 9728 is that static stride."""
    return _FACTOR.sub(lambda m: f"{strides[int(m.group(1))]}*" if int(m.group(1)) in strides else m.group(0), expr)
