"""PTX front end: text -> syntax tree (:class:`PtxAst`) -> :class:`irscan.ir.Module`.

Public API::

    parse_module(text, path) -> ir.Module       # what the scan calls (fast path + lower)
    parse_file(path) -> ir.Module                # module.ptx or module.ptx.xz
    parse_ast(text, path) -> PtxAst              # fast path, syntax tree only
    parse_tree(text, path) -> PtxAst             # the whole text through grammars/ptx.lark
    lower(ast) -> ir.Module                      # syntax tree -> shared vocabulary
    read_text(path) -> str                       # .xz aware
    irscan.frontend.ptx.printer.print_module(ast) -> str    # syntax tree -> PTX text
    irscan.analysis.reaching.reaching_definitions(fn)     # PTX use -> defs, for the dataflow graph

This module is the front door; the work is done in the parts it imports (none imports it):

* :mod:`irscan.frontend.ptx.ast` -- the syntax tree (:class:`Instr`, :class:`Addr`, :class:`Func` ...);
* :mod:`irscan.frontend.ptx.lexical` -- the literal rules both parsers share (integers, comments, ``Bail``);
* :mod:`irscan.frontend.ptx.grammar` -- ``grammars/ptx.lark``, :func:`parse_tree`, lark errors ->
  :class:`irscan.ir.IRSyntaxError`; :mod:`irscan.frontend.ptx.convert` -- lark's tree -> the syntax tree;
* :mod:`irscan.frontend.ptx.fast` -- the regex statement splitter, :func:`parse_ast`, with
  :mod:`~irscan.frontend.ptx.fast_operands` and :mod:`~irscan.frontend.ptx.fast_directives`;
* :mod:`irscan.frontend.ptx.opcodes` -- what an opcode means (kind, width, signedness), special registers;
* :mod:`irscan.frontend.ptx.lower` -- :func:`lower`: functions, blocks, locations; with
  :mod:`~irscan.frontend.ptx.instr` (one instruction -> Op) and :mod:`~irscan.frontend.ptx.names`
  (registers and scope renaming).

Under any input the result is a module or an :class:`irscan.ir.IRSyntaxError` with a line and column:
nothing recurses as deep as the input nests, no pattern backtracks super-linearly, integer literals
over 64 bits are located errors, and time and memory grow linearly with the text
(``tests/test_ptx_contract.py`` holds each class of hostile input to it).

Two ways to the same syntax tree, checked equal on the corpus (and on fuzzed text) by the tests:

* :func:`parse_tree` runs ``grammars/ptx.lark`` (LALR, contextual lexer) over the whole text.  It is
  the reference, and what reports errors; at ~0.45 MB/s it would cost as much as a big compile.
* :func:`parse_ast` splits the text into statements with compiled regexes and decodes the common
  ones itself (instructions, labels, scopes, ``.loc``, declarations, function headers), caching
  every distinct operand text (they repeat massively); a statement it does not know goes to the
  grammar on its own (start symbols ``stmt`` / ``top``).  Anything it cannot
  place, and any error, sends the whole text to the grammar, so bad input raises the grammar's
  :class:`irscan.ir.IRSyntaxError` (real line, column, expected tokens) and odd but valid input
  gets the grammar's tree.  lark is not even imported for compiler output.

:func:`lower` gives the tree meaning (see :func:`irscan.frontend.ptx.opcodes.opcode_rule`): opcode ->
:class:`~irscan.ir.Kind`, width, signedness, results and operands (``[%rd4+16]`` -> ``"%rd4"`` with
``attrs["disp"]``), state spaces, blocks and control flow, ``.loc`` -> :class:`~irscan.ir.Loc`.
Integer immediates are given as the instruction's type sees them (``mul.hi.u32 .., -1431655765``
-> 2863311531); ``Op.flags`` holds the opcode's modifiers.  Names declared in nested ``{ }``
scopes (inline asm) are renamed ``name@N`` so that they are unique per function (see
:mod:`irscan.frontend.ptx.lower`).
"""

from __future__ import annotations

from pathlib import Path

from irscan.frontend.ptx import ast as ptx_ast
from irscan.frontend.ptx.ast import *  # noqa: F403 (the syntax tree is part of this facade's API)
from irscan.frontend.ptx.fast import parse_ast
from irscan.frontend.ptx.grammar import GRAMMAR_PATH, parse_tree
from irscan.frontend.ptx.lower import lower
from irscan.ir import SREG_RANGES, Module
from irscan.resources import read_text

__all__ = [
    *ptx_ast.__all__,
    "GRAMMAR_PATH",
    "SREG_RANGES",
    "lower",
    "parse_ast",
    "parse_file",
    "parse_module",
    "parse_tree",
    "read_text",
]


def parse_module(text: str, path: str = "<ptx>") -> Module:
    """PTX text -> :class:`irscan.ir.Module` (fast path).  Bad input: :class:`irscan.ir.IRSyntaxError`."""
    return lower(parse_ast(text, path))


def parse_file(path: str | Path) -> Module:
    """:func:`parse_module` on a file (``module.ptx`` or ``module.ptx.xz``)."""
    return parse_module(read_text(path), str(path))
