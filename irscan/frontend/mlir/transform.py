"""The grammar's transformer: each rule's children (already transformed) -> a record of
:mod:`irscan.frontend.mlir.records`.

It runs inside the LALR parser (``Lark(transformer=...)``): callbacks fire as rules reduce, so no
lark tree is built and nothing recurses on the input's nesting.  Type, attribute and location rules
are in :mod:`irscan.frontend.mlir.transform_types`.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Transformer

from irscan.frontend.mlir.records import AliasDef, Body, RawBlock, RawOp, RawRegion, result_group_error
from irscan.frontend.mlir.transform_types import BadLiteral, TypeAttrRules, _tys, lit_int
from irscan.frontend.mlir.types import Ty, field_type


def _ssa(children: list[Any]) -> list[str]:
    return [c.value for c in children if isinstance(c, Token) and c.type == "SSA_ID"]


class _Succ:
    __slots__ = ("label", "operands", "types")

    def __init__(self, label: str, operands: list[str], types: list[Ty]) -> None:
        self.label, self.operands, self.types = label, operands, types

    def t(self) -> tuple[str, list[str], list[Ty]]:
        return self.label, self.operands, self.types


class _Group:
    """A soup group's SSA names, regions and inner groups, in order."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]) -> None:
        self.items = items


class _Results(tuple[str, ...]):
    __slots__ = ()


class _TLoc:
    __slots__ = ("expr",)

    def __init__(self, expr: str) -> None:
        self.expr = expr


