"""From one compiled module to the guards of its launches: scan each kernel in-process, keep every
candidate's value as a launch-time condition, derive each launch's grid from the host function, and
compile one check per launch.

Works on the LLVM-dialect module text the capture hook holds after the first half of the pipeline
(or a capture folder's module.mlir, for tests and ``irscan guard-explain``) and the capture's kernel
facts (meta.json's ``kernels``): the same inputs a static scan has.
"""

from __future__ import annotations

import ast
import linecache
import textwrap
from dataclasses import dataclass, field
from typing import Any

from irscan import checks
from irscan.analysis import dataflow
from irscan.analysis.params import tensor_fields
from irscan.analysis.ranges import Facts, Ranges
from irscan.checks.base import Candidate, evaluate, widening_points
from irscan.checks.conditions import FIELD_NAME, Condition, Rewriter, accessed_tensor, bind_extents, unbounded
from irscan.checks.explain import explain
from irscan.checks.registry import CHECKS
from irscan.findings import Finding, assign_ids
from irscan.guarding.codegen import Compiled, Span, compile_guard
from irscan.guarding.host import HostLaunch, launches
from irscan.ir import Function, Module


@dataclass
class LaunchGuard:
    """The guard of one ``cuda.launch_ex``: its conditions and the compiled check (None: unguarded)."""

    kernel: str
    conditions: list[Condition]
    spans: list[Span]
    names: tuple[str, ...]  # the kernel's parameters as its Python def names them
    compiled: Compiled | None
    how: str  # "python (host grid)" or why it is not guarded
    findings: list[Finding] = field(default_factory=list)
    params: list[int | None] = field(default_factory=list)  # kernel parameter -> the host argument passed


@dataclass
class ModuleGuard:
    """Everything guarded in one compiled module, by host function (the function the user calls)."""

    launches: list[LaunchGuard] = field(default_factory=list)
    host_params: int = 0

    @property
    def active(self) -> list[LaunchGuard]:
        return [g for g in self.launches if g.compiled is not None and (g.conditions or g.spans)]


def candidates(gr: dataflow.Graph, rg: Ranges, ctx: checks.Context) -> list[tuple[Candidate, Finding]]:
    """Every candidate a check claims, with its finding (not merged per access: each is a condition)."""
    out = []
    for w in widening_points(gr):
        c = evaluate(gr, rg, w)
        check = next((ch for ch in CHECKS if ch.claims(gr, c)), None) if c is not None else None
        if c is not None and check is not None:
            out.append((c, explain(gr, rg, c, check, ctx)))
    return out


def param_names(kernel: dict[str, Any], count: int) -> tuple[str, ...]:
    """The kernel's parameters as its Python ``def`` names them, when they match the IR's one for one
    (a ``self`` dropped); else ``arg0``, ``arg1``, ..."""
    default = tuple(f"arg{i}" for i in range(count))
    file, line = kernel.get("file"), kernel.get("line")
    if not isinstance(file, str) or not isinstance(line, int) or line < 1 or "\0" in file:
        return default  # (a location's file name comes from the IR: it may be anything)
    try:
        lines = linecache.getlines(file)[line - 1 : line + 30]
    except (OSError, ValueError, UnicodeError):
        return default
    fn = _def_at(lines)
    if fn is None:
        return default
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args if a.arg != "self"]
    return tuple(names) if len(names) == count else default


def _def_at(lines: list[str]) -> ast.FunctionDef | None:
    """The ``def`` that starts in ``lines`` (decorators skipped), its signature read by ast."""
    while lines and lines[0].lstrip().startswith("@"):
        lines = lines[1:]
    acc = ""
    for ln in lines:
        acc += ln
        try:
            tree = ast.parse(textwrap.dedent(acc) + "\n    pass\n")
        except SyntaxError:
            continue
        node = tree.body[0] if tree.body else None
        return node if isinstance(node, ast.FunctionDef) else None
    return None


