"""lark's parse tree (``grammars/ptx.lark``) -> the syntax tree of :mod:`irscan.frontend.ptx.ast`.

The grammar gives shape, this gives the plain data both parsers must agree on: tokens become strings
and :class:`~irscan.frontend.ptx.ast.Imm`, positions become file lines (a statement handed over by the
fast path starts at its own line and column), and an integer literal out of range becomes an
:class:`irscan.ir.IRSyntaxError` at the literal.  No lark object survives in the result.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from irscan.frontend.ptx.ast import (
    Addr,
    AddressSize,
    AddrExtra,
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
    ParamDecl,
    Paren,
    Pragma,
    Scope,
    Section,
    SymOff,
    Target,
    VarDecl,
    Vec,
    VecElem,
    Version,
)
from irscan.frontend.ptx.lexical import Bail, int_value, one_line
from irscan.ir import IRSyntaxError

if TYPE_CHECKING:
    from lark import Token, Tree


def shift_pos(line: int, col: int, line0: int, col0: int) -> tuple[int, int]:
    """A position in a statement's text -> its position in the file (the text starts at line0:col0)."""
    return line0 + line - 1, (col0 + col - 1 if line == 1 else col)


def shown(tok: str) -> str:
    """A token as an error message quotes it: a megabyte-long token is cut."""
    return repr(tok) if len(tok) <= 40 else f"{tok[:32]!r}... ({len(tok)} characters)"


