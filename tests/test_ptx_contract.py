"""The PTX front end under the error contract: hostile input gives a result or a located IRSyntaxError.

One test per class of input that once broke it (a RecursionError, a regex with quadratic backtracking,
Python's int() digit limit, the internal ``Bail`` escaping, quadratic work in the lowering).  Each
generates its input, and asserts the exception type and the position, or the result; never a time
(timings are in bench/).  Both parsers are held to it: ``parse_module`` (the fast path, falling back to
the grammar) and ``parse_tree`` (the grammar alone).
"""

from __future__ import annotations

import random

import pytest

from irscan.frontend import ptx
from irscan.frontend.ptx.printer import print_module
from irscan.ir import IRSyntaxError

HEAD = (
    ".version 8.8\n.target sm_90a\n.address_size 64\n\n.visible .entry k(\n\t.param .align 8 .b8 k_param_0[8]\n)\n"
    "{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<6>;\n"
)  # the body starts on line 11
TAIL = "\tret;\n}\n"
BODY_LINE = 11


def kernel(body: str) -> str:
    return HEAD + body + TAIL


def located(text: str) -> list[IRSyntaxError]:
    """The error both parsers raise (the same position from each)."""
    errs = []
    for parse in (ptx.parse_module, ptx.parse_tree):
        with pytest.raises(IRSyntaxError) as ei:
            parse(text, "bad.ptx")
        errs.append(ei.value)
    assert (errs[0].line, errs[0].col) == (errs[1].line, errs[1].col), [str(e) for e in errs]
    assert str(errs[0]).startswith(f"bad.ptx:{errs[0].line}:{errs[0].col}: ")
    return errs


def flat(items: list[object]) -> list[tuple[int, object]]:
    """A body as (depth, statement) pairs, scopes by their line (``==`` on nested dataclasses recurses)."""
    out: list[tuple[int, object]] = []
    stack = [(iter(items), 0)]
    while stack:
        it, d = stack[-1]
        for x in it:
            if isinstance(x, ptx.Scope):
                out.append((d, ("scope", x.line)))
                stack.append((iter(x.body), d + 1))
                break
            out.append((d, x))
        else:
            stack.pop()
    return out


def assert_at(text: str, line: int, col: int, message: str) -> None:
    for e in located(text):
        assert (e.line, e.col) == (line, col), str(e)
        assert message in e.message, str(e)


# ------------------------------------------------------------------------------- nesting (recursion)


@pytest.mark.parametrize("depth", [2, 400, 20_000])
def test_parentheses_in_parentheses_are_an_error_at_the_inner_one(depth: int) -> None:
    """PTX has no nested parentheses in operands (``call (ret), f, (a, b)``): the second ``(`` is the error,
    however deep the nesting goes (once a RecursionError at ~330)."""
    line = "\tcall (%r1), f, " + "(" * depth + "%r1" + ")" * depth + ";\n"
    assert_at(kernel(line), BODY_LINE, len("\tcall (%r1), f, (") + 1, "'('")


def test_unclosed_parentheses_are_an_error() -> None:
    line = "\tadd.s32 %r1, " + "(" * 50_000 + ";\n"
    assert_at(kernel(line), BODY_LINE, len("\tadd.s32 %r1, (") + 1, "'('")


@pytest.mark.parametrize("depth", [1_200, 5_000])
def test_nested_scopes_parse_lower_and_print(depth: int) -> None:
    """``{ { { ... } } }``: the fast path, the grammar, the lowering and the printer all walk scopes on
    explicit stacks.  Each level declares and uses a register, so each gets its own name."""
    body = "".join("{\n.reg .b32 %t;\nadd.s32 %t, %t, 1;\n" for _ in range(depth)) + "}\n" * depth
    text = kernel(body)
    fast = ptx.parse_ast(text, "deep.ptx")
    tree = ptx.parse_tree(text, "deep.ptx")
    assert flat(fast.items[3].body) == flat(tree.items[3].body)
    ops = ptx.lower(fast).functions[0].ops()
    adds = [o for o in ops if o.name == "add.s32"]
    assert [o.results for o in adds[:2]] == [("%t@1",), ("%t@2",)]
    assert adds[-1].results == (f"%t@{depth}",) and adds[-1].operands == (f"%t@{depth}", 1)
    printed = print_module(fast)
    assert printed.count("{") == depth + 1 and len(printed) < 40 * len(text)
    again = ptx.lower(ptx.parse_ast(printed, "again.ptx")).functions[0].ops()
    assert [(o.results, o.operands) for o in again] == [(o.results, o.operands) for o in ops]


