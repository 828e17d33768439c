"""One kernel launch's guard, written as Python source and compiled once per kernel.

A check of a few affine forms must cost about a microsecond a launch (patch-and-guard.md), which an
interpreter walking the condition trees does not reach; straight Python over locals does.  The
generated function takes the call's positional arguments and returns the index of the first
condition this launch breaks, or None.  Each node becomes a pair of locals ``(lo, hi)``: the leaves
are exact (fields, scalars) or launch intervals (``ctaid.x`` in ``[0, grid.x - 1]``); sums and
products are interval arithmetic, exact for the sums of independent inputs these forms are.

The same prelude also yields every named input's value (``explain``): only on the slow path, to
word a WrapError.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from irscan.analysis.intervals import Interval, bitwise
from irscan.checks.conditions import (
    Condition,
    Extent,
    Field,
    Known,
    Lin,
    Node,
    Product,
    Select,
    Sreg,
    field_of,
    inputs,
)
from irscan.guarding.host import HostLaunch, field_source, program_for
from irscan.guarding.values import dims
from irscan.ir import Kind

#: what a check returns for a call it cannot bind (not as many positional arguments as the host function has)
UNBOUND = -1


@dataclass
class Span:
    """Byte-span preflight: tensor ``param`` (a kernel parameter) is reached by 32-bit index arithmetic
    that the launch cannot bound; refuse once its span passes ``limit`` bytes."""

    param: int
    limit: int
    condition: Condition
    name: str  # the tensor as the user names it


@dataclass
class Compiled:
    check: Callable[[tuple[Any, ...]], int | None]
    explain: Callable[[tuple[Any, ...]], dict[str, int]]
    source: str
    names: dict[int, list[str]] = field(default_factory=dict)  # condition index -> inputs it names


class _Writer:
    def __init__(
        self,
        launch: HostLaunch,
        names: tuple[str, ...],
        host_meta: dict[int, dict[str, Any]],
        kernel_paths: dict[tuple[int, str, int], tuple[int, ...]],
    ):
        self.launch, self.names, self.host_meta, self.kernel_paths = launch, names, host_meta, kernel_paths
        self.emitted: set[int] = set()  # host ops already computed into h<id>
        self.lines: list[str] = []
        self.memo: dict[Node, tuple[str, str]] = {}
        self.used_args: set[int] = set()
        self.leaves: dict[str, str] = {}  # display name -> local holding its value
        self.n = 0

    def fresh(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def arg_field(self, f: Field) -> str:
        j = self.launch.params[f.param] if f.param < len(self.launch.params) else None
        if j is None:
            expr = self.host_built(f)
        else:
            self.used_args.add(j)
            expr = f"_int(a{j})" if f.part == "scalar" else f"{'sh' if f.part == 'shape' else 'st'}{j}[{f.mode}]"
        self.leaves.setdefault(f.name(self.names), expr)
        return expr

    def host_built(self, f: Field) -> str:
        """A field of a struct the host builds for the kernel: the host's own value for it."""
        path = () if f.part == "scalar" else self.kernel_paths.get((f.param, f.part, f.mode))
        src = field_source(self.launch, f.param, path) if path is not None else None
        if isinstance(src, tuple):
            return _host_field(self, *src)
        if src is None:
            raise _NotBindable(f"kernel parameter {f.param} is computed on the host")
        order, why = program_for(self.launch.graph, [src])
        if why:
            raise _NotBindable(f"kernel parameter {f.param}: {why}")
        self.lines += _host_lines(self, [n for n in order if n not in self.emitted])
        return f"h{src}"

    def node(self, nd: Node) -> tuple[str, str]:
        """Locals (or literals) holding ``nd``'s lower and upper bound; one name twice for a point."""
        if nd in self.memo:
            return self.memo[nd]
        v = self.fresh()
        lo, hi = f"{v}l", f"{v}h"
        if isinstance(nd, Field):
            lo = hi = v
            self.lines.append(f"{v} = {self.arg_field(nd)}")
        elif isinstance(nd, Sreg):
            dim = f"{'g' if nd.base.endswith('ctaid') else 'b'}{nd.axis}"
            self.leaves.setdefault(f"{'grid' if dim[0] == 'g' else 'block'}.{'xyz'[nd.axis]}", dim)
            if nd.base.startswith("n"):
                lo = hi = dim
            else:
                lo = "0"
                self.lines.append(f"{hi} = {dim} - 1")
        elif isinstance(nd, Known):
            lo, hi = str(nd.lo), str(nd.hi)
        elif isinstance(nd, Extent):
            e = self.arg_field(nd.extent) if isinstance(nd.extent, Field) else str(nd.extent)
            lo = "0"
            self.lines.append(f"{hi} = {e} - 1")
        elif isinstance(nd, Product):
            self.lines.append(_product(lo, hi, self.lin(nd.a), self.lin(nd.b)))
        elif isinstance(nd, Select):
            (al, ah), (bl, bh) = self.lin(nd.a), self.lin(nd.b)
            self.lines.append(f"{lo} = min({al}, {bl}); {hi} = max({ah}, {bh})")
        else:
            (al, ah), (bl, bh) = self.lin(nd.a), self.lin(nd.b)
            self.lines.append(
                f"{lo}, {hi} = _bitwise(_K[{nd.kind.name!r}], {al}, {ah}, {bl}, {bh}, {nd.width}, {nd.signed!r})"
            )
        self.memo[nd] = (lo, hi)
        return lo, hi

    def lin(self, x: Lin) -> tuple[str, str]:
        los, his = [str(x.const)] if x.const else [], [str(x.const)] if x.const else []
        for nd, c in x.terms:
            lo, hi = self.node(nd)
            a, b = (lo, hi) if c > 0 else (hi, lo)
            if a != "0":
                los.append(a if c == 1 else f"{c} * {a}")
            if b != "0":
                his.append(b if c == 1 else f"{c} * {b}")
        lo_e, hi_e = " + ".join(los) or "0", " + ".join(his) or "0"
        if all(e.isidentifier() or e.lstrip("-").isdigit() for e in (lo_e, hi_e)):
            return lo_e, hi_e  # a single local or literal each: nothing to compute
        v = self.fresh()
        if lo_e == hi_e:
            self.lines.append(f"{v} = {lo_e}")
            return v, v
        self.lines.append(f"{v}l = {lo_e}; {v}h = {hi_e}")
        return f"{v}l", f"{v}h"