def kernel_conditions(
    module: Module, fn: Function, kernel: dict[str, Any]
) -> tuple[list[Condition], list[Span], tuple[str, ...], list[Finding]]:
    gr = dataflow.build(module, fn, None)
    meta_args = kernel.get("args", [])
    rg = Ranges(gr, Facts.of(fn.attrs, kernel.get("launch")), meta_args)
    own = frozenset({(kernel["file"], kernel["line"])}) if kernel.get("file") and kernel.get("line") else frozenset()
    ctx = checks.Context(fn.name, module.path, kernel.get("file"), kernel.get("line"), own)
    pairs = candidates(gr, rg, ctx)
    assign_ids(f for _, f in pairs)
    names = param_names(kernel, len(fn.params))
    rw = Rewriter(gr, rg, meta_args)
    conds: list[Condition] = []
    spans: list[Span] = []
    seen: set[tuple[Any, ...]] = set()
    for c, f in pairs:
        tensor = accessed_tensor(gr, c.sinks[0])
        value, bound = bind_extents(rw, rw.lin(c.value), tensor)
        key = (value, c.limit, f.file, f.line)
        if key in seen:
            continue
        seen.add(key)
        cond = Condition(value, c.limit.lo, c.limit.hi, fn.name, f.file, f.line, f.id, tensor, bound)
        if not unbounded(value):
            conds.append(cond)
        elif tensor is not None and all((s.param, s.limit) != (tensor, c.limit.hi) for s in spans):
            name = names[tensor] if tensor < len(names) else f"arg{tensor}"
            spans.append(Span(tensor, c.limit.hi, cond, name))  # one per tensor and limit: the first access
    return conds, spans, names, [f for _, f in pairs]


def prepare(
    module: Module, kernels: list[dict[str, Any]], host_args: dict[str, list[dict[str, Any]]] | None = None
) -> dict[str, ModuleGuard]:
    """Guards of every host function of ``module`` that launches a kernel, by host function name.

    ``host_args``: the host functions' arguments with their layouts, read before lowering
    (``capturing.meta.host_signatures``); without them a host argument's fields are named only through a
    kernel parameter it is passed to as it is."""
    by_name = {k["name"]: k for k in kernels}
    kfns = {fn.name: fn for fn in module.functions if fn.kernel and fn.blocks}
    out: dict[str, ModuleGuard] = {}
    cache: dict[str, tuple[list[Condition], list[Span], tuple[str, ...], list[Finding]]] = {}
    for fn in module.functions:
        if fn.kernel or fn.attrs.get("gpu_module") or not fn.blocks:
            continue
        hgr = dataflow.build(module, fn, None)
        found = launches(hgr)
        if not found:
            continue
        mg = ModuleGuard(host_params=len(fn.params))
        for hl in found:
            kfn = kfns.get(hl.kernel)
            if kfn is None:
                continue
            if hl.kernel not in cache:
                cache[hl.kernel] = kernel_conditions(module, kfn, by_name.get(hl.kernel, {}))
            conds, spans, names, findings = cache[hl.kernel]
            hargs = (host_args or {}).get(fn.name, [])
            mg.launches.append(_guard_launch(kfn, hl, conds, spans, names, findings, len(fn.params), by_name, hargs))
        out[fn.name] = mg
    return out


def kernel_paths(kfn: Function, kargs: list[dict[str, Any]]) -> dict[tuple[int, str, int], tuple[int, ...]]:
    """(parameter, "shape"/"stride", mode) -> the field's path in the kernel parameter's struct."""
    out: dict[tuple[int, str, int], tuple[int, ...]] = {}
    for p in kfn.params:
        meta = kargs[p.index] if p.index < len(kargs) else None
        for f in tensor_fields(p.index, p.shape, meta):
            m = FIELD_NAME.search(f.name)
            if m:
                out[(p.index, m.group(1), int(m.group(2)))] = f.path
    return out


def _guard_launch(
    kfn: Function,
    hl: HostLaunch,
    conds: list[Condition],
    spans: list[Span],
    names: tuple[str, ...],
    findings: list[Finding],
    n_args: int,
    by_name: dict[str, dict[str, Any]],
    host_args: list[dict[str, Any]],
) -> LaunchGuard:
    if not conds and not spans:
        return LaunchGuard(hl.kernel, [], [], names, None, "no finding: nothing to check", findings, hl.params)
    if hl.reason:
        return LaunchGuard(hl.kernel, conds, spans, names, None, f"not guarded: {hl.reason}", findings, hl.params)
    kargs = by_name.get(hl.kernel, {}).get("args", [])
    host_meta = {j: kargs[i] for i, j in enumerate(hl.params) if j is not None and i < len(kargs)}
    host_meta |= {j: a for j, a in enumerate(host_args) if isinstance(a, dict) and "modes" in a}
    compiled, skipped = compile_guard(hl, conds, spans, names, n_args, host_meta, kernel_paths(kfn, kargs))
    how = "checked in Python before the launch (grid from the host code)" if compiled else "not guarded"
    if skipped:
        how += "; left out: " + "; ".join(skipped)
    return LaunchGuard(hl.kernel, conds, spans, names, compiled, how, findings, hl.params)