@pytest.mark.parametrize("depth", [3, 20_000])
def test_nested_initialisers(depth: int) -> None:
    text = (
        ".version 8.8\n.target sm_90a\n.address_size 64\n"
        f".global .b32 g[1] = {'{' * depth}7{'}' * depth};\n"
        f".global .b64 h = {'generic(' * depth}g{')' * depth};\n"
    )
    ast = ptx.parse_module(text, "init.ptx") and ptx.parse_ast(text, "init.ptx")
    g, h = ast.items[3].names[0].init, ast.items[4].names[0].init
    for _ in range(depth):
        assert isinstance(g, list) and len(g) == 1
        g = g[0]
    assert g == "7" and h == "generic(" * depth + "g" + ")" * depth
    assert print_module(ast).splitlines()[3] == text.splitlines()[3]


def test_long_dependency_chain_lowers() -> None:
    body = "".join(f"\tadd.s32 %r{(i + 1) % 8}, %r{i % 8}, 1;\n" for i in range(5_000))
    ops = ptx.parse_module(kernel(body), "chain.ptx").functions[0].ops()
    assert len(ops) == 5_001 and ops[-2].operands == ("%r7", 1)


# ----------------------------------------------------------------------------- regular expressions


def test_long_digit_run_in_an_operand_name() -> None:
    """``%r1111...1_`` (once quadratic in the lowering's trailing-number regex, and int() past 4,300
    digits): a valid name, neither a register of ``%r<8>`` nor an error."""
    name = "%r" + "1" * 60_000
    text = kernel(f"\tmov.u32 %r1, {name}_;\n\tmov.u32 %r2, {name};\n")
    assert ptx.parse_ast(text, "digits.ptx") == ptx.parse_tree(text, "digits.ptx")
    mod = ptx.parse_module(text, "digits.ptx")
    a, b = mod.functions[0].ops()[:2]
    assert a.operands == (name + "_",) and a.attrs.get("symbol") is True
    assert b.operands == (name,) and b.attrs.get("symbol") is True  # %r<8> declares %r0 .. %r7 only


@pytest.mark.parametrize("spaces", [1, 65_000])
def test_spaces_inside_an_address(spaces: int) -> None:
    """``[%rd1   x]``: once quadratic (two adjacent ``[ \\t]*`` around an optional ``+disp``)."""
    line = "\tld.global.b32 %r1, [%rd1" + " " * spaces + "x];\n"
    assert_at(kernel(line), BODY_LINE, len("\tld.global.b32 %r1, [%rd1") + spaces + 1, "'x'")
    ok = kernel("\tld.global.b32 %r1, [ %rd1" + " " * spaces + "+" + " " * spaces + "4" + " " * spaces + "];\n")
    op = ptx.parse_module(ok, "ok.ptx").functions[0].ops()[0]
    assert (op.operands, op.attrs["disp"]) == (("%rd1",), 4)


def test_spaces_inside_a_parameter_dimension() -> None:
    text = HEAD.replace("k_param_0[8]", "k_param_0[" + " " * 65_000 + "x]") + TAIL
    assert_at(text, 6, len("\t.param .align 8 .b8 k_param_0[") + 65_000 + 1, "'x'")


def test_spaces_in_a_function_header() -> None:
    """``.entry k      x``: the header's pattern once had three ``\\s*`` in a row (64 KB: 13 s)."""
    text = HEAD.replace(".entry k(", ".entry k" + " " * 65_000 + "x(") + TAIL
    assert_at(text, 5, len(".visible .entry k") + 65_000 + 1, "'x'")
    ok = HEAD.replace("\n)\n", "\n)" + " " * 65_000 + ".maxntid 128" + " " * 65_000 + "\n") + TAIL
    assert ptx.parse_module(ok, "ok.ptx").functions[0].attrs["maxntid"] == (128, 1, 1)


@pytest.mark.parametrize(
    "junk,col,message",
    [
        ("/* " * 30_000, 1, "'/'"),  # unclosed comments: once re-read from every opener
        ('"\\' * 30_000, 1, "'\"'"),  # an unclosed string of escaped quotes, likewise
        ("[" * 50_000, len("\tadd.s32 %r1, [") + 1, "'['"),  # unclosed brackets, re-read from each one
        ("a" * 50_000 + "}", 50_001, "'}'"),  # a long opcode with no ';' (the opcode gave back characters)
    ],
    ids=["comments", "string", "brackets", "opcode"],
)
def test_unclosed_constructs(junk: str, col: int, message: str) -> None:
    body = "\tadd.s32 %r1, " + junk + "\n" if junk[0] == "[" else junk + "\n"
    assert_at(kernel(body), BODY_LINE, col, message)