def _product(lo: str, hi: str, a: tuple[str, str], b: tuple[str, str]) -> str:
    """Interval product, shortest form: a point times an interval that starts at 0 (``stride *
    ctaid.x``) is one multiply; the general case takes the corners."""
    (al, ah), (bl, bh) = a, b
    if al == ah and bl == "0":
        a, b = b, a
        (al, ah), (bl, bh) = a, b
    if bl == bh and al == "0":
        return f"{hi} = {ah} * {bl}; {lo} = {hi} if {hi} < 0 else 0; {hi} = {hi} if {hi} > 0 else 0"
    if al == ah and bl == bh:
        return f"{lo} = {hi} = {al} * {bl}"
    p = ", ".join(f"{x} * {y}" for x in (al, ah) for y in (bl, bh))
    return f"{lo} = min({p}); {hi} = max({p})"


class _NotBindable(Exception):
    pass


def _bitwise(k: Kind, al: int, ah: int, bl: int, bh: int, w: int, signed: bool | None) -> tuple[int, int]:
    iv = bitwise(k, Interval(al, ah), Interval(bl, bh), w, signed)
    return iv.lo, iv.hi


def _host_lines(w: _Writer, program: list[int]) -> list[str]:
    """Host ops (the grid, a host-built field), op by op, at the ops' own widths."""
    gr, out = w.launch.graph, []
    for n in program:
        w.emitted.add(n)
        op = gr.op(n)
        if op.kind is Kind.ARG and op.width not in (32, 64):
            continue  # a tensor's struct: read through its fields (EXTRACT)
        ops = [f"h{d[0]}" if len(d := gr.defs(n, s)) == 1 else str(op.operands[s]) for s in range(len(op.operands))]
        out.append(f"h{n} = {_host_expr(w, n, ops)}")
    return out