class ToRecords(TypeAttrRules, Transformer[Token, Any]):
    """The whole transformer; ``src`` is the text being parsed (types and attributes slice it)."""

    def __init__(self) -> None:
        super().__init__()
        self.src = ""
        self._lines: list[int] | None = None

    def reset(self, src: str) -> None:
        """Start on a new text."""
        self.src, self._lines = src, None

    # ------------------------------------------------------------------------ structure

    def trailing_loc(self, c: list[Any]) -> _TLoc:
        return _TLoc(c[0])

    def start(self, c: list[Any]) -> list[Any]:
        return c

    def alias_def(self, c: list[Any]) -> AliasDef:
        return AliasDef(c[0].value, c[1], c[0].line)

    def type_alias_def(self, c: list[Any]) -> AliasDef:
        return AliasDef(c[0].value, c[1], c[0].line, is_type=True)

    def results(self, c: list[Any]) -> _Results:
        out: list[str] = []
        for name, n in c:
            if n is None:
                out.append(name)
            else:
                out.extend(f"{name}#{i}" for i in range(n))
        return _Results(out)

    def result(self, c: list[Any]) -> tuple[str, int | None]:
        if len(c) == 1:
            return c[0].value, None
        n = lit_int(c[1])
        line = self.line_length(c[1].line or 1)
        if n > line:
            raise BadLiteral(c[1], result_group_error(n, line))
        return c[0].value, n

    def line_length(self, line: int) -> int:
        """Length of line ``line`` of the source (the line lengths are counted once per parse)."""
        if self._lines is None:
            self._lines = [len(x) for x in self.src.split("\n")]
        return self._lines[line - 1] if 0 < line <= len(self._lines) else 0

    def op(self, c: list[Any]) -> RawOp:
        results: tuple[str, ...] = ()
        loc = None
        body = None
        for x in c:
            if isinstance(x, Body):
                body = x
            elif isinstance(x, _TLoc):
                loc = x.expr
            elif isinstance(x, _Results):
                results = tuple(x)
        assert body is not None
        tok = body.tok
        return RawOp(results, body, loc, (tok.line or 0) if tok else 0, (tok.column or 0) if tok else 0)

    def region(self, c: list[Any]) -> RawRegion:
        entry: list[RawOp] = []
        blocks: list[RawBlock] = []
        for x in c:
            if isinstance(x, RawOp):
                entry.append(x)
            elif isinstance(x, RawBlock):
                blocks.append(x)
        first_line = entry[0].line if entry else (blocks[0].line if blocks else 0)
        return RawRegion([RawBlock("^bb0", [], entry, first_line), *blocks], first_line, 0)

    def block(self, c: list[Any]) -> RawBlock:
        label, args, line = c[0]
        return RawBlock(label, args, [x for x in c[1:] if isinstance(x, RawOp)], line)

    def block_label(self, c: list[Any]) -> tuple[str, list[tuple[str, Ty]], int]:
        return c[0].value, [a for a in c[1:] if isinstance(a, tuple)], c[0].line

    def block_arg(self, c: list[Any]) -> tuple[str, Ty]:
        return c[0].value, c[1]

    # ------------------------------------------------------------------ ops with meaning

    def op_kw(self, c: list[Any]) -> str:
        return str(c[0].value)

    def overflow(self, c: list[Any]) -> frozenset[str]:
        return frozenset(t.value for t in c)

    def gep_flags(self, c: list[Any]) -> frozenset[str]:
        return frozenset(t.value for t in c)

    def gep_index(self, c: list[Any]) -> Token:
        if c[0].type == "INT":
            lit_int(c[0])  # an index too long for an int is an error here, at its token
        tok: Token = c[0]
        return tok

    def mem_mod(self, c: list[Any]) -> tuple[str, str | None]:
        return c[0].value, (c[1].value[1:-1] if len(c) > 1 else None)

    def int_list(self, c: list[Any]) -> tuple[int, ...]:
        return tuple(lit_int(t) for t in c)

    @staticmethod
    def _flags(c: list[Any]) -> frozenset[str]:
        fl: set[str] = set()
        for x in c:
            if isinstance(x, frozenset):
                fl |= x
            elif type(x) is str:
                fl.add(x)
        return frozenset(fl)

    @staticmethod
    def _attrs(c: list[Any]) -> dict[str, Any]:
        for x in c:
            if isinstance(x, dict):
                return x
        return {}

    @staticmethod
    def _mods(c: list[Any]) -> dict[str, Any]:
        mods: dict[str, Any] = {}
        for x in c:
            if isinstance(x, tuple) and len(x) == 2 and type(x[0]) is str:
                mods[x[0]] = x[1] if x[1] is not None else True
            elif type(x) is str:
                mods[x] = True
        return mods

    def arith(self, c: list[Any]) -> Body:
        ty = _tys(c)[-1]
        return Body("arith", c[0].value, c[0], _ssa(c), rtypes=(ty.text,), info={"type": ty, "flags": self._flags(c)})

    def icmp(self, c: list[Any]) -> Body:
        ty = _tys(c)[-1]
        rt = "i1" if ty.kind != "vector" else f"vector<{ty.count}xi1>"
        return Body("icmp", "llvm.icmp", c[0], _ssa(c), rtypes=(rt,), info={"type": ty, "pred": c[1].value[1:-1]})

    def select(self, c: list[Any]) -> Body:
        tys = _tys(c)
        return Body("select", "llvm.select", c[0], _ssa(c), rtypes=(tys[-1].text,), info={"type": tys[-1]})

    def cast(self, c: list[Any]) -> Body:
        src, dst = _tys(c)[-2:]
        return Body(
            "cast",
            c[0].value,
            c[0],
            _ssa(c),
            rtypes=(dst.text,),
            info={"src": src, "dst": dst, "flags": self._flags(c)},
        )

    def extractvalue(self, c: list[Any]) -> Body:
        ty = _tys(c)[-1]
        path = next(x for x in c if type(x) is tuple)
        res = field_type(ty, path)
        return Body(
            "extractvalue",
            "llvm.extractvalue",
            c[0],
            _ssa(c),
            rtypes=(res.text if res else "?",),
            info={"type": ty, "path": path, "res": res},
        )

    def insertvalue(self, c: list[Any]) -> Body:
        ty = _tys(c)[-1]
        path = next(x for x in c if type(x) is tuple)
        return Body(
            "insertvalue", "llvm.insertvalue", c[0], _ssa(c), rtypes=(ty.text,), info={"type": ty, "path": path}
        )

    def gep(self, c: list[Any]) -> Body:
        flags = next((x for x in c if isinstance(x, frozenset)), frozenset())
        toks = [x for x in c if isinstance(x, Token) and x.type in ("SSA_ID", "INT")]
        tys = _tys(c)
        return Body(
            "gep",
            "llvm.getelementptr",
            c[0],
            [t.value for t in toks if t.type == "SSA_ID"],
            rtypes=(tys[-2].text,),
            info={"flags": flags, "indices": toks[1:], "in_types": tys[:-2], "elem": tys[-1]},
        )

    def load(self, c: list[Any]) -> Body:
        ptr, res = _tys(c)[-2:]
        info = {"ptr": ptr, "type": res, "mods": self._mods(c), "attrs": self._attrs(c)}
        return Body("load", "llvm.load", c[0], _ssa(c), rtypes=(res.text,), info=info)

    def store(self, c: list[Any]) -> Body:
        val, ptr = _tys(c)[-2:]
        info = {"ptr": ptr, "type": val, "mods": self._mods(c), "attrs": self._attrs(c)}
        return Body("store", "llvm.store", c[0], _ssa(c), rtypes=(), info=info)

    def atomicrmw(self, c: list[Any]) -> Body:
        ptr, val = _tys(c)[-2:]
        kws = [x for x in c if type(x) is str]
        info = {"ptr": ptr, "type": val, "op": kws[-1] if kws else None, "mods": self._mods(c[1:])}
        return Body("atomicrmw", "llvm.atomicrmw", c[0], _ssa(c), rtypes=(val.text,), info=info)

    def cmpxchg(self, c: list[Any]) -> Body:
        ptr, val = _tys(c)[-2:]
        info = {"ptr": ptr, "type": val, "mods": self._mods(c)}
        return Body("cmpxchg", "llvm.cmpxchg", c[0], _ssa(c), rtypes=(f"!llvm.struct<({val.text}, i1)>",), info=info)

    def constant(self, c: list[Any]) -> Body:
        ty = c[-1]
        return Body("constant", "llvm.mlir.constant", c[0], [], rtypes=(ty.text,), info={"value": c[1], "type": ty})

    def sreg(self, c: list[Any]) -> Body:
        ty = c[-1]
        rng = next((x for x in c[1:] if type(x) is tuple), None)
        return Body("sreg", c[0].value, c[0], [], rtypes=(ty.text,), info={"type": ty, "range": rng})

    def sreg_range(self, c: list[Any]) -> tuple[int, int]:
        return lit_int(c[1]), lit_int(c[2])

    def successor(self, c: list[Any]) -> _Succ:
        return _Succ(c[0].value, _ssa(c[1:]), _tys(c))

    def br(self, c: list[Any]) -> Body:
        return Body("br", "llvm.br", c[0], [], succs=[c[1].t()], rtypes=())

    def cond_br(self, c: list[Any]) -> Body:
        succ = [x.t() for x in c if isinstance(x, _Succ)]
        weights = next((x for x in c if isinstance(x, list)), None)
        return Body("cond_br", "llvm.cond_br", c[0], [c[1].value], succs=succ, rtypes=(), info={"weights": weights})

    def weights(self, c: list[Any]) -> list[int]:
        return list(c[0])

    def switch(self, c: list[Any]) -> Body:
        default = c[3].t()
        cases = next((x for x in c[4:] if isinstance(x, list)), [])
        info = {"type": c[2], "cases": [v for v, _ in cases]}
        return Body(
            "switch", "llvm.switch", c[0], [c[1].value], succs=[default] + [s for _, s in cases], rtypes=(), info=info
        )

    def switch_cases(self, c: list[Any]) -> list[tuple[int, tuple[Any, ...]]]:
        return list(c)

    def switch_case(self, c: list[Any]) -> tuple[int, tuple[Any, ...]]:
        return lit_int(c[0]), c[1].t()

    def ret(self, c: list[Any]) -> Body:
        return Body("ret", "llvm.return", c[0], _ssa(c), rtypes=())

    def minmax(self, c: list[Any]) -> Body:
        ty = _tys(c)[-1]
        return Body("minmax", c[0].value, c[0], _ssa(c), rtypes=(ty.text,), info={"type": ty})

    # -------------------------------------------------------------------------- functions

    def func(self, c: list[Any]) -> Body:
        sym = next(x for x in c if isinstance(x, Token) and x.type == "SYMBOL")
        params: list[tuple[str, Ty]] = []
        variadic = False
        result: Ty | None = None
        attrs: dict[str, Any] = {}
        region = None
        mods = [x for x in c if type(x) is str]
        for x in c:
            if isinstance(x, tuple) and x and x[0] == "args":
                params, variadic = x[1], x[2]
            elif isinstance(x, tuple) and x and x[0] == "result":
                result = x[1]
            elif isinstance(x, tuple) and x and x[0] == "attributes":
                attrs = x[1]
            elif isinstance(x, RawRegion):
                region = x
        name = sym.value[1:]
        if name.startswith('"'):
            name = name[1:-1]
        return Body(
            "func",
            "llvm.func",
            c[0],
            [],
            rtypes=(),
            info={
                "name": name,
                "params": params,
                "variadic": variadic,
                "result": result,
                "attrs": attrs,
                "mods": mods,
            },
            regions=[region] if region is not None else [],
        )

    def func_args(self, c: list[Any]) -> tuple[str, list[tuple[str, Ty]], bool]:
        params = [x for x in c if isinstance(x, tuple)]
        variadic = any(isinstance(x, Token) and x.type == "ELLIPSIS" for x in c)
        return ("args", params, variadic)

    def func_arg(self, c: list[Any]) -> tuple[str, Ty]:
        return c[0].value, c[1]

    def func_arg_type(self, c: list[Any]) -> tuple[str, Ty]:
        return "", c[0]

    def func_result(self, c: list[Any]) -> tuple[str, Ty]:
        return ("result", c[0])

    def func_attributes(self, c: list[Any]) -> tuple[str, dict[str, Any]]:
        return ("attributes", c[0])

    def func_modifier(self, c: list[Any]) -> None:
        return None

    # ------------------------------------------------------------------------------ soup

    def gtop(self, c: list[Any]) -> Any:
        return c[0]

    def gitem(self, c: list[Any]) -> _Group:
        """What soup keeps of a group: its SSA names and regions, and the groups nested in it (kept
        nested: flattening at every level would copy the inner names once per level)."""
        return _Group(
            [x for x in c if isinstance(x, (_Group, RawRegion)) or (isinstance(x, Token) and x.type == "SSA_ID")]
        )

    ginner = gitem

    def _soup(self, tag: str, name: str, tok: Token, c: list[Any]) -> Body:
        operands: list[str] = []
        regions: list[RawRegion] = []
        todo: list[Any] = list(reversed(c))  # in-order walk of the nested groups, on a stack
        while todo:
            y = todo.pop()
            if isinstance(y, _Group):
                todo.extend(reversed(y.items))
            elif isinstance(y, Token):
                operands.append(y.value)
            elif isinstance(y, RawRegion):
                regions.append(y)
        return Body(tag, name, tok, operands, regions=regions)

    def generic(self, c: list[Any]) -> Body:
        return self._soup("generic", c[0].value, c[0], c[1:])

    def generic_form(self, c: list[Any]) -> Body:
        return self._soup("generic", c[0].value[1:-1], c[0], c[1:])
