"""Print a PTX syntax tree (:class:`irscan.frontend.ptx.ast.PtxAst`) back as PTX text.

The output is built from the parse alone (never from the input text), so ``ptxas`` accepting it is
evidence that the parse lost nothing that matters: the tests assemble the printout of every corpus
file.  Layout is normalised (one statement per line, tabs for nesting, ``[%rd+-4]`` for negative
displacements); immediates keep their spelling.
"""

from __future__ import annotations

from typing import Any

from irscan.frontend.ptx.ast import (
    Addr,
    AddressSize,
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


def operand_text(o: Any) -> str:
    t = type(o)
    if t is str:
        return o
    if t is Imm:
        return o.text
    if t is Addr:
        s = operand_text(o.base)
        if o.disp:
            s += f"+{o.disp}"
        for x in o.extra:
            s += ", " + operand_text(x)
        return f"[{s}]"
    if t is Vec:
        return "{" + ", ".join(operand_text(x) for x in o.elems) + "}"
    if t is Dual:
        return f"{o.a}|{o.b}"
    if t is Neg:
        return "!" + o.name
    if t is Paren:
        return "(" + ", ".join(operand_text(x) for x in o.elems) + ")"
    if t is SymOff:
        return f"{o.name}+{o.off}"
    raise TypeError(f"not a PTX operand: {o!r}")


def instr_text(i: Instr) -> str:
    head = f"@{i.pred} " if i.pred else ""
    if i.operands:
        return f"{head}{i.opcode} " + ", ".join(operand_text(o) for o in i.operands) + ";"
    return f"{head}{i.opcode};"


def _init_text(v: Any) -> str:
    if isinstance(v, list):
        return "{" + ", ".join(_init_text(x) for x in v) + "}"
    return str(v)


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
    ind = "\t" * depth
    t = type(st)
    if t is Instr:
        out.append(ind + instr_text(st))
    elif t is LocDir:
        out.append(ind + _loc_text(st))
    elif t is Label:
        out.append(f"{st.name}:")
    elif t is Scope:
        out.append(ind + "{")
        for x in st.body:
            _stmt_lines(x, depth + 1, out)
        out.append(ind + "}")
    else:
        out.extend(ind + line for line in _item_lines(st))


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