_ARITH = {Kind.ADD: "+", Kind.SUB: "-", Kind.MUL: "*", Kind.AND: "&", Kind.OR: "|", Kind.XOR: "^", Kind.SHL: "<<"}
_CMP = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
        "ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}  # fmt: skip


def _host_expr(w: _Writer, n: int, ops: list[str]) -> str:  # noqa: C901 (one arm per op kind)
    gr = w.launch.graph
    op = gr.op(n)
    k, width = op.kind, op.width or 64
    if k is Kind.CONST:
        return str(int(op.attrs.get("value", 0)))
    if k is Kind.ARG:  # a scalar parameter, used whole
        j = int(op.attrs.get("param", -1))
        w.used_args.add(j)
        return f"_int(a{j})"
    if k is Kind.EXTRACT:
        root = gr.op(gr.defs(n, 0)[0])
        return _host_field(w, int(root.attrs.get("param", -1)), tuple(op.attrs.get("path", ())))
    if k in (Kind.MOV, Kind.SEXT, Kind.TRUNC):
        return f"_wrap({ops[0]}, {width})"
    if k is Kind.ZEXT:
        return f"({ops[0]} & {(1 << (op.src_width or 32)) - 1})"
    if k is Kind.NEG:
        return f"_wrap(-{ops[0]}, {width})"
    if k in _ARITH:
        return f"_wrap({ops[0]} {_ARITH[k]} {ops[1]}, {width})"
    if k in (Kind.DIV, Kind.REM):
        fn = (
            ("_sdiv" if k is Kind.DIV else "_srem")
            if op.signed is not False
            else ("_udiv" if k is Kind.DIV else "_urem")
        )
        return f"{fn}({ops[0]}, {ops[1]}, {width})"
    if k in (Kind.LSHR, Kind.ASHR):
        a = ops[0] if k is Kind.ASHR else f"({ops[0]} & {(1 << width) - 1})"
        return f"_wrap({a} >> {ops[1]}, {width})"
    if k in (Kind.MIN, Kind.MAX):
        return f"{k.value}({ops[0]}, {ops[1]})"
    if k is Kind.SELECT:
        return f"({ops[1]} if {ops[0]} else {ops[2]})"
    if k is Kind.ICMP:
        pred = str(op.attrs.get("pred", "eq"))
        a, b = ops
        if pred.startswith("u"):
            m = (1 << (op.width if op.width > 1 else 64)) - 1
            a, b = f"({a} & {m})", f"({b} & {m})"
        return f"int({a} {_CMP.get(pred, '==')} {b})"
    raise _NotBindable(f"host op {op.name}")


def _host_field(w: _Writer, j: int, path: tuple[int, ...]) -> str:
    """Host parameter ``j``'s field at ``path``, named by the layout of the kernel parameter it is
    passed to (the struct holds only the dynamic modes: without that layout, which mode a field is
    cannot be told)."""
    if j not in w.host_meta:
        raise _NotBindable(f"the layout of host argument {j} is not known (it reaches no kernel parameter as it is)")
    f = field_of(w.launch.graph.fn.params, j, path, w.host_meta[j])
    if f is None or f.part == "scalar":
        raise _NotBindable(f"host parameter {j} field {path}")
    w.used_args.add(j)
    return f"{'sh' if f.part == 'shape' else 'st'}{j}[{f.mode}]"


def _int(x: Any) -> int:
    """A scalar argument as the DSL passes it (a Python int, or the DSL's Int32 and friends)."""
    return x if type(x) is int else int(x)


def _wrap(x: int, w: int) -> int:
    x &= (1 << w) - 1
    return x - (1 << w) if w > 1 and x >> (w - 1) else x


def _sdiv(a: int, b: int, w: int) -> int:
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return _wrap(q if (a >= 0) == (b > 0) else -q, w)


def _srem(a: int, b: int, w: int) -> int:
    return _wrap(a - _sdiv(a, b, w) * b, w) if b else 0