def test_many_statements_for_the_grammar_on_one_line() -> None:
    """Statements the fast path hands to the grammar one by one get their column from an incremental
    count (once a search back to the line's start for each: quadratic on one long line)."""
    n = 3_000
    body = "\t" + '.pragma "a", "b"; ' * n + "\n"
    ast = ptx.parse_ast(kernel(body), "pragmas.ptx")
    pragmas = ast.items[3].body[2:-1]
    assert len(pragmas) == n and all(p.strings == ('"a"', '"b"') and p.line == BODY_LINE for p in pragmas)
    bad = kernel(body.replace("\n", ' .pragma "a" "b";\n'))
    assert_at(bad, BODY_LINE, len(body.rstrip("\n")) + len(' .pragma "a" ') + 1, "'\"b\"'")


# ---------------------------------------------------------------------------------------- integers


@pytest.mark.parametrize(
    "stmt,prefix",
    [
        ("\tadd.s32 %r1, %r1, {n};\n", "\tadd.s32 %r1, %r1, "),
        ("\tld.global.b32 %r1, [%rd1+{n}];\n", "\tld.global.b32 %r1, [%rd1+"),
        ("\t.reg .b32 %q<{n}>;\n", "\t.reg .b32 %q<"),
        ("\t.loc 1 {n} 1\n", "\t.loc 1 "),
    ],
)
@pytest.mark.parametrize(
    "digits", ["9" * 5_000, "18446744073709551616", "0x1" + "0" * 16], ids=["5000-digits", "2**64", "hex-2**64"]
)
def test_integer_literals_past_64_bits_are_located_errors(stmt: str, prefix: str, digits: str) -> None:
    """Over Python's 4,300-digit limit once raised ValueError (then ``Bail``) with no position."""
    assert_at(kernel(stmt.format(n=digits)), BODY_LINE, len(prefix) + 1, "out of range")


def test_the_largest_64_bit_literals_are_fine() -> None:
    op = ptx.parse_module(kernel("\tadd.u64 %rd1, %rd1, 18446744073709551615;\n"), "t").functions[0].ops()[0]
    assert op.operands == ("%rd1", 18446744073709551615)
    op = ptx.parse_module(kernel("\tadd.u64 %rd1, %rd1, 0x" + "0" * 5_000 + "1;\n"), "t").functions[0].ops()[0]
    assert op.operands == ("%rd1", 1)


def test_bail_never_escapes() -> None:
    """Mutations around literals and brackets: a module or an IRSyntaxError, never an internal exception."""
    rng = random.Random(11)
    pieces = ["9" * 4_400, "0x" + "f" * 17, "0128", "((", "[[", "{{", "}", "/*", '"', "%r<", "0b2", "-", " "]
    base = kernel("\tadd.s32 %r1, %r2, 3;\n\tld.global.b32 %r3, [%rd1+4];\n\t.reg .b32 %q<4>;\n\t.loc 1 2 3\n")
    for _ in range(300):
        s = base
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(HEAD.rindex("\n"), len(s))
            s = s[:i] + rng.choice(pieces) + s[i + rng.randint(0, 2) :]
        try:
            ptx.parse_module(s, "fuzz.ptx")
        except IRSyntaxError as e:
            assert e.line >= 1 and e.col >= 1


# ---------------------------------------------------------------------------------------- size


@pytest.mark.parametrize("distinct_lines", [False, True])
def test_many_registers(distinct_lines: bool) -> None:
    """``.reg .b32 %q<N>`` (or N ``.reg`` lines) and a use of each: every one a register, in order."""
    n = 20_000
    decl = "".join(f"\t.reg .b32 %q{i};\n" for i in range(n)) if distinct_lines else f"\t.reg .b32 %q<{n}>;\n"
    body = decl + "".join(f"\tadd.s32 %q{i}, %q{i}, 1;\n\tmov.u32 %r1, %q{i};\n" for i in range(n))
    ops = ptx.parse_module(kernel(body), "regs.ptx").functions[0].ops()
    movs = [o for o in ops if o.name == "mov.u32"]
    assert len(movs) == n and not any(o.attrs.get("symbol") for o in movs)
    assert [o.results for o in ops[:3:2]] == [("%q0",), ("%q1",)]
