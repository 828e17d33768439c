"""Op templates for the fast path (:mod:`irscan.frontend.mlir.indexer`): an op line with its SSA
names, block labels and integer literals abstracted, so that the grammar parses each distinct
template once; and the spec caches keyed by template, which live as long as the process."""

from __future__ import annotations

import re
from typing import Any

from irscan import ir
from irscan.frontend.mlir import spec_store
from irscan.frontend.mlir.grammar_lazy import grammar
from irscan.frontend.mlir.locations import (
    strip_inline_locs,
)
from irscan.frontend.mlir.records import Body, result_group_error
from irscan.frontend.mlir.semantics import (
    build_spec,
)
from irscan.frontend.mlir.soup import soup_info, soup_rtypes
from irscan.frontend.mlir.spec import Spec
from irscan.frontend.mlir.types import Ty, field_type
from irscan.frontend.text import STRING_P, strip_strings
from irscan.ir import IRSyntaxError


class NeedFullParse(Exception):
    """The indexer met a line it cannot index but that may be valid: the grammar must decide."""


#: ops parsed by the grammar (per template); everything else not listed is indexed generically
_TEMPLATE_OPS = frozenset(
    """llvm.add llvm.sub llvm.mul llvm.shl llvm.lshr llvm.ashr llvm.and llvm.or llvm.xor llvm.sdiv llvm.udiv
    llvm.srem llvm.urem llvm.icmp llvm.select llvm.sext llvm.zext llvm.trunc llvm.ptrtoint llvm.inttoptr
    llvm.addrspacecast llvm.bitcast llvm.getelementptr llvm.load llvm.store llvm.atomicrmw llvm.cmpxchg
    llvm.mlir.constant llvm.br llvm.cond_br llvm.switch llvm.return llvm.intr.smin llvm.intr.smax
    llvm.intr.umin llvm.intr.umax""".split()
)

_REF_NAMES = re.compile(r"[%^][\w$.\-]+(?:#\d+)?")
_REF_OR_STR = re.compile("(" + STRING_P + r")|([%^])[\w$.\-]+(?:#\d+)?")
_BARE_REF_OR_STR = re.compile("(" + STRING_P + r")|([%^])(?![\w$.\-])")
_SSA = re.compile(r"%[\w$.\-]+(?:#\d+)?")
_NAME = re.compile(r"[A-Za-z_][\w$.]*")
_LABEL_REF = re.compile(r"\^[\w$.\-]+")
_REF_SPLIT = re.compile(r"([%^][\w$.\-]+(?:#\d+)?)")
_EXTRACT_HEAD = re.compile(r"llvm\.extractvalue (%[\w$.\-]+(?:#\d+)?)\[([\d, ]+)\] : ")
_INSERT_HEAD = re.compile(r"llvm\.insertvalue (%[\w$.\-]+(?:#\d+)?), (%[\w$.\-]+(?:#\d+)?)\[([\d, ]+)\] : ")
#: first characters of an op line without results (a name, or a generic-form name in quotes)
_OP_START = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"')
#: ops with a grammar rule that the fast regexes above did not take
_OTHER_RULE_OPS = frozenset({"llvm.extractvalue", "llvm.insertvalue", "llvm.func"})
#: generic ops whose spec depends on more than their type list (asm text, callee, shuffle mask, query)
_UNCACHED_GENERIC = frozenset({"llvm.inline_asm", "llvm.call", "llvm.call_intrinsic", "llvm.shufflevector",
                               "nvvm.clusterlaunchcontrol.query.cancel"})  # fmt: skip
_MISSING = object()
#: a character no token of an op can hold (strings blanked): cheap validation of ops the grammar skips
_BAD_CHAR_RE = re.compile(r'[^\w\s%^@#!"<>()\[\]{},:=*?|+\-.$]')
_BAD_DOLLAR_RE = re.compile(r"(?<![\w$.\-])\$")


def _bad_char(sb: str) -> bool:
    return _BAD_CHAR_RE.search(sb) is not None or ("$" in sb and _BAD_DOLLAR_RE.search(sb) is not None)


_LABEL = re.compile(r"(\^[\w$.\-]+)(\(.*\))?:")