class ToAst:
    """lark tree -> syntax tree.  One instance per parse: it knows the text and where it starts in the file.

    What nests to any depth in the grammar (scopes in bodies, initialisers) is converted with explicit
    stacks, never by recursion, so a deep input cannot exhaust Python's stack.  Operands nest at most
    three levels (``[tmap, {%r1, %r2}]``; the grammar allows no parentheses in parentheses), so
    converting them recursively is bounded."""

    def __init__(self, text: str, path: str, line0: int = 1, col0: int = 1) -> None:
        self.text, self.path, self.line0, self.col0 = text, path, line0, col0
        self.dl = line0 - 1

    # -- dispatch
    def __call__(self, t: Tree[Token] | Token) -> Any:
        from lark import Token

        if isinstance(t, Token):
            return self.token(t)
        return getattr(self, str(t.data))(t)

    def integer(self, t: Tree[Token] | Token) -> int:
        """An integer token's value; out of range (over 64 bits): an error at the token."""
        tok = _token(t)
        try:
            return int_value(str(tok))
        except Bail:
            line, col = shift_pos(tok.line or 1, tok.column or 1, self.line0, self.col0)
            message = f"integer literal {shown(str(t))} out of range"
            raise IRSyntaxError(self.path, line, col, message, ["an integer below 2**64"]) from None

    def token(self, t: Token) -> str | Imm:
        ty = t.type
        if ty in ("INT", "NEGINT"):
            return Imm(str(t), self.integer(t))
        if ty == "FLOAT":
            return Imm(str(t), None)
        return str(t)

    def line(self, t: Tree[Token]) -> int:
        return t.meta.line + self.dl if not t.meta.empty else 0

    def snippet(self, t: Tree[Token]) -> str:
        return one_line(self.text[t.meta.start_pos : t.meta.end_pos].strip())

    # -- module
    def start(self, t: Tree[Token]) -> list[Any]:
        return [x for x in (self(c) for c in t.children) if x is not None]

    def empty(self, t: Tree[Token]) -> None:
        return None

    def version(self, t: Tree[Token]) -> Version:
        return Version(str(t.children[0]), self.line(t))

    def target(self, t: Tree[Token]) -> Target:
        return Target(tuple(str(c) for c in t.children), self.line(t))

    def address_size(self, t: Tree[Token]) -> AddressSize:
        return AddressSize(self.integer(t.children[0]), self.line(t))

    def file_dir(self, t: Tree[Token]) -> FileDir:
        c = t.children
        return FileDir(self.integer(c[0]), str(c[1]), tuple(self.integer(x) for x in c[2:]), self.line(t))

    def loc_dir(self, t: Tree[Token]) -> LocDir:
        c = t.children
        extra = tuple(tuple(str(x) for x in _tree(a).children) for a in c[3:])
        return LocDir(self.integer(c[0]), self.integer(c[1]), self.integer(c[2]), extra, self.line(t))

    def pragma(self, t: Tree[Token]) -> Pragma:
        return Pragma(tuple(str(c) for c in t.children), self.line(t))

    def section(self, t: Tree[Token]) -> Section:
        toks = tuple(str(_tree(c).children[0]) for c in t.children[1:])
        return Section(str(t.children[0]), toks, self.line(t))

    def generic_dir(self, t: Tree[Token]) -> Generic:
        c = t.children
        toks = (str(x.children[0]) for x in c[1:] if isinstance(x, _Tree()) and x.data == "gen_tok")
        return Generic((str(c[0]), *toks), self.line(t))

    # -- declarations
    def module_decl(self, t: Tree[Token]) -> VarDecl:
        link = tuple(str(_tree(c).children[0]) for c in t.children[:-1])
        d = self.var_decl(_tree(t.children[-1]))
        d.linkage = link
        d.line = self.line(t)
        return d

    def var_decl(self, t: Tree[Token]) -> VarDecl:
        c = t.children
        space = str(_tree(c[0]).children[0])
        attrs: list[str] = []
        names = []
        for x in map(_tree, c[1:]):
            if x.data == "decl_attr":
                attrs.extend(str(y) for y in x.children)
            else:
                names.append(self.decl_name(x))
        return VarDecl(space, tuple(attrs), tuple(names), (), self.line(t))

    def decl_name(self, t: Tree[Token]) -> DeclName:
        name = str(t.children[0])
        rng: int | None = None
        dims: list[int | None] = []
        init: Any = None
        for x in map(_tree, t.children[1:]):
            if x.data == "reg_range":
                rng = self.integer(x.children[0])
            elif x.data == "dim":
                dims.append(self.integer(x.children[0]) if x.children else None)
            elif x.data == "init":
                init = self.ival(x.children[0])
        return DeclName(name, rng, tuple(dims), init)

    def ival(self, t: Tree[Token] | Token) -> str | list[Any]:
        """An initialiser: ``{...}`` -> list, an expression -> its text (``generic(g)``, ``a + 4``).

        Post-order with an explicit stack: ``{{{1}}}`` and ``generic(generic(...))`` nest to any depth."""
        from lark import Tree

        if not isinstance(t, Tree):
            return str(t)
        stack: list[tuple[Tree[Token], list[Any]]] = [(t, [])]
        while True:
            node, vals = stack[-1]
            if len(vals) < len(node.children):
                c = node.children[len(vals)]
                if isinstance(c, Tree):
                    stack.append((c, []))
                else:
                    vals.append(str(c))
                continue
            stack.pop()
            v: str | list[Any]
            if node.data == "ilist":
                v = vals
            elif node.data == "call_expr":
                v = f"{vals[0]}({vals[1]})"
            else:  # iexpr
                v = " ".join(vals)
            if not stack:
                return v
            stack[-1][1].append(v)

    # -- functions
    def func(self, t: Tree[Token]) -> Func:
        f = self.func_header(_tree(t.children[0]))
        if len(t.children) > 1:
            f.body = self.body(_tree(t.children[1]))
        return f

    def func_header(self, t: Tree[Token]) -> Func:
        link: list[str] = []
        kind, name = "", ""
        rets: tuple[ParamDecl, ...] | None = None
        params: tuple[ParamDecl, ...] | None = None
        perf: list[tuple[str, tuple[int, ...]]] = []
        for x in t.children:
            if not isinstance(x, _Tree()):
                name = str(x)
            elif x.data == "linkage":
                link.append(str(x.children[0]))
            elif x.data == "func_kind":
                kind = str(x.children[0])
            elif x.data == "ret_params":
                rets = tuple(self.param(_tree(p)) for p in x.children)
            elif x.data == "params":
                params = tuple(self.param(_tree(p)) for p in x.children)
            elif x.data == "perf":
                perf.append((str(_tree(x.children[0]).children[0]), tuple(self.integer(v) for v in x.children[1:])))
        return Func(kind, name, params, rets, tuple(link), tuple(perf), None, self.line(t))

    def param(self, t: Tree[Token]) -> ParamDecl:
        space = str(_tree(t.children[0]).children[0])
        attrs: list[str] = []
        name = ""
        dims: list[int | None] = []
        for x in t.children[1:]:
            if not isinstance(x, _Tree()):
                name = str(x)
            elif x.data == "decl_attr":
                attrs.extend(str(y) for y in x.children)
            else:
                dims.append(self.integer(x.children[0]) if x.children else None)
        return ParamDecl(space, tuple(attrs), name, tuple(dims))

    def body(self, t: Tree[Token]) -> list[Any]:
        """A body's statements; nested ``{ }`` scopes with an explicit stack (any depth, no recursion)."""
        from lark import Tree

        out: list[Any] = []
        stack = [(iter(t.children), out)]
        while stack:
            children, cur = stack[-1]
            for c in children:
                if isinstance(c, Tree) and c.data == "scope":
                    sc = Scope([], self.line(c))
                    cur.append(sc)
                    stack.append((iter(c.children), sc.body))
                    break
                x = self(c)
                if x is not None:
                    cur.append(x)
            else:
                stack.pop()
        return out

    def scope(self, t: Tree[Token]) -> Scope:
        return Scope(self.body(t), self.line(t))

    def label(self, t: Tree[Token]) -> Label:
        s = str(t.children[0])
        return Label(s[: s.index(":")].rstrip(), self.line(t))

    # -- instructions
    def instr(self, t: Tree[Token]) -> Instr:
        c = t.children
        pred = None
        i = 0
        if isinstance(c[0], _Tree()):  # guard
            pred = "".join(str(x) for x in c[0].children)
            i = 1
        opcode = str(c[i])
        ops = tuple(self.operand(x) for x in c[i + 1 :])
        return Instr(opcode, ops, pred, self.line(t), self.snippet(t))

    def operand(self, t: Tree[Token] | Token) -> AstOperand:
        if not isinstance(t, _Tree()):
            return self.token(_token(t))
        d, c = t.data, t.children
        if d == "address":
            base = self.token(_token(c[0]))
            disp = 0
            rest = c[1:]
            if rest and isinstance(rest[0], _Tree()) and rest[0].data == "aoff":
                disp = self.integer(rest[0].children[-1])
                rest = rest[1:]
            return Addr(base, disp, tuple(self.addr_extra(x) for x in rest))
        if d == "vector":
            return self.vector(t)
        if d == "dual":
            return Dual(str(c[0]), str(c[1]))
        if d == "neg":
            return Neg(str(c[1]))
        if d == "paren":
            return Paren(tuple(self.operand(x) for x in c))
        if d == "symoff":
            return SymOff(str(c[0]), self.integer(c[1]))
        raise AssertionError(d)

    def vector(self, t: Tree[Token]) -> Vec:
        elems: list[VecElem] = []
        for x in t.children:
            if isinstance(x, _Tree()):  # neg
                elems.append(Neg(str(x.children[1])))
            else:
                elems.append(self.token(_token(x)))
        return Vec(tuple(elems))

    def addr_extra(self, t: Tree[Token] | Token) -> AddrExtra:
        return self.vector(t) if isinstance(t, _Tree()) else self.token(_token(t))


@functools.cache
def _Tree() -> type[Tree[Token]]:  # noqa: N802 (it stands for the class)
    """lark's Tree class, imported on first use (text the fast path handles never loads lark)."""
    from lark import Tree

    return Tree


def _tree(x: Tree[Token] | Token) -> Tree[Token]:
    """A child the grammar guarantees to be a subtree, as one (for the type checker and for bad trees)."""
    if not isinstance(x, _Tree()):
        raise AssertionError(f"expected a subtree, got the token {x!r}")
    return x


def _token(x: Tree[Token] | Token) -> Token:
    """A child the grammar guarantees to be a token, as one."""
    from lark import Token

    if not isinstance(x, Token):
        raise AssertionError(f"expected a token, got the subtree {x.data}")
    return x