def _udiv(a: int, b: int, w: int) -> int:
    m = (1 << w) - 1
    return (a & m) // (b & m) if b & m else 0


def _urem(a: int, b: int, w: int) -> int:
    m = (1 << w) - 1
    return (a & m) % (b & m) if b & m else 0


def compile_guard(
    launch: HostLaunch,
    conds: list[Condition],
    spans: list[Span],
    names: tuple[str, ...],
    n_args: int,
    host_meta: dict[int, dict[str, Any]],
    kernel_paths: dict[tuple[int, str, int], tuple[int, ...]] | None = None,
) -> tuple[Compiled | None, list[str]]:
    """The guard of one launch, and the reasons of conditions left out (not bindable at launch).

    The check returns the index of the first condition the call breaks, None, or :data:`UNBOUND`."""
    w = _Writer(launch, names, host_meta, kernel_paths or {})
    try:
        calc = _host_lines(w, w.launch.program)
    except _NotBindable as e:
        return None, [f"the grid cannot be evaluated from the host code ({e})"]
    gb = [f"h{x}" for x in launch.grid] + [f"h{x}" for x in launch.block]
    calc.append(f"g0, g1, g2, b0, b1, b2 = {', '.join(gb)}")
    checks = list(calc)
    skipped: list[str] = []
    names_of: dict[int, list[str]] = {}
    leaves = {f"{p}.{a}": f"{p[0]}{i}" for p in ("grid", "block") for i, a in enumerate("xyz")}
    for i, c in enumerate(conds):
        w.lines, w.leaves = [], {}
        try:
            lo, hi = w.lin(c.value)
        except _NotBindable as e:
            skipped.append(f"{c.file}:{c.line}: {e}")
            continue
        calc += [*w.lines, f"r{i} = {hi} if {hi} > {c.hi} or {lo} >= {c.lo} else {lo}"]
        checks += [*w.lines, f"if {hi} > {c.hi} or {lo} < {c.lo}: return {i}"]
        leaves[f"#{i}"] = f"r{i}"
        names_of[i] = inputs(c.value, names)
        leaves.update(w.leaves)
    for i, s in enumerate(spans, start=len(conds)):
        j = launch.params[s.param] if s.param < len(launch.params) else None
        if j is not None:
            w.used_args.add(j)
            checks.append(f"if _span(sh{j}, st{j}, 1) > {s.limit}: return {i}")
            leaves[f"#{i}"] = f"_span(sh{j}, st{j}, 1)"
            leaves[f"{s.name} bytes"] = f"_span(sh{j}, st{j}, it{j})"
            names_of[i] = [f"{s.name} bytes"]
    prelude = [f"if len(args) != {n_args}: return {UNBOUND}"]
    for j in sorted(w.used_args):
        prelude.append(f"a{j} = args[{j}]; sh{j}, st{j}, it{j} = _dims(a{j})")
    ret = "return {" + ", ".join(f"{k!r}: {v}" for k, v in leaves.items()) + "}"
    src = _function("check", [*prelude, *checks, "return None"]) + _function("explain", [*prelude, *calc, ret])
    ns: dict[str, Any] = {"_dims": dims, "_wrap": _wrap, "_sdiv": _sdiv, "_srem": _srem, "_udiv": _udiv, "_urem": _urem,
                          "_int": _int, "_bitwise": _bitwise, "_K": Kind.__members__, "_span": span_bytes}  # fmt: skip
    exec(compile(src, f"<irscan guard {launch.kernel}>", "exec"), ns)  # noqa: S102 (our own generated code)
    return Compiled(ns["check"], ns["explain"], src, names_of), skipped


def _function(name: str, lines: list[str]) -> str:
    return f"def {name}(args):\n" + "".join(f"    {x}\n" for x in lines)


def span_bytes(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> int:
    """The bytes between a tensor's first and last element, plus one element."""
    if any(s == 0 for s in shape):
        return 0
    return (sum((n - 1) * abs(s) for n, s in zip(shape, strides, strict=False)) + 1) * itemsize