def _results(rtext: str, line: int) -> tuple[str, ...]:
    """``%5`` / ``%5, %6`` / ``%5:2`` -> result names (``%5#0``, ``%5#1`` for a group).

    A group longer than its ``line`` (characters) is refused with a ValueError (the grammar, which
    the caller then runs, says where): see :func:`irscan.frontend.mlir.transform.result_group_error`.
    """
    out: list[str] = []
    for part in rtext.split(","):
        part = part.strip()
        if ":" in part:
            name, n = part.split(":", 1)
            k = int(n) if len(n) <= 20 else line + 1
            if k > line:
                raise ValueError(result_group_error(k, line))
            out.extend(f"{name}#{i}" for i in range(k))
        else:
            out.append(part)
    return tuple(out)


def _number(template: str) -> str:
    """Give the bare ``%`` / ``^`` placeholders of a template their positions: ``%0``, ``^1``, ..."""
    k = -1

    def sub(m: re.Match[str]) -> str:
        nonlocal k
        if m.group(1):
            return m.group(1)
        k += 1
        return f"{m.group(2)}{k}"

    return _BARE_REF_OR_STR.sub(sub, template)


def _template(body: str) -> tuple[str, list[str]]:
    """(op text with SSA names and labels as bare ``%`` / ``^``, the names in order)."""
    if '"' not in body or body.startswith("llvm.icmp"):
        tmpl = _SSA.sub("%", body)
        return (_LABEL_REF.sub("^", tmpl) if "^" in tmpl else tmpl), _REF_NAMES.findall(body)
    names: list[str] = []

    def sub(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1)
        names.append(m.group(0))
        return m.group(2)

    return _REF_OR_STR.sub(sub, body), names


#: specs by op template / generic type tail / (path, aggregate type), block-argument types by template.
#: They depend only on the text, so they are shared by every parse in the process.
_TCACHE: dict[str, Spec] = {}
_GCACHE: dict[tuple[str, int, str], Spec] = {}
_ECACHE: dict[tuple[str, str], Spec] = {}
_LCACHE: dict[str, tuple[list[Ty], str]] = {}
#: functions by (``llvm.func`` header text, in a gpu.module, has a body); line 0, no blocks
HCACHE: dict[tuple[str, bool, bool], ir.Function] = {}


def clear_caches() -> None:
    """Forget every memoised template (for timing a cold parse)."""
    for c in (_TCACHE, _GCACHE, _ECACHE, _LCACHE, HCACHE):
        c.clear()


_CONST_INT = re.compile(r"llvm\.mlir\.constant\((-?\d+) : ")
_GEP_IDX = re.compile(r"llvm\.getelementptr (?:[\w|]+ )?%[\w$.\-]+(?:#\d+)?\[([^\]]*)\]")


def _abstract_literals(name: str, body: str) -> tuple[str, Any]:
    """(``body`` with its integer constant value or GEP constant indices as ``0``, the literals)."""
    if name == "llvm.mlir.constant":
        m = _CONST_INT.match(body)
        if m is None:
            return body, None
        return "llvm.mlir.constant(0 : " + body[m.end() :], int(m.group(1))
    m = _GEP_IDX.match(body)
    if m is None:
        return body, None
    items = m.group(1).split(", ")
    lits = [int(x) for x in items if x[:1] != "%"]
    if not lits:
        return body, None
    inner = ", ".join(x if x[:1] == "%" else "0" for x in items)
    return body[: m.start(1)] + inner + body[m.end(1) :], lits


def _put_literals(op: ir.Op, lits: Any) -> None:
    if isinstance(lits, int):
        if "value" in op.attrs:
            op.attrs["value"] = lits
        return
    it = iter(lits)
    op.attrs["indices"] = [("const", next(it)) if x[0] == "const" else x for x in op.attrs["indices"]]


