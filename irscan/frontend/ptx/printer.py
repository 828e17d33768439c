"""Print a PTX syntax tree (:class:`irscan.frontend.ptx.ast.PtxAst`) back as PTX text.

The output is built from the parse alone (never from the input text), so ``ptxas`` accepting it is
evidence that the parse lost nothing that matters: the tests assemble the printout of every corpus
file.  Layout is normalised (one statement per line, tabs for nesting up to 16 levels, ``[%rd+-4]``
for negative displacements); immediates keep their spelling.  Printing is linear in the tree's size.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from irscan.frontend.ptx.ast import (
    Addr,
    AddressSize,
    AstOperand,
    DeclName,
    Dual,
    FileDir,
    Func,
    Generic,
    Imm,
    Instr,
    Label,
    LocDir,
    Neg,
    Paren,
    Pragma,
    PtxAst,
    Scope,
    Section,
    SymOff,
    Target,
    VarDecl,
    Vec,
    Version,
)


def operand_text(o: AstOperand) -> str:
    """One operand as PTX (operands nest at most three levels, so this recursion is bounded)."""
    if isinstance(o, str):
        return o
    if isinstance(o, Imm):
        return o.text
    if isinstance(o, Addr):
        s = operand_text(o.base)
        if o.disp:
            s += f"+{o.disp}"
        for x in o.extra:
            s += ", " + operand_text(x)
        return f"[{s}]"
    if isinstance(o, Vec):
        return "{" + ", ".join(operand_text(x) for x in o.elems) + "}"
    if isinstance(o, Dual):
        return f"{o.a}|{o.b}"
    if isinstance(o, Neg):
        return "!" + o.name
    if isinstance(o, Paren):
        return "(" + ", ".join(operand_text(x) for x in o.elems) + ")"
    if isinstance(o, SymOff):
        return f"{o.name}+{o.off}"
    raise TypeError(f"not a PTX operand: {o!r}")


def instr_text(i: Instr) -> str:
    head = f"@{i.pred} " if i.pred else ""
    if i.operands:
        return f"{head}{i.opcode} " + ", ".join(operand_text(o) for o in i.operands) + ";"
    return f"{head}{i.opcode};"


def _init_text(v: Any) -> str:
    """An initialiser (a string, or a list of them nested to any depth) as PTX, without recursion."""
    out: list[str] = []
    stack: list[Any] = [v]  # values to print, and "," / "}" still to write
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            out.append("{")
            stack.append(_CLOSE)
            for k in range(len(x) - 1, -1, -1):
                stack.append(x[k])
                if k:
                    stack.append(_COMMA)
        elif x is _CLOSE:
            out.append("}")
        elif x is _COMMA:
            out.append(", ")
        else:
            out.append(str(x))
    return "".join(out)


_CLOSE, _COMMA = object(), object()


def _decl_name(n: DeclName) -> str:
    s = n.name
    if n.range is not None:
        s += f"<{n.range}>"
    s += "".join(f"[{'' if d is None else d}]" for d in n.dims)
    if n.init is not None:
        s += " = " + _init_text(n.init)
    return s


def decl_text(d: VarDecl) -> str:
    return " ".join((*d.linkage, d.space, *d.attrs, ", ".join(_decl_name(n) for n in d.names))) + ";"


def _loc_text(d: LocDir) -> str:
    s = f".loc\t{d.file} {d.line} {d.col}"
    for a in d.extra:
        s += ", " + " ".join(a)
    return s


def _section_text(sec: Section) -> list[str]:
    lines = [f".section\t{sec.name}", "{"]
    cur: list[str] = []
    for t in sec.tokens:
        if (t.startswith(".") or t.endswith(":")) and cur:
            lines.append("\t" + " ".join(cur))
            cur = []
        cur.append(t)
        if t.endswith(":"):
            lines.append(" ".join(cur))
            cur = []
    if cur:
        lines.append("\t" + " ".join(cur))
    lines.append("}")
    return lines


def _stmt_lines(st: Any, depth: int, out: list[str]) -> None:
    """A body statement as lines; nested scopes on an explicit stack (they nest to any depth)."""
    stack: list[tuple[Iterator[Any], int]] = [(iter((st,)), depth)]
    while stack:
        items, d = stack[-1]
        ind = "\t" * min(d, _MAX_INDENT)
        for x in items:
            if isinstance(x, Instr):
                out.append(ind + instr_text(x))
            elif isinstance(x, LocDir):
                out.append(ind + _loc_text(x))
            elif isinstance(x, Label):
                out.append(f"{x.name}:")
            elif isinstance(x, Scope):
                out.append(ind + "{")
                stack.append((iter(x.body), d + 1))
                break
            else:
                out.extend(ind + line for line in _item_lines(x))
        else:
            stack.pop()
            if stack:  # a scope's body ran out: close it at its own depth
                out.append("\t" * min(d - 1, _MAX_INDENT) + "}")


#: deeper scopes are indented no further, so that the printout stays linear in the tree's size
_MAX_INDENT = 16


def _func_lines(f: Func) -> list[str]:
    head = " ".join((*f.linkage, f.kind))
    if f.rets is not None:
        head += " (" + ", ".join(p.text() for p in f.rets) + ")"
    head += " " + f.name
    lines = []
    if f.params is not None:
        if f.params:
            lines.append(head + "(")
            lines.extend("\t" + p.text() + ("," if k + 1 < len(f.params) else "") for k, p in enumerate(f.params))
            lines.append(")")
        else:
            lines.append(head + "()")
    else:
        lines.append(head)
    for name, vals in f.perf:
        lines.append(name + (" " + ", ".join(str(v) for v in vals) if vals else ""))
    if f.body is None:
        lines[-1] += ";"
        return lines
    lines.append("{")
    for st in f.body:
        _stmt_lines(st, 1, lines)
    lines.append("}")
    return lines


def _item_lines(it: Any) -> list[str]:
    t = type(it)
    if t is Version:
        return [f".version {it.text}"]
    if t is Target:
        return [".target " + ", ".join(it.names)]
    if t is AddressSize:
        return [f".address_size {it.size}"]
    if t is FileDir:
        return [f".file\t{it.index} {it.name}" + "".join(f", {x}" for x in it.extra)]
    if t is LocDir:
        return [_loc_text(it)]
    if t is Pragma:
        return [".pragma " + ", ".join(it.strings) + ";"]
    if t is Generic:
        return [" ".join(it.tokens) + ";"]
    if t is Section:
        return _section_text(it)
    if t is VarDecl:
        return [decl_text(it)]
    if t is Func:
        return _func_lines(it)
    if t is Instr or t is Label or t is Scope:
        out: list[str] = []
        _stmt_lines(it, 0, out)
        return out
    raise TypeError(f"not a PTX item: {it!r}")


def print_module(ast: PtxAst) -> str:
    """The whole module as PTX text (ends with a newline)."""
    lines: list[str] = []
    for it in ast.items:
        lines.extend(_item_lines(it))
        if type(it) is Func:
            lines.append("")
    return "\n".join(lines) + "\n"
