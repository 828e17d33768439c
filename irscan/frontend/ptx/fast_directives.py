"""The fast path's directives: declarations, ``.loc`` / ``.file`` / ``.version`` ..., function headers.

Each known directive has one regex for its common form (what compilers print) and a builder of its
syntax-tree node; a directive in any other form, or any other directive, is handed to the grammar by
:mod:`irscan.frontend.ptx.fast`.  The patterns are linear: no two adjacent quantifiers can match the same
characters (``\\[\\s*\\d*\\s*\\]`` could, and ``[`` plus spaces cost their square).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from irscan.frontend.ptx.ast import (
    AddressSize,
    DeclName,
    FileDir,
    Func,
    LocDir,
    ParamDecl,
    Pragma,
    Target,
    VarDecl,
    Version,
)
from irscan.frontend.ptx.lexical import DOTWORD_P, NAME_P, Bail, int_value
from irscan.frontend.text import STRING_P

#: performance directives of an .entry/.func header
PERF_NAMES = frozenset(
    {".reqntid", ".maxntid", ".minnctapersm", ".maxnreg", ".explicitcluster", ".reqnctapercluster",
     ".maxclusterrank", ".noreturn", ".blocksareclusters"}
)  # fmt: skip
#: directives that end at the end of their line
EOL_DIRS = frozenset({".version", ".target", ".address_size", ".file", ".loc"}) | PERF_NAMES
#: what a function header may start with
HEADER_DIRS = frozenset({".visible", ".extern", ".weak", ".common", ".entry", ".func"})

# -- declarations: .reg .b32 %r<7>;   .shared .align 16 .b8 smem[1024];   .visible .global .b32 x;
_DECL_ONE_P = rf"{NAME_P}(?:<\d+>)?(?:\[\d*\])*"  # %r<7>   smem[1024]   x
_DECL_RE = re.compile(
    r"((?:\.(?:visible|extern|weak|common)[ \t]+)*)(\.reg|\.param|\.local|\.shared|\.global|\.const)"
    rf"((?:[ \t]+{DOTWORD_P}(?:[ \t]+\d+)?)*)[ \t]+({_DECL_ONE_P}(?:[ \t]*,[ \t]*{_DECL_ONE_P})*)[ \t]*;"
)
_DECL_NAME = re.compile(r"(%[\w$]+|[A-Za-z_$][\w$]*)(?:<(\d+)>)?((?:\[\d*\])*)")
_DIM = re.compile(r"\[(\d*)\]")


def _decl(m: re.Match[str], line: int) -> VarDecl:
    names = tuple(
        DeclName(nm, int_value(r) if r else None, tuple(int_value(x) if x else None for x in _DIM.findall(dims)))
        for nm, r, dims in _DECL_NAME.findall(m.group(4))
    )
    return VarDecl(m.group(2), tuple(m.group(3).split()), names, tuple(m.group(1).split()), line)


Builder = Callable[[re.Match[str], int], Any]

#: directive -> (regex for its common form, builder of its node from the match and its line)
FAST_DIRS: dict[str, tuple[re.Pattern[str], Builder]] = {
    ".loc": (
        re.compile(r"\.loc[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)[ \t\r]*(?=[\n;{}]|$)"),
        lambda m, line: LocDir(int_value(m.group(1)), int_value(m.group(2)), int_value(m.group(3)), (), line),
    ),
    ".file": (
        re.compile(r"\.file[ \t]+(\d+)[ \t]+(" + STRING_P + r")((?:[ \t]*,[ \t]*\d+)*)[ \t\r]*(?=\n|$)"),
        lambda m, line: FileDir(
            int_value(m.group(1)), m.group(2), tuple(int_value(x) for x in re.findall(r"\d+", m.group(3))), line
        ),
    ),
    ".pragma": (
        re.compile(r"\.pragma[ \t]+(" + STRING_P + r")[ \t]*;"),
        lambda m, line: Pragma((m.group(1),), line),
    ),
    ".version": (
        re.compile(r"\.version[ \t]+(\d+\.\d+)[ \t\r]*(?=\n|$)"),
        lambda m, line: Version(m.group(1), line),
    ),
    ".target": (
        re.compile(r"\.target[ \t]+([A-Za-z_$][\w$]*(?:[ \t]*,[ \t]*[A-Za-z_$][\w$]*)*)[ \t\r]*(?=\n|$)"),
        lambda m, line: Target(tuple(x.strip() for x in m.group(1).split(",")), line),
    ),
    ".address_size": (
        re.compile(r"\.address_size[ \t]+(\d+)[ \t\r]*(?=\n|$)"),
        lambda m, line: AddressSize(int_value(m.group(1)), line),
    ),
}
for _d in (".reg", ".param", ".local", ".shared", ".global", ".const", ".visible", ".extern", ".weak", ".common"):
    FAST_DIRS[_d] = (_DECL_RE, _decl)

# -- function headers: .visible .entry name(.param .u64 a, .param .align 8 .b8 b[16]) .reqntid 128, 1, 1
_PARAM_RE = re.compile(
    rf"\s*(\.param|\.reg)((?:\s+{DOTWORD_P}(?:\s+\d+)?)*)\s+({NAME_P})((?:\s*\[\s*(?:\d+\s*)?\])*)\s*$"
)
_PARAM_DIM = re.compile(r"\[\s*(?:(\d+)\s*)?\]")
#: matched against the stripped header text, so it ends with no white space to match (a trailing
#: ``\s*`` after ``\s*``-led perf directives cost the square of a run of spaces: 64 KB took 13 s)
_HEADER_RE = re.compile(
    r"((?:\.(?:visible|extern|weak|common)\s+)*)(\.entry|\.func)\s*(?:\(([^()]*)\)\s*)?([A-Za-z_$][\w$]*)"
    r"(?:\s*\(([^()]*)\))?((?:\s*\.\w+(?:\s+\d+(?:\s*,\s*\d+)*)?)*)$"
)
_PERF_RE = re.compile(r"(\.\w+)(?:\s+(\d+(?:\s*,\s*\d+)*))?")


def _params(text: str | None) -> tuple[ParamDecl, ...] | None:
    if text is None:
        return None
    if not text.strip():
        return ()
    out = []
    for p in text.split(","):
        m = _PARAM_RE.match(p)
        if not m:
            raise Bail
        attrs = tuple(m.group(2).split())
        if any(a[0] != "." and not a.isdigit() for a in attrs):
            raise Bail
        dims = tuple(int_value(d) if d else None for d in _PARAM_DIM.findall(m.group(4)))
        out.append(ParamDecl(m.group(1), attrs, m.group(3), dims))
    return tuple(out)


def fast_header(text: str) -> Func | None:
    """``.visible .entry name(.param ...) .reqntid 128, 1, 1`` by regex; None: let the grammar do it."""
    m = _HEADER_RE.match(text.strip())
    if not m:
        return None
    try:
        rets = _params(m.group(3))
        if m.group(3) is not None and not rets:
            return None
        params = _params(m.group(5))
    except Bail:
        return None
    perf = []
    for pm in _PERF_RE.finditer(m.group(6)):
        if pm.group(1) not in PERF_NAMES:
            return None
        vals = tuple(int_value(v.strip()) for v in pm.group(2).split(",")) if pm.group(2) else ()
        perf.append((pm.group(1), vals))
    return Func(m.group(2), m.group(4), params, rets, tuple(m.group(1).split()), tuple(perf), None, 0)