class SpecSource:
    """The indexer's specs: from the caches, or the grammar on a miss (``path``: the file, for errors)."""

    path: str
    tcache: dict[str, Spec]
    gcache: dict[tuple[str, int, str], Spec]
    ecache: dict[tuple[str, str], Spec]
    lcache: dict[str, tuple[list[Ty], str]]

    # ------------------------------------------------------------------------------ errors

    def fail(self, lineno: int, raw: str, body_col: int, body: str, why: str) -> IRSyntaxError:
        """An error at a line: let the grammar say where exactly, else report ``why``."""
        if body_col < 0:  # an op joined from several lines: the whole-module parse places the error
            raise NeedFullParse(why)
        g = grammar()
        try:
            g.parse(body, "op")
        except g.UnexpectedInput as exc:
            err: IRSyntaxError = g.syntax_error(self.path, body, exc, line=lineno, col_offset=body_col)
            return err
        except Exception:  # noqa: BLE001 -- any other failure of ours on this line: the grammar decides
            raise NeedFullParse(why) from None
        raise NeedFullParse(why)

    # ------------------------------------------------------------------------------- specs

    def template_spec(self, body: str, lineno: int, raw: str, orig: str | None = None) -> tuple[Spec, list[str]]:
        """The spec of a template op (parsed by the grammar on a cache miss) and the line's names.

        The cache key is the op text with every SSA name / block label replaced by a bare ``%`` /
        ``^`` (labels matter: ``llvm.br ^bb1`` and ``llvm.br %x`` must not share a key).
        """
        tmpl, names = _template(body)
        spec = self.tcache.get(tmpl)
        if spec is None:
            stored: Spec | None = spec_store.get("t", tmpl)
            if stored is not None:
                spec = self.tcache[tmpl] = stored.templatize()
        if spec is None:
            g = grammar()
            try:
                rop = g.parse(_number(tmpl), "op")
            except g.UnexpectedInput:
                orig = orig or body
                raise self.fail(lineno, raw, raw.find(orig), orig, "bad op") from None
            spec = build_spec(rop.body).templatize()
            self.tcache[tmpl] = spec
            spec_store.put("t", tmpl, spec)
        return spec, names

    def extract_spec(self, path: str, tytext: str, insert: bool, lineno: int, raw: str, body: str) -> Spec:
        key = (("i" if insert else "e") + path, tytext)
        spec = self.ecache.get(key)
        if spec is not None:
            return spec
        stored: Spec | None = spec_store.get("e", key)
        if stored is not None:
            spec = self.ecache[key] = stored.templatize()
            return spec
        g = grammar()
        try:
            ty = g.parse_type(tytext)
        except g.UnexpectedInput:
            raise self.fail(lineno, raw, raw.find(body), body, "bad type") from None
        p = tuple(int(x) for x in path.split(","))
        if insert:
            rec = Body("insertvalue", "llvm.insertvalue", None, ["%0", "%1"], (), (ty.text,), {"type": ty, "path": p})
        else:
            res = field_type(ty, p)
            rtypes = (res.text if res else "?",)
            rec = Body(
                "extractvalue", "llvm.extractvalue", None, ["%0"], (), rtypes, {"type": ty, "path": p, "res": res}
            )
        spec = build_spec(rec).templatize()
        self.ecache[key] = spec
        spec_store.put("e", key, spec)
        return spec

    def generic_spec(self, name: str, body: str, nres: int, key: tuple[str, int, str]) -> Spec:
        sb = strip_strings(body)
        b = Body("generic", name, None, [], rtypes=soup_rtypes(name, sb, nres), info=soup_info(name, body))
        spec = build_spec(b)
        self.gcache[key] = spec
        return spec

    def label_args(self, inner: str) -> tuple[list[Ty], list[str]]:
        """``(%a: i32 loc(...), %b: f32)`` -> arg types (grammar, per template) and names."""
        no_loc = strip_inline_locs(inner) if "loc(" in inner else inner
        names = _SSA.findall(no_loc)
        tmpl = _SSA.sub("%", no_loc)
        hit = self.lcache.get(tmpl) or spec_store.get("l", tmpl)
        if hit is None:
            _, args, _ = grammar().parse("^bb" + tmpl + ":", "block_label")
            hit = ([t for _, t in args], tmpl)
            spec_store.put("l", tmpl, hit)
        self.lcache[tmpl] = hit
        return hit[0], names
